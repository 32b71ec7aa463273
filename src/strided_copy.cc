#include "strided_copy.h"

#include <cstring>

namespace ortdlpack::detail {
namespace {

// Recursion over the outer dims; the innermost dim is one memcpy when it is contiguous.
void copy_dim(char*& dst, const char* src, int32_t dim, int32_t ndim, const int64_t* shape, const int64_t* strides,
              size_t elem_bytes) {
  const int64_t n = shape[dim];
  // A size-1 dim may carry any stride (even one whose byte step overflows): it is never stepped over. For n > 1 the
  // importer checked that (n - 1) * stride * elem_bytes fits.
  const int64_t step = n > 1 ? strides[dim] * static_cast<int64_t>(elem_bytes) : 0;
  if (dim == ndim - 1) {
    if (strides[dim] == 1) {
      std::memcpy(dst, src, static_cast<size_t>(n) * elem_bytes);
      dst += static_cast<size_t>(n) * elem_bytes;
      return;
    }
    for (int64_t i = 0; i < n; ++i, dst += elem_bytes) std::memcpy(dst, src + i * step, elem_bytes);
    return;
  }
  // src + i * step only for addressed elements (i < n): advancing past the last one could leave the address space
  // (a size-1 dim may carry any stride), which is undefined pointer arithmetic even if never dereferenced.
  for (int64_t i = 0; i < n; ++i) copy_dim(dst, src + i * step, dim + 1, ndim, shape, strides, elem_bytes);
}

}  // namespace

void strided_copy(void* dst, const void* src, int32_t ndim, const int64_t* shape, const int64_t* strides,
                  size_t elem_bytes) {
  if (ndim == 0) {
    std::memcpy(dst, src, elem_bytes);
    return;
  }
  for (int32_t i = 0; i < ndim; ++i) {
    if (shape[i] == 0) return;
  }
  char* out = static_cast<char*>(dst);
  copy_dim(out, static_cast<const char*>(src), 0, ndim, shape, strides, elem_bytes);
}

void pack_sub_byte(void* packed, const uint8_t* padded, size_t count, uint32_t bits) {
  auto* out = static_cast<uint8_t*>(packed);
  std::memset(out, 0, (count * bits + 7) / 8);
  const uint8_t mask = static_cast<uint8_t>((1u << bits) - 1u);
  for (size_t i = 0; i < count; ++i) {
    const size_t bit = i * bits;
    out[bit / 8] = static_cast<uint8_t>(out[bit / 8] | ((padded[i] & mask) << (bit % 8)));
  }
}

}  // namespace ortdlpack::detail
