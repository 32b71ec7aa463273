// The stream rules of docs/streams.md (include/ortdlpack/stream.h for C++ users, stream_order.h for the core's own
// files), on ortdlpack's stream of each device (device_stream.h).
#include "ortdlpack/stream.h"

#include <string>

#include "device_stream.h"
#include "ep_library.h"
#include "ep_table.h"
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

uintptr_t consumer_stream(DLDevice device) {
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

void note_import(const OrtMemoryInfo* memory) {
  if (DeviceStream* s = find_stream(memory)) s->submit();
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

void check_caller_stream(const CallerStream& c) {
  const detail::EpRow* owner = c.memory != nullptr ? detail::owner_of(detail::memory_fields(c.memory)) : nullptr;
  if (c.handle == 0 && (owner == nullptr || !owner->zero_is_default_stream)) {
    throw Error(ErrorKind::kInvalidArgument, "stream: a stream handle is needed (0 is only CUDA's default stream)");
  }
  if (find_stream(c.memory) == nullptr) {
    throw Error(ErrorKind::kInvalidArgument,
                "stream: " + (c.memory ? describe_memory(c.memory) : std::string("host memory")) +
                    " has no streams ortdlpack can wait for");
  }
}

void adopt_caller_work(const CallerStream& c) {
  DeviceStream* s = find_stream(c.memory);
  if (s == nullptr) return;
  void* handle = reinterpret_cast<void*>(c.handle);
  if (s->native().wait(s->handle(), handle) == 0) {
    s->submit();
  } else {
    s->wait_on_host(handle);
  }
}

void order_before_run(const std::vector<const Tensor*>& tensors, const CallerStream* c) {
  DeviceStream* caller = c != nullptr ? find_stream(c->memory) : nullptr;
  const bool on_caller = caller != nullptr && c->ort_runs_on_it;
  if (caller != nullptr && !on_caller) caller->synchronize();  // the caller's work, adopted
  for (const Tensor* t : tensors) {
    DeviceStream* s = t != nullptr && *t ? find_stream(t->memory_info()) : nullptr;
    if (s == nullptr || (s == caller && !on_caller)) continue;  // none, or waited for above
    if (s != caller) {
      s->synchronize();
      continue;
    }
    // ORT computes on the caller's stream: it waits on the device (the host only if the EP refuses).
    void* handle = reinterpret_cast<void*>(c->handle);
    if (s->pending() && s->native().wait(handle, s->handle()) != 0) s->synchronize();
  }
}

void keep_until_done(const QueuedCopy& copy, std::shared_ptr<void> owner, size_t bytes) {
  if (copy) copy.stream->keep_until(copy.seq, std::move(owner), bytes);
}

namespace detail {

CopyStreams begin_copy(const OrtMemoryInfo* src, const OrtMemoryInfo* dst, OrtSyncStream* stream) {
  DeviceStream* ss = find_stream(src);
  DeviceStream* ds = find_stream(dst);
  OrtSyncStream* used = stream != nullptr ? stream
                        : ss != nullptr   ? ss->stream()
                        : ds != nullptr   ? ds->stream()
                                          : nullptr;
  // Work pending on another stream of either side is waited for on the host (one stream per copy call).
  if (ss != nullptr && ss->stream() != used) ss->synchronize();
  if (ds != nullptr && ds->stream() != used) ds->synchronize();
  return {ss, ds, used};
}

QueuedCopy end_copy(const CopyStreams& streams, const OrtMemoryInfo* src, const OrtMemoryInfo* dst, bool enqueued) {
  DeviceStream* ss = streams.src;
  DeviceStream* ds = streams.dst;
  if (streams.used == nullptr) return {};  // synchronous copy
  DeviceStream* owner = ss != nullptr && ss->stream() == streams.used   ? ss
                        : ds != nullptr && ds->stream() == streams.used ? ds
                                                                        : nullptr;
  if (owner == nullptr) {
    DeviceStream* s = ss != nullptr ? ss : ds;  // a caller's stream of a device we can wait for
    if (s != nullptr) s->wait_on_host(ort().SyncStream_GetHandle(streams.used));
    return {};
  }
  const uint64_t seq = owner->submit();
  // A host-visible result, a host source the device may still read (pinned memory), a copy that leaves data on the
  // other device's stream, or a failed copy (part of it may be queued): complete it now. Otherwise it stays queued
  // on our stream, which every later reader of that device is ordered after.
  const bool pinned_src = host_accessible(src) && !is_cpu_memory(src);
  if (!enqueued || host_accessible(dst) || pinned_src || (ds != nullptr && ds != owner) ||
      (ss != nullptr && ss != owner)) {
    owner->synchronize();
    return {};
  }
  return {owner, seq};
}

}  // namespace detail
}  // namespace ortdlpack
