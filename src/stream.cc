#include "ortdlpack/stream.h"

#include <dlfcn.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>

#include "ep_library.h"
#include "ep_table.h"
#include "ort.h"
#include "ortdlpack/api.h"
#include "ortdlpack/device.h"
#include "ortdlpack/error.h"

namespace ortdlpack {
namespace {

// How to wait for a native stream handle of one EP: the only two operations ORT's C API lacks.
struct Backend {
  int (*wait)(void* waiter, void* producer) = nullptr;  // waiter waits (on the device) for producer's work so far
  int (*sync)(void* stream) = nullptr;                  // the host waits for the stream's work so far
  explicit operator bool() const { return wait != nullptr && sync != nullptr; }
};

// --- the CUDA runtime already in the process (never loaded here) -------------------------------------------------
struct CudaRuntime {
  int (*stream_synchronize)(void*) = nullptr;
  int (*event_create_with_flags)(void**, unsigned) = nullptr;
  int (*event_record)(void*, void*) = nullptr;
  int (*stream_wait_event)(void*, void*, unsigned) = nullptr;
  int (*event_destroy)(void*) = nullptr;
};

const CudaRuntime* cuda_runtime() {
  static const CudaRuntime* rt = []() -> const CudaRuntime* {
    for (const char* name : {"libcudart.so.13", "libcudart.so.12", "libcudart.so.11.0", "libcudart.so"}) {
      void* lib = dlopen(name, RTLD_NOW | RTLD_NOLOAD);  // only a runtime that is already loaded
      if (lib == nullptr) continue;
      auto* r = new CudaRuntime();  // process lifetime, like the runtime itself
      r->stream_synchronize = reinterpret_cast<int (*)(void*)>(dlsym(lib, "cudaStreamSynchronize"));
      r->event_create_with_flags = reinterpret_cast<int (*)(void**, unsigned)>(dlsym(lib, "cudaEventCreateWithFlags"));
      r->event_record = reinterpret_cast<int (*)(void*, void*)>(dlsym(lib, "cudaEventRecord"));
      r->stream_wait_event = reinterpret_cast<int (*)(void*, void*, unsigned)>(dlsym(lib, "cudaStreamWaitEvent"));
      r->event_destroy = reinterpret_cast<int (*)(void*)>(dlsym(lib, "cudaEventDestroy"));
      dlclose(lib);  // drops only the reference RTLD_NOLOAD took
      if (r->stream_synchronize && r->event_create_with_flags && r->event_record && r->stream_wait_event &&
          r->event_destroy) {
        return r;
      }
      delete r;
    }
    return nullptr;
  }();
  return rt;
}

int cuda_sync(void* stream) { return cuda_runtime()->stream_synchronize(stream); }

int cuda_wait(void* waiter, void* producer) {
  const CudaRuntime& rt = *cuda_runtime();
  void* event = nullptr;
  constexpr unsigned kDisableTiming = 0x2;  // cudaEventDisableTiming
  if (int e = rt.event_create_with_flags(&event, kDisableTiming)) return e;
  int e = rt.event_record(event, producer);
  if (e == 0) e = rt.stream_wait_event(waiter, event, 0);
  rt.event_destroy(event);  // legal while the wait is pending
  return e;
}

// --- per-device state ------------------------------------------------------------------------------------------
struct Entry {
  OrtMemoryInfoDeviceType type;
  uint32_t vendor;
  int id;
  const OrtEpDevice* ep_device;
  OrtSyncStream* stream;  // never released: process lifetime (see streams.md)
  void* handle;
  Backend backend;
  std::atomic<bool> pending{false};  // work may be queued that nobody waited for yet
  std::mutex sync_mutex;             // a second synchronize() must not return while the first still waits
};

std::mutex& mutex() {
  static std::mutex m;
  return m;
}
std::vector<Entry*>& entries() {
  static auto* e = new std::vector<Entry*>();  // entries are never freed: callers hold pointers without the lock
  return *e;
}

bool listed(const OrtEpDevice* dev) {
  for (const OrtEpDevice* d : detail::env_ep_devices()) {
    if (d == dev) return true;
  }
  return false;
}

Backend backend_of(const OrtEpDevice* dev, const OrtMemoryInfo* memory) {
  Backend b;
  if (const OrtKeyValuePairs* md = ort().EpDevice_EpMetadata(dev)) {
    if (const char* path = ort().GetKeyValue(md, "library_path")) {
      if (void* lib = dlopen(path, RTLD_NOW | RTLD_NOLOAD)) {  // the library ORT loaded; never a new one
        b.wait = reinterpret_cast<int (*)(void*, void*)>(dlsym(lib, "ortdlpack_ep_stream_wait"));
        b.sync = reinterpret_cast<int (*)(void*)>(dlsym(lib, "ortdlpack_ep_stream_synchronize"));
        dlclose(lib);
      }
    }
  }
  const detail::EpRow* owner = detail::owner_of(detail::memory_fields(memory));
  if (!b && owner != nullptr && owner->streams == detail::StreamBackend::kCudaRuntime && cuda_runtime() != nullptr) {
    b.wait = &cuda_wait;
    b.sync = &cuda_sync;
  }
  return b;
}

Entry* find_in_env(OrtMemoryInfoDeviceType type, uint32_t vendor, int id, std::vector<Entry*>& all);

// The entry of the device that owns `memory` (device memory only), or NULL when it has no usable stream.
Entry* find(const OrtMemoryInfo* memory) {
  if (memory == nullptr || host_accessible(memory)) return nullptr;
  const OrtApi& api = ort();
  OrtMemoryInfoDeviceType type{};
  api.MemoryInfoGetDeviceType(memory, &type);
  const uint32_t vendor = api.MemoryInfoGetVendorId(memory);
  int id = 0;
  check(api.MemoryInfoGetId(memory, &id));
  std::lock_guard<std::mutex> lock(mutex());
  std::vector<Entry*>& all = entries();
  for (size_t i = 0; i < all.size(); ++i) {
    Entry* e = all[i];
    if (e->type != type || e->vendor != vendor || e->id != id) continue;
    if (listed(e->ep_device)) return e->stream != nullptr ? e : nullptr;
    // Its EP library was unregistered: the stream belongs to a gone EP and is left alone (never released).
    all.erase(all.begin() + static_cast<std::ptrdiff_t>(i));
    break;
  }
  // Lookups register nothing (ep_library.h): an EP not in the env yet has no stream until an entry point registers it.
  if (Entry* e = find_in_env(type, vendor, id, all)) return e->stream != nullptr ? e : nullptr;
  return nullptr;  // no EP device for this memory (yet): nothing cached, looked up again next time
}

// A new entry for the env's EP device whose DEFAULT memory is (type, vendor, id), appended to `all`; NULL if none.
Entry* find_in_env(OrtMemoryInfoDeviceType type, uint32_t vendor, int id, std::vector<Entry*>& all) {
  const OrtApi& api = ort();
  for (const OrtEpDevice* dev : detail::env_ep_devices()) {
    const OrtMemoryInfo* m = detail::default_memory(dev);
    if (m == nullptr) continue;
    const detail::MemoryFields f = detail::memory_fields(m);
    if (f.device_type != type || f.vendor_id != vendor || f.device_id != id) continue;
    auto entry = std::make_unique<Entry>();
    entry->type = type;
    entry->vendor = vendor;
    entry->id = id;
    entry->ep_device = dev;
    entry->stream = nullptr;
    entry->handle = nullptr;
    entry->backend = backend_of(dev, m);
    if (entry->backend) {
      if (detail::failed(api.CreateSyncStreamForEpDevice(dev, nullptr, &entry->stream))) {
        entry->stream = nullptr;  // not stream-aware: no stream, synchronous copies
      } else {
        entry->handle = api.SyncStream_GetHandle(entry->stream);
      }
    }
    all.push_back(entry.get());
    return entry.release();
  }
  return nullptr;
}

void host_wait(Entry& e, void* handle) {
  if (int rc = e.backend.sync(handle)) {
    throw Error(ErrorKind::kRuntime, "waiting for the stream of " + std::string(ort().EpDevice_EpName(e.ep_device)) +
                                         " device " + std::to_string(e.id) + " failed (error " + std::to_string(rc) +
                                         ")");
  }
}

void synchronize(Entry& e) {
  std::lock_guard<std::mutex> lock(e.sync_mutex);
  if (e.pending.exchange(false)) host_wait(e, e.handle);
}

}  // namespace

OrtSyncStream* device_stream(const OrtMemoryInfo* memory) {
  Entry* e = find(memory);
  return e ? e->stream : nullptr;
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
  Entry* e = find(memory);
  if (e == nullptr) return 0;
  e->pending = true;
  return reinterpret_cast<uintptr_t>(e->handle);
}

void note_import(const OrtMemoryInfo* memory) {
  if (Entry* e = find(memory)) e->pending = true;
}

void synchronize(const OrtMemoryInfo* memory) {
  if (Entry* e = find(memory)) synchronize(*e);
}

void order_for_consumer(const Tensor& tensor, std::optional<int64_t> consumer) {
  const DLDevice device = tensor.device();
  Entry* e = find(tensor.memory_info());
  if (consumer.has_value() && *consumer != -1) {
    const bool gpu = device.device_type == kDLCUDA || device.device_type == kDLCUDAManaged ||
                     device.device_type == kDLROCM;
    const bool ok = (e != nullptr || gpu) && (*consumer > 0 || (*consumer == 0 && device.device_type == kDLROCM));
    if (!ok) {
      throw Error(ErrorKind::kInvalidArgument,
                  gpu ? "stream must be None, -1 or a stream pointer (> 0 on CUDA)"
                      : e != nullptr ? "stream must be None, -1 or a stream handle of the device (> 0)"
                                     : "stream must be None or -1 on a device without streams (CPU and plugin "
                                       "devices without stream support)");
    }
  }
  if (e == nullptr || !e->pending.load()) return;
  if (!consumer.has_value()) return synchronize(*e);  // None: the host is the consumer's only common ground
  if (*consumer == -1) return;                         // the consumer asked for no synchronization
  void* waiter = reinterpret_cast<void*>(static_cast<uintptr_t>(*consumer));
  // The consumer's stream waits on the device; if the EP refuses (a handle it does not know), the host waits.
  if (waiter == e->handle || e->backend.wait(waiter, e->handle) == 0) return;
  synchronize(*e);
}

void check_caller_stream(const CallerStream& s) {
  const detail::EpRow* owner = s.memory != nullptr ? detail::owner_of(detail::memory_fields(s.memory)) : nullptr;
  if (s.handle == 0 && (owner == nullptr || !owner->zero_is_default_stream)) {
    throw Error(ErrorKind::kInvalidArgument, "stream: a stream handle is needed (0 is only CUDA's default stream)");
  }
  if (find(s.memory) == nullptr) {
    throw Error(ErrorKind::kInvalidArgument, "stream: " + (s.memory ? describe_memory(s.memory) : std::string("host memory")) +
                                                 " has no streams ortdlpack can wait for");
  }
}

void adopt_caller_work(const CallerStream& stream) {
  Entry* e = find(stream.memory);
  if (e == nullptr) return;
  void* handle = reinterpret_cast<void*>(stream.handle);
  if (e->backend.wait(e->handle, handle) == 0) {
    e->pending = true;
  } else {
    host_wait(*e, handle);
  }
}

void order_before_run(const std::vector<const Tensor*>& tensors, const CallerStream* stream) {
  Entry* caller = stream != nullptr ? find(stream->memory) : nullptr;
  const bool on_caller = caller != nullptr && stream->ort_runs_on_it;
  if (caller != nullptr && !on_caller) synchronize(*caller);  // the caller's work, adopted
  for (const Tensor* t : tensors) {
    Entry* e = t != nullptr && *t ? find(t->memory_info()) : nullptr;
    if (e == nullptr || (e == caller && !on_caller)) continue;  // none, or waited for above
    if (e != caller) {
      synchronize(*e);
      continue;
    }
    // ORT computes on the caller's stream: it waits on the device (the host only if the EP refuses).
    void* handle = reinterpret_cast<void*>(stream->handle);
    if (e->pending.load() && e->backend.wait(handle, e->handle) != 0) synchronize(*e);
  }
}

namespace detail {

OrtSyncStream* begin_copy(const OrtMemoryInfo* src, const OrtMemoryInfo* dst, OrtSyncStream* stream) {
  Entry* es = find(src);
  Entry* ed = find(dst);
  OrtSyncStream* used = stream != nullptr ? stream : es != nullptr ? es->stream : ed != nullptr ? ed->stream : nullptr;
  // Work pending on another stream of either side is waited for on the host (one stream per copy call).
  if (es != nullptr && es->stream != used) synchronize(*es);
  if (ed != nullptr && ed->stream != used) synchronize(*ed);
  return used;
}

void end_copy(const OrtMemoryInfo* src, const OrtMemoryInfo* dst, OrtSyncStream* used) {
  if (used == nullptr) return;  // synchronous copy
  Entry* es = find(src);
  Entry* ed = find(dst);
  Entry* owner = es != nullptr && es->stream == used ? es : ed != nullptr && ed->stream == used ? ed : nullptr;
  const bool host_dst = host_accessible(dst);
  // A host-visible result, a host source the device may still read (pinned memory), a copy on a caller's stream or
  // one that leaves data on the other device's stream: complete it now. Otherwise it stays pending on our stream,
  // which every later reader of that device is ordered after.
  OrtMemoryInfoDeviceType src_type{};
  ort().MemoryInfoGetDeviceType(src, &src_type);
  const bool pinned_src = host_accessible(src) && src_type != OrtMemoryInfoDeviceType_CPU;
  const bool complete_now = host_dst || pinned_src || (ed != nullptr && ed != owner) || (es != nullptr && es != owner);
  if (owner == nullptr) {
    Entry* e = es != nullptr ? es : ed;  // a caller's stream of a device we can wait for
    if (e != nullptr) host_wait(*e, ort().SyncStream_GetHandle(used));
    return;
  }
  owner->pending = true;
  if (complete_now) synchronize(*owner);
}

}  // namespace detail
}  // namespace ortdlpack
