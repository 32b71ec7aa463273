// ortdlpack: stream ordering of device work (docs/streams.md has the rules for users).
//
// ortdlpack issues its device work for one device on one stream: an OrtSyncStream of the env's OrtEpDevice for that
// memory (CreateSyncStreamForEpDevice), created on first use and kept for the life of the process. Producers are
// told to order their pending work before that stream (its native handle, SyncStream_GetHandle, is what ortdlpack
// passes as DLPack's `stream`), copies run on it (CopyTensors with the stream), and consumers are ordered after it.
//
// ORT's public C API can create a stream and enqueue copies on it, but it cannot wait for a stream, neither from the
// host nor from another stream. Those two operations come from the EP's runtime, reached without loading anything:
//   * a plugin EP library may export the ortdlpack stream convention (ortdlpack_ep_stream_synchronize,
//     ortdlpack_ep_stream_wait; plugins/virtual_device/README.md), found with dlopen(RTLD_NOLOAD) on the library
//     path ORT records in the EP device's metadata;
//   * NVIDIA devices: the CUDA runtime already loaded in the process (libcudart, RTLD_NOLOAD).
// A device whose EP offers neither gets no stream: ortdlpack's copies there are synchronous (CopyTensors without a
// stream) and producers are asked for no stream (DLPack `None`).
#pragma once

#include <dlpack/dlpack.h>
#include <onnxruntime_c_api.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "ortdlpack/tensor.h"

namespace ortdlpack {

// ortdlpack's stream on the device of `memory`, or NULL when that memory has none (host memory, an EP without
// streams or without a way to wait for them).
OrtSyncStream* device_stream(const OrtMemoryInfo* memory);

// The native handle a DLPack producer must order its pending work before, for a tensor on `device` that ortdlpack
// is about to import (`__dlpack__(stream=...)`); 0 when the device has no stream (ask for `None`). From here on
// ortdlpack treats that stream as having pending work.
uintptr_t consumer_stream(DLDevice device);

// Records that a tensor in `memory` was just imported: its producer may have ordered work before ortdlpack's stream
// (rule 1), which later readers must wait for. import.cc calls it for every device tensor it imports.
void note_import(const OrtMemoryInfo* memory);

// Blocks until everything ortdlpack enqueued on the stream of `memory`'s device (and everything a producer ordered
// before it) has completed. No-op when nothing is pending or the memory has no stream.
void synchronize(const OrtMemoryInfo* memory);

// Makes the tensor complete for a consumer that will use it on `consumer_stream`, DLPack's `stream` value:
// nullopt (None) -> the host waits; -1 -> nothing (the consumer asked for no synchronization); any other value ->
// a native stream handle of the tensor's device, made to wait for ortdlpack's pending work without blocking the
// host (or the host waits when the EP cannot make one stream wait for another). Error(kInvalidArgument) for a
// value other than None/-1 on a device without streams.
void order_for_consumer(const Tensor& tensor, std::optional<int64_t> consumer_stream);

// A caller's native stream on one device for a session's runs (SessionConfig::stream, docs/streams.md rule 6):
// what is queued on it before a run is done before ORT reads or writes, and the run's outputs are complete for work
// queued on it after the run.
struct CallerStream {
  const OrtMemoryInfo* memory = nullptr;  // device memory of the stream's device (the session's EP device)
  uintptr_t handle = 0;                   // the native handle (a cudaStream_t, a plugin EP's stream handle)
  bool ort_runs_on_it = false;            // the EP computes on it (its user compute stream option was set)
};

// Checks that ortdlpack can order work with streams of `s.memory`'s device. Error(kInvalidArgument) for a 0 handle
// (except on NVIDIA devices: CUDA's default stream), host memory or a device without streams ortdlpack can wait for.
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

// Copy support (transfer.cc): runs `enqueue(stream)` for a copy from `src` to `dst` memory, ordered after pending
// work on both devices; `stream` is the caller's stream or NULL. When `dst` is host memory the copy is complete on
// return.
template <class Enqueue>
void ordered_copy(const OrtMemoryInfo* src, const OrtMemoryInfo* dst, OrtSyncStream* stream, Enqueue&& enqueue);

namespace detail {
// Non-template halves of ordered_copy.
OrtSyncStream* begin_copy(const OrtMemoryInfo* src, const OrtMemoryInfo* dst, OrtSyncStream* stream);
void end_copy(const OrtMemoryInfo* src, const OrtMemoryInfo* dst, OrtSyncStream* used);
}  // namespace detail

template <class Enqueue>
void ordered_copy(const OrtMemoryInfo* src, const OrtMemoryInfo* dst, OrtSyncStream* stream, Enqueue&& enqueue) {
  OrtSyncStream* used = detail::begin_copy(src, dst, stream);
  enqueue(used);
  detail::end_copy(src, dst, used);
}

}  // namespace ortdlpack
