// Asynchronous in-order streams of the virtual device (OrtEpFactory::CreateSyncStreamForDevice, and producer
// streams made through the C test ABI): each VdStream is a FIFO queue executed by its own worker thread, like a
// GPU stream. Work enqueued on a stream (a copy, a write, a wait for another stream's event, a host function)
// completes later, in submission order, each copy taking `delay` of device time (ortdlpack_vd_set_stream_delay_us /
// ORTDLPACK_VD_STREAM_DELAY_US), so more queued work finishes later, as on a GPU. Work with no stream is synchronous
// (done on the calling thread, ordered after nothing). The native handle (OrtApi::SyncStream_GetHandle) is the
// VdStream itself; the C ABI takes it back and checks it against the registry of live streams, so a stale or
// foreign handle is an error, never a crash.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "device_kind.h"

namespace ortdlpack::vd {

// A one-shot event: signalled by a stream when the queue reaches it (or at once when recorded on an idle stream).
class VdEvent {
 public:
  void Signal() noexcept;
  void WaitHost() noexcept;
  bool Done() noexcept;

 private:
  std::mutex m_;
  std::condition_variable cv_;
  bool done_ = false;
};

// The delay applied to every copy/write enqueued on a stream, in microseconds.
uint64_t StreamDelayUs() noexcept;
void SetStreamDelayUs(uint64_t us) noexcept;

class VdStream : public OrtSyncStreamImpl {
 public:
  // nullptr when out of memory or no thread could be started. `api` may be NULL for producer streams made
  // through the C ABI (ORT never sees them).
  static VdStream* Create(const OrtApi* api, const OrtEpApi* ep_api, uint32_t device_id) noexcept;
  ~VdStream();  // runs everything still queued, then stops the worker

  // The live VdStream behind a native handle (GetHandle) or behind an OrtSyncStream ORT made from one of ours;
  // NULL when it is neither.
  static VdStream* FromHandle(void* handle) noexcept;
  static VdStream* FromOrt(const OrtEpApi& ep_api, const OrtSyncStream* stream) noexcept;

  uint32_t device_id() const noexcept { return device_id_; }

  // Enqueue a copy of n bytes. A host source is snapshotted now (like a GPU copy from pageable memory), so the
  // caller may reuse it at once; a host destination is written when the queue reaches the copy.
  bool EnqueueCopy(void* dst, bool dst_dev, const void* src, bool src_dev, std::size_t n) noexcept;
  // Enqueue: signal `event` when reached / block this stream until `event` is signalled.
  bool EnqueueSignal(std::shared_ptr<VdEvent> event) noexcept;
  bool EnqueueWait(std::shared_ptr<VdEvent> event) noexcept;
  // Enqueue: call fn(user_data) on the worker when reached (after everything enqueued before it has run), once.
  bool EnqueueHostFunc(void (*fn)(void*), void* user_data) noexcept;
  // Gates for deterministic tests: Pause enqueues a closed gate (the stream stops there), Resume opens the oldest
  // gate still closed. Resume returns false when no gate is closed.
  bool Pause() noexcept;
  bool Resume() noexcept;
  // This stream waits for everything enqueued on `producer` so far (record + wait, as cudaStreamWaitEvent).
  bool WaitFor(VdStream& producer) noexcept;
  // Blocks until everything enqueued so far has run. Returns the first error an asynchronous copy hit since the
  // last Synchronize ("" when none) and clears it.
  std::string Synchronize() noexcept;

  // Blocks until no stream has queued or running work that reads or writes device memory in [lo, hi): a free
  // is ordered after the streams that use the memory (as cudaFree waits for the device), so that freeing a buffer
  // a copy is still queued on can never pull the pages from under the worker.
  static void WaitForStreamsUsing(std::uintptr_t lo, std::uintptr_t hi) noexcept;

 private:
  struct Task {
    enum class Kind { kCopy, kSignal, kWait, kHostFunc };
    explicit Task(Kind k) : kind(k) {}
    Kind kind;
    void* dst = nullptr;
    bool dst_dev = false;
    const void* src = nullptr;
    bool src_dev = false;
    std::size_t n = 0;
    std::vector<char> staged;  // snapshot of a host source
    std::shared_ptr<VdEvent> event;
    uint64_t duration_us = 0;     // how long the copy takes on the device (the delay when it was enqueued)
    void (*fn)(void*) = nullptr;  // kHostFunc
    void* user_data = nullptr;
  };

  VdStream(const OrtApi* api, const OrtEpApi* ep_api, uint32_t device_id) noexcept;
  bool Enqueue(Task task) noexcept;
  bool UsesLocked(const Task& t, std::uintptr_t lo, std::uintptr_t hi) const noexcept;
  void WaitIdle() noexcept;
  void Run() noexcept;
  void Execute(Task& task) noexcept;

  static void ORT_API_CALL ReleaseImpl(OrtSyncStreamImpl* self) noexcept;
  static void* ORT_API_CALL GetHandleImpl(OrtSyncStreamImpl* self) noexcept;
  static OrtStatus* ORT_API_CALL CreateNotificationImpl(OrtSyncStreamImpl* self,
                                                        OrtSyncNotificationImpl** notification) noexcept;
  static OrtStatus* ORT_API_CALL FlushImpl(OrtSyncStreamImpl* self) noexcept;
  static OrtStatus* ORT_API_CALL OnSessionRunEndImpl(OrtSyncStreamImpl* self) noexcept;

  const OrtApi* api_;
  const OrtEpApi* ep_api_;
  uint32_t device_id_;
  std::mutex m_;
  std::condition_variable cv_;  // queue changed / a task completed
  std::deque<Task> queue_;
  const Task* running_ = nullptr;               // the task the worker is executing (outside the queue)
  std::deque<std::shared_ptr<VdEvent>> gates_;  // closed gates, oldest first
  uint64_t submitted_ = 0, completed_ = 0;
  bool stop_ = false;
  std::string error_;
  std::thread worker_;
};

}  // namespace ortdlpack::vd
