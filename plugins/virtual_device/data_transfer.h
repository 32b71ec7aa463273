// OrtDataTransferImpl of the virtual device: CPU <-> device, device <-> device (also across device ids),
// host-accessible <-> device and CPU <-> host-accessible. The only code that ever reads or writes device memory.
#pragma once

#include "device_kind.h"

namespace ortdlpack::vd {

class VdStream;

// One instance per OrtEpFactory::CreateDataTransfer call; ORT's Release deletes it.
class VdDataTransfer : public OrtDataTransferImpl {
 public:
  VdDataTransfer(const OrtApi& api, const OrtEpApi& ep_api) noexcept;

 private:
  static void ORT_API_CALL ReleaseImpl(OrtDataTransferImpl* self) noexcept;
  static bool ORT_API_CALL CanCopyImpl(const OrtDataTransferImpl* self, const OrtMemoryDevice* src,
                                       const OrtMemoryDevice* dst) noexcept;
  static OrtStatus* ORT_API_CALL CopyTensorsImpl(OrtDataTransferImpl* self, const OrtValue** src_tensors,
                                                 OrtValue** dst_tensors, OrtSyncStream** streams,
                                                 size_t num_tensors) noexcept;

  OrtStatus* CopyOne(const OrtValue* src, OrtValue* dst, VdStream* stream) noexcept;

  const OrtApi& api_;
  const OrtEpApi& ep_api_;
};

}  // namespace ortdlpack::vd
