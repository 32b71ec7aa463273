// Counters and failure injection, plus the exported C functions that read and drive them.
#include "counters.h"

#include <atomic>

#include "ortdlpack/virtual_device.h"

namespace ortdlpack::vd {
namespace {

struct Counters {
  std::atomic<uint64_t> allocs{0}, frees{0}, live_bytes{0}, copies{0}, bytes_h2d{0}, bytes_d2h{0}, bytes_d2d{0},
      live_allocs{0}, host_allocs{0}, host_frees{0}, host_live_bytes{0}, bytes_h2h{0}, copy_calls{0}, failed_allocs{0},
      failed_copies{0}, async_copies{0}, stream_waits{0}, host_syncs{0};
};

Counters& C() noexcept {
  static Counters counters;  // constant-initialised: safe to use from any static-init order
  return counters;
}

std::atomic<uint64_t> g_fail_alloc_countdown{0};
std::atomic<uint64_t> g_fail_copy_countdown{0};

void Add(std::atomic<uint64_t>& a, uint64_t v) noexcept { a.fetch_add(v, std::memory_order_relaxed); }
void Sub(std::atomic<uint64_t>& a, uint64_t v) noexcept { a.fetch_sub(v, std::memory_order_relaxed); }

// 0 = disarmed. Otherwise decrement; the tick that moves it from 1 to 0 is the one that fails. A CAS loop so that
// two threads can never both see the 1 (exactly one injected failure per arming).
bool Tick(std::atomic<uint64_t>& countdown) noexcept {
  uint64_t cur = countdown.load(std::memory_order_relaxed);
  while (cur != 0) {
    if (countdown.compare_exchange_weak(cur, cur - 1, std::memory_order_relaxed)) return cur == 1;
  }
  return false;
}

}  // namespace

void CountDeviceAlloc(std::size_t bytes) noexcept {
  Add(C().allocs, 1);
  Add(C().live_allocs, 1);
  Add(C().live_bytes, bytes);
}
void CountDeviceFree(std::size_t bytes) noexcept {
  Add(C().frees, 1);
  Sub(C().live_allocs, 1);
  Sub(C().live_bytes, bytes);
}
void CountHostAlloc(std::size_t bytes) noexcept {
  Add(C().host_allocs, 1);
  Add(C().host_live_bytes, bytes);
}
void CountHostFree(std::size_t bytes) noexcept {
  Add(C().host_frees, 1);
  Sub(C().host_live_bytes, bytes);
}
void CountFailedAlloc() noexcept { Add(C().failed_allocs, 1); }
void CountCopyCall() noexcept { Add(C().copy_calls, 1); }
void CountFailedCopy() noexcept { Add(C().failed_copies, 1); }
void CountAsyncCopy() noexcept { Add(C().async_copies, 1); }
void CountStreamWait() noexcept { Add(C().stream_waits, 1); }
void CountHostSync() noexcept { Add(C().host_syncs, 1); }

void CountCopy(CopyKind kind, std::size_t bytes) noexcept {
  Add(C().copies, 1);
  switch (kind) {
    case CopyKind::kHostToDevice:
      Add(C().bytes_h2d, bytes);
      break;
    case CopyKind::kDeviceToHost:
      Add(C().bytes_d2h, bytes);
      break;
    case CopyKind::kDeviceToDevice:
      Add(C().bytes_d2d, bytes);
      break;
    case CopyKind::kHostToHost:
      Add(C().bytes_h2h, bytes);
      break;
  }
}

bool ShouldFailAlloc() noexcept { return Tick(g_fail_alloc_countdown); }
bool ShouldFailCopy() noexcept { return Tick(g_fail_copy_countdown); }

}  // namespace ortdlpack::vd

using ortdlpack::vd::C;

extern "C" {

ORTDLPACK_VD_EXPORT void ortdlpack_vd_get_counters(OrtdlpackVdCounters* out) {
  if (out == nullptr) return;
  auto r = [](const std::atomic<uint64_t>& a) { return a.load(std::memory_order_relaxed); };
  auto& c = C();
  out->allocs = r(c.allocs);
  out->frees = r(c.frees);
  out->live_bytes = r(c.live_bytes);
  out->copies = r(c.copies);
  out->bytes_h2d = r(c.bytes_h2d);
  out->bytes_d2h = r(c.bytes_d2h);
  out->bytes_d2d = r(c.bytes_d2d);
  out->live_allocs = r(c.live_allocs);
  out->host_allocs = r(c.host_allocs);
  out->host_frees = r(c.host_frees);
  out->host_live_bytes = r(c.host_live_bytes);
  out->bytes_h2h = r(c.bytes_h2h);
  out->copy_calls = r(c.copy_calls);
  out->failed_allocs = r(c.failed_allocs);
  out->failed_copies = r(c.failed_copies);
  out->async_copies = r(c.async_copies);
  out->stream_waits = r(c.stream_waits);
  out->host_syncs = r(c.host_syncs);
}

ORTDLPACK_VD_EXPORT uint64_t ortdlpack_vd_counters_size(void) { return sizeof(OrtdlpackVdCounters); }

ORTDLPACK_VD_EXPORT void ortdlpack_vd_reset_counters(void) {
  auto z = [](std::atomic<uint64_t>& a) { a.store(0, std::memory_order_relaxed); };
  auto& c = C();
  // live_bytes, live_allocs and host_live_bytes are state, not events: left alone (see the header).
  z(c.allocs), z(c.frees), z(c.copies), z(c.bytes_h2d), z(c.bytes_d2h), z(c.bytes_d2d), z(c.host_allocs),
      z(c.host_frees), z(c.bytes_h2h), z(c.copy_calls), z(c.failed_allocs), z(c.failed_copies), z(c.async_copies),
      z(c.stream_waits), z(c.host_syncs);
}

ORTDLPACK_VD_EXPORT void ortdlpack_vd_fail_alloc_at(uint64_t n) {
  ortdlpack::vd::g_fail_alloc_countdown.store(n, std::memory_order_relaxed);
}

ORTDLPACK_VD_EXPORT void ortdlpack_vd_fail_copy_at(uint64_t n) {
  ortdlpack::vd::g_fail_copy_countdown.store(n, std::memory_order_relaxed);
}

}  // extern "C"
