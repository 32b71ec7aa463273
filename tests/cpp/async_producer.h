// Test support: a producer with its own stream on the asynchronous virtual device, behaving like torch on CUDA.
// It writes device tensors on its stream with a delay (the write lands later), and its DLPack export honours the
// consumer's `stream` value as __dlpack__(stream=) does: a handle -> that stream waits for the producer's pending
// work (on the device); nullopt (None) and -1 -> nothing is ordered (no legacy default stream on this device; like
// the C exchange API's no_sync path), so a consumer that names no stream reads early.
//
// Reuse on release (export_reusing): like a caching allocator (torch's), the producer hands the memory of a tensor to
// new work as soon as the consumer's deleter ran: a write queued on its own stream, which is ordered after nothing
// the consumer still has queued on another stream. A consumer that releases a tensor before its queued reads of it
// ran reads the new contents.
#pragma once

#include <dlfcn.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>
#include <vector>

#include "gate.h"
#include "ortdlpack/ortdlpack.h"
#include "ortdlpack/virtual_device.h"

namespace ortdlpack::test {

struct VdStreamAbi {
  decltype(&ortdlpack_vd_stream_create) create = nullptr;
  decltype(&ortdlpack_vd_stream_destroy) destroy = nullptr;
  decltype(&ortdlpack_vd_stream_write) write = nullptr;
  decltype(&ortdlpack_vd_stream_read) read = nullptr;
  decltype(&ortdlpack_vd_stream_wait) wait = nullptr;
  decltype(&ortdlpack_vd_stream_synchronize) synchronize = nullptr;
  decltype(&ortdlpack_vd_stream_pause) pause = nullptr;
  decltype(&ortdlpack_vd_stream_resume) resume = nullptr;
  decltype(&ortdlpack_vd_set_stream_delay_us) set_delay_us = nullptr;
  decltype(&ortdlpack_vd_stream_delay_us) delay_us = nullptr;
  decltype(&ortdlpack_vd_set_host_funcs) set_host_funcs = nullptr;

  // From the copy of the library ORT loaded (it must be registered already).
  static VdStreamAbi load() {
    void* lib = dlopen(ORTDLPACK_VD_PATH, RTLD_NOW | RTLD_NOLOAD);
    if (lib == nullptr) throw std::runtime_error("the virtual device library is not loaded");
    VdStreamAbi a;
    const auto get = [&](auto& fn, const char* name) {
      fn = reinterpret_cast<std::decay_t<decltype(fn)>>(dlsym(lib, name));
    };
    get(a.create, "ortdlpack_vd_stream_create");
    get(a.destroy, "ortdlpack_vd_stream_destroy");
    get(a.write, "ortdlpack_vd_stream_write");
    get(a.read, "ortdlpack_vd_stream_read");
    get(a.wait, "ortdlpack_vd_stream_wait");
    get(a.synchronize, "ortdlpack_vd_stream_synchronize");
    get(a.pause, "ortdlpack_vd_stream_pause");
    get(a.resume, "ortdlpack_vd_stream_resume");
    get(a.set_delay_us, "ortdlpack_vd_set_stream_delay_us");
    get(a.delay_us, "ortdlpack_vd_stream_delay_us");
    get(a.set_host_funcs, "ortdlpack_vd_set_host_funcs");
    dlclose(lib);
    return a;
  }
};

class AsyncProducer {
 public:
  AsyncProducer(const VdStreamAbi& abi, uint32_t device_id) : abi_(abi), stream_(abi.create(device_id)) {
    if (stream_ == nullptr) throw std::runtime_error("ortdlpack_vd_stream_create failed");
  }
  ~AsyncProducer() { abi_.destroy(stream_); }
  AsyncProducer(const AsyncProducer&) = delete;
  AsyncProducer& operator=(const AsyncProducer&) = delete;

  void* stream() const { return stream_; }

  // Enqueues a write of `values` into the device tensor `t` (float32, same size) on the producer's stream.
  void write(const Tensor& t, const std::vector<float>& values) const {
    if (abi_.write(stream_, t.data(), values.data(), values.size() * sizeof(float)) != 0) {
      throw std::runtime_error("ortdlpack_vd_stream_write failed");
    }
  }

  // Enqueues a read of the device tensor `t` (float32) into `out` (resized; keep it until synchronize()).
  void read(const Tensor& t, std::vector<float>& out) const {
    out.assign(t.element_count(), 0.0f);
    if (abi_.read(stream_, out.data(), t.data(), out.size() * sizeof(float)) != 0) {
      throw std::runtime_error("ortdlpack_vd_stream_read failed");
    }
  }

  void synchronize() const {
    if (abi_.synchronize(stream_) != 0) throw std::runtime_error("a copy on the producer's stream failed");
  }

  // What __dlpack__(stream=consumer) does before handing the tensor out.
  void order_before(std::optional<int64_t> consumer) const {
    int rc = 0;
    if (consumer.has_value() && *consumer != -1) {
      rc = abi_.wait(reinterpret_cast<void*>(static_cast<uintptr_t>(*consumer)), stream_);
    }
    if (rc != 0) throw std::runtime_error("the producer could not order its work before the consumer's stream");
  }

  // The export a consumer gets for its stream (0 from claim_import_stream() means "no stream": None).
  DLManagedTensorVersioned* export_for(const Tensor& t, uintptr_t consumer) const {
    order_before(consumer != 0 ? std::optional<int64_t>(static_cast<int64_t>(consumer)) : std::nullopt);
    return to_dlpack_versioned(t);
  }

  // export_for with reuse on release: when the consumer runs the deleter, the producer queues a write of `reuse`
  // into t's memory on its stream (the next tensor it places there), and counts the release.
  DLManagedTensorVersioned* export_reusing(const Tensor& t, uintptr_t consumer, std::vector<float> reuse) const {
    auto* r = new Reusing{{}, export_for(t, consumer), this, t, std::move(reuse)};
    r->outer.version = r->inner->version;
    r->outer.flags = r->inner->flags;
    r->outer.dl_tensor = r->inner->dl_tensor;
    r->outer.manager_ctx = r;
    r->outer.deleter = [](DLManagedTensorVersioned* m) {
      auto* self = static_cast<Reusing*>(m->manager_ctx);
      self->producer->write(self->memory, self->reuse);
      self->producer->releases_.fetch_add(1);
      self->inner->deleter(self->inner);
      delete self;
    };
    return &r->outer;
  }
  // How many tensors of export_reusing() the consumer released.
  int releases() const { return releases_.load(); }

 private:
  struct Reusing {
    DLManagedTensorVersioned outer;
    DLManagedTensorVersioned* inner;
    const AsyncProducer* producer;
    Tensor memory;
    std::vector<float> reuse;
  };

  VdStreamAbi abi_;
  void* stream_;
  mutable std::atomic<int> releases_{0};
};

}  // namespace ortdlpack::test
