#include "ortdlpack/ep_library.h"

#include <dlfcn.h>
#include <sys/stat.h>

#include <mutex>
#include <set>

#include "ortdlpack/api.h"
#include "ortdlpack/device.h"

namespace ortdlpack {
namespace {

struct Bundled {
  uint32_t vendor;
  const char* registration;  // the name onnxruntime.register_execution_provider_library users would pick
  const char* file;
  const char* hint;
};

// One library per vendor: the EP that brings that vendor's device memory in the stock ORT packages.
constexpr Bundled kBundled[] = {
    {kVendorNvidia, "CUDA", "libonnxruntime_providers_cuda.so",
     "install onnxruntime-gpu (it ships the CUDA execution provider library)"},
    {kVendorAmd, "MIGraphX", "libonnxruntime_providers_migraphx.so",
     "install onnxruntime-rocm / onnxruntime-migraphx (it ships the MIGraphX execution provider library)"},
    {kVendorIntel, "OpenVINO", "libonnxruntime_providers_openvino.so",
     "install onnxruntime-openvino (it ships the OpenVINO execution provider library)"},
};

const Bundled* bundled(uint32_t vendor) {
  for (const Bundled& b : kBundled) {
    if (b.vendor == vendor) return &b;
  }
  return nullptr;
}

// The folder of the library that implements ORT's API (libonnxruntime.so, or the Python wheel's
// onnxruntime_pybind11_state.so next to its provider libraries), with a trailing '/'; "" when unknown.
std::string ort_folder() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(ort().GetEpDevices), &info) == 0 || info.dli_fname == nullptr) return {};
  const std::string path = info.dli_fname;
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? std::string() : path.substr(0, slash + 1);
}

}  // namespace

bool register_bundled_ep_library(uint32_t vendor_id) {
  const Bundled* b = bundled(vendor_id);
  if (b == nullptr) return false;
  static std::mutex m;
  static std::set<uint32_t> tried;
  std::lock_guard<std::mutex> lock(m);
  if (!tried.insert(vendor_id).second) return false;
  const std::string folder = ort_folder();
  if (folder.empty()) return false;
  const std::string path = folder + b->file;
  struct stat st{};
  if (stat(path.c_str(), &st) != 0) return false;  // this ORT package does not carry it
  OrtStatus* status = ort().RegisterExecutionProviderLibrary(env(), b->registration, path.c_str());
  if (status != nullptr) {
    ort().ReleaseStatus(status);  // e.g. registered already by the user under this name, or its runtime is missing
    return false;
  }
  register_ep_devices(env());  // DLPack mappings its devices advertise, if any
  return true;
}

std::string bundled_ep_hint(uint32_t vendor_id) {
  const Bundled* b = bundled(vendor_id);
  return b != nullptr ? b->hint : "";
}

}  // namespace ortdlpack
