// Internal: the ORT C API idioms the core repeats, each written once here. Everything reaches ORT through ort()
// (api.h); nothing here decides anything about devices or EPs.
#pragma once

#include <onnxruntime_c_api.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "ortdlpack/api.h"

namespace ortdlpack {

// The newest C API version the running ORT serves: its minor release number (32 for ORT 1.32), which may be
// newer than this build's headers (ort_api_version() is capped by them). No C++ user calls it: what a front end asks
// where behaviour differs between ORT releases rather than API versions.
uint32_t ort_runtime_api_version();

}  // namespace ortdlpack

namespace ortdlpack::detail {

// The fields of an OrtMemoryInfo that say which memory it is, read in one place. `name` is ORT's storage (valid
// while the info lives).
struct MemoryFields {
  const char* name = "";
  OrtMemoryInfoDeviceType device_type = OrtMemoryInfoDeviceType_CPU;
  uint32_t vendor_id = 0;
  OrtDeviceMemoryType memory_type = OrtDeviceMemoryType_DEFAULT;
  int device_id = 0;
};
MemoryFields memory_fields(const OrtMemoryInfo* info);

// Memory of ORT's CPU device (its DEFAULT memory): what ORT's default CPU allocator serves and a CPU kernel reads.
// Host-accessible memory of other devices (pinned) is host memory too, but not CPU memory (device.h: host_accessible).
bool is_cpu_memory(const OrtMemoryInfo* info);

// Which memory an OrtMemoryInfo names, by value: device type, vendor, device id and memory type (ORT's own
// CompareMemoryInfo also compares names and allocator kinds, which differ between an EP device's info and the info
// of a tensor its allocator made). Kept where the info may not outlive it: a tensor's info is its OrtValue's own, and
// a freed one's address is handed out again (a pointer says nothing once its info is gone). NULL is a memory of its
// own.
struct MemoryId {
  bool null = true;
  OrtMemoryInfoDeviceType device_type = OrtMemoryInfoDeviceType_CPU;
  uint32_t vendor_id = 0;
  OrtDeviceMemoryType memory_type = OrtDeviceMemoryType_DEFAULT;
  int device_id = 0;
  bool operator==(const MemoryId& o) const noexcept {
    return null == o.null && device_type == o.device_type && vendor_id == o.vendor_id && memory_type == o.memory_type &&
           device_id == o.device_id;
  }
  bool operator!=(const MemoryId& o) const noexcept { return !(*this == o); }
};
MemoryId memory_id(const OrtMemoryInfo* info);

// Whether two memory infos name the same memory (memory_id).
bool same_memory(const OrtMemoryInfo* a, const OrtMemoryInfo* b);

// An env's EP devices (ortdlpack's env unless named), in the env's order: one GetEpDevices call, iterated without
// copying.
//   for (const OrtEpDevice* d : env_ep_devices()) ...
class EpDeviceList {
 public:
  explicit EpDeviceList(const OrtEnv* e);
  const OrtEpDevice* const* begin() const noexcept { return devices_; }
  const OrtEpDevice* const* end() const noexcept { return devices_ + count_; }
  size_t size() const noexcept { return count_; }

 private:
  const OrtEpDevice* const* devices_ = nullptr;
  size_t count_ = 0;
};
inline EpDeviceList env_ep_devices(const OrtEnv* e = env()) { return EpDeviceList(e); }

// The DEFAULT memory of an EP device (NULL for EPs that use plain CPU memory, such as the CPU EP).
const OrtMemoryInfo* default_memory(const OrtEpDevice* device);

// ORT's default CPU allocator.
OrtAllocator* default_allocator();

// check() (api.h) with what was being done in front of ORT's message: "<context>: <ORT's message>".
void check(OrtStatus* status, const std::string& context);

// After ORT created a tensor of element type `requested` (allocate, import): Error(kUnsupported) naming `what` when it
// holds it as another type, before anything reads it. ORT 1.29 does so for the types after FLOAT4E2M1, which its C
// enum and ONNX number differently (a C-API FLOAT8E8M0 tensor is held, sized and reported as INT2).
void check_holds(ONNXTensorElementDataType requested, ONNXTensorElementDataType held, const char* what);

// For calls whose failure is an answer rather than an error (a query a device may not support): releases the
// status and says whether there was one.
bool failed(OrtStatus* status) noexcept;

}  // namespace ortdlpack::detail
