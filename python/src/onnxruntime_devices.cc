// Devices as onnxruntime's Python API knows them (onnxruntime_devices.h).
#include "onnxruntime_devices.h"

#include "frontend.h"

#include <string>

#include "ortdlpack/api.h"
#include "ortdlpack/device.h"
#include "ortdlpack/error.h"

namespace ortdlpack::py {

const char* onnxruntime_device_name(DLDeviceType type) {
  switch (type) {
    case kDLCPU:
    case kDLCUDAHost:
    case kDLROCMHost:
      return "cpu";
    case kDLCUDA:
    case kDLROCM:  // onnxruntime's Python names ROCm memory "cuda" too
      return "cuda";
    default:
      return nullptr;
  }
}

bool onnxruntime_wraps(DLDeviceType type) { return type == kDLCPU || type == kDLCUDA || type == kDLROCM; }

bool is_plain(const DLTensor& t, uint64_t flags) noexcept {
  return t.byte_offset == 0 && (flags & DLPACK_FLAG_BITMASK_READ_ONLY) == 0 && t.dtype.bits >= 8 &&
         t.dtype.code != kDLComplex && onnxruntime_wraps(t.device.device_type) && imports_in_place(t, flags);
}

const OrtEpDevice* find_ep_device(const std::string& ep_name, int64_t hardware_type, int64_t vendor_id,
                                  int64_t device_id) {
  const OrtApi& api = ort();
  for (const OrtEpDevice* d : detail::env_ep_devices()) {
    const OrtHardwareDevice* hw = api.EpDevice_Device(d);
    if (ep_name == api.EpDevice_EpName(d) && static_cast<int64_t>(api.HardwareDevice_Type(hw)) == hardware_type &&
        static_cast<int64_t>(api.HardwareDevice_VendorId(hw)) == vendor_id &&
        static_cast<int64_t>(api.HardwareDevice_DeviceId(hw)) == device_id) {
      return d;
    }
  }
  throw Error(ErrorKind::kInvalidArgument,
              "OrtEpDevice of EP '" + ep_name + "' is not among the environment's EP devices");
}

}  // namespace ortdlpack::py
