// The stream rules only the core's own files apply (stream_order.h): imports, a caller's stream, runs and copies, on
// ortdlpack's stream of each device (device_stream.h). docs/streams.md has all of them.
#include "stream_order.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "device_stream.h"
#include "ep_table.h"
#include "ort.h"
#include "ortdlpack/device.h"
#include "ortdlpack/error.h"

namespace ortdlpack {

using detail::DeviceStream;
using detail::find_stream;

void note_import(const OrtMemoryInfo* memory) {
  if (DeviceStream* s = find_stream(memory)) s->submit();
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
