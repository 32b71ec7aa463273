// What a memory device (OrtMemoryDevice) means to the virtual device EP, and the names shared across its files.
#pragma once

#include <cstdint>

#include "onnxruntime_c_api.h"  // also brings onnxruntime_ep_c_api.h (it has no include guard: never include twice)
#include "ortdlpack/virtual_device.h"

namespace ortdlpack::vd {

inline constexpr const char* kEpName = ORTDLPACK_VD_EP_NAME;
inline constexpr const char* kVendor = "ortdlpack";
inline constexpr const char* kVersion = "0.1.0";
inline constexpr uint32_t kVendorId = ORTDLPACK_VD_VENDOR_ID;
inline constexpr uint32_t kNumDevices = ORTDLPACK_VD_NUM_DEVICES;
inline constexpr const char* kDlpackDeviceType = "12";  // kDLExtDev, as a decimal string

enum class MemKind {
  kCpu,     // any CPU memory (ORT's own CPU allocators)
  kHost,    // this EP's HOST_ACCESSIBLE memory: plain host memory tagged with a virtual device
  kDevice,  // this EP's DEFAULT memory: guarded, host code must never dereference it
  kOther,   // someone else's device: this EP cannot copy it
};

struct MemSide {
  MemKind kind;
  uint32_t device_id;  // meaningful for kHost / kDevice
};

// Classifies by device type, vendor id, device id and memory type (not by OrtMemoryInfo name).
inline MemSide Classify(const OrtEpApi& ep_api, const OrtMemoryDevice* dev) noexcept {
  if (dev == nullptr) return {MemKind::kOther, 0};
  const OrtMemoryInfoDeviceType type = ep_api.MemoryDevice_GetDeviceType(dev);
  if (type == OrtMemoryInfoDeviceType_CPU) return {MemKind::kCpu, 0};
  const uint32_t id = ep_api.MemoryDevice_GetDeviceId(dev);
  if (type != OrtMemoryInfoDeviceType_NPU || ep_api.MemoryDevice_GetVendorId(dev) != kVendorId || id >= kNumDevices) {
    return {MemKind::kOther, 0};
  }
  switch (ep_api.MemoryDevice_GetMemoryType(dev)) {
    case OrtDeviceMemoryType_DEFAULT:
      return {MemKind::kDevice, id};
    case OrtDeviceMemoryType_HOST_ACCESSIBLE:
      return {MemKind::kHost, id};
  }
  return {MemKind::kOther, 0};
}

// Creates the OrtMemoryInfo of (device_id, kind), kind being kDevice or kHost. Caller releases it.
inline OrtStatus* CreateVdMemoryInfo(const OrtApi& api, uint32_t device_id, MemKind kind,
                                     OrtMemoryInfo** out) noexcept {
  const bool dev = kind == MemKind::kDevice;
  return api.CreateMemoryInfo_V2(dev ? ORTDLPACK_VD_MEMINFO_DEVICE : ORTDLPACK_VD_MEMINFO_HOST,
                                 OrtMemoryInfoDeviceType_NPU, kVendorId, static_cast<int32_t>(device_id),
                                 dev ? OrtDeviceMemoryType_DEFAULT : OrtDeviceMemoryType_HOST_ACCESSIBLE,
                                 /*alignment*/ 0, OrtDeviceAllocator, out);
}

}  // namespace ortdlpack::vd
