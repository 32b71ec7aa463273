// ortdlpack: ORT memory (OrtMemoryInfo) <-> DLPack devices.
//
// Memory is exported as the lowest-level DLPack device that owns it, so any framework can take it: NVIDIA GPU
// memory is kDLCUDA (pinned host memory kDLCUDAHost), AMD kDLROCM/kDLROCMHost, Intel GPU kDLOneAPI, Apple GPU
// kDLMetal, WebGPU buffers kDLWebGPU, CPU kDLCPU (the EP table, docs/devices.md, holds every row). CUDA managed
// memory (kDLCUDAManaged) is held as CUDA memory: ORT has no managed memory type, and CUDA kernels read it as device
// memory (an imported tensor keeps its kDLCUDAManaged label). Memory no DLPack consumer could read (a plugin EP's
// private device) is never given one of those labels: it can be exported only after a mapping was registered,
// either explicitly with register_device() or by the EP itself, which advertises the key
// kEpMetadataDlpackDeviceType in its OrtEpDevice metadata (see register_ep_devices()). Anything else is an
// Error(kUnsupported) that names the memory.
#pragma once

#include <dlpack/dlpack.h>
#include <onnxruntime_c_api.h>

#include <cstdint>
#include <string>

namespace ortdlpack {

// The OrtEpDevice metadata key through which an EP declares the DLPack device type of its memory
// (decimal DLDeviceType, e.g. "12" for kDLExtDev).
inline constexpr const char* kEpMetadataDlpackDeviceType = "dlpack.device_type";

// A mapping for memory no built-in row covers: ORT memory identified by (device type, vendor id, memory type) — and
// by `name` when the vendor id is 0, as ORT reports the memory of EPs without a PCI vendor — <-> a DLPack device type.
// `name` is also the OrtMemoryInfo name used when ortdlpack creates memory infos for that DLPack device.
struct DeviceMapping {
  std::string name;
  OrtMemoryInfoDeviceType device_type;
  uint32_t vendor_id;
  OrtDeviceMemoryType memory_type;
  DLDeviceType dl_device_type;
};

/// \brief The DLPack device of ORT memory. Throws Error(kUnsupported) naming the memory when nothing maps it.
DLDevice to_dlpack_device(const OrtMemoryInfo* info);

/// \brief The OrtMemoryInfo for a DLPack device, created once per device and cached for the life of the process.
/// Throws Error(kUnsupported) naming the device when no row maps it.
const OrtMemoryInfo* memory_info(DLDevice device);

/// \brief Whether the host reads and writes the memory directly (CPU memory, pinned/host-accessible memory).
bool host_accessible(const OrtMemoryInfo* info);

/// \brief Adds a mapping for memory no built-in row covers. Throws Error(kInvalidArgument) when it would change an
/// existing mapping (a built-in one, or one registered before with other values) or give memory a DLPack type that
/// belongs to a vendor's own memory (kDLCUDA, kDLWebGPU, ...); registering the same row twice is a no-op.
/// Thread-safe.
void register_device(const DeviceMapping& mapping);

/// \brief Removes a mapping added by register_device(); returns whether one was removed. `name` is compared only for
/// vendor id 0 (as the mapping is matched).
bool unregister_device(OrtMemoryInfoDeviceType device_type, uint32_t vendor_id, OrtDeviceMemoryType memory_type,
                       const std::string& name = "");

/// \brief Registers the DEFAULT memory of every EP device in `env` whose EP advertises kEpMetadataDlpackDeviceType
/// (HOST_ACCESSIBLE memory needs no mapping: it is host memory, kDLCPU). Returns how many mappings were added.
/// to_dlpack_device() and memory_info() call it themselves on a miss.
int register_ep_devices(OrtEnv* env);

/// \brief The lower-case name of a DLPack device type ("cpu", "cuda", "cuda_host", "webgpu", "ext_dev", ...): how
/// front ends spell devices; nullptr for a type DLPack does not name.
const char* device_type_name(DLDeviceType type);

/// \brief Whether DLPack's data pointer on devices of this type is a handle of the device API's buffer object (OpenCL,
/// Vulkan, Metal, WebGPU), not an address: two tensors there share memory exactly when their handles are equal.
bool data_is_handle(DLDeviceType type);

/// \brief "cpu" (kDLCPU:0), "cuda:1", "ext_dev:0"; "device_type_N:id" for a type DLPack does not name.
std::string name_of(DLDevice device);

/// \brief Parses "cpu", "cuda", "cuda:1", ... (":id" optional, default 0). Error(kInvalidArgument) for unknown names
/// and invalid ids.
DLDevice dl_device_from_name(const std::string& name);

/// \brief The EP device an execution provider's device name names: "qnn:0", "ggml", "VirtualDeviceEP:1" (the EP by
/// any name resolve_provider() takes (ep.h), ":id" its index among the EP's devices, default 0), the EP's package
/// registered when needed. Error(kInvalidArgument) for a name that is no EP ortdlpack knows and for an index the EP
/// has no device at; Error(kUnsupported) saying what to install for a known EP the env lacks.
const OrtEpDevice* ep_device_from_name(const std::string& name);

/// \brief "VirtualDevice:1 (NPU, vendor 0xD1A9, DEFAULT memory)": how error messages name ORT memory.
std::string describe_memory(const OrtMemoryInfo* info);

/// \brief "kDLCUDA:0": how error messages name a DLPack device.
std::string describe_device(DLDevice device);

}  // namespace ortdlpack
