// Asynchronous FIFO streams, their events and ORT notifications (see stream.h).
#include "stream.h"

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <new>
#include <shared_mutex>
#include <unordered_set>

#include "counters.h"
#include "guarded_memory.h"

namespace ortdlpack::vd {
namespace {

// Whether ortdlpack_ep_stream_launch_host_func accepts work (ortdlpack_vd_set_host_funcs): off, the device behaves
// like an EP that exports only the first two functions of the convention.
std::atomic<bool>& HostFuncs() noexcept {
  static std::atomic<bool> enabled{true};
  return enabled;
}

// Default 1 ms: long enough that a consumer that does not wait reads stale memory every time, short enough for
// test suites that copy thousands of tensors. Read once from ORTDLPACK_VD_STREAM_DELAY_US.
std::atomic<uint64_t>& Delay() noexcept {
  static std::atomic<uint64_t> delay{[] {
    const char* v = std::getenv(ORTDLPACK_VD_STREAM_DELAY_ENV);
    return v != nullptr && *v != '\0' ? std::strtoull(v, nullptr, 10) : uint64_t{1000};
  }()};
  return delay;
}

// Live streams: a handle is only ever dereferenced after it was found here. Shared for lookups and for waiting on
// streams found here (a stream is never destroyed meanwhile); exclusive to add or remove one. Waiting holds it shared
// only, so a lookup on another thread (e.g. the resume that lets the awaited work finish) never blocks behind it.
std::shared_mutex& RegistryMutex() noexcept {
  static std::shared_mutex m;
  return m;
}
std::unordered_set<const void*>& Registry() {
  static auto* live = new std::unordered_set<const void*>();  // process lifetime: streams may outlive statics
  return *live;
}

// An event of the C ABI (ortdlpack_vd_event_*): the one-shot VdEvent of its latest record (NULL: never recorded).
// Queued waits and signals hold that VdEvent, so destroying the handle never cuts them short.
struct EventHandle {
  std::mutex m;
  std::shared_ptr<VdEvent> latest;
};
std::mutex& EventsMutex() noexcept {
  static std::mutex m;
  return m;
}
std::unordered_set<const void*>& Events() {
  static auto* live = new std::unordered_set<const void*>();  // process lifetime, as the stream registry
  return *live;
}
// The latest record of a live event (NULL when never recorded); false for a handle that is no live event.
bool LatestRecord(void* handle, std::shared_ptr<VdEvent>& latest) noexcept {
  std::lock_guard<std::mutex> lock(EventsMutex());
  if (handle == nullptr || Events().count(handle) == 0) return false;
  auto* e = static_cast<EventHandle*>(handle);
  std::lock_guard<std::mutex> event_lock(e->m);
  latest = e->latest;
  return true;
}

// ORT's notification on a producer stream: Activate records an event at the current end of the producer's queue;
// a consumer waits for it on its own queue (a virtual-device stream) or on the host.
class VdNotification : public OrtSyncNotificationImpl {
 public:
  VdNotification(VdStream* producer, const OrtEpApi* ep_api) noexcept
      : OrtSyncNotificationImpl{}, producer_(producer), ep_api_(ep_api) {
    ort_version_supported = ORT_API_VERSION;
    Release = [](OrtSyncNotificationImpl* self) noexcept { delete static_cast<VdNotification*>(self); };
    Activate = [](OrtSyncNotificationImpl* self) noexcept -> OrtStatus* {
      auto* n = static_cast<VdNotification*>(self);
      n->event_ = std::make_shared<VdEvent>();
      if (!n->producer_->EnqueueSignal(n->event_)) n->event_->Signal();  // out of memory: degrade to "done"
      return nullptr;
    };
    WaitOnDevice = [](OrtSyncNotificationImpl* self, OrtSyncStream* consumer) noexcept -> OrtStatus* {
      auto* n = static_cast<VdNotification*>(self);
      if (n->event_ == nullptr) return nullptr;  // never activated: nothing to wait for
      VdStream* c = consumer != nullptr && n->ep_api_ != nullptr ? VdStream::FromOrt(*n->ep_api_, consumer) : nullptr;
      if (c == nullptr || !c->EnqueueWait(n->event_)) n->event_->WaitHost();  // not ours: the host waits
      return nullptr;
    };
    WaitOnHost = [](OrtSyncNotificationImpl* self) noexcept -> OrtStatus* {
      auto* n = static_cast<VdNotification*>(self);
      if (n->event_ != nullptr) n->event_->WaitHost();
      return nullptr;
    };
  }

 private:
  VdStream* producer_;
  const OrtEpApi* ep_api_;
  std::shared_ptr<VdEvent> event_;
};

}  // namespace

void VdEvent::Signal() noexcept {
  {
    std::lock_guard<std::mutex> lock(m_);
    done_ = true;
  }
  cv_.notify_all();
}

void VdEvent::WaitHost() noexcept {
  std::unique_lock<std::mutex> lock(m_);
  cv_.wait(lock, [&] { return done_; });
}

bool VdEvent::Done() noexcept {
  std::lock_guard<std::mutex> lock(m_);
  return done_;
}

uint64_t StreamDelayUs() noexcept { return Delay().load(std::memory_order_relaxed); }
void SetStreamDelayUs(uint64_t us) noexcept { Delay().store(us, std::memory_order_relaxed); }

VdStream::VdStream(const OrtApi* api, const OrtEpApi* ep_api, uint32_t device_id) noexcept
    : OrtSyncStreamImpl{}, api_(api), ep_api_(ep_api), device_id_(device_id) {
  ort_version_supported = ORT_API_VERSION;
  Release = ReleaseImpl;
  GetHandle = GetHandleImpl;
  CreateNotification = CreateNotificationImpl;
  Flush = FlushImpl;
  OnSessionRunEnd = OnSessionRunEndImpl;
}

VdStream* VdStream::Create(const OrtApi* api, const OrtEpApi* ep_api, uint32_t device_id) noexcept {
  auto* s = new (std::nothrow) VdStream(api, ep_api, device_id);
  if (s == nullptr) return nullptr;
  try {
    s->worker_ = std::thread([s] { s->Run(); });
    std::unique_lock<std::shared_mutex> lock(RegistryMutex());
    Registry().insert(s);
  } catch (...) {
    delete s;  // joins the worker if it started
    return nullptr;
  }
  return s;
}

VdStream::~VdStream() {
  {
    std::unique_lock<std::shared_mutex> lock(RegistryMutex());
    Registry().erase(this);
  }
  while (Resume()) {
  }  // a paused stream still drains
  {
    std::lock_guard<std::mutex> lock(m_);
    stop_ = true;
  }
  cv_.notify_all();
  if (worker_.joinable()) worker_.join();
}

VdStream* VdStream::FromHandle(void* handle) noexcept {
  std::shared_lock<std::shared_mutex> lock(RegistryMutex());
  return handle != nullptr && Registry().count(handle) ? static_cast<VdStream*>(handle) : nullptr;
}

VdStream* VdStream::FromOrt(const OrtEpApi& ep_api, const OrtSyncStream* stream) noexcept {
  if (stream == nullptr) return nullptr;
  // Any OrtSyncStream can reach a data transfer (another EP's, ORT's own): only an impl found in the registry is
  // one of ours.
  const OrtSyncStreamImpl* impl = ep_api.SyncStream_GetImpl(stream);
  return FromHandle(const_cast<OrtSyncStreamImpl*>(impl));
}

bool VdStream::Enqueue(Task task) noexcept {
  try {
    std::lock_guard<std::mutex> lock(m_);
    queue_.push_back(std::move(task));
    ++submitted_;
  } catch (...) {
    return false;
  }
  cv_.notify_all();
  return true;
}

bool VdStream::EnqueueCopy(void* dst, bool dst_dev, const void* src, bool src_dev, std::size_t n) noexcept {
  Task t(Task::Kind::kCopy);
  t.dst = dst;
  t.dst_dev = dst_dev;
  t.src_dev = src_dev;
  t.n = n;
  t.duration_us = StreamDelayUs();
  if (!src_dev) {
    try {
      t.staged.assign(static_cast<const char*>(src), static_cast<const char*>(src) + n);
    } catch (...) {
      return false;
    }
  } else {
    t.src = src;
  }
  if (!Enqueue(std::move(t))) return false;
  // Counted when accepted, so that counters read right after the call agree with a synchronous copy.
  CountAsyncCopy();
  CountCopy(src_dev ? (dst_dev ? CopyKind::kDeviceToDevice : CopyKind::kDeviceToHost)
                    : (dst_dev ? CopyKind::kHostToDevice : CopyKind::kHostToHost),
            n);
  return true;
}

bool VdStream::EnqueueSignal(std::shared_ptr<VdEvent> event) noexcept {
  Task t(Task::Kind::kSignal);
  t.event = std::move(event);
  return Enqueue(std::move(t));
}

bool VdStream::EnqueueWait(std::shared_ptr<VdEvent> event) noexcept {
  Task t(Task::Kind::kWait);
  t.event = std::move(event);
  if (!Enqueue(std::move(t))) return false;
  CountStreamWait();
  return true;
}

bool VdStream::EnqueueHostFunc(void (*fn)(void*), void* user_data) noexcept {
  if (fn == nullptr) return false;
  Task t(Task::Kind::kHostFunc);
  t.fn = fn;
  t.user_data = user_data;
  return Enqueue(std::move(t));
}

bool VdStream::Pause() noexcept {
  std::shared_ptr<VdEvent> gate;
  try {
    gate = std::make_shared<VdEvent>();
    std::lock_guard<std::mutex> lock(m_);
    gates_.push_back(gate);
  } catch (...) {
    return false;
  }
  Task t(Task::Kind::kWait);
  t.event = std::move(gate);
  return Enqueue(std::move(t));
}

bool VdStream::Resume() noexcept {
  std::shared_ptr<VdEvent> gate;
  {
    std::lock_guard<std::mutex> lock(m_);
    if (gates_.empty()) return false;
    gate = std::move(gates_.front());
    gates_.pop_front();
  }
  gate->Signal();
  return true;
}

bool VdStream::WaitFor(VdStream& producer) noexcept {
  if (&producer == this) return true;  // a stream is ordered after itself
  std::shared_ptr<VdEvent> event;
  try {
    event = std::make_shared<VdEvent>();
  } catch (...) {
    return false;
  }
  return producer.EnqueueSignal(event) && EnqueueWait(event);
}

std::string VdStream::Synchronize() noexcept {
  CountHostSync();
  std::unique_lock<std::mutex> lock(m_);
  const uint64_t target = submitted_;
  cv_.wait(lock, [&] { return completed_ >= target; });
  std::string e;
  e.swap(error_);
  return e;
}

bool VdStream::UsesLocked(const Task& t, std::uintptr_t lo, std::uintptr_t hi) const noexcept {
  if (t.kind != Task::Kind::kCopy) return false;
  const auto in = [&](const void* p) {
    const auto a = reinterpret_cast<std::uintptr_t>(p);
    return a >= lo && a < hi;
  };
  return (t.dst_dev && in(t.dst)) || (t.src_dev && in(t.src));
}

void VdStream::WaitIdle() noexcept {
  std::unique_lock<std::mutex> lock(m_);
  const uint64_t target = submitted_;
  cv_.wait(lock, [&] { return completed_ >= target; });
}

void VdStream::WaitForStreamsUsing(std::uintptr_t lo, std::uintptr_t hi) noexcept {
  std::shared_lock<std::shared_mutex> registry(RegistryMutex());  // no stream is destroyed meanwhile
  for (const void* p : Registry()) {
    auto* s = static_cast<VdStream*>(const_cast<void*>(p));
    bool uses = false;
    {
      std::lock_guard<std::mutex> lock(s->m_);
      uses = s->running_ != nullptr && s->UsesLocked(*s->running_, lo, hi);
      for (const Task& t : s->queue_) uses = uses || s->UsesLocked(t, lo, hi);
    }
    if (uses) s->WaitIdle();  // keeps a copy error for the stream's next Synchronize
  }
}

void VdStream::Run() noexcept {
  std::unique_lock<std::mutex> lock(m_);
  for (;;) {
    cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, and everything queued has run
    Task task = std::move(queue_.front());
    queue_.pop_front();
    running_ = &task;
    lock.unlock();
    Execute(task);
    lock.lock();
    running_ = nullptr;
    ++completed_;
    cv_.notify_all();
  }
}

void VdStream::Execute(Task& task) noexcept {
  switch (task.kind) {
    case Task::Kind::kSignal:
      task.event->Signal();
      return;
    case Task::Kind::kWait:
      task.event->WaitHost();
      return;
    case Task::Kind::kHostFunc:
      task.fn(task.user_data);
      return;
    case Task::Kind::kCopy:
      break;
  }
  if (task.duration_us != 0) std::this_thread::sleep_for(std::chrono::microseconds(task.duration_us));
  const void* src = task.src_dev ? task.src : task.staged.data();
  // The guard's mutex serialises this with every other copy and with frees: a region freed before the queue got
  // here is reported, never touched.
  const CopyResult r = GuardedCopy(task.dst, task.dst_dev, src, task.src_dev, task.n);
  if (r == CopyResult::kOk) return;
  CountFailedCopy();  // it was counted in `copies` when enqueued
  std::lock_guard<std::mutex> lock(m_);
  if (error_.empty()) {
    error_ = r == CopyResult::kProtectFailed ? "mprotect failed while opening device pages"
                                             : "an asynchronous copy addressed device memory that was freed before "
                                               "the stream reached it";
  }
}

void ORT_API_CALL VdStream::ReleaseImpl(OrtSyncStreamImpl* self) noexcept { delete static_cast<VdStream*>(self); }

void* ORT_API_CALL VdStream::GetHandleImpl(OrtSyncStreamImpl* self) noexcept { return static_cast<VdStream*>(self); }

OrtStatus* ORT_API_CALL VdStream::CreateNotificationImpl(OrtSyncStreamImpl* self,
                                                         OrtSyncNotificationImpl** notification) noexcept {
  auto* s = static_cast<VdStream*>(self);
  *notification = new (std::nothrow) VdNotification(s, s->ep_api_);
  if (*notification == nullptr) {
    return s->api_ != nullptr ? s->api_->CreateStatus(ORT_FAIL, "ortdlpack virtual device: out of memory") : nullptr;
  }
  return nullptr;
}

// Work is handed to the worker as it is enqueued: there is nothing to flush.
OrtStatus* ORT_API_CALL VdStream::FlushImpl(OrtSyncStreamImpl* /*self*/) noexcept { return nullptr; }

// ORT calls this when a run that used the stream ends. Like a GPU stream, nothing is waited for here: ORT
// synchronizes through notifications and OrtEp::Sync (ep.cc).
OrtStatus* ORT_API_CALL VdStream::OnSessionRunEndImpl(OrtSyncStreamImpl* /*self*/) noexcept { return nullptr; }

}  // namespace ortdlpack::vd

using ortdlpack::vd::VdStream;

extern "C" {

ORTDLPACK_VD_EXPORT void ortdlpack_vd_set_stream_delay_us(uint64_t microseconds) {
  ortdlpack::vd::SetStreamDelayUs(microseconds);
}

ORTDLPACK_VD_EXPORT uint64_t ortdlpack_vd_stream_delay_us(void) { return ortdlpack::vd::StreamDelayUs(); }

ORTDLPACK_VD_EXPORT void* ortdlpack_vd_stream_create(uint32_t device_id) {
  if (device_id >= ortdlpack::vd::kNumDevices) return nullptr;
  return VdStream::Create(nullptr, nullptr, device_id);
}

ORTDLPACK_VD_EXPORT int ortdlpack_vd_stream_destroy(void* stream) {
  VdStream* s = VdStream::FromHandle(stream);
  if (s == nullptr) return -1;
  delete s;
  return 0;
}

ORTDLPACK_VD_EXPORT int ortdlpack_vd_stream_write(void* stream, void* dst, const void* src, uint64_t nbytes) {
  VdStream* s = VdStream::FromHandle(stream);
  if (s == nullptr || (nbytes != 0 && (src == nullptr || !ortdlpack::vd::IsDeviceRange(dst, nbytes)))) return -1;
  return s->EnqueueCopy(dst, true, src, false, nbytes) ? 0 : -1;
}

ORTDLPACK_VD_EXPORT int ortdlpack_vd_stream_read(void* stream, void* dst, const void* src, uint64_t nbytes) {
  VdStream* s = VdStream::FromHandle(stream);
  if (s == nullptr || (nbytes != 0 && (dst == nullptr || !ortdlpack::vd::IsDeviceRange(src, nbytes)))) return -1;
  return s->EnqueueCopy(dst, false, src, true, nbytes) ? 0 : -1;
}

ORTDLPACK_VD_EXPORT int ortdlpack_vd_stream_wait(void* waiter, void* producer) {
  VdStream* w = VdStream::FromHandle(waiter);
  VdStream* p = VdStream::FromHandle(producer);
  if (w == nullptr || p == nullptr) return -1;
  return w->WaitFor(*p) ? 0 : -1;
}

ORTDLPACK_VD_EXPORT int ortdlpack_vd_stream_synchronize(void* stream) {
  VdStream* s = VdStream::FromHandle(stream);
  if (s == nullptr) return -1;
  return s->Synchronize().empty() ? 0 : -2;
}

ORTDLPACK_VD_EXPORT int ortdlpack_vd_stream_pause(void* stream) {
  VdStream* s = VdStream::FromHandle(stream);
  return s != nullptr && s->Pause() ? 0 : -1;
}

ORTDLPACK_VD_EXPORT int ortdlpack_vd_stream_resume(void* stream) {
  VdStream* s = VdStream::FromHandle(stream);
  return s != nullptr && s->Resume() ? 0 : -1;
}

ORTDLPACK_VD_EXPORT int ortdlpack_vd_stream_launch_host_func(void* stream, void (*fn)(void*), void* user_data) {
  VdStream* s = VdStream::FromHandle(stream);
  return s != nullptr && s->EnqueueHostFunc(fn, user_data) ? 0 : -1;
}

ORTDLPACK_VD_EXPORT int ortdlpack_vd_stream_device(void* stream) {
  VdStream* s = VdStream::FromHandle(stream);
  return s != nullptr ? static_cast<int>(s->device_id()) : -1;
}

ORTDLPACK_VD_EXPORT void* ortdlpack_vd_event_create(void) {
  auto* e = new (std::nothrow) ortdlpack::vd::EventHandle();
  if (e == nullptr) return nullptr;
  try {
    std::lock_guard<std::mutex> lock(ortdlpack::vd::EventsMutex());
    ortdlpack::vd::Events().insert(e);
  } catch (...) {
    delete e;
    return nullptr;
  }
  return e;
}

ORTDLPACK_VD_EXPORT int ortdlpack_vd_event_destroy(void* event) {
  {
    std::lock_guard<std::mutex> lock(ortdlpack::vd::EventsMutex());
    if (event == nullptr || ortdlpack::vd::Events().erase(event) == 0) return -1;
  }
  delete static_cast<ortdlpack::vd::EventHandle*>(event);  // queued signals and waits hold their VdEvent
  return 0;
}

ORTDLPACK_VD_EXPORT int ortdlpack_vd_event_record(void* event, void* stream) {
  VdStream* s = VdStream::FromHandle(stream);
  if (s == nullptr) return -1;
  std::shared_ptr<ortdlpack::vd::VdEvent> record;
  try {
    record = std::make_shared<ortdlpack::vd::VdEvent>();
  } catch (...) {
    return -1;
  }
  std::lock_guard<std::mutex> lock(ortdlpack::vd::EventsMutex());  // the handle stays live meanwhile
  if (event == nullptr || ortdlpack::vd::Events().count(event) == 0) return -1;
  if (!s->EnqueueSignal(record)) return -1;
  auto* e = static_cast<ortdlpack::vd::EventHandle*>(event);
  std::lock_guard<std::mutex> event_lock(e->m);
  e->latest = std::move(record);
  return 0;
}

ORTDLPACK_VD_EXPORT int ortdlpack_vd_stream_wait_event(void* stream, void* event) {
  VdStream* s = VdStream::FromHandle(stream);
  std::shared_ptr<ortdlpack::vd::VdEvent> latest;
  if (s == nullptr || !ortdlpack::vd::LatestRecord(event, latest)) return -1;
  if (latest == nullptr) return 0;  // never recorded: nothing to wait for
  return s->EnqueueWait(std::move(latest)) ? 0 : -1;
}

ORTDLPACK_VD_EXPORT int ortdlpack_vd_event_synchronize(void* event) {
  std::shared_ptr<ortdlpack::vd::VdEvent> latest;
  if (!ortdlpack::vd::LatestRecord(event, latest)) return -1;
  if (latest != nullptr) latest->WaitHost();
  return 0;
}

ORTDLPACK_VD_EXPORT int ortdlpack_vd_event_query(void* event) {
  std::shared_ptr<ortdlpack::vd::VdEvent> latest;
  if (!ortdlpack::vd::LatestRecord(event, latest)) return -1;
  return latest == nullptr || latest->Done() ? 1 : 0;
}

ORTDLPACK_VD_EXPORT void ortdlpack_vd_set_host_funcs(int enabled) {
  ortdlpack::vd::HostFuncs().store(enabled != 0, std::memory_order_relaxed);
}

#if !ORTDLPACK_VD_CUDA  // the CUDA flavor's streams are waited for through the CUDA runtime, as a GPU's are
ORTDLPACK_VD_EXPORT int ortdlpack_ep_stream_launch_host_func(void* stream, void (*fn)(void*), void* user_data) {
  if (!ortdlpack::vd::HostFuncs().load(std::memory_order_relaxed)) return -1;
  return ortdlpack_vd_stream_launch_host_func(stream, fn, user_data);
}

ORTDLPACK_VD_EXPORT int ortdlpack_ep_stream_wait(void* waiter, void* producer) {
  return ortdlpack_vd_stream_wait(waiter, producer);
}

ORTDLPACK_VD_EXPORT int ortdlpack_ep_stream_synchronize(void* stream) {
  return ortdlpack_vd_stream_synchronize(stream);
}
#endif

}  // extern "C"
