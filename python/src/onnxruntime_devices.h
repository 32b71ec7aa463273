// Devices as onnxruntime's Python API knows them: its device names, the C.OrtDevice its IOBinding binds memory with,
// the memory its OrtValue wraps, and the OrtEpDevice behind an onnxruntime.OrtEpDevice. Plain C++ (no Python): the
// extension links it, tests/cpp tests it.
#pragma once

#include <dlpack/dlpack.h>
#include <onnxruntime_c_api.h>

#include <cstdint>
#include <string>

namespace ortdlpack::py {

// The device name onnxruntime's Python API uses for memory of that DLPack type ("cpu" for host memory, "cuda" for
// CUDA and ROCm memory); nullptr when onnxruntime has none.
const char* onnxruntime_device_name(DLDeviceType type);

// The device of `memory` as onnxruntime's C.OrtDevice(device_type, memory_type, vendor_id, device_id) takes it
// (onnxruntime numbers device and memory types as ORT's C API does: CPU 0, GPU 1, FPGA 2, NPU 3; DEFAULT 0,
// HOST_ACCESSIBLE 5). What its IOBinding binds any memory with, plugin EPs' included: by address for inputs and
// destinations, as the device ORT allocates an output on; the public IOBinding.bind_* name a device by type and
// id only, which finds no allocator for memory of a vendor but NVIDIA's ("Failed to find allocator for device").
// Every onnxruntime from 1.23 has that constructor. Error(kUnsupported) naming the version and the alternative for
// memory an onnxruntime cannot bind by address (GPU memory of vendors other than NVIDIA before onnxruntime 1.30).
struct OnnxruntimeDevice {
  int device_type;
  int memory_type;
  uint32_t vendor_id;
  int device_id;
};
OnnxruntimeDevice onnxruntime_device_fields(const OrtMemoryInfo* memory);

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
