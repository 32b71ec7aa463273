// Internal: gathers a strided host array into a compact row-major buffer.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ortdlpack::detail {

// Copies the `ndim`-d array at `src` (strides in elements, possibly negative or zero) into `dst`, compact.
// `elem_bytes` >= 1. The caller has validated that every addressed element lies in memory it may read.
void strided_copy(void* dst, const void* src, int32_t ndim, const int64_t* shape, const int64_t* strides,
                  size_t elem_bytes);

}  // namespace ortdlpack::detail
