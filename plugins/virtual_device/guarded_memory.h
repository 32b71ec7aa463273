// Guarded "device" memory: every device allocation is its own anonymous mmap region that the host cannot touch
// (PROT_NONE) except inside GuardedCopy, which opens exactly the pages a copy needs and closes them again.
//
// Invariants (all enforced under one process-wide mutex):
//   * A live region is PROT_NONE whenever no GuardedCopy is running (guard on). Host code that dereferences a
//     device pointer gets SIGSEGV, like it would on real foreign device memory.
//   * Only GuardedCopy changes protections, and it holds the mutex from the first mprotect(open) to the last
//     mprotect(close): a concurrent copy can never close pages another copy is still using.
//   * Regions never share a page (one mmap each), so opening one region's pages never exposes another's.
//   * With ORTDLPACK_VD_GUARD=0 regions are mapped read/write and never re-protected; bounds checks still apply.
#pragma once

#include <cstddef>

namespace ortdlpack::vd {

// Whether the guard is on. Reads ORTDLPACK_VD_GUARD once (first call); "0" means off.
bool GuardEnabled() noexcept;

// Maps a fresh region of at least max(bytes, 1) bytes, page-aligned. Zero bytes still yields a unique non-null
// pointer. Returns nullptr when mmap fails.
void* DeviceMap(std::size_t bytes) noexcept;

// Unmaps the region starting at p. Returns false (and does nothing) if p is not the start of a live region;
// *requested_bytes receives the size that was asked for at DeviceMap.
bool DeviceUnmap(void* p, std::size_t* requested_bytes) noexcept;

// The mapped size of the live region starting at p, or 0 when p starts none.
std::size_t DeviceRegionBytes(const void* p) noexcept;

// True when [p, p + n) lies inside the requested bytes of one live region.
bool IsDeviceRange(const void* p, std::size_t n) noexcept;

enum class CopyResult { kOk, kSrcNotDevice, kDstNotDevice, kProtectFailed };

// memmove(dst, src, n) where either side may be device memory (say which). Device sides must be inside one live
// region each (else kSrcNotDevice / kDstNotDevice, nothing copied). Host sides are trusted as-is.
CopyResult GuardedCopy(void* dst, bool dst_is_device, const void* src, bool src_is_device, std::size_t n) noexcept;

}  // namespace ortdlpack::vd
