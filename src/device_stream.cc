// ortdlpack's stream of each device: the state of one (sequence numbers, kept owners) and the table that finds it
// (device_stream.h).
#include "device_stream.h"

#include <algorithm>
#include <cstring>

#include "ep_table.h"
#include "ort.h"
#include "ortdlpack/api.h"
#include "ortdlpack/error.h"

namespace ortdlpack::detail {

// --- one device's stream -----------------------------------------------------------------------------------------

DeviceStream::DeviceStream(const OrtEpDevice* ep_device, int device_id, OrtSyncStream* stream,
                           std::unique_ptr<NativeStreams> native)
    : ep_device_(ep_device),
      device_id_(device_id),
      stream_(stream),
      handle_(ort().SyncStream_GetHandle(stream)),
      native_(std::move(native)) {}

uint64_t DeviceStream::submit() { return submitted_.fetch_add(1, std::memory_order_acq_rel) + 1; }

bool DeviceStream::pending() const {
  return completed_.load(std::memory_order_acquire) < submitted_.load(std::memory_order_acquire);
}

void DeviceStream::mark_completed(uint64_t seq) {
  uint64_t done = completed_.load(std::memory_order_acquire);
  while (done < seq && !completed_.compare_exchange_weak(done, seq, std::memory_order_acq_rel)) {
  }
}

void DeviceStream::wait_failed(int rc) const {
  throw Error(ErrorKind::kRuntime, std::string("waiting for the stream of ") + ort().EpDevice_EpName(ep_device_) +
                                       " device " + std::to_string(device_id_) + " failed (error " +
                                       std::to_string(rc) + ")");
}

void DeviceStream::synchronize() {
  // Only what was submitted before the wait began is complete when it returns.
  const uint64_t target = submitted_.load(std::memory_order_acquire);
  if (completed_.load(std::memory_order_acquire) < target) {
    if (int rc = native_->synchronize(handle_)) wait_failed(rc);
    mark_completed(target);
  }
  release_completed();
}

void DeviceStream::wait_on_host(void* other) const {
  if (int rc = native_->synchronize(other)) wait_failed(rc);
}

void DeviceStream::launch_notice() {
  bool idle = false;
  if (!notice_outstanding_.compare_exchange_strong(idle, true, std::memory_order_acq_rel)) return;
  notice_seq_.store(submitted_.load(std::memory_order_acquire), std::memory_order_release);
  // Runs on the EP's thread: it only moves two numbers.
  const auto on_complete = [](void* self) {
    auto* s = static_cast<DeviceStream*>(self);
    s->mark_completed(s->notice_seq_.load(std::memory_order_acquire));
    s->notice_outstanding_.store(false, std::memory_order_release);
  };
  if (native_->launch_host_func(handle_, on_complete, this) != 0) {  // learnt at the next host wait instead
    notice_outstanding_.store(false, std::memory_order_release);
  }
}

void DeviceStream::keep_until(uint64_t seq, std::shared_ptr<void> owner, size_t bytes) {
  if (completed_.load(std::memory_order_acquire) >= seq) return;  // done already: `owner` goes with the caller's
  bool over = false;
  {
    std::lock_guard<std::mutex> lock(kept_mutex_);
    kept_.push_back({seq, bytes, std::move(owner)});
    kept_bytes_ += bytes;
    if (seq < oldest_kept_.load(std::memory_order_relaxed)) oldest_kept_.store(seq, std::memory_order_release);
    over = kept_.size() > kMaxKept || (kept_.size() > 1 && kept_bytes_ > kMaxKeptBytes);
  }
  if (over) return synchronize();  // the bound: a host wait releases them all
  launch_notice();
}

void DeviceStream::release_completed() {
  if (completed_.load(std::memory_order_acquire) < oldest_kept_.load(std::memory_order_acquire)) {
    // Nothing to release yet (or nothing kept). Kept work that no host function covers gets one (a host function
    // that ran may have covered only older work).
    if (oldest_kept_.load(std::memory_order_acquire) != UINT64_MAX &&
        !notice_outstanding_.load(std::memory_order_acquire)) {
      launch_notice();
    }
    return;
  }
  const uint64_t done = completed_.load(std::memory_order_acquire);
  std::vector<Kept> released;
  {
    std::lock_guard<std::mutex> lock(kept_mutex_);
    size_t keep = 0;
    uint64_t oldest = UINT64_MAX;
    for (Kept& k : kept_) {
      if (k.seq <= done) {
        kept_bytes_ -= k.bytes;
        released.push_back(std::move(k));
      } else {
        oldest = std::min(oldest, k.seq);
        kept_[keep++] = std::move(k);
      }
    }
    kept_.resize(keep);
    oldest_kept_.store(oldest, std::memory_order_release);
  }
  // `released` goes here, outside the lock: a DLPack deleter may call back into ortdlpack.
}

// --- the table ---------------------------------------------------------------------------------------------------
namespace {

struct Key {
  OrtMemoryInfoDeviceType type;
  uint32_t vendor;
  int id;
  bool operator==(const Key& o) const { return type == o.type && vendor == o.vendor && id == o.id; }
};

// The key of device memory; false for host memory (CPU, or HOST_ACCESSIBLE: the host reads it, no stream).
bool device_key(const OrtMemoryInfo* memory, Key& k) {
  const MemoryFields f = memory_fields(memory);
  if (f.device_type == OrtMemoryInfoDeviceType_CPU || f.memory_type == OrtDeviceMemoryType_HOST_ACCESSIBLE)
    return false;
  k = {f.device_type, f.vendor_id, f.device_id};
  return true;
}

// The streams found in one listing of the env's EP devices; NULL rows are devices without a usable stream. A table
// is never changed once published: a new one replaces it (lookups read it without a lock).
struct Table {
  std::vector<const OrtEpDevice*> ep_devices;
  std::vector<std::pair<Key, DeviceStream*>> rows;

  bool made_from(const EpDeviceList& list) const {
    return ep_devices.size() == list.size() &&
           (list.size() == 0 || std::memcmp(ep_devices.data(), list.begin(), list.size() * sizeof(*list.begin())) == 0);
  }
  const std::pair<Key, DeviceStream*>* row(const Key& k) const {
    for (const auto& r : rows) {
      if (r.first == k) return &r;
    }
    return nullptr;
  }
};

// Streams and tables live as long as the process (a stream is never released, see above; a lookup may still read
// a replaced table): held here, so that they stay reachable.
struct Registry {
  std::mutex mutex;  // builds tables one at a time
  std::atomic<const Table*> current{nullptr};
  std::vector<std::unique_ptr<Table>> tables;
  std::vector<std::unique_ptr<DeviceStream>> streams;
};
Registry& registry() {
  static auto* r = new Registry();  // never destroyed: streams outlive static destruction
  return *r;
}

// The native stream calls for an EP device: its library's stream convention, else its row's backend.
std::unique_ptr<NativeStreams> native_streams(const OrtEpDevice* dev, const OrtMemoryInfo* memory, const Key& k) {
  if (std::unique_ptr<NativeStreams> n = ep_convention_streams(dev)) return n;
  const EpRow* owner = owner_of(memory_fields(memory));
  if (owner != nullptr && owner->streams == StreamBackend::kCudaRuntime) return cuda_runtime_streams(k.id);
  return nullptr;
}

// A new stream for the env's EP device whose DEFAULT memory is `k`, or NULL when none has a usable one.
DeviceStream* new_stream(const Key& k, const EpDeviceList& list) {
  for (const OrtEpDevice* dev : list) {
    const OrtMemoryInfo* m = default_memory(dev);
    Key mk{};
    if (m == nullptr || !device_key(m, mk) || !(mk == k)) continue;
    std::unique_ptr<NativeStreams> native = native_streams(dev, m, k);
    if (native == nullptr) return nullptr;  // no way to wait for its streams: synchronous copies
    OrtSyncStream* stream = nullptr;
    if (failed(ort().CreateSyncStreamForEpDevice(dev, nullptr, &stream))) return nullptr;  // not stream-aware
    registry().streams.push_back(std::make_unique<DeviceStream>(dev, k.id, stream, std::move(native)));
    return registry().streams.back().get();
  }
  return nullptr;
}

bool listed(const OrtEpDevice* dev, const EpDeviceList& list) {
  return std::find(list.begin(), list.end(), dev) != list.end();
}

// The row of `k` in a table of the env's current listing, made and published if need be.
DeviceStream* build(const Key& k, const EpDeviceList& list) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  const Table* old = r.current.load(std::memory_order_acquire);
  if (old != nullptr && old->made_from(list)) {
    if (const auto* row = old->row(k)) return row->second;  // another thread built it meanwhile
  }
  auto table = std::make_unique<Table>();
  table->ep_devices.assign(list.begin(), list.end());
  if (old != nullptr) {
    // Streams of EP devices still listed stay; a device without one is looked at again (its EP may have changed).
    // A stream whose EP library was unregistered is left alone (never released, see device_stream.h).
    for (const auto& row : old->rows) {
      if (row.second != nullptr && listed(row.second->ep_device(), list)) table->rows.push_back(row);
    }
  }
  const auto* row = table->row(k);
  DeviceStream* found = row != nullptr ? row->second : new_stream(k, list);
  if (row == nullptr) table->rows.emplace_back(k, found);
  r.current.store(table.get(), std::memory_order_release);
  r.tables.push_back(std::move(table));
  return found;
}

}  // namespace

DeviceStream* find_stream(const OrtMemoryInfo* memory) {
  Key k{};
  if (memory == nullptr || !device_key(memory, k)) return nullptr;
  const EpDeviceList list = env_ep_devices();
  const Table* t = registry().current.load(std::memory_order_acquire);
  const std::pair<Key, DeviceStream*>* row = t != nullptr && t->made_from(list) ? t->row(k) : nullptr;
  DeviceStream* s = row != nullptr ? row->second : build(k, list);
  if (s != nullptr) s->release_completed();
  return s;
}

}  // namespace ortdlpack::detail
