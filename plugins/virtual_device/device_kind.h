// What a memory device (OrtMemoryDevice) means to the virtual device EP, and the names shared across its files.
#pragma once

#include <cstdint>

#include "onnxruntime_c_api.h"  // also brings onnxruntime_ep_c_api.h (it has no include guard: never include twice)
#include "ortdlpack/virtual_device.h"

namespace ortdlpack::vd {

#if ORTDLPACK_VD_CUDA
// The CUDA flavor (libortdlpack_virtual_cuda.so, built for the tests only, never installed): the same devices
// presented the way ONNX Runtime's CUDA plugin EP presents NVIDIA GPUs (its EP name, vendor 0x10DE, GPU hardware,
// memory named "Cuda" / "CudaPinned"), so that the code paths of NVIDIA memory run on it. It exports no ortdlpack
// stream convention: its stream handles are cudaStream_ts of the test CUDA runtime (tests/cpp/cuda_sim), reached
// through the process's CUDA runtime as for a real GPU; no "dlpack.device_type" key either (NVIDIA memory is kDLCUDA
// by ortdlpack's EP table).
inline constexpr const char* kEpName = ORTDLPACK_VD_CUDA_EP_NAME;
inline constexpr const char* kVendor = "NVIDIA";
inline constexpr uint32_t kVendorId = ORTDLPACK_VD_CUDA_VENDOR_ID;
inline constexpr OrtHardwareDeviceType kHardwareType = OrtHardwareDeviceType_GPU;
inline constexpr OrtMemoryInfoDeviceType kMemoryDeviceType = OrtMemoryInfoDeviceType_GPU;
inline constexpr const char* kDeviceMemoryName = ORTDLPACK_VD_CUDA_MEMINFO_DEVICE;
inline constexpr const char* kHostMemoryName = ORTDLPACK_VD_CUDA_MEMINFO_HOST;
inline constexpr const char* kDlpackDeviceType = nullptr;
#else
inline constexpr const char* kEpName = ORTDLPACK_VD_EP_NAME;
inline constexpr const char* kVendor = "ortdlpack";
inline constexpr uint32_t kVendorId = ORTDLPACK_VD_VENDOR_ID;
inline constexpr OrtHardwareDeviceType kHardwareType = OrtHardwareDeviceType_NPU;
inline constexpr OrtMemoryInfoDeviceType kMemoryDeviceType = OrtMemoryInfoDeviceType_NPU;
inline constexpr const char* kDeviceMemoryName = ORTDLPACK_VD_MEMINFO_DEVICE;
inline constexpr const char* kHostMemoryName = ORTDLPACK_VD_MEMINFO_HOST;
inline constexpr const char* kDlpackDeviceType = "12";  // kDLExtDev, as a decimal string
#endif
inline constexpr const char* kVersion = "0.1.0";
inline constexpr uint32_t kNumDevices = ORTDLPACK_VD_NUM_DEVICES;

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
  if (type != kMemoryDeviceType || ep_api.MemoryDevice_GetVendorId(dev) != kVendorId || id >= kNumDevices) {
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
  return api.CreateMemoryInfo_V2(dev ? kDeviceMemoryName : kHostMemoryName, kMemoryDeviceType, kVendorId,
                                 static_cast<int32_t>(device_id),
                                 dev ? OrtDeviceMemoryType_DEFAULT : OrtDeviceMemoryType_HOST_ACCESSIBLE,
                                 /*alignment*/ 0, OrtDeviceAllocator, out);
}

}  // namespace ortdlpack::vd
