// ortdlpack: DLPack -> OrtValue, without copying.
//
// The OrtValue is created over the DLPack tensor's memory (data + byte_offset) with
// CreateTensorWithDataAndDeleterAsOrtValue and a one-shot allocator whose Free calls the DLPack deleter: the
// deleter runs exactly once, when ORT releases the value. Accepted without a copy: compact row-major layouts
// (any stride on size-1 dimensions, NULL strides), 0-d and size-0 tensors (data may then be NULL), data aligned to
// the element size. Other layouts (gaps, negative or overlapping strides, misaligned data) on host memory are
// copied into a compact tensor when the options allow it, else Error(kCopyRequired).
//
// Padded sub-byte tensors (IS_SUBBYTE_TYPE_PADDED: one element per byte, as ml_dtypes holds int4) are packed into a
// copy, as ORT holds them, when the options allow a copy (else Error(kCopyRequired)).
//
// Read-only memory: ORT has no read-only tensors. The result remembers the READ_ONLY flag (Tensor::read_only()),
// or ImportOptions::read_only, exports it again, and ortdlpack refuses to bind such a tensor as a session output. ORT
// never writes a session input, so a read-only tensor is safe to feed.
//
// Placement (placement.h): the result is then placed at ImportOptions::target under ImportOptions::copy, in the
// same call — the one import protocol every binding uses. copy=kAlways asks for memory the caller holds alone and
// may write (the Array API's copy=True, as numpy and torch give it) and makes exactly one copy: none more when the
// placement moves the tensor anyway, none at all when the producer says it copied already and the copy is writable
// (IS_COPIED without READ_ONLY; a READ_ONLY|IS_COPIED tensor is copied again, into writable memory).
//
// Ownership (the exception ortdlpack.h names): on success the result owns `managed` (when the import copied, the
// deleter has already run or runs once the copy no longer reads the source); on failure the caller still owns it, as
// DLPack's consumer rule has it. Every field is validated first
// (error.h: kInvalidArgument for malformed fields, kUnsupported for what ORT cannot hold).
#pragma once

#include <dlpack/dlpack.h>

#include "ortdlpack/placement.h"
#include "ortdlpack/tensor.h"

namespace ortdlpack {

struct ImportOptions {
  CopyMode copy = CopyMode::kNever;    // placement.h; kAlways: a fresh compact copy
  Target target = Target::anywhere();  // where the result must be (placement.h)
  // Import kDLUInt/8 as ONNX bool (the pre-DLPack-1.0 convention for bool, e.g. older ORT exports).
  bool uint8_as_bool = false;
  // Treat the memory as read-only whatever the flags say: producers whose arrays are immutable by contract but
  // whose capsules carry no READ_ONLY flag (JAX, TensorFlow). The result is ReadOnly::kByContract (tensor.h),
  // unless the producer says it made a fresh copy (IS_COPIED): that one is the consumer's.
  bool read_only = false;
  CopyRunner run_copy = nullptr;  // runs a copy the import makes (placement.h)
};

struct Imported {
  Tensor tensor;
  // The tensor is a fresh writable copy the caller holds alone (pass IS_COPIED when exporting it): one the import or
  // its placement made, or the producer's (IS_COPIED without READ_ONLY), in every CopyMode (kNever forbids
  // ortdlpack's copies, not a producer's).
  bool copied = false;
};

/// \brief Imports a DLPack >= 1.0 tensor as a Tensor without a copy where its layout and `options` allow (the contract
/// above: validation, copies, ownership, read-only, ordering).
Imported from_dlpack(DLManagedTensorVersioned* managed, const ImportOptions& options = {});
/// \brief Imports a legacy (pre-1.0) DLPack tensor, as from_dlpack() of a versioned one with no flags.
Imported from_dlpack(DLManagedTensor* managed, const ImportOptions& options = {});

}  // namespace ortdlpack
