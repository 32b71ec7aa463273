// OrtEpFactory of the virtual device EP: two virtual NPU devices (ids 0 and 1) that ORT itself cannot discover,
// each with a DEFAULT (guarded) and a HOST_ACCESSIBLE memory, allocators and a data transfer. CreateEp makes a
// VdEp (ep.h) that a session can select but that claims no node: the EP exists to provide memory, not to run nodes.
#pragma once

#include <array>

#include "device_kind.h"

namespace ortdlpack::vd {

class VdFactory : public OrtEpFactory {
 public:
  VdFactory(const OrtApi& api, const OrtEpApi& ep_api) noexcept;
  ~VdFactory();
  VdFactory(const VdFactory&) = delete;
  VdFactory& operator=(const VdFactory&) = delete;

  // Creates the per-device memory infos. Must succeed before the factory is handed to ORT.
  OrtStatus* Init() noexcept;

 private:
  static const char* ORT_API_CALL GetNameImpl(const OrtEpFactory* self) noexcept;
  static const char* ORT_API_CALL GetVendorImpl(const OrtEpFactory* self) noexcept;
  static uint32_t ORT_API_CALL GetVendorIdImpl(const OrtEpFactory* self) noexcept;
  static const char* ORT_API_CALL GetVersionImpl(const OrtEpFactory* self) noexcept;
  static OrtStatus* ORT_API_CALL GetSupportedDevicesImpl(OrtEpFactory* self, const OrtHardwareDevice* const* devices,
                                                         size_t num_devices, OrtEpDevice** ep_devices,
                                                         size_t max_ep_devices, size_t* num_ep_devices) noexcept;
  static OrtStatus* ORT_API_CALL CreateEpImpl(OrtEpFactory* self, const OrtHardwareDevice* const* devices,
                                              const OrtKeyValuePairs* const* ep_metadata, size_t num_devices,
                                              const OrtSessionOptions* session_options, const OrtLogger* logger,
                                              OrtEp** ep) noexcept;
  static void ORT_API_CALL ReleaseEpImpl(OrtEpFactory* self, OrtEp* ep) noexcept;
  static OrtStatus* ORT_API_CALL CreateAllocatorImpl(OrtEpFactory* self, const OrtMemoryInfo* memory_info,
                                                     const OrtKeyValuePairs* allocator_options,
                                                     OrtAllocator** allocator) noexcept;
  static void ORT_API_CALL ReleaseAllocatorImpl(OrtEpFactory* self, OrtAllocator* allocator) noexcept;
  static OrtStatus* ORT_API_CALL CreateDataTransferImpl(OrtEpFactory* self,
                                                        OrtDataTransferImpl** data_transfer) noexcept;
  static bool ORT_API_CALL IsStreamAwareImpl(const OrtEpFactory* self) noexcept;
  static OrtStatus* ORT_API_CALL CreateSyncStreamForDeviceImpl(OrtEpFactory* self, const OrtMemoryDevice* device,
                                                               const OrtKeyValuePairs* stream_options,
                                                               OrtSyncStreamImpl** stream) noexcept;

  OrtStatus* EnsureHardwareDevices() noexcept;
  OrtStatus* MakeEpDevice(uint32_t id, OrtEpDevice** out) noexcept;

  const OrtApi& api_;
  const OrtEpApi& ep_api_;
  // Owned by the factory (ORT does not take ownership of hardware devices an EP creates); they outlive the
  // OrtEpDevices that point at them because ORT releases EP devices before it calls ReleaseEpFactory.
  std::array<OrtHardwareDevice*, kNumDevices> hw_{};
  std::array<OrtMemoryInfo*, kNumDevices> device_info_{};  // DEFAULT memory per device
  std::array<OrtMemoryInfo*, kNumDevices> host_info_{};    // HOST_ACCESSIBLE memory per device
};

}  // namespace ortdlpack::vd
