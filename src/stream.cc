// The stream rules a C++ user calls (include/ortdlpack/stream.h; the core's own are in stream_order.cc), on
// ortdlpack's stream of each device (device_stream.h).
#include "ortdlpack/stream.h"

#include "device_stream.h"
#include "ep_library.h"
#include "ort.h"
#include "ortdlpack/api.h"
#include "ortdlpack/device.h"
#include "ortdlpack/error.h"
#include "stream_order.h"

namespace ortdlpack {

using detail::DeviceStream;
using detail::find_stream;

OrtSyncStream* device_stream(const OrtMemoryInfo* memory) {
  DeviceStream* s = find_stream(memory);
  return s ? s->stream() : nullptr;
}

uintptr_t claim_import_stream(DLDevice device) {
  if (device.device_type == kDLCPU) return 0;
  const OrtMemoryInfo* memory = nullptr;
  try {
    memory = memory_info(device);
  } catch (const Error&) {
    return 0;  // a device ORT cannot hold: the import reports it
  }
  detail::ensure_ep_for(memory);  // an import entry point: the EP owning the memory brings the stream
  DeviceStream* s = find_stream(memory);
  if (s == nullptr) return 0;
  s->submit();  // the producer is about to order its work before the stream (note_import counts it once it did)
  return reinterpret_cast<uintptr_t>(s->handle());
}

bool adopt_producer_work(DLDevice device, uintptr_t producer_stream) {
  if (device.device_type == kDLCPU) return false;
  CallerStream producer;
  producer.handle = producer_stream;
  try {
    producer.memory = memory_info(device);
    detail::ensure_ep_for(producer.memory);  // an import entry point, as claim_import_stream
    check_caller_stream(producer);           // the producer's stream is a caller's stream of the device
  } catch (const Error&) {
    return false;
  }
  adopt_caller_work(producer);
  return true;
}

void synchronize(const OrtMemoryInfo* memory) {
  if (DeviceStream* s = find_stream(memory)) s->synchronize();
}

void order_for_consumer(const Tensor& tensor, std::optional<int64_t> consumer) {
  const DLDevice device = tensor.device();
  DeviceStream* s = find_stream(tensor.memory_info());
  if (consumer.has_value() && *consumer != -1) {
    const bool gpu =
        device.device_type == kDLCUDA || device.device_type == kDLCUDAManaged || device.device_type == kDLROCM;
    const bool ok = (s != nullptr || gpu) && (*consumer > 0 || (*consumer == 0 && device.device_type == kDLROCM));
    if (!ok) {
      throw Error(ErrorKind::kInvalidArgument,
                  gpu            ? "stream must be None, -1 or a stream pointer (> 0 on CUDA)"
                  : s != nullptr ? "stream must be None, -1 or a stream handle of the device (> 0)"
                                 : "stream must be None or -1 on a device without streams (CPU and plugin "
                                   "devices without stream support)");
    }
  }
  if (s == nullptr || !s->pending()) return;
  if (!consumer.has_value()) return s->synchronize();  // None: the host is the consumer's only common ground
  if (*consumer == -1) return;                         // the consumer asked for no synchronization
  void* waiter = reinterpret_cast<void*>(static_cast<uintptr_t>(*consumer));
  // The consumer's stream waits on the device; if the EP refuses (a handle it does not know), the host waits.
  if (waiter == s->handle() || s->native().wait(waiter, s->handle()) == 0) return;
  s->synchronize();
}

}  // namespace ortdlpack
