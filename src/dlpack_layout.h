// Internal: a DLPack tensor from outside, validated field by field, and what its layout is to ORT: whether the
// import holds it in place (compact row-major, aligned) or only as a copy. import.cc imports with it; a front end asks
// it before it hands a tensor on (imports_in_place).
#pragma once

#include <dlpack/dlpack.h>
#include <onnxruntime_c_api.h>

#include <cstddef>
#include <cstdint>

namespace ortdlpack {

// The largest ndim accepted from outside (numpy's limit).
inline constexpr int32_t kMaxNdim = 64;

// What validation learned about a DLPack tensor.
struct Layout {
  ONNXTensorElementDataType type;
  size_t count;  // elements
  size_t bytes;  // storage bytes of a compact copy
  char* data;    // data + byte_offset; NULL only when count == 0
  bool compact;  // row-major with no gaps (any stride on size-1 dims)
  bool aligned;  // data aligned to the element's scalar size
  bool padded;   // sub-byte elements one per byte (IS_SUBBYTE_TYPE_PADDED): ORT holds them only packed, as a copy
};

// Every field of a DLPack tensor from outside (versioned `flags`; 0 for a legacy tensor), and what the import needs
// to know about its layout. Error(kInvalidArgument) naming the field for a malformed one, Error(kUnsupported) for
// what ORT cannot hold (import.h). `uint8_as_bool`: ImportOptions::uint8_as_bool.
Layout validate(const DLTensor& t, uint64_t flags, bool uint8_as_bool);

// Whether from_dlpack (import.h) holds `t` where it is, without a copy of its own: valid, compact row-major and
// aligned. Never throws: a malformed tensor is not held in place (importing it says why).
bool imports_in_place(const DLTensor& t, uint64_t flags) noexcept;

}  // namespace ortdlpack
