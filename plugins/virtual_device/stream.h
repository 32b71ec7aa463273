// A trivial in-order stream for the virtual device (OrtEpFactory::CreateSyncStreamForDevice), so that
// OrtApi::CreateSyncStreamForEpDevice works and a stream can be passed to CopyTensors.
//
// Rules: the device has no asynchronous engine. Every copy finishes before CopyTensors returns, so work submitted
// "on" a stream is complete in submission order the moment the call returns; Flush, notifications and waits are
// no-ops. The stream handle (OrtApi::SyncStream_GetHandle) is a non-null opaque pointer, not a native queue.
#pragma once

#include <cstdint>

#include "device_kind.h"

namespace ortdlpack::vd {

class VdStream : public OrtSyncStreamImpl {
 public:
  VdStream(const OrtApi& api, uint32_t device_id) noexcept;
  uint32_t device_id() const noexcept { return device_id_; }

 private:
  static void ORT_API_CALL ReleaseImpl(OrtSyncStreamImpl* self) noexcept;
  static void* ORT_API_CALL GetHandleImpl(OrtSyncStreamImpl* self) noexcept;
  static OrtStatus* ORT_API_CALL CreateNotificationImpl(OrtSyncStreamImpl* self,
                                                        OrtSyncNotificationImpl** notification) noexcept;
  static OrtStatus* ORT_API_CALL FlushImpl(OrtSyncStreamImpl* self) noexcept;
  static OrtStatus* ORT_API_CALL OnSessionRunEndImpl(OrtSyncStreamImpl* self) noexcept;

  const OrtApi& api_;
  uint32_t device_id_;
};

}  // namespace ortdlpack::vd
