// mmap/mprotect implementation of guarded device memory (see guarded_memory.h for the invariants).
#include "guarded_memory.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <new>

#include "ortdlpack/virtual_device.h"

namespace ortdlpack::vd {
namespace {

struct Region {
  std::size_t mapped;     // bytes mapped (multiple of the page size, >= 1 page)
  std::size_t requested;  // bytes the allocator was asked for (may be 0)
};

std::mutex& Mutex() noexcept {
  static std::mutex m;
  return m;
}

// base address -> region. Guarded by Mutex(). Constructed in static storage and never destroyed: ORT may release
// a shared allocator (and so free device memory) from its own static destructors after ours have run. The map's
// object lives in the library image, so nothing is left on the heap once every region is freed.
using RegionMap = std::map<std::uintptr_t, Region>;
RegionMap& Regions() noexcept {
  alignas(RegionMap) static unsigned char storage[sizeof(RegionMap)];
  static RegionMap* regions = new (storage) RegionMap();
  return *regions;
}

std::size_t PageSize() noexcept {
  static const std::size_t page = [] {
    long p = sysconf(_SC_PAGESIZE);
    return p > 0 ? static_cast<std::size_t>(p) : std::size_t{4096};
  }();
  return page;
}

// Finds the region containing [p, p + n) within its requested bytes. Caller holds Mutex().
const Region* FindLocked(std::uintptr_t p, std::size_t n, std::uintptr_t* base) noexcept {
  auto& regions = Regions();
  auto it = regions.upper_bound(p);
  if (it == regions.begin()) return nullptr;
  --it;
  const std::uintptr_t b = it->first;
  const Region& r = it->second;
  if (p - b > r.requested || n > r.requested - (p - b)) return nullptr;
  *base = b;
  return &r;
}

// Page-aligned span covering [p, p + n), n > 0.
struct PageSpan {
  void* start;
  std::size_t len;
};
PageSpan PagesOf(std::uintptr_t p, std::size_t n) noexcept {
  const std::uintptr_t page = PageSize();
  const std::uintptr_t lo = p & ~(page - 1);
  const std::uintptr_t hi = (p + n + page - 1) & ~(page - 1);
  return {reinterpret_cast<void*>(lo), static_cast<std::size_t>(hi - lo)};
}

}  // namespace

bool GuardEnabled() noexcept {
  static const bool enabled = [] {
    const char* v = std::getenv("ORTDLPACK_VD_GUARD");
    return !(v != nullptr && std::strcmp(v, "0") == 0);
  }();
  return enabled;
}

void* DeviceMap(std::size_t bytes) noexcept {
  const std::size_t page = PageSize();
  if (bytes > SIZE_MAX - page) return nullptr;
  const std::size_t mapped = bytes == 0 ? page : (bytes + page - 1) / page * page;
  const int prot = GuardEnabled() ? PROT_NONE : (PROT_READ | PROT_WRITE);
  void* p = mmap(nullptr, mapped, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return nullptr;
  std::lock_guard<std::mutex> lock(Mutex());
  try {
    Regions().emplace(reinterpret_cast<std::uintptr_t>(p), Region{mapped, bytes});
  } catch (...) {
    munmap(p, mapped);
    return nullptr;
  }
  return p;
}

bool DeviceUnmap(void* p, std::size_t* requested_bytes) noexcept {
  Region r{};
  {
    std::lock_guard<std::mutex> lock(Mutex());
    auto& regions = Regions();
    auto it = regions.find(reinterpret_cast<std::uintptr_t>(p));
    if (it == regions.end()) return false;
    r = it->second;
    regions.erase(it);
  }
  munmap(p, r.mapped);
  if (requested_bytes != nullptr) *requested_bytes = r.requested;
  return true;
}

std::size_t DeviceRegionBytes(const void* p) noexcept {
  std::lock_guard<std::mutex> lock(Mutex());
  auto it = Regions().find(reinterpret_cast<std::uintptr_t>(p));
  return it == Regions().end() ? 0 : it->second.mapped;
}

bool IsDeviceRange(const void* p, std::size_t n) noexcept {
  std::lock_guard<std::mutex> lock(Mutex());
  std::uintptr_t base = 0;
  return FindLocked(reinterpret_cast<std::uintptr_t>(p), n, &base) != nullptr;
}

CopyResult GuardedCopy(void* dst, bool dst_is_device, const void* src, bool src_is_device, std::size_t n) noexcept {
  if (n == 0) return CopyResult::kOk;
  const auto s = reinterpret_cast<std::uintptr_t>(src);
  const auto d = reinterpret_cast<std::uintptr_t>(dst);
  const bool guard = GuardEnabled();

  // One lock for validate + open + copy + close: no other copy can re-protect our pages mid-copy, and no free can
  // unmap a region between validation and the copy (freeing memory a copy is using is still a caller bug).
  std::lock_guard<std::mutex> lock(Mutex());
  std::uintptr_t base = 0;
  if (src_is_device && FindLocked(s, n, &base) == nullptr) return CopyResult::kSrcNotDevice;
  if (dst_is_device && FindLocked(d, n, &base) == nullptr) return CopyResult::kDstNotDevice;

  PageSpan spans[2];
  int opened = 0;
  auto close_all = [&]() noexcept {
    for (int i = 0; i < opened; ++i) mprotect(spans[i].start, spans[i].len, PROT_NONE);
  };
  if (guard) {
    if (src_is_device) {
      spans[opened] = PagesOf(s, n);
      if (mprotect(spans[opened].start, spans[opened].len, PROT_READ) != 0) return CopyResult::kProtectFailed;
      ++opened;
    }
    if (dst_is_device) {
      // Opened after src: when both ranges share pages (d2d inside one region) the shared pages end up RW.
      spans[opened] = PagesOf(d, n);
      if (mprotect(spans[opened].start, spans[opened].len, PROT_READ | PROT_WRITE) != 0) {
        close_all();
        return CopyResult::kProtectFailed;
      }
      ++opened;
    }
  }
  std::memmove(dst, src, n);
  if (guard) close_all();
  return CopyResult::kOk;
}

}  // namespace ortdlpack::vd

extern "C" {

ORTDLPACK_VD_EXPORT int ortdlpack_vd_guard_enabled(void) { return ortdlpack::vd::GuardEnabled() ? 1 : 0; }

ORTDLPACK_VD_EXPORT int ortdlpack_vd_is_device_pointer(const void* p, uint64_t nbytes) {
  if (nbytes > SIZE_MAX) return 0;
  return ortdlpack::vd::IsDeviceRange(p, static_cast<std::size_t>(nbytes)) ? 1 : 0;
}

}  // extern "C"
