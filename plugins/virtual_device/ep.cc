// The OrtEp: selectable in a session, claims no node. See ep.h.
#include "ep.h"

namespace ortdlpack::vd {

VdEp::VdEp(const OrtApi& api, const OrtEpApi& ep_api, uint32_t device_id) noexcept
    : OrtEp{}, api_(api), ep_api_(ep_api), device_id_(device_id) {
  ort_version_supported = ORT_API_VERSION;
  GetName = GetNameImpl;
  GetCapability = GetCapabilityImpl;
  // Never called (no node is claimed, so nothing is fused); set because ORT < 1.24 requires them.
  Compile = CompileImpl;
  ReleaseNodeComputeInfos = ReleaseNodeComputeInfosImpl;
  GetDefaultMemoryDevice = GetDefaultMemoryDeviceImpl;
  // Everything else stays NULL, which the API documents as "not implemented" with a safe default: no layout
  // preference or conversion, no dynamic options, no run hooks, the factory's allocators and streams
  // (OrtEp::CreateAllocator / CreateSyncStreamForDevice NULL), no kernel registry, concurrent runs supported, no
  // profiler, no graph capture, no resource query, no weightless support.
}

VdEp::~VdEp() {
  if (device_info_ != nullptr) api_.ReleaseMemoryInfo(device_info_);
}

OrtStatus* VdEp::Init() noexcept { return CreateVdMemoryInfo(api_, device_id_, MemKind::kDevice, &device_info_); }

const char* ORT_API_CALL VdEp::GetNameImpl(const OrtEp*) noexcept { return kEpName; }

// Claims nothing: the virtual device has no kernels. ORT assigns every node to the next EP (the CPU EP).
OrtStatus* ORT_API_CALL VdEp::GetCapabilityImpl(OrtEp*, const OrtGraph*, OrtEpGraphSupportInfo*) noexcept {
  return nullptr;
}

OrtStatus* ORT_API_CALL VdEp::CompileImpl(OrtEp* self, const OrtGraph**, const OrtNode**, size_t, OrtNodeComputeInfo**,
                                          OrtNode**) noexcept {
  return static_cast<VdEp*>(self)->api_.CreateStatus(ORT_NOT_IMPLEMENTED,
                                                     "VirtualDeviceEP claims no nodes, so it has nothing to compile");
}

void ORT_API_CALL VdEp::ReleaseNodeComputeInfosImpl(OrtEp*, OrtNodeComputeInfo**, size_t) noexcept {}

// The EP's identity device is the DEFAULT memory of the selected virtual device (ORT uses it to decide where the
// EP's inputs live and whether copies are needed; it must match an allocator info of the OrtEpDevice).
OrtStatus* ORT_API_CALL VdEp::GetDefaultMemoryDeviceImpl(const OrtEp* self, const OrtMemoryDevice** device) noexcept {
  const auto* ep = static_cast<const VdEp*>(self);
  *device = ep->ep_api_.MemoryInfo_GetMemoryDevice(ep->device_info_);
  return nullptr;
}

}  // namespace ortdlpack::vd
