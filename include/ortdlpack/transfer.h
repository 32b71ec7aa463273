// ortdlpack: allocation on and copies between ORT devices, through the environment.
//
// Device memory belongs to the EP that brings the device: tensors are allocated with the env's shared allocator
// for that memory (GetSharedAllocator) and moved with the env's data transfers (CopyTensors). ORT has no
// host-to-host data transfer, so copies between host-accessible memories are done here with memcpy.
#pragma once

#include <dlpack/dlpack.h>
#include <onnxruntime_c_api.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "ortdlpack/tensor.h"

namespace ortdlpack {

/// \brief A new, uninitialised tensor in `memory` (any OrtMemoryInfo: from an OrtEpDevice, a session, or
/// memory_info()). CPU memory comes from ORT's default CPU allocator; other memory from the env's shared allocator, or
/// Error(kUnsupported) naming the memory when the env has none.
Tensor allocate(ONNXTensorElementDataType type, const std::vector<int64_t>& shape, const OrtMemoryInfo* memory);
/// \brief As above, in the memory of DLPack device `device` (memory_info(), device.h).
Tensor allocate(ONNXTensorElementDataType type, const std::vector<int64_t>& shape, DLDevice device);
/// \brief As above, in the `memory_type` memory of an EP device.
Tensor allocate(ONNXTensorElementDataType type, const std::vector<int64_t>& shape, const OrtEpDevice* ep_device,
                OrtDeviceMemoryType memory_type = OrtDeviceMemoryType_DEFAULT);

/// \brief Copies each src[i] into dst[i] (same element type and shape: Error(kInvalidArgument) otherwise). Host-to-host
/// pairs are memcpy'd; all others go to ORT in one CopyTensors call per memory pair. Ordering (docs/streams.md): the
/// copy runs on `stream` when given, else on ortdlpack's stream of the device side (stream.h), after pending work
/// there; a copy into host memory is complete when copy() returns. Error(kUnsupported) naming both memories when no
/// transfer exists.
void copy(const std::vector<Tensor>& src, const std::vector<Tensor>& dst, OrtSyncStream* stream = nullptr);
/// \brief As above, for one pair.
void copy(const Tensor& src, const Tensor& dst, OrtSyncStream* stream = nullptr);

/// \brief A copy of `src` in `memory` (allocate + copy). The copy is compact and writable.
Tensor to(const Tensor& src, const OrtMemoryInfo* memory, OrtSyncStream* stream = nullptr);
/// \brief As above, in the memory of DLPack device `device`.
Tensor to(const Tensor& src, DLDevice device, OrtSyncStream* stream = nullptr);

}  // namespace ortdlpack
