// The CUDA runtime already loaded in the process (stream_backend.h): libcudart found with dlopen(RTLD_NOLOAD), as
// loaded by torch or the CUDA EP; the process's runtime is trusted to be the one the EP uses (docs/streams.md).
#include <dlfcn.h>

#include <cstdint>
#include <initializer_list>
#include <type_traits>

#include "stream_backend.h"

namespace ortdlpack::detail {
namespace {

struct CudaRuntime {
  int (*stream_synchronize)(void*) = nullptr;
  int (*event_create_with_flags)(void**, unsigned) = nullptr;
  int (*event_record)(void*, void*) = nullptr;
  int (*stream_wait_event)(void*, void*, unsigned) = nullptr;
  int (*event_destroy)(void*) = nullptr;
  int (*get_device)(int*) = nullptr;
  int (*set_device)(int) = nullptr;
  int (*launch_host_func)(void*, void (*)(void*), void*) = nullptr;  // CUDA >= 10
};

const CudaRuntime* cuda_runtime() {
  static const CudaRuntime* rt = []() -> const CudaRuntime* {
    for (const char* name : {"libcudart.so.13", "libcudart.so.12", "libcudart.so.11.0", "libcudart.so"}) {
      void* lib = dlopen(name, RTLD_NOW | RTLD_NOLOAD);  // only a runtime that is already loaded
      if (lib == nullptr) continue;
      auto* r = new CudaRuntime();  // process lifetime, like the runtime itself
      const auto get = [&](auto& fn, const char* symbol) {
        fn = reinterpret_cast<std::decay_t<decltype(fn)>>(dlsym(lib, symbol));
      };
      get(r->stream_synchronize, "cudaStreamSynchronize");
      get(r->event_create_with_flags, "cudaEventCreateWithFlags");
      get(r->event_record, "cudaEventRecord");
      get(r->stream_wait_event, "cudaStreamWaitEvent");
      get(r->event_destroy, "cudaEventDestroy");
      get(r->get_device, "cudaGetDevice");
      get(r->set_device, "cudaSetDevice");
      get(r->launch_host_func, "cudaLaunchHostFunc");
      dlclose(lib);  // drops only the reference RTLD_NOLOAD took
      if (r->stream_synchronize && r->event_create_with_flags && r->event_record && r->stream_wait_event &&
          r->event_destroy && r->get_device && r->set_device) {
        return r;
      }
      delete r;
    }
    return nullptr;
  }();
  return rt;
}

// Makes `device` the calling thread's current CUDA device for the scope, and restores the previous one: an event is
// created on the current device, and cudaEventRecord needs the event and the stream on the same device.
class CurrentDevice {
 public:
  CurrentDevice(const CudaRuntime& rt, int device) : rt_(rt) {
    status_ = rt_.get_device(&previous_);
    if (status_ == 0 && previous_ != device) {
      status_ = rt_.set_device(device);
      switched_ = status_ == 0;
    }
  }
  ~CurrentDevice() {
    if (switched_) rt_.set_device(previous_);
  }
  CurrentDevice(const CurrentDevice&) = delete;
  CurrentDevice& operator=(const CurrentDevice&) = delete;
  int status() const { return status_; }

 private:
  const CudaRuntime& rt_;
  int previous_ = 0;
  int status_ = 0;
  bool switched_ = false;
};

class Cuda final : public NativeStreams {
 public:
  Cuda(const CudaRuntime& rt, int device) : rt_(rt), device_(device) {}

  // `producer` is a stream of this backend's device (ortdlpack's stream, or a caller's stream of that device).
  int wait(void* waiter, void* producer) const override {
    CurrentDevice current(rt_, device_);
    if (int e = current.status()) return e;
    void* event = nullptr;
    constexpr unsigned kDisableTiming = 0x2;  // cudaEventDisableTiming
    if (int e = rt_.event_create_with_flags(&event, kDisableTiming)) return e;
    int e = rt_.event_record(event, producer);
    if (e == 0) e = rt_.stream_wait_event(waiter, event, 0);
    rt_.event_destroy(event);  // legal while the wait is pending
    return e;
  }
  int synchronize(void* stream) const override {
    // 0, cudaStreamLegacy (1) and cudaStreamPerThread (2) name a default stream of the current device (a caller's
    // stream 0): this backend's device must be the current one.
    if (reinterpret_cast<uintptr_t>(stream) <= 2) {
      CurrentDevice current(rt_, device_);
      if (int e = current.status()) return e;
      return rt_.stream_synchronize(stream);
    }
    return rt_.stream_synchronize(stream);
  }
  int launch_host_func(void* stream, void (*fn)(void*), void* user_data) const override {
    return rt_.launch_host_func != nullptr ? rt_.launch_host_func(stream, fn, user_data) : -1;
  }

 private:
  const CudaRuntime& rt_;
  int device_;
};

}  // namespace

std::unique_ptr<NativeStreams> cuda_runtime_streams(int device_id) {
  const CudaRuntime* rt = cuda_runtime();
  return rt != nullptr ? std::make_unique<Cuda>(*rt, device_id) : nullptr;
}

}  // namespace ortdlpack::detail
