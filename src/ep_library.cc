#include "ortdlpack/ep_library.h"

#include <dlfcn.h>
#include <sys/stat.h>

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "ortdlpack/api.h"
#include "ortdlpack/device.h"
#include "ortdlpack/error.h"

namespace ortdlpack {
namespace {

#if defined(__APPLE__)
#define ORTDLPACK_LIB(stem) "lib" stem ".dylib"
#else
#define ORTDLPACK_LIB(stem) "lib" stem ".so"
#endif

// The one table of EP libraries ortdlpack registers by itself. The first row of a vendor is the EP that owns that
// vendor's device memory (its allocator and data transfer serve every EP of that vendor).
struct EpLibrary {
  const char* ep_name;            // the EP's name in ORT (OrtEpDevice EP name, session provider name)
  const char* registration_name;  // RegisterExecutionProviderLibrary's name (onnxruntime's docs use these)
  const char* file;               // the library, in ORT's own folder
  const char* aliases[3];         // other names users write
  uint32_t vendor_id;             // whose device memory it owns
  const char* install;            // what to install when the library is missing
  const char* stream_option;      // the provider option naming a caller's compute stream, or nullptr
};

constexpr EpLibrary kLibraries[] = {
    {"CUDAExecutionProvider", "CUDA", ORTDLPACK_LIB("onnxruntime_providers_cuda"), {"cuda", "CUDA", nullptr},
     kVendorNvidia, "pip install onnxruntime-gpu", "user_compute_stream"},
    {"TensorrtExecutionProvider", "TensorRT", ORTDLPACK_LIB("onnxruntime_providers_tensorrt"),
     {"tensorrt", "trt", "TensorRT"}, kVendorNvidia, "pip install onnxruntime-gpu, and TensorRT",
     "user_compute_stream"},
    {"MIGraphXExecutionProvider", "MIGraphX", ORTDLPACK_LIB("onnxruntime_providers_migraphx"),
     {"migraphx", "MIGraphX", "rocm"}, kVendorAmd, "pip install onnxruntime-migraphx", nullptr},
    {"OpenVINOExecutionProvider", "OpenVINO", ORTDLPACK_LIB("onnxruntime_providers_openvino"),
     {"openvino", "OpenVINO", nullptr}, kVendorIntel, "pip install onnxruntime-openvino", nullptr},
};

const EpLibrary* find_library(const std::string& ep_name) {
  for (const EpLibrary& l : kLibraries) {
    if (ep_name == l.ep_name) return &l;
  }
  return nullptr;
}

const EpLibrary* owner_of(uint32_t vendor_id) {
  for (const EpLibrary& l : kLibraries) {
    if (l.vendor_id == vendor_id) return &l;
  }
  return nullptr;
}

struct State {
  std::mutex mutex;
  std::string dir_override;
  std::vector<std::pair<const EpLibrary*, std::string>> attempted;  // library -> why it failed ("" registered)
};
State& state() {
  static auto* s = new State();  // process lifetime: lookups may run during exit
  return *s;
}

// The folder of the library that holds the ORT API the core was handed.
std::string ort_library_dir() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(ort().CreateStatus), &info) == 0 || info.dli_fname == nullptr) return "";
  const std::string path = info.dli_fname;
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos || path[0] != '/') return "";
  return path.substr(0, slash);
}

bool file_exists(const std::string& path) {
  struct stat st{};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::vector<std::string> env_ep_names() {
  const OrtApi& api = ort();
  const OrtEpDevice* const* devices = nullptr;
  size_t count = 0;
  check(api.GetEpDevices(env(), &devices, &count));
  std::vector<std::string> names;
  for (size_t i = 0; i < count; ++i) {
    const std::string n = api.EpDevice_EpName(devices[i]);
    bool seen = false;
    for (const std::string& s : names) seen = seen || s == n;
    if (!seen) names.push_back(n);
  }
  return names;
}

bool env_has_ep(const std::string& ep_name) { return !ep_devices_of(env(), ep_name).empty(); }

// Whether an EP device of the env has device memory of this vendor.
bool env_serves_vendor(uint32_t vendor_id) {
  const OrtApi& api = ort();
  const OrtEpDevice* const* devices = nullptr;
  size_t count = 0;
  check(api.GetEpDevices(env(), &devices, &count));
  for (size_t i = 0; i < count; ++i) {
    const OrtMemoryInfo* m = api.EpDevice_MemoryInfo(devices[i], OrtDeviceMemoryType_DEFAULT);
    if (m != nullptr && api.MemoryInfoGetVendorId(m) == vendor_id) return true;
  }
  return false;
}

std::string list(const std::vector<std::string>& names) {
  std::string s;
  for (const std::string& n : names) s += (s.empty() ? "'" : ", '") + n + "'";
  return s.empty() ? "none" : s;
}

// Registers `lib` once per process; later calls return the first outcome. Called with the state mutex held.
void register_once(const EpLibrary& lib, const std::string& dir) {
  State& s = state();
  for (const auto& [l, why] : s.attempted) {
    if (l == &lib) {
      if (!why.empty()) throw Error(ErrorKind::kUnsupported, why);
      return;
    }
  }
  const std::string path = dir.empty() ? std::string() : dir + "/" + lib.file;
  std::string why;
  if (dir.empty()) {
    why = std::string("execution provider '") + lib.ep_name + "' is not in the ONNX Runtime environment, and the "
          "folder of the running ONNX Runtime could not be determined to look for " + lib.file;
  } else if (!file_exists(path)) {
    why = std::string("execution provider '") + lib.ep_name + "' is not in the ONNX Runtime environment, and the "
          "installed ONNX Runtime (" + dir + ") has no " + lib.file + ": " + lib.install;
  } else if (OrtStatus* status = ort().RegisterExecutionProviderLibrary(env(), lib.registration_name, path.c_str())) {
    why = std::string("registering ") + path + " failed: " + ort().GetErrorMessage(status);
    ort().ReleaseStatus(status);
  } else if (!env_has_ep(lib.ep_name)) {
    why = std::string("registered ") + path + ", but it brought no '" + lib.ep_name +
          "' device (is its hardware and driver present?)";
  }
  s.attempted.emplace_back(&lib, why);
  if (!why.empty()) throw Error(ErrorKind::kUnsupported, why);
}

}  // namespace

std::string ep_library_dir() {
  {
    std::lock_guard<std::mutex> lock(state().mutex);
    if (!state().dir_override.empty()) return state().dir_override;
  }
  static const std::string dir = ort_library_dir();
  return dir;
}

void set_ep_library_dir(const std::string& dir) {
  if (!dir.empty() && dir[0] != '/') {
    throw Error(ErrorKind::kInvalidArgument, "set_ep_library_dir: '" + dir + "' is not an absolute path");
  }
  std::lock_guard<std::mutex> lock(state().mutex);
  state().dir_override = dir;
}

std::string canonical_ep_name(const std::string& name) {
  for (const EpLibrary& l : kLibraries) {
    if (name == l.ep_name) return name;
    for (const char* alias : l.aliases) {
      if (alias != nullptr && name == alias) return l.ep_name;
    }
  }
  return name;
}

bool ships_with_ort(const std::string& name) { return find_library(canonical_ep_name(name)) != nullptr; }

const char* compute_stream_option(const std::string& name) {
  const EpLibrary* lib = find_library(canonical_ep_name(name));
  return lib != nullptr ? lib->stream_option : nullptr;
}

std::string ensure_ep(const std::string& name) {
  const std::string ep = canonical_ep_name(name);
  if (env_has_ep(ep)) return ep;
  const EpLibrary* lib = find_library(ep);
  if (lib == nullptr) {
    throw Error(ErrorKind::kInvalidArgument, "no execution provider named '" + name +
                                                 "' in the ONNX Runtime environment (available: " +
                                                 list(env_ep_names()) +
                                                 "; register a plugin EP library first, or use one of 'cuda', "
                                                 "'tensorrt', 'migraphx', 'openvino')");
  }
  const std::string dir = ep_library_dir();
  std::lock_guard<std::mutex> lock(state().mutex);
  if (!env_has_ep(ep)) register_once(*lib, dir);
  return ep;
}

std::vector<const OrtEpDevice*> select_ep_devices(const std::string& name,
                                                  const std::vector<std::pair<std::string, std::string>>& options) {
  const std::string ep = ensure_ep(name);
  std::vector<const OrtEpDevice*> mine = ep_devices_of(env(), ep);
  for (const auto& [key, value] : options) {
    if (key != "device_id" || mine.size() < 2) continue;
    char* end = nullptr;
    const unsigned long id = std::strtoul(value.c_str(), &end, 10);
    if (value.empty() || *end != '\0' || value[0] == '-' || id >= mine.size()) {
      throw Error(ErrorKind::kInvalidArgument, "device_id '" + value + "': '" + ep + "' has devices 0.." +
                                                   std::to_string(mine.size() - 1));
    }
    mine = {mine[id]};
  }
  return mine;
}

bool register_ep_for(const OrtMemoryInfo* memory) {
  if (memory == nullptr) return false;
  OrtMemoryInfoDeviceType type{};
  ort().MemoryInfoGetDeviceType(memory, &type);
  if (type == OrtMemoryInfoDeviceType_CPU) return false;
  const uint32_t vendor = ort().MemoryInfoGetVendorId(memory);
  const EpLibrary* lib = owner_of(vendor);
  if (lib == nullptr || env_serves_vendor(vendor)) return false;
  try {
    ensure_ep(lib->ep_name);
  } catch (const Error&) {
    return false;
  }
  return env_serves_vendor(vendor);
}

std::string missing_ep_message(const OrtMemoryInfo* memory) {
  std::string what = "the ONNX Runtime environment has no execution provider serving " + describe(memory);
  const EpLibrary* lib = owner_of(ort().MemoryInfoGetVendorId(memory));
  if (lib == nullptr) {
    return what + ": register the execution provider library that brings this device "
                  "(ortdlpack.register_execution_provider_library / RegisterExecutionProviderLibrary)";
  }
  try {
    ensure_ep(lib->ep_name);
  } catch (const Error& e) {
    return what + " (" + e.what() + ")";
  }
  return what;
}

}  // namespace ortdlpack
