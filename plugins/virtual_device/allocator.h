// OrtAllocator implementations handed to ORT by OrtEpFactory::CreateAllocator: one per (device id, memory kind).
#pragma once

#include <atomic>
#include <cstdint>

#include "device_kind.h"

namespace ortdlpack::vd {

// kDevice: guarded mmap regions (guarded_memory.h). kHost: ordinary aligned heap memory.
// Every allocation, zero bytes included, returns a distinct non-null pointer unless injection/OOM fails it.
class VdAllocator : public OrtAllocator {
 public:
  // Takes ownership of `info` (released with api.ReleaseMemoryInfo).
  VdAllocator(const OrtApi& api, OrtMemoryInfo* info, MemKind kind) noexcept;
  ~VdAllocator();
  VdAllocator(const VdAllocator&) = delete;
  VdAllocator& operator=(const VdAllocator&) = delete;

 private:
  static void* ORT_API_CALL AllocImpl(OrtAllocator* self, size_t size) noexcept;
  static void ORT_API_CALL FreeImpl(OrtAllocator* self, void* p) noexcept;
  static const OrtMemoryInfo* ORT_API_CALL InfoImpl(const OrtAllocator* self) noexcept;
  static OrtStatus* ORT_API_CALL GetStatsImpl(const OrtAllocator* self, OrtKeyValuePairs** out) noexcept;

  const OrtApi& api_;
  OrtMemoryInfo* info_;
  MemKind kind_;
  std::atomic<uint64_t> in_use_{0}, num_allocs_{0};  // per instance, for GetStats
};

}  // namespace ortdlpack::vd
