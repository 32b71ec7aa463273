// DLPack tensors from outside, validated field by field (dlpack_layout.h).
#include "dlpack_layout.h"

#include <cstdint>
#include <limits>
#include <string>

#include "ortdlpack/dtype.h"
#include "ortdlpack/error.h"

namespace ortdlpack {
namespace {

[[noreturn]] void invalid(const std::string& message) { throw Error(ErrorKind::kInvalidArgument, "DLPack " + message); }

// The header fields: ndim, shape, device id, dtype and its flags.
void validate_header(const DLTensor& t, uint64_t flags, bool uint8_as_bool, Layout& l) {
  if (t.ndim < 0 || t.ndim > kMaxNdim) {
    invalid("ndim " + std::to_string(t.ndim) + " is out of range [0, " + std::to_string(kMaxNdim) + "]");
  }
  if (t.ndim > 0 && t.shape == nullptr) invalid("shape is NULL with ndim " + std::to_string(t.ndim));
  if (t.device.device_id < 0) invalid("device_id " + std::to_string(t.device.device_id) + " is negative");
  l.type = from_dlpack_dtype(t.dtype, uint8_as_bool);
  l.padded = t.dtype.bits < 8 && (flags & DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED) != 0;
}

// Element count and byte size, which must fit ORT's int64 sizes. A zero dim makes the tensor empty whatever the
// others.
void validate_sizes(const DLTensor& t, Layout& l) {
  bool empty = false;
  for (int32_t i = 0; i < t.ndim; ++i) {
    if (t.shape[i] < 0) invalid("shape[" + std::to_string(i) + "] = " + std::to_string(t.shape[i]) + " is negative");
    empty = empty || t.shape[i] == 0;
  }
  constexpr uint64_t kMax = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  uint64_t count = empty ? 0 : 1;
  for (int32_t i = 0; i < t.ndim && !empty; ++i) {
    if (__builtin_mul_overflow(count, static_cast<uint64_t>(t.shape[i]), &count) || count > kMax) {
      invalid("shape: the element count overflows int64");
    }
  }
  uint64_t total_bits = 0;
  if (__builtin_mul_overflow(count, static_cast<uint64_t>(t.dtype.bits), &total_bits) || (total_bits + 7) / 8 > kMax) {
    invalid("shape: the byte size overflows int64");
  }
  l.count = static_cast<size_t>(count);
  l.bytes = static_cast<size_t>((total_bits + 7) / 8);
}

// Row-major with no gaps (any stride on size-1 dims; NULL strides are row-major). The shape was validated.
bool compact(const DLTensor& t) {
  if (t.strides == nullptr) return true;
  int64_t expected = 1;
  for (int32_t i = t.ndim - 1; i >= 0; --i) {
    if (t.shape[i] != 1 && t.strides[i] != expected) return false;
    expected *= t.shape[i];  // cannot overflow: bounded by the element count
  }
  return true;
}

// For a strided tensor with elements at `address`: every addressed element lies in the address space. The buffer's
// extent is unknown to a consumer; what can be checked is that the lowest and highest addressed offsets neither
// overflow nor wrap around.
void check_address_range(const DLTensor& t, uintptr_t address) {
  const int64_t elem = static_cast<int64_t>(t.dtype.bits / 8);
  int64_t lo = 0, hi = 0;
  for (int32_t i = 0; i < t.ndim; ++i) {
    int64_t reach = 0;
    if (__builtin_mul_overflow(t.shape[i] - 1, t.strides[i], &reach) || __builtin_mul_overflow(reach, elem, &reach) ||
        __builtin_add_overflow(reach < 0 ? lo : hi, reach, reach < 0 ? &lo : &hi)) {
      invalid("strides[" + std::to_string(i) + "] = " + std::to_string(t.strides[i]) + " overflows the address range");
    }
  }
  uintptr_t last = 0;
  // -lo in unsigned arithmetic: lo may be INT64_MIN, whose negation overflows int64.
  if (0 - static_cast<uint64_t>(lo) > address ||
      __builtin_add_overflow(address, static_cast<uint64_t>(hi) + elem, &last)) {
    invalid("strides address memory outside the address space");
  }
}

}  // namespace

Layout validate(const DLTensor& t, uint64_t flags, bool uint8_as_bool) {
  Layout l{};
  validate_header(t, flags, uint8_as_bool, l);
  validate_sizes(t, l);
  if (t.data == nullptr) {
    if (l.count != 0) invalid("data is NULL for a tensor of " + std::to_string(l.count) + " elements");
    l.compact = l.aligned = true;
    return l;
  }
  uintptr_t address = 0;
  if (__builtin_add_overflow(reinterpret_cast<uintptr_t>(t.data), t.byte_offset, &address)) {
    invalid("byte_offset " + std::to_string(t.byte_offset) + " overflows the data pointer");
  }
  l.data = reinterpret_cast<char*>(address);
  if (l.count == 0) {
    l.compact = l.aligned = true;
    return l;
  }
  const uint32_t bits = t.dtype.bits;
  if (bits < 8) {
    // Packed sub-byte elements: compact only (strides count elements, which do not start on byte boundaries); padded
    // ones compact too, packed by the copy ORT needs.
    if (!compact(t)) {
      throw Error(ErrorKind::kUnsupported, std::string("DLPack strided ") + (l.padded ? "padded" : "packed") +
                                               " sub-byte tensors are not supported");
    }
    l.compact = !l.padded;
    l.aligned = true;
    return l;
  }
  const size_t scalar = (t.dtype.code == kDLComplex ? bits / 2 : bits) / 8;
  l.aligned = address % scalar == 0;
  l.compact = compact(t);
  if (!l.compact) check_address_range(t, address);
  return l;
}

bool imports_in_place(const DLTensor& t, uint64_t flags) noexcept {
  try {
    const Layout l = validate(t, flags, false);
    return l.compact && l.aligned;
  } catch (...) {
    return false;
  }
}

}  // namespace ortdlpack
