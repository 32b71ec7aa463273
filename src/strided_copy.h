// Internal: gathers a strided host array into a compact row-major buffer, and packs a padded sub-byte one.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ortdlpack::detail {

// Copies the `ndim`-d array at `src` (strides in elements, possibly negative or zero) into `dst`, compact.
// `elem_bytes` >= 1. The caller has validated that every addressed element lies in memory it may read.
void strided_copy(void* dst, const void* src, int32_t ndim, const int64_t* shape, const int64_t* strides,
                  size_t elem_bytes);

// Packs `count` sub-byte elements of `bits` (1, 2 or 4) bits, one per byte at `padded` (DLPack's
// IS_SUBBYTE_TYPE_PADDED, ml_dtypes' int4), into `packed` (ceil(count * bits / 8) bytes): element i at bit i * bits,
// low bits first, as ONNX and DLPack pack them (the inverse of unpack_sub_byte, dtype.h).
void pack_sub_byte(void* packed, const uint8_t* padded, size_t count, uint32_t bits);

}  // namespace ortdlpack::detail
