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
//     ortdlpack_ep_stream_wait, optionally ortdlpack_ep_stream_launch_host_func; plugins/virtual_device/README.md),
//     found with dlopen(RTLD_NOLOAD) on the library path ORT records in the EP device's metadata;
//   * EPs whose row in the EP table says so (NVIDIA devices): the CUDA runtime already loaded in the process
//     (libcudart, RTLD_NOLOAD).
// A device whose EP offers neither gets no stream: ortdlpack's copies there are synchronous (CopyTensors without a
// stream) and producers are asked for no stream (DLPack `None`).
#pragma once

#include <dlpack/dlpack.h>
#include <onnxruntime_c_api.h>

#include <cstdint>
#include <optional>

#include "ortdlpack/tensor.h"

namespace ortdlpack {

/// \brief ortdlpack's stream on the device of `memory`, or NULL when that memory has none (host memory, an EP without
/// streams or without a way to wait for them).
OrtSyncStream* device_stream(const OrtMemoryInfo* memory);

/// \brief Claims ortdlpack's stream of `device` for an import: returns the native handle a DLPack producer must order
/// its pending work before (`__dlpack__(stream=...)`), 0 when the device has no stream (ask for `None`), and from here
/// on treats that stream as having pending work.
uintptr_t claim_import_stream(DLDevice device);

/// \brief Orders ortdlpack's stream of `device` after the work queued so far on a producer's native stream, for a
/// device tensor handed over unordered: a DLPack C exchange API's managed_tensor_from_py_object_no_sync, whose
/// producer names that stream with current_work_stream. ortdlpack's stream waits on the device (the host waits only if
/// the EP refuses), so every later reader of the tensor through ortdlpack is ordered after its producer. false, with
/// nothing done, when ortdlpack cannot wait for that stream (a device without an ortdlpack stream; a 0 handle where 0
/// names no stream: it is CUDA's legacy default stream): the caller then has the producer order its work
/// (`__dlpack__(stream=claim_import_stream(device))`).
bool adopt_producer_work(DLDevice device, uintptr_t producer_stream);

/// \brief Blocks until everything ortdlpack enqueued on the stream of `memory`'s device (and everything a producer
/// ordered before it) has completed, then drops the sources ortdlpack kept for its copies queued there (docs/streams.md
/// rule 2). No-op when nothing is pending or the memory has no stream.
void synchronize(const OrtMemoryInfo* memory);

/// \brief Makes the tensor complete for a consumer that will use it on `consumer_stream`, DLPack's `stream` value:
/// nullopt (None) -> the host waits; -1 -> nothing (the consumer asked for no synchronization); any other value ->
/// a native stream handle of the tensor's device, made to wait for ortdlpack's pending work without blocking the
/// host (or the host waits when the EP cannot make one stream wait for another). Error(kInvalidArgument) for a
/// value other than None/-1 on a device without streams.
void order_for_consumer(const Tensor& tensor, std::optional<int64_t> consumer_stream);

}  // namespace ortdlpack
