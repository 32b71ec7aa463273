// Trivial in-order stream and its no-op notification (all device work is synchronous; see stream.h).
#include "stream.h"

#include <new>

namespace ortdlpack::vd {
namespace {

class VdNotification : public OrtSyncNotificationImpl {
 public:
  VdNotification() noexcept : OrtSyncNotificationImpl{} {
    ort_version_supported = ORT_API_VERSION;
    Release = [](OrtSyncNotificationImpl* self) noexcept { delete static_cast<VdNotification*>(self); };
    // Work before the notification has already completed when Activate is called, so every wait returns at once.
    Activate = [](OrtSyncNotificationImpl*) noexcept -> OrtStatus* { return nullptr; };
    WaitOnDevice = [](OrtSyncNotificationImpl*, OrtSyncStream*) noexcept -> OrtStatus* { return nullptr; };
    WaitOnHost = [](OrtSyncNotificationImpl*) noexcept -> OrtStatus* { return nullptr; };
  }
};

}  // namespace

VdStream::VdStream(const OrtApi& api, uint32_t device_id) noexcept
    : OrtSyncStreamImpl{}, api_(api), device_id_(device_id) {
  ort_version_supported = ORT_API_VERSION;
  Release = ReleaseImpl;
  GetHandle = GetHandleImpl;
  CreateNotification = CreateNotificationImpl;
  Flush = FlushImpl;
  OnSessionRunEnd = OnSessionRunEndImpl;
}

void ORT_API_CALL VdStream::ReleaseImpl(OrtSyncStreamImpl* self) noexcept { delete static_cast<VdStream*>(self); }

void* ORT_API_CALL VdStream::GetHandleImpl(OrtSyncStreamImpl* self) noexcept { return self; }

OrtStatus* ORT_API_CALL VdStream::CreateNotificationImpl(OrtSyncStreamImpl* self,
                                                         OrtSyncNotificationImpl** notification) noexcept {
  *notification = new (std::nothrow) VdNotification();
  if (*notification == nullptr) {
    return static_cast<VdStream*>(self)->api_.CreateStatus(ORT_FAIL, "ortdlpack virtual device: out of memory");
  }
  return nullptr;
}

OrtStatus* ORT_API_CALL VdStream::FlushImpl(OrtSyncStreamImpl* /*self*/) noexcept { return nullptr; }

OrtStatus* ORT_API_CALL VdStream::OnSessionRunEndImpl(OrtSyncStreamImpl* /*self*/) noexcept { return nullptr; }

}  // namespace ortdlpack::vd
