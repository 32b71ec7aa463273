// Test support: a DLPack producer that counts its deleter calls (no GoogleTest, so tools like the soak use it too).
#pragma once

#include <dlpack/dlpack.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

namespace ortdlpack::test {

// A DLPack producer over its own buffer (make) or a caller's (over). `deletes` counts deleter calls (each test
// asserts it ends at exactly 1).
struct Producer {
  std::shared_ptr<std::vector<uint8_t>> buffer;  // make(): the producer's own bytes
  void* external = nullptr;                      // over(): the caller's bytes, not owned
  std::vector<int64_t> shape, strides;
  std::atomic<long> deletes{0};  // deleters may run on any thread
  DLManagedTensorVersioned versioned{};
  DLManagedTensor legacy{};

  // Compact row-major tensor of `dtype` and `shape`, bytes filled with a pattern.
  static std::unique_ptr<Producer> make(DLDataType dtype, std::vector<int64_t> shape, size_t extra_bytes = 0) {
    auto p = std::make_unique<Producer>();
    size_t count = 1;
    for (int64_t d : shape) count *= static_cast<size_t>(d);
    const size_t bytes = dtype.bits < 8 ? (count * dtype.bits + 7) / 8 : count * dtype.bits / 8;
    p->buffer = std::make_shared<std::vector<uint8_t>>(bytes + extra_bytes);
    for (size_t i = 0; i < p->buffer->size(); ++i) (*p->buffer)[i] = static_cast<uint8_t>(i * 7 + 3);
    p->shape = std::move(shape);
    p->strides.assign(p->shape.size(), 1);
    for (size_t i = p->shape.size(); i-- > 1;) p->strides[i - 1] = p->strides[i] * std::max<int64_t>(p->shape[i], 1);
    p->fill(dtype);
    return p;
  }

  // Compact row-major tensor of `dtype` and `shape` over `data` (which must outlive the producer's use).
  static std::unique_ptr<Producer> over(void* data, DLDataType dtype, std::vector<int64_t> shape) {
    auto p = std::make_unique<Producer>();
    p->external = data;
    p->shape = std::move(shape);
    p->strides.assign(p->shape.size(), 1);
    for (size_t i = p->shape.size(); i-- > 1;) p->strides[i - 1] = p->strides[i] * std::max<int64_t>(p->shape[i], 1);
    p->fill(dtype);
    return p;
  }

  void fill(DLDataType dtype) {
    DLTensor t{};
    t.data = external != nullptr ? external : buffer->data();
    t.device = DLDevice{kDLCPU, 0};
    t.ndim = static_cast<int32_t>(shape.size());
    t.dtype = dtype;
    t.shape = shape.empty() ? nullptr : shape.data();
    t.strides = strides.empty() ? nullptr : strides.data();
    versioned.version = DLPackVersion{1, 3};
    versioned.manager_ctx = this;
    versioned.deleter = [](DLManagedTensorVersioned* self) { ++static_cast<Producer*>(self->manager_ctx)->deletes; };
    versioned.dl_tensor = t;
    legacy.manager_ctx = this;
    legacy.deleter = [](DLManagedTensor* self) { ++static_cast<Producer*>(self->manager_ctx)->deletes; };
    legacy.dl_tensor = t;
  }

  DLTensor& t() { return versioned.dl_tensor; }
};

}  // namespace ortdlpack::test
