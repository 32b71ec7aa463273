// ortdlpack: OrtValue -> DLPack, without copying.
//
// The DLPack tensor points at the OrtValue's memory and shares ownership of it: it holds one reference of the
// Tensor, dropped by its deleter, so the memory lives as long as the longest of the two. Strides are always filled
// (DLPack 1.2), byte_offset is 0, and the device is the lowest-level DLPack device (device.h).
#pragma once

#include <dlpack/dlpack.h>

#include <cstdint>

#include "ortdlpack/tensor.h"

namespace ortdlpack {

/// \brief A DLPack >= 1.0 tensor (version DLPACK_MAJOR_VERSION.DLPACK_MINOR_VERSION of the header built with). Flags:
/// READ_ONLY when the tensor is read-only, plus `extra_flags` (a caller that copied passes IS_COPIED).
/// Throws Error(kUnsupported) for element types or memory DLPack cannot carry.
DLManagedTensorVersioned* to_dlpack_versioned(const Tensor& tensor, uint64_t extra_flags = 0);

/// \brief A legacy (pre-1.0) DLPack tensor. It cannot say "read-only" nor describe packed sub-byte types, so both are
/// Error(kUnsupported) rather than silently exported; a tensor read-only by its producer's contract
/// (ReadOnly::kByContract: JAX, TensorFlow, whose own exports are such legacy tensors) is exported.
DLManagedTensor* to_dlpack_legacy(const Tensor& tensor);

/// \brief A legacy tensor over a versioned one, sharing its DLTensor; its deleter deletes `versioned`. For consumers
/// that take legacy tensors only (onnxruntime's OrtValue.from_dlpack): the flags (READ_ONLY) are lost, so the caller
/// vouches for what the consumer does with the memory. Takes ownership of `versioned`, also if it throws (the rule of
/// ortdlpack.h: then deleted).
DLManagedTensor* legacy_view(DLManagedTensorVersioned* versioned);

}  // namespace ortdlpack
