// Registering the libraries that bring EPs into the env (ep.h): from ORT's own folder, a caller's folder, or an
// installed EP package. Every fact about an EP is its row in the EP table (ep_table.h).
#include "ep_library.h"

#include <dlfcn.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "ep_packages.h"
#include "ep_table.h"
#include "ort.h"
#include "ortdlpack/api.h"
#include "ortdlpack/device.h"
#include "ortdlpack/ep.h"
#include "ortdlpack/error.h"

namespace ortdlpack {
namespace {

using detail::EpRow;
using detail::OptionDefault;

// A library ortdlpack registered, or tried to: its absolute path and why it failed ("" registered).
struct Attempt {
  std::string path;
  std::string why;
};

struct State {
  std::mutex mutex;
  std::string dir_override;
  std::vector<Attempt> attempted;
  // Why ensure_ep() of a table row last failed, by EP name (for missing_ep_message, which registers nothing).
  std::vector<std::pair<const EpRow*, std::string>> failures;
  // Memory that an EP of the env serves (ensure_ep_for's answer, kept): device type, vendor, memory type, name.
  std::vector<std::tuple<OrtMemoryInfoDeviceType, uint32_t, OrtDeviceMemoryType, std::string>> served;
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

bool env_has_ep(const std::string& ep_name) { return !detail::ep_devices_of(ep_name).empty(); }

// Whether the running ORT has EP `ep_name` built in (GetAvailableProviders: the CPU EP, onnxruntime-gpu's CUDA EP,
// ...; plugin EPs of the env are listed there too).
bool built_in(const std::string& ep_name) {
  char** names = nullptr;
  int count = 0;
  if (detail::failed(ort().GetAvailableProviders(&names, &count))) return false;
  bool found = false;
  for (int i = 0; i < count; ++i) found = found || ep_name == names[i];
  detail::failed(ort().ReleaseAvailableProviders(names, count));
  return found;
}

std::string env_ep_names() {
  std::vector<std::string> names;
  for (const OrtEpDevice* d : detail::env_ep_devices()) {
    const std::string n = ort().EpDevice_EpName(d);
    if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
  }
  std::string s;
  for (const std::string& n : names) s += (s.empty() ? "'" : ", '") + n + "'";
  return s.empty() ? "none" : s;
}

std::string table_names() {
  std::string s;
  for (const EpRow& ep : detail::ep_table()) s += (s.empty() ? "'" : ", '") + std::string(ep.aliases[0]) + "'";
  return s;
}

// Whether `path` lies inside `folder` (both absolute; `..` components refused outright).
bool inside(const std::string& path, const std::string& folder) {
  if (path.empty() || path[0] != '/' || folder.empty() || folder[0] != '/') return false;
  if (path.find("/../") != std::string::npos || path.find("/./") != std::string::npos) return false;
  const std::string prefix = folder.back() == '/' ? folder : folder + "/";
  return path.compare(0, prefix.size(), prefix) == 0;
}

bool same_file(const std::string& a, const std::string& b) {
  struct stat sa{}, sb{};
  return ::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

// The EP the env's EP devices from the library at `path` belong to, when it is registered already (by the user,
// under any name: QNN and ggml then carry that name); "" when it is not.
std::string registered_ep_of(const std::string& path) {
  for (const OrtEpDevice* d : detail::env_ep_devices()) {
    const OrtKeyValuePairs* metadata = ort().EpDevice_EpMetadata(d);
    const char* p = metadata != nullptr ? ort().GetKeyValue(metadata, "library_path") : nullptr;
    if (p != nullptr && same_file(p, path)) return ort().EpDevice_EpName(d);
  }
  return "";
}

// A library that may bring an EP: where it is and what it is (for messages).
struct Library {
  std::string path;          // absolute
  std::string ep_name;       // the EP it brings, and the name it is registered under
  std::string what;          // "onnxruntime-ep-webgpu 0.4.0", or the path of a library shipped with ORT
  std::string distribution;  // the package it comes from ("" for a library shipped with ORT)
  const char* device_hint;   // why it may bring no device, or nullptr
};

// Registers `lib` once per process, under the EP's own name (what QNN and ggml take as their EP name, and what
// onnxruntime's providers=[...] then finds), and returns the EP's name; later calls return the first outcome. A
// library the user registered already is used under the name it has. A package's EP is then checked the way ORT
// checks it for every session (a session on its devices): an EP library built for a newer ORT that this one refuses
// is unregistered again, so that it never looks usable. Throws Error(kUnsupported) saying why it failed. Called
// with the state mutex held.
std::string register_once(const Library& lib) {
  State& s = state();
  for (const Attempt& a : s.attempted) {
    if (a.path != lib.path) continue;
    if (!a.why.empty()) throw Error(ErrorKind::kUnsupported, a.why);
    return lib.ep_name;
  }
  const std::string users = registered_ep_of(lib.path);
  if (!users.empty()) return users;
  // A package's failures name both versions: the package's and the running ORT's.
  const bool package = !lib.distribution.empty();
  const std::string versions = package ? lib.what + " on ONNX Runtime " + ort_version() + ": " : "";
  std::string why;
  if (OrtStatus* status = ort().RegisterExecutionProviderLibrary(env(), lib.ep_name.c_str(), lib.path.c_str())) {
    why = versions + "registering " + lib.path + " failed: " + ort().GetErrorMessage(status);
    detail::failed(status);
  } else if (!env_has_ep(lib.ep_name)) {
    why = versions + "registered " + lib.path + ", but it brought no '" + lib.ep_name + "' device (" +
          (lib.device_hint != nullptr ? lib.device_hint : "is its hardware and driver present?") + ")";
    if (package) {  // a package's library that brings nothing leaves the env as it was
      detail::failed(ort().UnregisterExecutionProviderLibrary(env(), lib.ep_name.c_str()));
      why += "; it was unregistered again";
    }
  } else if (package) {
    const std::string refused = detail::session_refusal(lib.ep_name, provider_options(lib.ep_name, {}));
    if (refused.find("ort_version_supported") != std::string::npos) {  // ORT's check of the EP's API version
      detail::failed(ort().UnregisterExecutionProviderLibrary(env(), lib.ep_name.c_str()));
      why = versions + "ONNX Runtime " + ort_version() + " (C API " + std::to_string(ort_runtime_api_version()) +
            ") refuses its EP (" + refused + "), so it was not registered: install a release of " + lib.distribution +
            " built for this ONNX Runtime, or a newer onnxruntime";
    }
  }
  s.attempted.push_back(Attempt{lib.path, why});
  if (!why.empty()) throw Error(ErrorKind::kUnsupported, why);
  return lib.ep_name;
}

// Registers the library of `ep` (a row) or of the package found for `name`, and returns the EP's name in ORT.
std::string register_library(const EpRow* ep, const std::string& name) {
  const std::vector<EpPackage> packages = packages_for(ep, name);
  const std::string dir = ep_library_dir();
  std::lock_guard<std::mutex> lock(state().mutex);
  std::string why;
  bool tried = false;      // a library was there and registered, or failed to: installing it again would not help
  std::string registered;  // the EP's name once a library brings it
  const auto attempt = [&](const Library& lib) {
    if (env_has_ep(lib.ep_name)) {
      registered = lib.ep_name;
      return true;
    }
    tried = true;
    try {
      registered = register_once(lib);
      return true;
    } catch (const Error& e) {
      why += (why.empty() ? "" : "; ") + std::string(e.what());
      return false;
    }
  };
  const char* hint = ep != nullptr ? ep->device_hint : nullptr;
  if (ep != nullptr && ep->ort_library != nullptr) {
    const std::string path = dir.empty() ? std::string() : dir + "/" + ep->ort_library;
    if (dir.empty()) {
      why =
          "the folder of the running ONNX Runtime could not be determined to look for " + std::string(ep->ort_library);
    } else if (!file_exists(path)) {
      why = "the installed ONNX Runtime (" + dir + ") has no " + ep->ort_library;
    } else if (attempt(Library{path, ep->ep_name, path, "", hint})) {
      return registered;
    }
  }
  for (const EpPackage& p : packages) {
    if (!inside(p.library, p.folder) || !file_exists(p.library)) {
      why +=
          (why.empty() ? "" : "; ") + p.distribution + "'s library '" + p.library + "' is not a file of its own folder";
      continue;
    }
    const std::string ep_name = ep != nullptr                           ? ep->ep_name
                                : brings(p, name) || p.ep_names.empty() ? name
                                                                        : p.ep_names.front();
    if (ep != nullptr && !brings(p, ep_name)) {
      why += (why.empty() ? "" : "; ") + p.distribution + " registers no '" + ep_name + "'";
      continue;
    }
    if (attempt(Library{p.library, ep_name, p.distribution + " " + p.version, p.distribution, hint})) return registered;
  }
  if (ep == nullptr) {
    throw Error(ErrorKind::kInvalidArgument,
                "no execution provider named '" + name +
                    "' in the ONNX Runtime environment (available: " + env_ep_names() + "), no installed package " +
                    package_for(name) + (why.empty() ? "" : " (" + why + ")") + "; known by name: " + table_names() +
                    "; or register a plugin EP library first");
  }
  if (packages.empty() && ep->packages[0] != nullptr) {
    why += (why.empty() ? "" : "; ") + std::string("no installed ") + ep->packages[0];
  }
  const std::string message = "execution provider '" + std::string(ep->ep_name) +
                              "' is not in the ONNX Runtime environment (" + why + ")" +
                              (tried ? std::string() : ": " + std::string(ep->install));
  auto& failures = state().failures;
  auto known = std::find_if(failures.begin(), failures.end(), [&](const auto& f) { return f.first == ep; });
  if (known != failures.end()) {
    known->second = message;
  } else {
    failures.emplace_back(ep, message);
  }
  throw Error(ErrorKind::kUnsupported, message);
}

std::tuple<OrtMemoryInfoDeviceType, uint32_t, OrtDeviceMemoryType, std::string> served_key(
    const detail::MemoryFields& m) {
  return {m.device_type, m.vendor_id, m.memory_type, m.vendor_id == 0 ? m.name : ""};
}

// Whether an EP device of the env has the DEFAULT or HOST_ACCESSIBLE memory `m` is of: the same vendor and memory
// type (the same name for vendor 0), and the same device type for DEFAULT memory (pinned memory may be typed CPU).
bool env_serves(const detail::MemoryFields& m) {
  for (const OrtEpDevice* d : detail::env_ep_devices()) {
    for (OrtDeviceMemoryType type : {OrtDeviceMemoryType_DEFAULT, OrtDeviceMemoryType_HOST_ACCESSIBLE}) {
      const OrtMemoryInfo* info = ort().EpDevice_MemoryInfo(d, type);
      if (info == nullptr) continue;
      const detail::MemoryFields e = detail::memory_fields(info);
      if (e.vendor_id == m.vendor_id && e.memory_type == m.memory_type &&
          (m.memory_type != OrtDeviceMemoryType_DEFAULT || e.device_type == m.device_type) &&
          (m.vendor_id != 0 || std::string(e.name) == m.name)) {
        return true;
      }
    }
  }
  return false;
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
  const EpRow* ep = detail::find_ep(name);
  return ep != nullptr ? ep->ep_name : name;
}

std::optional<std::string> resolve_provider(const std::string& name) {
  if (name.empty()) throw Error(ErrorKind::kInvalidArgument, "an execution provider name is empty");
  const EpRow* ep = detail::find_ep(name);
  const std::string ep_name = ep != nullptr ? ep->ep_name : name;
  if (env_has_ep(ep_name) || (ep != nullptr && built_in(ep_name))) return ep_name;
  if (!packages_for(ep, name).empty()) return register_library(ep, name);
  if (ep != nullptr) return ep_name;  // built into ORT, or not installed: ORT says which, as for its own names
  return std::nullopt;
}

std::vector<std::pair<std::string, std::string>> provider_options(
    const std::string& ep_name, std::vector<std::pair<std::string, std::string>> options) {
  const EpRow* ep = detail::find_ep(ep_name);
  if (ep == nullptr || ep->option_default.key == nullptr) return options;
  const OptionDefault& d = ep->option_default;
  for (const auto& option : options) {
    if (option.first == d.key || (d.unless != nullptr && option.first == d.unless)) return options;
  }
  options.emplace_back(d.key, d.value);
  return options;
}

std::string ensure_ep(const std::string& name) {
  if (name.empty()) throw Error(ErrorKind::kInvalidArgument, "an execution provider name is empty");
  const EpRow* ep = detail::find_ep(name);
  const std::string ep_name = ep != nullptr ? ep->ep_name : name;
  if (ep != nullptr && ep->ort_library == nullptr && ep->packages[0] == nullptr) return ep_name;  // built into ORT
  if (env_has_ep(ep_name)) return ep_name;
  return register_library(ep, name);
}

namespace detail {

void ensure_ep_for(const OrtMemoryInfo* memory) {
  if (memory == nullptr || is_cpu_memory(memory)) return;
  const MemoryFields m = memory_fields(memory);
  const auto key = served_key(m);
  {
    std::lock_guard<std::mutex> lock(state().mutex);
    if (std::find(state().served.begin(), state().served.end(), key) != state().served.end()) return;
  }
  bool served = env_serves(m);
  for (const EpRow& ep : ep_table()) {
    if (served) break;
    if (!owns(ep, m)) continue;
    try {
      ensure_ep(ep.ep_name);
    } catch (const Error&) {  // reported by missing_ep_message() when the allocation or copy fails
    }
    served = env_serves(m);
  }
  if (!served) return;  // nothing kept: a library registered later (by the user) may serve it
  std::lock_guard<std::mutex> lock(state().mutex);
  state().served.push_back(key);
}

std::string missing_ep_message(const OrtMemoryInfo* memory) {
  const std::string what = "the ONNX Runtime environment has no execution provider serving " + describe_memory(memory);
  const MemoryFields m = memory_fields(memory);
  std::string why;
  {
    std::lock_guard<std::mutex> lock(state().mutex);
    for (const auto& [ep, message] : state().failures) {
      if (owns(*ep, m)) why += (why.empty() ? "" : "; ") + message;
    }
  }
  if (!why.empty()) return what + " (" + why + ")";
  const EpRow* owner = owner_of(m);
  if (owner != nullptr) return what + ": " + owner->install;
  return what +
         ": register the execution provider library that brings this device "
         "(ortdlpack.register_execution_provider_library / RegisterExecutionProviderLibrary)";
}

std::vector<const OrtEpDevice*> ep_devices_of(const std::string& ep_name) {
  std::vector<const OrtEpDevice*> mine;
  for (const OrtEpDevice* d : env_ep_devices()) {
    if (ep_name == ort().EpDevice_EpName(d)) mine.push_back(d);
  }
  return mine;
}

bool ships_with_ort(const std::string& name) {
  const EpRow* ep = find_ep(name);
  return ep != nullptr && ep->ort_library != nullptr;
}

}  // namespace detail

std::vector<const OrtEpDevice*> select_ep_devices(const std::string& name,
                                                  const std::vector<std::pair<std::string, std::string>>& options) {
  const std::string ep = ensure_ep(name);
  std::vector<const OrtEpDevice*> mine = detail::ep_devices_of(ep);
  for (const auto& [key, value] : options) {
    if (key != "device_id" || mine.size() < 2) continue;
    char* end = nullptr;
    const unsigned long id = std::strtoul(value.c_str(), &end, 10);
    if (value.empty() || *end != '\0' || value[0] == '-' || id >= mine.size()) {
      throw Error(ErrorKind::kInvalidArgument,
                  "device_id '" + value + "': '" + ep + "' has devices 0.." + std::to_string(mine.size() - 1));
    }
    mine = {mine[id]};
  }
  return mine;
}

}  // namespace ortdlpack
