// Devices as onnxruntime's Python API knows them: its device names, the memory its OrtValue wraps, and the OrtEpDevice
// behind an onnxruntime.OrtEpDevice. Plain C++ (no Python): the extension links it, tests/cpp tests it.
#pragma once

#include <dlpack/dlpack.h>
#include <onnxruntime_c_api.h>

#include <cstdint>
#include <string>

namespace ortdlpack::py {

// The device name onnxruntime's Python API uses for memory of that DLPack type ("cpu" for host memory, "cuda" for
// CUDA and ROCm memory); nullptr when onnxruntime has none.
const char* onnxruntime_device_name(DLDeviceType type);

// Whether onnxruntime's Python OrtValue.from_dlpack wraps memory of that type (CPU, CUDA, ROCm: the only public way
// to make an onnxruntime.OrtValue over foreign memory).
bool onnxruntime_wraps(DLDeviceType type);

// Whether onnxruntime's own OrtValue.from_dlpack reads `t` (with versioned `flags`) correctly as it is: what the
// core's import holds in place (imports_in_place), with byte_offset 0 (onnxruntime ignores it), writable, of a
// whole-byte element type ONNX has, in memory it wraps. Such a tensor is handed to it without an import of
// ortdlpack's own. Never throws: a malformed tensor is not plain (importing it says why).
bool is_plain(const DLTensor& t, uint64_t flags = 0) noexcept;

// The EP device of the env with that EP name and hardware device (type, vendor id, device id): how the binding finds
// the OrtEpDevice behind an onnxruntime.OrtEpDevice, which exposes no pointer. Error(kInvalidArgument) when the env
// has none.
const OrtEpDevice* find_ep_device(const std::string& ep_name, int64_t hardware_type, int64_t vendor_id,
                                  int64_t device_id);

}  // namespace ortdlpack::py
