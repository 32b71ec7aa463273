// The data transfer. A copy given one of this device's streams is validated now and enqueued on that stream
// (it completes when the queue reaches it, stream.h); a copy with no stream (or another EP's) is done on the
// calling thread before CopyTensors returns, ordered after nothing.
#include "data_transfer.h"

#include "counters.h"
#include "guarded_memory.h"
#include "stream.h"

namespace ortdlpack::vd {
namespace {

bool IsOurs(MemKind k) noexcept { return k == MemKind::kDevice || k == MemKind::kHost; }

}  // namespace

VdDataTransfer::VdDataTransfer(const OrtApi& api, const OrtEpApi& ep_api) noexcept
    : OrtDataTransferImpl{}, api_(api), ep_api_(ep_api) {
  ort_version_supported = ORT_API_VERSION;
  Release = ReleaseImpl;
  CanCopy = CanCopyImpl;
  CopyTensors = CopyTensorsImpl;
}

void ORT_API_CALL VdDataTransfer::ReleaseImpl(OrtDataTransferImpl* self) noexcept {
  delete static_cast<VdDataTransfer*>(self);
}

bool ORT_API_CALL VdDataTransfer::CanCopyImpl(const OrtDataTransferImpl* self, const OrtMemoryDevice* src,
                                              const OrtMemoryDevice* dst) noexcept {
  const auto* t = static_cast<const VdDataTransfer*>(self);
  const MemSide s = Classify(t->ep_api_, src);
  const MemSide d = Classify(t->ep_api_, dst);
  if (s.kind == MemKind::kOther || d.kind == MemKind::kOther) return false;
  // CPU -> CPU belongs to ORT's CPU transfer; at least one side must be a virtual device's memory.
  return IsOurs(s.kind) || IsOurs(d.kind);
}

OrtStatus* ORT_API_CALL VdDataTransfer::CopyTensorsImpl(OrtDataTransferImpl* self, const OrtValue** src_tensors,
                                                        OrtValue** dst_tensors, OrtSyncStream** streams,
                                                        size_t num_tensors) noexcept {
  auto* t = static_cast<VdDataTransfer*>(self);
  CountCopyCall();
  for (size_t i = 0; i < num_tensors; ++i) {
    VdStream* stream = streams != nullptr ? VdStream::FromOrt(t->ep_api_, streams[i]) : nullptr;
    if (OrtStatus* st = t->CopyOne(src_tensors[i], dst_tensors[i], stream)) {
      CountFailedCopy();
      return st;
    }
  }
  return nullptr;
}

OrtStatus* VdDataTransfer::CopyOne(const OrtValue* src, OrtValue* dst, VdStream* stream) noexcept {
  if (ShouldFailCopy()) return api_.CreateStatus(ORT_FAIL, "ortdlpack virtual device: injected copy failure");
  if (src == nullptr || dst == nullptr) {
    return api_.CreateStatus(ORT_INVALID_ARGUMENT, "ortdlpack virtual device: null tensor in CopyTensors");
  }
  const MemSide s = Classify(ep_api_, ep_api_.Value_GetMemoryDevice(src));
  const MemSide d = Classify(ep_api_, ep_api_.Value_GetMemoryDevice(dst));
  if (s.kind == MemKind::kOther || d.kind == MemKind::kOther || !(IsOurs(s.kind) || IsOurs(d.kind))) {
    return api_.CreateStatus(ORT_INVALID_ARGUMENT, "ortdlpack virtual device: cannot copy between these devices");
  }

  size_t src_bytes = 0, dst_bytes = 0;
  if (OrtStatus* st = api_.GetTensorSizeInBytes(src, &src_bytes)) return st;
  if (OrtStatus* st = api_.GetTensorSizeInBytes(dst, &dst_bytes)) return st;
  if (src_bytes != dst_bytes) {
    return api_.CreateStatus(ORT_INVALID_ARGUMENT, "ortdlpack virtual device: source and destination sizes differ");
  }
  const void* src_data = nullptr;
  void* dst_data = nullptr;
  if (OrtStatus* st = api_.GetTensorData(src, &src_data)) return st;
  if (OrtStatus* st = api_.GetTensorMutableData(dst, &dst_data)) return st;

  const bool src_dev = s.kind == MemKind::kDevice;
  const bool dst_dev = d.kind == MemKind::kDevice;
  if (stream != nullptr && src_bytes != 0) {
    // Checked now so that CopyTensors reports a bad tensor; checked again when the queue runs the copy.
    if (src_dev && !IsDeviceRange(src_data, src_bytes)) {
      return api_.CreateStatus(ORT_INVALID_ARGUMENT,
                               "ortdlpack virtual device: source tensor claims device memory but its data is not "
                               "inside a live virtual-device allocation");
    }
    if (dst_dev && !IsDeviceRange(dst_data, src_bytes)) {
      return api_.CreateStatus(ORT_INVALID_ARGUMENT,
                               "ortdlpack virtual device: destination tensor claims device memory but its data is "
                               "not inside a live virtual-device allocation");
    }
    if (!stream->EnqueueCopy(dst_data, dst_dev, src_data, src_dev, src_bytes)) {
      return api_.CreateStatus(ORT_FAIL, "ortdlpack virtual device: out of memory enqueuing a copy");
    }
    return nullptr;
  }
  switch (GuardedCopy(dst_data, dst_dev, src_data, src_dev, src_bytes)) {
    case CopyResult::kOk:
      break;
    case CopyResult::kSrcNotDevice:
      return api_.CreateStatus(ORT_INVALID_ARGUMENT,
                               "ortdlpack virtual device: source tensor claims device memory but its data is not "
                               "inside a live virtual-device allocation");
    case CopyResult::kDstNotDevice:
      return api_.CreateStatus(ORT_INVALID_ARGUMENT,
                               "ortdlpack virtual device: destination tensor claims device memory but its data is "
                               "not inside a live virtual-device allocation");
    case CopyResult::kProtectFailed:
      return api_.CreateStatus(ORT_FAIL, "ortdlpack virtual device: mprotect failed while opening device pages");
  }
  const CopyKind kind = src_dev ? (dst_dev ? CopyKind::kDeviceToDevice : CopyKind::kDeviceToHost)
                                : (dst_dev ? CopyKind::kHostToDevice : CopyKind::kHostToHost);
  CountCopy(kind, src_bytes);
  return nullptr;
}

}  // namespace ortdlpack::vd
