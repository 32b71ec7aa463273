// Internal: the stream rules the core's own files apply (import.cc, transfer.cc, session.cc, run_plan.cc); the rules a
// C++ user calls are in include/ortdlpack/stream.h, all of them in docs/streams.md.
#pragma once

#include <onnxruntime_c_api.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "ortdlpack/stream.h"
#include "ortdlpack/tensor.h"

namespace ortdlpack {

namespace detail {
class DeviceStream;
}  // namespace detail

// Records that a tensor in `memory` was just imported: its producer may have ordered work before ortdlpack's stream
// (rule 1), which later readers must wait for. import.cc calls it for every device tensor it imports.
void note_import(const OrtMemoryInfo* memory);

// A caller's native stream on one device for a session's runs (SessionConfig::stream, docs/streams.md rule 6):
// what is queued on it before a run is done before ORT reads or writes, and the run's outputs are complete for work
// queued on it after the run.
struct CallerStream {
  const OrtMemoryInfo* memory = nullptr;  // device memory of the stream's device (the session's EP device)
  uintptr_t handle = 0;                   // the native handle (a cudaStream_t, a plugin EP's stream handle)
  bool ort_runs_on_it = false;            // the EP computes on it (its user compute stream option was set)
};

// Checks that ortdlpack can order work with streams of `s.memory`'s device. Error(kInvalidArgument) for a 0 handle
// (except where the EP's row says 0 is the default stream: CUDA), host memory or a device without streams ortdlpack
// can wait for.
void check_caller_stream(const CallerStream& s);

// Makes ortdlpack's stream of the caller's device wait for everything queued on the caller's stream so far, on the
// device (the host waits only if the EP refuses): every later ortdlpack copy and reader of that device (rules 2-4)
// is ordered after it. A session with a caller's stream does this before planning a run (a staging copy reads
// what the caller's stream wrote) and after a run it left queued there.
void adopt_caller_work(const CallerStream& stream);

// Before ORT reads or writes `tensors` in a session run (after adopt_caller_work when there is a caller's stream).
// ORT on its own streams: the host waits for ortdlpack's pending work on the tensors' devices and the caller's.
// ORT on the caller's stream: that stream waits on the device for ortdlpack's pending work of its device (the host
// does not block); pending work of other devices is waited for on the host.
void order_before_run(const std::vector<const Tensor*>& tensors, const CallerStream* stream = nullptr);

// A copy left queued on ortdlpack's stream of one device (rule 2), by its number there; empty when it is complete.
struct QueuedCopy {
  detail::DeviceStream* stream = nullptr;
  uint64_t seq = 0;
  explicit operator bool() const { return stream != nullptr; }
};

// Keeps `owner` (what owns the `bytes` of device memory a queued copy reads: its source tensors, and through them a
// producer's DLPack tensor) until the copy has completed on the device, and drops it on a later ortdlpack call: a
// producer may reuse memory once its deleter ran (a caching allocator does). No host wait, within a bound per device
// (DeviceStream::kMaxKept owners, kMaxKeptBytes; device_stream.h).
void keep_until_done(const QueuedCopy& copy, std::shared_ptr<void> owner, size_t bytes);

// Copy support (transfer.cc): runs `enqueue(stream)` for a copy from `src` to `dst` memory, ordered after pending
// work on both devices; `stream` is the caller's stream or NULL. Complete on return when `dst` is host memory (and in
// the other cases of rule 2); otherwise the returned QueuedCopy says where it is queued. `enqueue` returns whether it
// enqueued the copy: a failed one is completed (nothing of it is left queued), and no QueuedCopy is returned.
template <class Enqueue>
QueuedCopy ordered_copy(const OrtMemoryInfo* src, const OrtMemoryInfo* dst, OrtSyncStream* stream, Enqueue&& enqueue);

namespace detail {
// Non-template halves of ordered_copy.
struct CopyStreams {
  DeviceStream* src;  // ortdlpack's stream of each side (NULL for host memory and devices without one)
  DeviceStream* dst;
  OrtSyncStream* used;  // the stream the copy is enqueued on; NULL: synchronous
};
CopyStreams begin_copy(const OrtMemoryInfo* src, const OrtMemoryInfo* dst, OrtSyncStream* stream);
QueuedCopy end_copy(const CopyStreams& streams, const OrtMemoryInfo* src, const OrtMemoryInfo* dst, bool enqueued);
}  // namespace detail

template <class Enqueue>
QueuedCopy ordered_copy(const OrtMemoryInfo* src, const OrtMemoryInfo* dst, OrtSyncStream* stream, Enqueue&& enqueue) {
  const detail::CopyStreams streams = detail::begin_copy(src, dst, stream);
  const bool enqueued = enqueue(streams.used);
  return detail::end_copy(streams, src, dst, enqueued);
}

}  // namespace ortdlpack
