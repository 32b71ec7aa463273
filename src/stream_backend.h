// Internal: the stream backends, the calls on an EP's native stream handles that ORT's public C API lacks
// (docs/streams.md, "What ORT's public API offers"). One file each: the ortdlpack stream convention a plugin EP library
// exports (stream_backend_ep.cc; used whatever the EP's row says) and the CUDA runtime already in the process
// (stream_backend_cuda.cc; ep_table.h StreamBackend::kCudaRuntime). Neither loads anything.
#pragma once

#include <onnxruntime_c_api.h>

#include <memory>

namespace ortdlpack::detail {

// The native stream calls of one device's EP runtime.
class NativeStreams {
 public:
  virtual ~NativeStreams() = default;
  // `waiter` waits, on the device, for the work enqueued on `producer` so far. 0 on success.
  virtual int wait(void* waiter, void* producer) const = 0;
  // The host waits for the work enqueued on `stream` so far. 0 on success.
  virtual int synchronize(void* stream) const = 0;
  // fn(user_data) runs once, on any thread, after the work enqueued on `stream` so far has completed: 0 when it was
  // enqueued (fn will run), nonzero when the runtime cannot (fn never runs). fn must neither block nor call the EP.
  virtual int launch_host_func(void* stream, void (*fn)(void*), void* user_data) const = 0;
};

// The ortdlpack stream convention exported by the EP library of `ep_device` (plugins/virtual_device/README.md),
// found with dlopen(RTLD_NOLOAD) on the library path ORT records in its metadata; NULL when it exports none.
std::unique_ptr<NativeStreams> ep_convention_streams(const OrtEpDevice* ep_device);

// The CUDA runtime already loaded in the process, for streams of CUDA device `device_id`; NULL when none is loaded.
std::unique_ptr<NativeStreams> cuda_runtime_streams(int device_id);

}  // namespace ortdlpack::detail
