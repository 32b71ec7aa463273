// Registering the libraries that bring EPs into the env (ep.h): from ORT's own folder, a caller's folder, or an
// installed EP package. Every fact about an EP is its row in the EP table (ep_table.h).
#include "ep_library.h"

#include <dlfcn.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "ep_table.h"
#include "ort.h"
#include "ortdlpack/api.h"
#include "ortdlpack/device.h"
#include "ortdlpack/ep.h"
#include "ortdlpack/error.h"
#include "python_adapters.h"

namespace ortdlpack {
namespace {

using detail::EpRow;

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
  python::EpPackageFinder finder = nullptr;
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

// The distribution an EP package of short name `name` would have ("webgpu" -> "onnxruntime-ep-webgpu").
std::string package_for(const std::string& name) {
  std::string d = "onnxruntime-ep-";
  for (char c : name) d += c == '_' ? '-' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return d;
}

// Whether `path` lies inside `folder` (both absolute; `..` components refused outright).
bool inside(const std::string& path, const std::string& folder) {
  if (path.empty() || path[0] != '/' || folder.empty() || folder[0] != '/') return false;
  if (path.find("/../") != std::string::npos || path.find("/./") != std::string::npos) return false;
  const std::string prefix = folder.back() == '/' ? folder : folder + "/";
  return path.compare(0, prefix.size(), prefix) == 0;
}

// Registers the library at `path` (absolute) for EP `ep_name` once per process; later calls return the first
// outcome. Throws Error(kUnsupported) saying why it failed. Called with the state mutex held.
void register_once(const std::string& path, const std::string& ep_name, const char* device_hint) {
  State& s = state();
  for (const Attempt& a : s.attempted) {
    if (a.path != path) continue;
    if (!a.why.empty()) throw Error(ErrorKind::kUnsupported, a.why);
    return;
  }
  std::string why;
  // A name of ortdlpack's own: registering under a name already taken fails, and a failed second registration
  // leaves some EPs broken (the WebGPU EP on ORT 1.31+), so ortdlpack never competes for the user's names.
  const std::string registration = "ortdlpack:" + ep_name;
  if (OrtStatus* status = ort().RegisterExecutionProviderLibrary(env(), registration.c_str(), path.c_str())) {
    why = "registering " + path + " failed: " + ort().GetErrorMessage(status);
    detail::failed(status);
  } else if (!env_has_ep(ep_name)) {
    why = "registered " + path + ", but it brought no '" + ep_name + "' device (" +
          (device_hint != nullptr ? device_hint : "is its hardware and driver present?") + ")";
  }
  s.attempted.push_back(Attempt{path, why});
  if (!why.empty()) throw Error(ErrorKind::kUnsupported, why);
}

// The installed packages that may bring `ep` (a row) or, for a name no row has, any package named for it or
// registering it. Asks the finder outside every lock of ours.
std::vector<python::EpPackage> packages_for(const EpRow* ep, const std::string& name) {
  python::EpPackageFinder finder = nullptr;
  {
    std::lock_guard<std::mutex> lock(state().mutex);
    finder = state().finder;
  }
  std::vector<python::EpPackage> found;
  if (finder == nullptr) return found;
  if (ep != nullptr) {
    for (const char* d : ep->packages) {
      if (d == nullptr) break;
      for (python::EpPackage& p : finder(d)) found.push_back(std::move(p));
    }
    return found;
  }
  for (python::EpPackage& p : finder("")) {
    const bool registers = std::find(p.ep_names.begin(), p.ep_names.end(), name) != p.ep_names.end();
    if (registers || p.distribution == package_for(name)) found.push_back(std::move(p));
  }
  return found;
}

// Registers the library of `ep` (a row) or of the package found for `name`, and returns the EP's name in ORT.
std::string register_library(const EpRow* ep, const std::string& name) {
  const std::vector<python::EpPackage> packages = packages_for(ep, name);
  const std::string dir = ep_library_dir();
  std::lock_guard<std::mutex> lock(state().mutex);
  std::string why;
  bool tried = false;  // a library was there and registered, or failed to: installing it again would not help
  const auto attempt = [&](const std::string& path, const std::string& ep_name) {
    if (env_has_ep(ep_name)) return true;
    tried = true;
    try {
      register_once(path, ep_name, ep != nullptr ? ep->device_hint : nullptr);
      return true;
    } catch (const Error& e) {
      why += (why.empty() ? "" : "; ") + std::string(e.what());
      return false;
    }
  };
  if (ep != nullptr && ep->ort_library != nullptr) {
    const std::string path = dir.empty() ? std::string() : dir + "/" + ep->ort_library;
    if (dir.empty()) {
      why =
          "the folder of the running ONNX Runtime could not be determined to look for " + std::string(ep->ort_library);
    } else if (!file_exists(path)) {
      why = "the installed ONNX Runtime (" + dir + ") has no " + ep->ort_library;
    } else if (attempt(path, ep->ep_name)) {
      return ep->ep_name;
    }
  }
  for (const python::EpPackage& p : packages) {
    if (!inside(p.library, p.folder) || !file_exists(p.library)) {
      why +=
          (why.empty() ? "" : "; ") + p.distribution + "'s library '" + p.library + "' is not a file of its own folder";
      continue;
    }
    const std::string ep_name = ep != nullptr ? ep->ep_name : p.ep_names.empty() ? name : p.ep_names.front();
    if (ep != nullptr && std::find(p.ep_names.begin(), p.ep_names.end(), ep_name) == p.ep_names.end()) {
      why += (why.empty() ? "" : "; ") + p.distribution + " registers no '" + ep_name + "'";
      continue;
    }
    if (attempt(p.library, ep_name)) return ep_name;
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

std::vector<const OrtEpDevice*> select_ep_devices(const std::string& name,
                                                  const std::vector<std::pair<std::string, std::string>>& options) {
  const std::string ep = ensure_ep(name);
  std::vector<const OrtEpDevice*> mine = ep_devices_of(ep);
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

bool ships_with_ort(const std::string& name) {
  const EpRow* ep = find_ep(name);
  return ep != nullptr && ep->ort_library != nullptr;
}

}  // namespace detail

namespace python {

void set_ep_package_finder(EpPackageFinder finder) {
  std::lock_guard<std::mutex> lock(state().mutex);
  state().finder = finder;
}

}  // namespace python
}  // namespace ortdlpack
