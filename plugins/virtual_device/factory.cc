// The EP factory: devices, metadata, allocator and data-transfer creation.
#include "factory.h"

#include <atomic>
#include <new>

#include "allocator.h"
#include "data_transfer.h"
#include "ep.h"
#include "stream.h"

namespace ortdlpack::vd {
namespace {
// The device the last OrtEp was created on (the first of the devices ORT handed CreateEp), for tests of which device
// a session's provider options select (ortdlpack_vd_last_ep_device).
std::atomic<int> g_last_ep_device{-1};
}  // namespace

VdFactory::VdFactory(const OrtApi& api, const OrtEpApi& ep_api) noexcept : OrtEpFactory{}, api_(api), ep_api_(ep_api) {
  // Every callback of the API-29 struct is set: ORT 1.30 was seen to call some without a null check.
  ort_version_supported = ORT_API_VERSION;
  GetName = GetNameImpl;
  GetVendor = GetVendorImpl;
  GetSupportedDevices = GetSupportedDevicesImpl;
  CreateEp = CreateEpImpl;
  ReleaseEp = ReleaseEpImpl;
  GetVendorId = GetVendorIdImpl;
  GetVersion = GetVersionImpl;
  ValidateCompiledModelCompatibilityInfo = [](OrtEpFactory*, const OrtHardwareDevice* const*, size_t, const char*,
                                              OrtCompiledModelCompatibility* out) noexcept -> OrtStatus* {
    *out = OrtCompiledModelCompatibility_EP_NOT_APPLICABLE;  // this EP never compiles models
    return nullptr;
  };
  CreateAllocator = CreateAllocatorImpl;
  ReleaseAllocator = ReleaseAllocatorImpl;
  CreateDataTransfer = CreateDataTransferImpl;
  IsStreamAware = IsStreamAwareImpl;
  CreateSyncStreamForDevice = CreateSyncStreamForDeviceImpl;
  GetHardwareDeviceIncompatibilityDetails = [](OrtEpFactory*, const OrtHardwareDevice*,
                                               OrtDeviceEpIncompatibilityDetails*) noexcept -> OrtStatus* {
    return nullptr;  // leaving details untouched means "compatible"
  };
  CreateExternalResourceImporterForDevice = [](OrtEpFactory*, const OrtEpDevice*,
                                               OrtExternalResourceImporterImpl** out) noexcept -> OrtStatus* {
    *out = nullptr;  // no external resource import
    return nullptr;
  };
  GetNumCustomOpDomains = [](OrtEpFactory*, size_t* n) noexcept -> OrtStatus* {
    *n = 0;
    return nullptr;
  };
  GetCustomOpDomains = [](OrtEpFactory*, OrtCustomOpDomain**, size_t) noexcept -> OrtStatus* { return nullptr; };
  InitGraphicsInterop = [](OrtEpFactory*, const OrtEpDevice*, const OrtGraphicsInteropConfig*) noexcept -> OrtStatus* {
    return nullptr;
  };
  DeinitGraphicsInterop = [](OrtEpFactory*, const OrtEpDevice*) noexcept -> OrtStatus* { return nullptr; };
  SelectBestModelCandidate = [](OrtEpFactory*, const OrtHardwareDevice*, const OrtKeyValuePairs* const*, size_t,
                                const OrtSessionOptions*, size_t* selected) noexcept -> OrtStatus* {
    *selected = SIZE_MAX;  // no compiled-model variant is ours
    return nullptr;
  };
}

VdFactory::~VdFactory() {
  for (uint32_t i = 0; i < kNumDevices; ++i) {
    if (device_info_[i] != nullptr) api_.ReleaseMemoryInfo(device_info_[i]);
    if (host_info_[i] != nullptr) api_.ReleaseMemoryInfo(host_info_[i]);
    if (hw_[i] != nullptr) ep_api_.ReleaseHardwareDevice(hw_[i]);
  }
}

OrtStatus* VdFactory::Init() noexcept {
  for (uint32_t i = 0; i < kNumDevices; ++i) {
    if (OrtStatus* st = CreateVdMemoryInfo(api_, i, MemKind::kDevice, &device_info_[i])) return st;
    if (OrtStatus* st = CreateVdMemoryInfo(api_, i, MemKind::kHost, &host_info_[i])) return st;
  }
  return nullptr;
}

const char* ORT_API_CALL VdFactory::GetNameImpl(const OrtEpFactory*) noexcept { return kEpName; }
const char* ORT_API_CALL VdFactory::GetVendorImpl(const OrtEpFactory*) noexcept { return kVendor; }
uint32_t ORT_API_CALL VdFactory::GetVendorIdImpl(const OrtEpFactory*) noexcept { return kVendorId; }
const char* ORT_API_CALL VdFactory::GetVersionImpl(const OrtEpFactory*) noexcept { return kVersion; }

// The virtual devices do not exist, so ORT never passes them in `devices`: the factory creates its own
// OrtHardwareDevices (OrtEpApi::CreateHardwareDevice, API >= 24) once and reuses them on later calls.
OrtStatus* VdFactory::EnsureHardwareDevices() noexcept {
  if (hw_[0] != nullptr) return nullptr;
  OrtKeyValuePairs* md = nullptr;
  api_.CreateKeyValuePairs(&md);
  if (md == nullptr) return api_.CreateStatus(ORT_FAIL, "ortdlpack virtual device: CreateKeyValuePairs failed");
  api_.AddKeyValuePair(md, "is_virtual", "1");  // kOrtHardwareDevice_MetadataKey_IsVirtual
  OrtStatus* st = nullptr;
  for (uint32_t i = 0; i < kNumDevices && st == nullptr; ++i) {
    st = ep_api_.CreateHardwareDevice(kHardwareType, kVendorId, i, kVendor, md, &hw_[i]);
  }
  api_.ReleaseKeyValuePairs(md);  // ORT copied it
  if (st != nullptr) {
    for (auto*& hw : hw_) {
      if (hw != nullptr) ep_api_.ReleaseHardwareDevice(hw);
      hw = nullptr;
    }
  }
  return st;
}

OrtStatus* VdFactory::MakeEpDevice(uint32_t id, OrtEpDevice** out) noexcept {
  *out = nullptr;
  OrtKeyValuePairs* md = nullptr;
  api_.CreateKeyValuePairs(&md);
  if (md == nullptr) return api_.CreateStatus(ORT_FAIL, "ortdlpack virtual device: CreateKeyValuePairs failed");
  // The DLPack convention (README): which DLDeviceType this device's DEFAULT memory is, as a decimal string.
  if (kDlpackDeviceType != nullptr) api_.AddKeyValuePair(md, ORTDLPACK_VD_DLPACK_DEVICE_TYPE_KEY, kDlpackDeviceType);
  // No "version" key: ORT adds it from GetVersion and rejects metadata that sets it.
  OrtEpDevice* dev = nullptr;
  OrtStatus* st = ep_api_.CreateEpDevice(this, hw_[id], md, /*ep_options*/ nullptr, &dev);
  api_.ReleaseKeyValuePairs(md);  // CreateEpDevice copied it
  if (st == nullptr) st = ep_api_.EpDevice_AddAllocatorInfo(dev, device_info_[id]);
  if (st == nullptr) st = ep_api_.EpDevice_AddAllocatorInfo(dev, host_info_[id]);
  if (st != nullptr) {
    if (dev != nullptr) ep_api_.ReleaseEpDevice(dev);
    return st;
  }
  *out = dev;
  return nullptr;
}

OrtStatus* ORT_API_CALL VdFactory::GetSupportedDevicesImpl(OrtEpFactory* self, const OrtHardwareDevice* const*, size_t,
                                                           OrtEpDevice** ep_devices, size_t max_ep_devices,
                                                           size_t* num_ep_devices) noexcept {
  auto* f = static_cast<VdFactory*>(self);
  *num_ep_devices = 0;
  if (OrtStatus* st = f->EnsureHardwareDevices()) return st;
  for (uint32_t i = 0; i < kNumDevices && i < max_ep_devices; ++i) {
    OrtEpDevice* dev = nullptr;
    if (OrtStatus* st = f->MakeEpDevice(i, &dev)) {
      for (size_t j = 0; j < *num_ep_devices; ++j) f->ep_api_.ReleaseEpDevice(ep_devices[j]);
      *num_ep_devices = 0;
      return st;
    }
    ep_devices[(*num_ep_devices)++] = dev;  // ORT owns it from here
  }
  return nullptr;
}

// A session selected one (or more) of our OrtEpDevices. The EP claims no node (ep.h); its identity device is the
// DEFAULT memory of the first selected virtual device.
OrtStatus* ORT_API_CALL VdFactory::CreateEpImpl(OrtEpFactory* self, const OrtHardwareDevice* const* devices,
                                                const OrtKeyValuePairs* const*, size_t num_devices,
                                                const OrtSessionOptions*, const OrtLogger*, OrtEp** ep) noexcept {
  auto* f = static_cast<VdFactory*>(self);
  *ep = nullptr;
  uint32_t id = kNumDevices;
  for (uint32_t i = 0; i < kNumDevices && num_devices > 0; ++i) {
    if (devices[0] == f->hw_[i]) id = i;
  }
  if (id == kNumDevices) {
    return f->api_.CreateStatus(ORT_INVALID_ARGUMENT,
                                "ortdlpack virtual device: CreateEp was given no device of this factory");
  }
  g_last_ep_device = static_cast<int>(id);
  auto* e = new (std::nothrow) VdEp(f->api_, f->ep_api_, id);
  if (e == nullptr) return f->api_.CreateStatus(ORT_FAIL, "ortdlpack virtual device: out of memory");
  if (OrtStatus* st = e->Init()) {
    delete e;
    return st;
  }
  *ep = e;
  return nullptr;
}

void ORT_API_CALL VdFactory::ReleaseEpImpl(OrtEpFactory*, OrtEp* ep) noexcept { delete static_cast<VdEp*>(ep); }

OrtStatus* ORT_API_CALL VdFactory::CreateAllocatorImpl(OrtEpFactory* self, const OrtMemoryInfo* memory_info,
                                                       const OrtKeyValuePairs*, OrtAllocator** allocator) noexcept {
  auto* f = static_cast<VdFactory*>(self);
  *allocator = nullptr;
  if (memory_info == nullptr) {
    return f->api_.CreateStatus(ORT_INVALID_ARGUMENT, "ortdlpack virtual device: CreateAllocator needs a memory info");
  }
  const MemSide side = Classify(f->ep_api_, f->ep_api_.MemoryInfo_GetMemoryDevice(memory_info));
  if (side.kind != MemKind::kDevice && side.kind != MemKind::kHost) {
    return f->api_.CreateStatus(ORT_INVALID_ARGUMENT,
                                "ortdlpack virtual device: CreateAllocator got a memory info that is not ours");
  }
  // The allocator owns its own OrtMemoryInfo so that it never depends on the factory's lifetime.
  OrtMemoryInfo* info = nullptr;
  if (OrtStatus* st = CreateVdMemoryInfo(f->api_, side.device_id, side.kind, &info)) return st;
  auto* a = new (std::nothrow) VdAllocator(f->api_, info, side.kind);
  if (a == nullptr) {
    f->api_.ReleaseMemoryInfo(info);
    return f->api_.CreateStatus(ORT_FAIL, "ortdlpack virtual device: out of memory");
  }
  *allocator = a;
  return nullptr;
}

void ORT_API_CALL VdFactory::ReleaseAllocatorImpl(OrtEpFactory*, OrtAllocator* allocator) noexcept {
  delete static_cast<VdAllocator*>(allocator);
}

OrtStatus* ORT_API_CALL VdFactory::CreateDataTransferImpl(OrtEpFactory* self,
                                                          OrtDataTransferImpl** data_transfer) noexcept {
  auto* f = static_cast<VdFactory*>(self);
  *data_transfer = new (std::nothrow) VdDataTransfer(f->api_, f->ep_api_);
  if (*data_transfer == nullptr) return f->api_.CreateStatus(ORT_FAIL, "ortdlpack virtual device: out of memory");
  return nullptr;
}

bool ORT_API_CALL VdFactory::IsStreamAwareImpl(const OrtEpFactory*) noexcept { return true; }

OrtStatus* ORT_API_CALL VdFactory::CreateSyncStreamForDeviceImpl(OrtEpFactory* self, const OrtMemoryDevice* device,
                                                                 const OrtKeyValuePairs*,
                                                                 OrtSyncStreamImpl** stream) noexcept {
  auto* f = static_cast<VdFactory*>(self);
  *stream = nullptr;
  const MemSide side = Classify(f->ep_api_, device);
  if (side.kind != MemKind::kDevice && side.kind != MemKind::kHost) {
    return f->api_.CreateStatus(ORT_INVALID_ARGUMENT, "ortdlpack virtual device: stream requested for another device");
  }
  *stream = VdStream::Create(&f->api_, &f->ep_api_, side.device_id);
  if (*stream == nullptr) return f->api_.CreateStatus(ORT_FAIL, "ortdlpack virtual device: out of memory");
  return nullptr;
}

}  // namespace ortdlpack::vd

// Test ABI: the device id of the last OrtEp the factory created (-1: none yet).
ORTDLPACK_VD_EXPORT int ortdlpack_vd_last_ep_device(void) { return ortdlpack::vd::g_last_ep_device.load(); }
