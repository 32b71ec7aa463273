// ortdlpack: DLPack -> OrtValue, without copying.
//
// The OrtValue is created over the DLPack tensor's memory (data + byte_offset) with
// CreateTensorWithDataAndDeleterAsOrtValue and a one-shot allocator whose Free calls the DLPack deleter: the
// deleter runs exactly once, when ORT releases the value. Accepted without a copy: compact row-major layouts
// (any stride on size-1 dimensions, NULL strides), 0-d and size-0 tensors (data may then be NULL), data aligned to
// the element size. Other layouts (gaps, negative or overlapping strides, misaligned data) on host memory are
// copied into a compact tensor when the options allow it, else Error(kCopyRequired).
//
// Read-only memory: ORT has no read-only tensors. The result remembers the READ_ONLY flag (Tensor::read_only()),
// exports it again, and ortdlpack refuses to bind such a tensor as a session output. ORT never writes a session
// input, so a read-only tensor is safe to feed.
//
// Ownership: on success the result owns `managed` (when the import copied, the deleter has already run); on
// failure the caller still owns it. Every field is validated first (error.h: kInvalidArgument for malformed
// fields, kUnsupported for what ORT cannot hold).
#pragma once

#include <dlpack/dlpack.h>

#include "ortdlpack/placement.h"
#include "ortdlpack/tensor.h"

namespace ortdlpack {

struct ImportOptions {
  CopyMode copy = CopyMode::kNever;  // placement.h; kAlways: a fresh compact copy on the same device
  // Import kDLUInt/8 as ONNX bool (the pre-DLPack-1.0 convention for bool, e.g. older ORT exports).
  bool uint8_as_bool = false;
};

struct Imported {
  Tensor tensor;
  bool copied = false;
};

Imported from_dlpack(DLManagedTensorVersioned* managed, const ImportOptions& options = {});
Imported from_dlpack(DLManagedTensor* managed, const ImportOptions& options = {});

// Whether a consumer that reads only plain DLPack tensors reads `t` (with versioned `flags`) correctly as it is:
// compact row-major, aligned, byte_offset 0, a whole-byte element type ONNX has, writable, in CPU, CUDA or ROCm
// memory. That is what onnxruntime's own OrtValue.from_dlpack reads: such a tensor is handed to it without an
// import of ortdlpack's own. Never throws: a malformed tensor is not plain (importing it says why).
bool is_plain(const DLTensor& t, uint64_t flags = 0) noexcept;

// The largest ndim accepted from outside (numpy's limit).
inline constexpr int32_t kMaxNdim = 64;

}  // namespace ortdlpack
