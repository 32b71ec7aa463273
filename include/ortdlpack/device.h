// ortdlpack: the one table between ORT memory (OrtMemoryInfo) and DLPack devices.
//
// Memory is exported as the lowest-level DLPack device that owns it, so any framework can take it: NVIDIA GPU
// memory is kDLCUDA (pinned host memory kDLCUDAHost), AMD kDLROCM/kDLROCMHost, Intel GPU kDLOneAPI, Apple GPU
// kDLMetal, CPU kDLCPU. CUDA managed memory (kDLCUDAManaged) is held as CUDA memory: ORT has no managed memory
// type, and CUDA kernels read it as device memory (an imported tensor keeps its kDLCUDAManaged label). Memory no DLPack consumer could read (a plugin EP's private device) is never given one of
// those labels: it can be exported only after a mapping was registered, either explicitly with register_device()
// or by the EP itself, which advertises the key kEpMetadataDlpackDeviceType in its OrtEpDevice metadata
// (see register_ep_devices()). Anything else is an Error(kUnsupported) that names the device.
#pragma once

#include <dlpack/dlpack.h>
#include <onnxruntime_c_api.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace ortdlpack {

// PCI vendor ids ORT uses in OrtMemoryInfo.
inline constexpr uint32_t kVendorNvidia = 0x10DE;
inline constexpr uint32_t kVendorAmd = 0x1002;
inline constexpr uint32_t kVendorIntel = 0x8086;
inline constexpr uint32_t kVendorApple = 0x106B;

// The OrtEpDevice metadata key through which an EP declares the DLPack device type of its memory
// (decimal DLDeviceType, e.g. "12" for kDLExtDev).
inline constexpr const char* kEpMetadataDlpackDeviceType = "dlpack.device_type";

// One row of the mapping: ORT memory identified by (device type, vendor id, memory type) <-> a DLPack device type.
// `name` is the OrtMemoryInfo name used when ortdlpack creates memory infos for that DLPack device.
struct DeviceMapping {
  std::string name;
  OrtMemoryInfoDeviceType device_type;
  uint32_t vendor_id;
  OrtDeviceMemoryType memory_type;
  DLDeviceType dl_device_type;
};

// The DLPack device of ORT memory. Throws Error(kUnsupported) naming the device when nothing maps it.
DLDevice to_dlpack_device(const OrtMemoryInfo* info);

// The OrtMemoryInfo for a DLPack device, created once per device and cached for the life of the process.
// Throws Error(kUnsupported) naming the device when no row maps it.
const OrtMemoryInfo* memory_info(DLDevice device);

// True when the host can read and write the memory directly (CPU memory, pinned/host-accessible memory).
bool host_accessible(const OrtMemoryInfo* info);

// Adds a mapping for a device no built-in row covers. Throws Error(kInvalidArgument) when it would change an
// existing mapping (a built-in one, or one registered before with other values); registering the same row twice is
// a no-op. Thread-safe.
void register_device(const DeviceMapping& mapping);

// Removes a mapping added by register_device(); returns whether one was removed.
bool unregister_device(OrtMemoryInfoDeviceType device_type, uint32_t vendor_id, OrtDeviceMemoryType memory_type);

// Registers the DEFAULT memory of every EP device in `env` whose EP advertises kEpMetadataDlpackDeviceType
// (HOST_ACCESSIBLE memory needs no mapping: it is host memory, kDLCPU). Returns how many mappings were added.
int register_ep_devices(OrtEnv* env);

// The one table of DLPack device type names. Lower-case names ("cpu", "cuda", "cuda_host", "ext_dev", ...) are how
// bindings spell devices; nullptr for a type DLPack does not name.
const char* device_type_name(DLDeviceType type);

// "cpu" (kDLCPU:0), "cuda:1", "ext_dev:0"; "device_type_N:id" for a type DLPack does not name.
std::string name_of(DLDevice device);

// Parses "cpu", "cuda", "cuda:1", ... (":id" optional, default 0). Error(kInvalidArgument) for unknown names and
// invalid ids.
DLDevice dl_device_from_name(const std::string& name);

// The device name onnxruntime's Python API uses for memory of that DLPack type ("cpu" for host memory, "cuda" for
// CUDA and ROCm memory); nullptr when onnxruntime has none.
const char* onnxruntime_device_name(DLDeviceType type);

// How onnxruntime's Python IOBinding.bind_output names the device of `memory` (its device_type and device_id, which
// carry no memory type and no vendor but NVIDIA's "cuda"): host-accessible memory is ("cpu", 0), where ORT then
// allocates; GPU memory "cuda" (NVIDIA) or "gpu"; NPU memory "npu".
std::pair<const char*, int> onnxruntime_binding_device(const OrtMemoryInfo* memory);

// Whether onnxruntime's Python OrtValue.from_dlpack wraps memory of that type (CPU, CUDA, ROCm: the only public way
// to make an onnxruntime.OrtValue over foreign memory).
bool onnxruntime_wraps(DLDeviceType type);

// ORT device types and memory types by name ("cpu", "gpu", "fpga", "npu"; "default", "host_accessible"), as bindings
// spell them. Error(kInvalidArgument) for unknown names.
OrtMemoryInfoDeviceType ort_device_type_from_name(const std::string& name);
OrtDeviceMemoryType memory_type_from_name(const std::string& name);

// Whether two memory infos name the same memory: device type, vendor, device id and memory type (ORT's own
// CompareMemoryInfo also compares names and allocator kinds, which differ between an EP device's info and the
// info of a tensor its allocator made).
bool same_memory(const OrtMemoryInfo* a, const OrtMemoryInfo* b);

// The EP device of `env` with that EP name and hardware device (type, vendor id, device id): how a binding finds the
// OrtEpDevice behind its language's handle (onnxruntime.OrtEpDevice exposes no pointer). Error(kInvalidArgument)
// when the env has none.
const OrtEpDevice* find_ep_device(OrtEnv* env, const std::string& ep_name, int64_t hardware_type, int64_t vendor_id,
                                  int64_t device_id);

// The EP devices of `env` whose EP is named `ep_name`, in the env's order (empty when it has none).
std::vector<const OrtEpDevice*> ep_devices_of(OrtEnv* env, const std::string& ep_name);

// "VirtualDevice:1 (NPU, vendor 0xD1A9, DEFAULT memory)": how error messages name ORT memory.
std::string describe(const OrtMemoryInfo* info);

// "kDLCUDA:0": how error messages name a DLPack device.
std::string describe(DLDevice device);

}  // namespace ortdlpack
