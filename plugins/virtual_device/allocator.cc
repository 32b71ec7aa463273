// Device and host-accessible allocators.
#include "allocator.h"

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "counters.h"
#include "guarded_memory.h"
#include "stream.h"

namespace ortdlpack::vd {
namespace {

// Host-accessible blocks carry their size in a header so that Free can count bytes without a lookup table.
// The header is kAlign bytes so the user pointer keeps kAlign alignment.
constexpr std::size_t kAlign = 64;

void* HostAlloc(std::size_t size) noexcept {
  if (size > SIZE_MAX - 2 * kAlign) return nullptr;
  const std::size_t payload = size == 0 ? 1 : size;  // zero bytes still get a unique, dereferenceable byte
  const std::size_t total = (payload + kAlign + kAlign - 1) / kAlign * kAlign;  // header + payload, rounded up
  void* raw = std::aligned_alloc(kAlign, total);
  if (raw == nullptr) return nullptr;
  std::memcpy(raw, &size, sizeof size);
  return static_cast<unsigned char*>(raw) + kAlign;
}

void HostFree(void* p, std::size_t* size) noexcept {
  unsigned char* raw = static_cast<unsigned char*>(p) - kAlign;
  std::memcpy(size, raw, sizeof *size);
  std::free(raw);
}

}  // namespace

VdAllocator::VdAllocator(const OrtApi& api, OrtMemoryInfo* info, MemKind kind) noexcept
    : OrtAllocator{}, api_(api), info_(info), kind_(kind) {
  version = ORT_API_VERSION;
  Alloc = AllocImpl;
  Free = FreeImpl;
  Info = InfoImpl;
  Reserve = AllocImpl;  // no arena: reserving is allocating
  GetStats = GetStatsImpl;
  AllocOnStream = nullptr;  // ORT then uses Alloc (documented)
  Shrink = nullptr;         // optional (documented)
}

VdAllocator::~VdAllocator() { api_.ReleaseMemoryInfo(info_); }

void* ORT_API_CALL VdAllocator::AllocImpl(OrtAllocator* self, size_t size) noexcept {
  auto* a = static_cast<VdAllocator*>(self);
  if (ShouldFailAlloc()) {
    CountFailedAlloc();
    return nullptr;
  }
  void* p = a->kind_ == MemKind::kDevice ? DeviceMap(size) : HostAlloc(size);
  if (p == nullptr) {
    CountFailedAlloc();
    return nullptr;
  }
  if (a->kind_ == MemKind::kDevice) {
    CountDeviceAlloc(size);
  } else {
    CountHostAlloc(size);
  }
  a->in_use_.fetch_add(size, std::memory_order_relaxed);
  a->num_allocs_.fetch_add(1, std::memory_order_relaxed);
  return p;
}

void ORT_API_CALL VdAllocator::FreeImpl(OrtAllocator* self, void* p) noexcept {
  if (p == nullptr) return;
  auto* a = static_cast<VdAllocator*>(self);
  std::size_t size = 0;
  if (a->kind_ == MemKind::kDevice) {
    // Stream-ordered: queued copies that use this memory run first (stream.h).
    if (const std::size_t mapped = DeviceRegionBytes(p)) {
      const auto lo = reinterpret_cast<std::uintptr_t>(p);
      VdStream::WaitForStreamsUsing(lo, lo + mapped);
    }
    // A pointer we never handed out is ignored rather than passed to munmap (which could unmap anything).
    if (!DeviceUnmap(p, &size)) return;
    CountDeviceFree(size);
  } else {
    HostFree(p, &size);
    CountHostFree(size);
  }
  a->in_use_.fetch_sub(size, std::memory_order_relaxed);
}

const OrtMemoryInfo* ORT_API_CALL VdAllocator::InfoImpl(const OrtAllocator* self) noexcept {
  return static_cast<const VdAllocator*>(self)->info_;
}

OrtStatus* ORT_API_CALL VdAllocator::GetStatsImpl(const OrtAllocator* self, OrtKeyValuePairs** out) noexcept {
  const auto* a = static_cast<const VdAllocator*>(self);
  *out = nullptr;
  OrtKeyValuePairs* kvp = nullptr;
  a->api_.CreateKeyValuePairs(&kvp);
  if (kvp == nullptr) return a->api_.CreateStatus(ORT_FAIL, "ortdlpack virtual device: CreateKeyValuePairs failed");
  char buf[32];
  a->api_.AddKeyValuePair(kvp, "Limit", "-1");
  std::snprintf(buf, sizeof buf, "%" PRIu64, a->in_use_.load(std::memory_order_relaxed));
  a->api_.AddKeyValuePair(kvp, "InUse", buf);
  std::snprintf(buf, sizeof buf, "%" PRIu64, a->num_allocs_.load(std::memory_order_relaxed));
  a->api_.AddKeyValuePair(kvp, "NumAllocs", buf);
  *out = kvp;
  return nullptr;
}

}  // namespace ortdlpack::vd
