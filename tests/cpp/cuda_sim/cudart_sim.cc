// The test CUDA runtime (cuda_sim.h): CUDA runtime API semantics over the virtual device's streams and events.
//
// Everything that moves or waits is the virtual device's (its C ABI, libortdlpack_virtual_cuda.so, which this
// library links): a cudaStream_t is a virtual-device stream, an event record is a virtual-device event record. What
// this file adds is the runtime's own state and rules: the current device of each host thread, the legacy and
// per-thread default streams and the implicit synchronization of the legacy one, events tied to the device current
// at their creation, the checks the reference documents, and fault injection.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "cuda_sim.h"
#include "ortdlpack/virtual_device.h"

#define CUDART_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

constexpr int kDevices = ORTDLPACK_VD_NUM_DEVICES;
constexpr uintptr_t kStreamLegacy = 0x1;      // cudaStreamLegacy
constexpr uintptr_t kStreamPerThread = 0x2;   // cudaStreamPerThread
constexpr unsigned kStreamNonBlocking = 0x1;  // cudaStreamNonBlocking
constexpr unsigned kEventFlags =
    0x1 | 0x2 | 0x4;  // cudaEventBlockingSync, cudaEventDisableTiming, cudaEventInterprocess
constexpr unsigned kEventInterprocess = 0x4;
constexpr unsigned kEventDisableTiming = 0x2;
constexpr unsigned kEventWaitExternal = 0x1;  // cudaEventWaitExternal; cudaEventWaitDefault is 0
enum MemcpyKind { kHostToHost = 0, kHostToDevice = 1, kDeviceToHost = 2, kDeviceToDevice = 3, kDefault = 4 };

struct Event {
  void* vd;
  int device;  // the device current when it was created
};

struct Injection {
  int error;
  uint64_t countdown;
};

struct State {
  std::mutex m;
  void* legacy[kDevices] = {};                               // legacy default streams, made on first use
  std::unordered_set<void*> blocking;                        // streams that synchronize with the legacy one
  std::unordered_set<void*> created;                         // streams made by cudaStreamCreate*, until destroyed
  std::unordered_set<Event*> events;                         // live events
  std::map<std::string, uint64_t> calls;                     // since the last reset
  std::map<std::string, Injection> injections;               // pending, by function
  std::map<std::thread::id, std::vector<void*>> per_thread;  // each thread's default stream per device
};
State& state() {
  static auto* s = new State();  // process lifetime: streams and host functions may run during exit
  return *s;
}

std::atomic<uint64_t> g_calls_in_host_functions{0};
thread_local int t_device = 0;  // cudaSetDevice: "the current device for the calling host thread"
thread_local bool t_in_host_function = false;

// Counts the call, and answers for it when a fault is injected or it comes from inside a host function.
// Returns 0 when the call proceeds.
int enter(const char* function) {
  if (t_in_host_function) {  // "The host function must not make any CUDA API calls" (cudaLaunchHostFunc)
    g_calls_in_host_functions.fetch_add(1);
    return kCudaSimErrorNotPermitted;
  }
  State& s = state();
  std::lock_guard<std::mutex> lock(s.m);
  ++s.calls[function];
  const auto it = s.injections.find(function);
  if (it == s.injections.end() || --it->second.countdown != 0) return 0;
  const int error = it->second.error;
  s.injections.erase(it);
  return error;
}

// The virtual-device stream behind a handle for the calling thread: 0 and cudaStreamLegacy the legacy default
// stream of the current device, cudaStreamPerThread this thread's default stream of it (both made on first use);
// any other handle itself when it is a live virtual-device stream. NULL otherwise.
void* resolve(void* handle) {
  const auto h = reinterpret_cast<uintptr_t>(handle);
  State& s = state();
  if (h == 0 || h == kStreamLegacy) {
    std::lock_guard<std::mutex> lock(s.m);
    void*& legacy = s.legacy[t_device];
    if (legacy == nullptr) legacy = ortdlpack_vd_stream_create(static_cast<uint32_t>(t_device));
    return legacy;
  }
  if (h == kStreamPerThread) {
    std::lock_guard<std::mutex> lock(s.m);
    std::vector<void*>& mine = s.per_thread[std::this_thread::get_id()];
    mine.resize(kDevices, nullptr);
    void*& stream = mine[static_cast<size_t>(t_device)];
    if (stream == nullptr) {
      stream = ortdlpack_vd_stream_create(static_cast<uint32_t>(t_device));
      if (stream != nullptr) s.blocking.insert(stream);  // "not a non-blocking stream"
    }
    return stream;
  }
  return ortdlpack_vd_stream_device(handle) >= 0 ? handle : nullptr;
}

// The implicit synchronization of the legacy default stream ("Stream synchronization behavior"): work enqueued on it
// waits for all prior work of the blocking streams of its device, and work enqueued on a blocking stream waits for
// all prior work of the legacy default stream. Non-blocking streams (ORT's) take no part.
void implicit_sync(void* stream) {
  const int device = ortdlpack_vd_stream_device(stream);
  if (device < 0) return;
  std::vector<void*> before;
  {
    State& s = state();
    std::lock_guard<std::mutex> lock(s.m);
    void* legacy = s.legacy[device];
    if (stream == legacy) {
      for (void* b : s.blocking) {
        if (ortdlpack_vd_stream_device(b) == device) before.push_back(b);
      }
    } else if (legacy != nullptr && s.blocking.count(stream) != 0) {
      before.push_back(legacy);
    }
  }
  for (void* b : before) ortdlpack_vd_stream_wait(stream, b);
}

Event* live_event(void* handle) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.m);
  auto* e = static_cast<Event*>(handle);
  return s.events.count(e) != 0 ? e : nullptr;
}

int create_stream(void** out, unsigned flags) {
  if (out == nullptr || (flags & ~kStreamNonBlocking) != 0) return kCudaSimErrorInvalidValue;
  void* stream = ortdlpack_vd_stream_create(static_cast<uint32_t>(t_device));  // "on the current device"
  if (stream == nullptr) return kCudaSimErrorInvalidValue;
  State& s = state();
  std::lock_guard<std::mutex> lock(s.m);
  s.created.insert(stream);
  if ((flags & kStreamNonBlocking) == 0) s.blocking.insert(stream);
  *out = stream;
  return kCudaSimSuccess;
}

int create_event(void** out, unsigned flags) {
  if (out == nullptr || (flags & ~kEventFlags) != 0) return kCudaSimErrorInvalidValue;
  // "cudaEventInterprocess ... must be used with cudaEventDisableTiming".
  if ((flags & kEventInterprocess) != 0 && (flags & kEventDisableTiming) == 0) return kCudaSimErrorInvalidValue;
  void* vd = ortdlpack_vd_event_create();
  if (vd == nullptr) return kCudaSimErrorInvalidValue;
  auto* e = new Event{vd, t_device};
  State& s = state();
  std::lock_guard<std::mutex> lock(s.m);
  s.events.insert(e);
  *out = e;
  return kCudaSimSuccess;
}

}  // namespace

CUDART_EXPORT int cudaGetDeviceCount(int* count) {
  if (int e = enter("cudaGetDeviceCount")) return e;
  if (count == nullptr) return kCudaSimErrorInvalidValue;
  *count = kDevices;
  return kCudaSimSuccess;
}

CUDART_EXPORT int cudaGetDevice(int* device) {
  if (int e = enter("cudaGetDevice")) return e;
  if (device == nullptr) return kCudaSimErrorInvalidValue;
  *device = t_device;
  return kCudaSimSuccess;
}

CUDART_EXPORT int cudaSetDevice(int device) {
  if (int e = enter("cudaSetDevice")) return e;
  if (device < 0 || device >= kDevices) return kCudaSimErrorInvalidDevice;  // "0 to cudaGetDeviceCount() - 1"
  t_device = device;
  return kCudaSimSuccess;
}

CUDART_EXPORT int cudaStreamCreate(void** stream) {
  if (int e = enter("cudaStreamCreate")) return e;
  return create_stream(stream, 0);
}

CUDART_EXPORT int cudaStreamCreateWithFlags(void** stream, unsigned flags) {
  if (int e = enter("cudaStreamCreateWithFlags")) return e;
  return create_stream(stream, flags);
}

CUDART_EXPORT int cudaStreamDestroy(void* stream) {
  if (int e = enter("cudaStreamDestroy")) return e;
  State& s = state();
  {
    std::lock_guard<std::mutex> lock(s.m);
    if (s.created.erase(stream) == 0) return kCudaSimErrorInvalidResourceHandle;  // not one of cudaStreamCreate's
    s.blocking.erase(stream);
  }
  // "the device is still doing work in the stream ... resources ... released automatically once the device has
  // completed all work": destroying a virtual-device stream runs its queue first.
  ortdlpack_vd_stream_destroy(stream);
  return kCudaSimSuccess;
}

CUDART_EXPORT int cudaStreamSynchronize(void* stream) {
  if (int e = enter("cudaStreamSynchronize")) return e;
  void* s = resolve(stream);
  if (s == nullptr) return kCudaSimErrorInvalidResourceHandle;
  // "may also return error codes from previous, asynchronous launches": a queued copy that hit freed memory.
  return ortdlpack_vd_stream_synchronize(s) == 0 ? kCudaSimSuccess : kCudaSimErrorIllegalAddress;
}

CUDART_EXPORT int cudaStreamQuery(void* stream) {
  if (int e = enter("cudaStreamQuery")) return e;
  void* s = resolve(stream);
  if (s == nullptr) return kCudaSimErrorInvalidResourceHandle;
  void* probe = ortdlpack_vd_event_create();
  if (probe == nullptr) return kCudaSimErrorInvalidValue;
  ortdlpack_vd_event_record(probe, s);
  const int done = ortdlpack_vd_event_query(probe);
  ortdlpack_vd_event_destroy(probe);
  return done == 1 ? kCudaSimSuccess : kCudaSimErrorNotReady;
}

CUDART_EXPORT int cudaEventCreate(void** event) {
  if (int e = enter("cudaEventCreate")) return e;
  return create_event(event, 0);
}

CUDART_EXPORT int cudaEventCreateWithFlags(void** event, unsigned flags) {
  if (int e = enter("cudaEventCreateWithFlags")) return e;
  return create_event(event, flags);
}

CUDART_EXPORT int cudaEventDestroy(void* event) {
  if (int e = enter("cudaEventDestroy")) return e;
  State& s = state();
  auto* ev = static_cast<Event*>(event);
  {
    std::lock_guard<std::mutex> lock(s.m);
    if (s.events.erase(ev) == 0) return kCudaSimErrorInvalidResourceHandle;
  }
  // "resources ... released automatically once the device has completed event": queued records keep theirs.
  ortdlpack_vd_event_destroy(ev->vd);
  delete ev;
  return kCudaSimSuccess;
}

CUDART_EXPORT int cudaEventRecord(void* event, void* stream) {
  if (int e = enter("cudaEventRecord")) return e;
  Event* ev = live_event(event);
  void* s = resolve(stream);
  if (ev == nullptr || s == nullptr) return kCudaSimErrorInvalidResourceHandle;
  // "event and stream must be on the same CUDA context": an event of another device than the stream's is refused.
  if (ortdlpack_vd_stream_device(s) != ev->device) return kCudaSimErrorInvalidResourceHandle;
  implicit_sync(s);
  return ortdlpack_vd_event_record(ev->vd, s) == 0 ? kCudaSimSuccess : kCudaSimErrorInvalidResourceHandle;
}

CUDART_EXPORT int cudaStreamWaitEvent(void* stream, void* event, unsigned flags) {
  if (int e = enter("cudaStreamWaitEvent")) return e;
  if ((flags & ~kEventWaitExternal) != 0) return kCudaSimErrorInvalidValue;
  Event* ev = live_event(event);
  void* s = resolve(stream);
  if (ev == nullptr || s == nullptr) return kCudaSimErrorInvalidResourceHandle;
  // "The event may be from a different device than stream"; never recorded: nothing to wait for.
  implicit_sync(s);
  return ortdlpack_vd_stream_wait_event(s, ev->vd) == 0 ? kCudaSimSuccess : kCudaSimErrorInvalidResourceHandle;
}

CUDART_EXPORT int cudaEventSynchronize(void* event) {
  if (int e = enter("cudaEventSynchronize")) return e;
  Event* ev = live_event(event);
  if (ev == nullptr) return kCudaSimErrorInvalidResourceHandle;
  return ortdlpack_vd_event_synchronize(ev->vd) == 0 ? kCudaSimSuccess : kCudaSimErrorInvalidResourceHandle;
}

CUDART_EXPORT int cudaEventQuery(void* event) {
  if (int e = enter("cudaEventQuery")) return e;
  Event* ev = live_event(event);
  if (ev == nullptr) return kCudaSimErrorInvalidResourceHandle;
  return ortdlpack_vd_event_query(ev->vd) == 1 ? kCudaSimSuccess : kCudaSimErrorNotReady;
}

namespace {
struct HostCall {
  void (*fn)(void*);
  void* user_data;
};
}  // namespace

CUDART_EXPORT int cudaLaunchHostFunc(void* stream, void (*fn)(void*), void* user_data) {
  if (int e = enter("cudaLaunchHostFunc")) return e;
  if (fn == nullptr) return kCudaSimErrorInvalidValue;
  void* s = resolve(stream);
  if (s == nullptr) return kCudaSimErrorInvalidResourceHandle;
  implicit_sync(s);
  // "called after currently enqueued work and will block work added after it": the stream's worker runs it in
  // order. Runtime calls from inside it are refused and counted.
  auto* call = new HostCall{fn, user_data};
  const auto run = [](void* p) {
    std::unique_ptr<HostCall> c(static_cast<HostCall*>(p));
    t_in_host_function = true;
    c->fn(c->user_data);
    t_in_host_function = false;
  };
  if (ortdlpack_vd_stream_launch_host_func(s, run, call) != 0) {
    delete call;
    return kCudaSimErrorInvalidResourceHandle;
  }
  return kCudaSimSuccess;
}

CUDART_EXPORT int cudaMemcpyAsync(void* dst, const void* src, size_t count, int kind, void* stream) {
  if (int e = enter("cudaMemcpyAsync")) return e;
  void* s = resolve(stream);
  if (s == nullptr) return kCudaSimErrorInvalidResourceHandle;
  if (kind == kDefault) {  // "the type of transfer is inferred from the pointer values"
    kind = ortdlpack_vd_is_device_pointer(dst, count)   ? kHostToDevice
           : ortdlpack_vd_is_device_pointer(src, count) ? kDeviceToHost
                                                        : kHostToHost;
  }
  implicit_sync(s);
  // Host <-> device only: the virtual device has no queued host-to-host or device-to-device copy of the C ABI.
  const int rc = kind == kHostToDevice   ? ortdlpack_vd_stream_write(s, dst, src, count)
                 : kind == kDeviceToHost ? ortdlpack_vd_stream_read(s, dst, src, count)
                                         : -1;
  return rc == 0 ? kCudaSimSuccess : kCudaSimErrorInvalidValue;
}

CUDART_EXPORT const char* cudaGetErrorName(int error) {
  switch (error) {
    case kCudaSimSuccess:
      return "cudaSuccess";
    case kCudaSimErrorInvalidValue:
      return "cudaErrorInvalidValue";
    case kCudaSimErrorInvalidDevice:
      return "cudaErrorInvalidDevice";
    case kCudaSimErrorInvalidResourceHandle:
      return "cudaErrorInvalidResourceHandle";
    case kCudaSimErrorNotReady:
      return "cudaErrorNotReady";
    case kCudaSimErrorIllegalAddress:
      return "cudaErrorIllegalAddress";
    case kCudaSimErrorNotPermitted:
      return "cudaErrorNotPermitted";
    default:
      return "cudaErrorUnknown";
  }
}

CUDART_EXPORT const char* cudaGetErrorString(int error) { return cudaGetErrorName(error); }

// --- the test ABI (cuda_sim.h) ------------------------------------------------------------------------------------

CUDART_EXPORT void ortdlpack_cuda_sim_fail(const char* function, int error, uint64_t n) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.m);
  if (n == 0) {
    s.injections.erase(function);
  } else {
    s.injections[function] = Injection{error, n};
  }
}

CUDART_EXPORT uint64_t ortdlpack_cuda_sim_calls(const char* function) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.m);
  const auto it = s.calls.find(function);
  return it != s.calls.end() ? it->second : 0;
}

CUDART_EXPORT uint64_t ortdlpack_cuda_sim_calls_from_host_functions(void) { return g_calls_in_host_functions.load(); }

CUDART_EXPORT void ortdlpack_cuda_sim_reset(void) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.m);
  s.calls.clear();
  s.injections.clear();
  g_calls_in_host_functions.store(0);
}

CUDART_EXPORT void* ortdlpack_cuda_sim_stream(void* handle) { return resolve(handle); }
