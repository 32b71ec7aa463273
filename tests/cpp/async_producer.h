// Test support: a producer with its own stream on the asynchronous virtual device, behaving like torch on CUDA.
// It writes device tensors on its stream with a delay (the write lands later), and its DLPack export honours the
// consumer's `stream` value as __dlpack__(stream=) does: a handle -> that stream waits for the producer's pending
// work (on the device); nullopt (None) and -1 -> nothing is ordered (no legacy default stream on this device; like
// the C exchange API's no_sync path), so a consumer that names no stream reads early.
#pragma once

#include <dlfcn.h>

#include <optional>
#include <stdexcept>
#include <vector>

#include "ortdlpack/ortdlpack.h"
#include "ortdlpack/virtual_device.h"

namespace ortdlpack::test {

struct VdStreamAbi {
  decltype(&ortdlpack_vd_stream_create) create = nullptr;
  decltype(&ortdlpack_vd_stream_destroy) destroy = nullptr;
  decltype(&ortdlpack_vd_stream_write) write = nullptr;
  decltype(&ortdlpack_vd_stream_wait) wait = nullptr;
  decltype(&ortdlpack_vd_stream_synchronize) synchronize = nullptr;
  decltype(&ortdlpack_vd_set_stream_delay_us) set_delay_us = nullptr;
  decltype(&ortdlpack_vd_stream_delay_us) delay_us = nullptr;

  // From the copy of the library ORT loaded (it must be registered already).
  static VdStreamAbi load() {
    void* lib = dlopen(ORTDLPACK_VD_PATH, RTLD_NOW | RTLD_NOLOAD);
    if (lib == nullptr) throw std::runtime_error("the virtual device library is not loaded");
    VdStreamAbi a;
    a.create = reinterpret_cast<decltype(a.create)>(dlsym(lib, "ortdlpack_vd_stream_create"));
    a.destroy = reinterpret_cast<decltype(a.destroy)>(dlsym(lib, "ortdlpack_vd_stream_destroy"));
    a.write = reinterpret_cast<decltype(a.write)>(dlsym(lib, "ortdlpack_vd_stream_write"));
    a.wait = reinterpret_cast<decltype(a.wait)>(dlsym(lib, "ortdlpack_vd_stream_wait"));
    a.synchronize = reinterpret_cast<decltype(a.synchronize)>(dlsym(lib, "ortdlpack_vd_stream_synchronize"));
    a.set_delay_us = reinterpret_cast<decltype(a.set_delay_us)>(dlsym(lib, "ortdlpack_vd_set_stream_delay_us"));
    a.delay_us = reinterpret_cast<decltype(a.delay_us)>(dlsym(lib, "ortdlpack_vd_stream_delay_us"));
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

  // What __dlpack__(stream=consumer) does before handing the tensor out.
  void order_before(std::optional<int64_t> consumer) const {
    int rc = 0;
    if (consumer.has_value() && *consumer != -1) {
      rc = abi_.wait(reinterpret_cast<void*>(static_cast<uintptr_t>(*consumer)), stream_);
    }
    if (rc != 0) throw std::runtime_error("the producer could not order its work before the consumer's stream");
  }

  // The export a consumer gets for its stream (0 from consumer_stream() means "no stream": None).
  DLManagedTensorVersioned* export_for(const Tensor& t, uintptr_t consumer) const {
    order_before(consumer != 0 ? std::optional<int64_t>(static_cast<int64_t>(consumer)) : std::nullopt);
    return to_dlpack_versioned(t);
  }

 private:
  VdStreamAbi abi_;
  void* stream_;
};

}  // namespace ortdlpack::test
