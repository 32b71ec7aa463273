// The ortdlpack stream convention of a plugin EP library (stream_backend.h).
#include <dlfcn.h>

#include "ortdlpack/api.h"
#include "stream_backend.h"

namespace ortdlpack::detail {
namespace {

class EpConvention final : public NativeStreams {
 public:
  using Wait = int (*)(void*, void*);
  using Sync = int (*)(void*);
  using HostFunc = int (*)(void*, void (*)(void*), void*);
  EpConvention(Wait w, Sync s, HostFunc h) : wait_(w), sync_(s), host_func_(h) {}

  int wait(void* waiter, void* producer) const override { return wait_(waiter, producer); }
  int synchronize(void* stream) const override { return sync_(stream); }
  int launch_host_func(void* stream, void (*fn)(void*), void* user_data) const override {
    return host_func_ != nullptr ? host_func_(stream, fn, user_data) : -1;  // optional in the convention
  }

 private:
  Wait wait_;
  Sync sync_;
  HostFunc host_func_;
};

}  // namespace

std::unique_ptr<NativeStreams> ep_convention_streams(const OrtEpDevice* ep_device) {
  const OrtKeyValuePairs* metadata = ort().EpDevice_EpMetadata(ep_device);
  const char* path = metadata != nullptr ? ort().GetKeyValue(metadata, "library_path") : nullptr;
  if (path == nullptr) return nullptr;
  void* lib = dlopen(path, RTLD_NOW | RTLD_NOLOAD);  // the library ORT loaded; never a new one
  if (lib == nullptr) return nullptr;
  auto wait = reinterpret_cast<EpConvention::Wait>(dlsym(lib, "ortdlpack_ep_stream_wait"));
  auto sync = reinterpret_cast<EpConvention::Sync>(dlsym(lib, "ortdlpack_ep_stream_synchronize"));
  auto host_func = reinterpret_cast<EpConvention::HostFunc>(dlsym(lib, "ortdlpack_ep_stream_launch_host_func"));
  dlclose(lib);  // drops only the reference RTLD_NOLOAD took
  if (wait == nullptr || sync == nullptr) return nullptr;
  return std::make_unique<EpConvention>(wait, sync, host_func);
}

}  // namespace ortdlpack::detail
