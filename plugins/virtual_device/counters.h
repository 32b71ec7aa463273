// Process-wide counters and one-shot failure injection of the virtual device (internal side of the C ABI in
// include/ortdlpack/virtual_device.h). Lock-free: every field is a relaxed std::atomic; callers need no lock.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ortdlpack::vd {

enum class CopyKind { kHostToDevice, kDeviceToHost, kDeviceToDevice, kHostToHost };

// Allocation bookkeeping (called by the allocators after the allocation/free really happened).
void CountDeviceAlloc(std::size_t bytes) noexcept;
void CountDeviceFree(std::size_t bytes) noexcept;
void CountHostAlloc(std::size_t bytes) noexcept;
void CountHostFree(std::size_t bytes) noexcept;
void CountFailedAlloc() noexcept;

// Data transfer bookkeeping.
void CountCopyCall() noexcept;
void CountCopy(CopyKind kind, std::size_t bytes) noexcept;
void CountFailedCopy() noexcept;

// Stream bookkeeping (stream.cc).
void CountAsyncCopy() noexcept;   // a copy or write enqueued on a stream (counted again in `copies` when it runs)
void CountStreamWait() noexcept;  // a stream made to wait for an event
void CountHostSync() noexcept;    // a host synchronization of a stream

// Failure injection: each call consumes one tick of the matching countdown and returns true exactly when the
// armed n-th event is reached (the countdown then disarms itself).
bool ShouldFailAlloc() noexcept;
bool ShouldFailCopy() noexcept;

}  // namespace ortdlpack::vd
