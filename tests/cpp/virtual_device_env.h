// Test support: the virtual device plugin EP registered in the ORT env, its two EP devices and its counter ABI
// (resolved from the library ORT loaded, so the counters are the ones its allocator and transfer move).
#pragma once

#include <dlfcn.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "ortdlpack/ortdlpack.h"
#include "ortdlpack/virtual_device.h"

namespace ortdlpack::test {

struct VirtualDeviceEnv {
  decltype(&ortdlpack_vd_get_counters) get_counters = nullptr;
  decltype(&ortdlpack_vd_reset_counters) reset_counters = nullptr;
  decltype(&ortdlpack_vd_fail_alloc_at) fail_alloc_at = nullptr;
  decltype(&ortdlpack_vd_fail_copy_at) fail_copy_at = nullptr;
  decltype(&ortdlpack_vd_is_device_pointer) is_device_pointer = nullptr;
  std::vector<const OrtEpDevice*> devices;  // device id 0 and 1
  std::string registration_name;

  // Registers the plugin (ORTDLPACK_VD_PATH) in the env under `name`.
  static VirtualDeviceEnv load(const char* name) {
    VirtualDeviceEnv vd;
    vd.registration_name = name;
    check(ort().RegisterExecutionProviderLibrary(env(), name, ORTDLPACK_VD_PATH));
    void* lib = dlopen(ORTDLPACK_VD_PATH, RTLD_NOW | RTLD_NOLOAD);  // ORT's handle: the same counters
    if (lib == nullptr) throw std::runtime_error("the virtual device library is not loaded");
    vd.get_counters = reinterpret_cast<decltype(vd.get_counters)>(dlsym(lib, "ortdlpack_vd_get_counters"));
    vd.reset_counters = reinterpret_cast<decltype(vd.reset_counters)>(dlsym(lib, "ortdlpack_vd_reset_counters"));
    vd.fail_alloc_at = reinterpret_cast<decltype(vd.fail_alloc_at)>(dlsym(lib, "ortdlpack_vd_fail_alloc_at"));
    vd.fail_copy_at = reinterpret_cast<decltype(vd.fail_copy_at)>(dlsym(lib, "ortdlpack_vd_fail_copy_at"));
    vd.is_device_pointer =
        reinterpret_cast<decltype(vd.is_device_pointer)>(dlsym(lib, "ortdlpack_vd_is_device_pointer"));
    dlclose(lib);  // drops only the reference RTLD_NOLOAD took
    const OrtEpDevice* const* all = nullptr;
    size_t n = 0;
    check(ort().GetEpDevices(env(), &all, &n));
    for (size_t i = 0; i < n; ++i) {
      if (std::string(ort().EpDevice_EpName(all[i])) == ORTDLPACK_VD_EP_NAME) vd.devices.push_back(all[i]);
    }
    return vd;
  }

  void unload() {
    devices.clear();
    check(ort().UnregisterExecutionProviderLibrary(env(), registration_name.c_str()));
  }

  OrtdlpackVdCounters counters() const {
    OrtdlpackVdCounters c{};
    get_counters(&c);
    return c;
  }

  const OrtMemoryInfo* memory(size_t device, OrtDeviceMemoryType type = OrtDeviceMemoryType_DEFAULT) const {
    return ort().EpDevice_MemoryInfo(devices.at(device), type);
  }
};

// A host float tensor holding start, start + 1, ...
inline Tensor host_iota(size_t n, float start = 0.25f) {
  Tensor t = allocate(ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, {static_cast<int64_t>(n)}, DLDevice{kDLCPU, 0});
  auto* f = static_cast<float*>(t.data());
  for (size_t i = 0; i < n; ++i) f[i] = start + static_cast<float>(i);
  return t;
}

}  // namespace ortdlpack::test
