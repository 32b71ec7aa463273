// How devices and memory are named: DLPack device types (messages and front ends), ORT device and memory types. Every
// name table once.
#include <cctype>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "device_names.h"
#include "ep_library.h"
#include "ort.h"
#include "ortdlpack/device.h"
#include "ortdlpack/ep.h"
#include "ortdlpack/error.h"

namespace ortdlpack {
namespace {

// DLPack device types: the enum's name (messages), the name front ends use, and whether DLPack's data pointer there
// is a handle of the device API's buffer object (dlpack.h: OpenCL's cl_mem, Vulkan's VkBuffer, Metal's MTLBuffer,
// WebGPU's WGPUBuffer) rather than an address.
struct DlName {
  DLDeviceType type;
  const char* enum_name;
  const char* name;
  bool handle = false;
};
constexpr DlName kDlNames[] = {
    {kDLCPU, "kDLCPU", "cpu"},
    {kDLCUDA, "kDLCUDA", "cuda"},
    {kDLCUDAHost, "kDLCUDAHost", "cuda_host"},
    {kDLOpenCL, "kDLOpenCL", "opencl", true},
    {kDLVulkan, "kDLVulkan", "vulkan", true},
    {kDLMetal, "kDLMetal", "metal", true},
    {kDLVPI, "kDLVPI", "vpi"},
    {kDLROCM, "kDLROCM", "rocm"},
    {kDLROCMHost, "kDLROCMHost", "rocm_host"},
    {kDLExtDev, "kDLExtDev", "ext_dev"},
    {kDLCUDAManaged, "kDLCUDAManaged", "cuda_managed"},
    {kDLOneAPI, "kDLOneAPI", "oneapi"},
    {kDLWebGPU, "kDLWebGPU", "webgpu", true},
    {kDLHexagon, "kDLHexagon", "hexagon"},
    {kDLMAIA, "kDLMAIA", "maia"},
    {kDLTrn, "kDLTrn", "trn"},
};

const DlName* dl_row(DLDeviceType t) {
  for (const DlName& row : kDlNames) {
    if (row.type == t) return &row;
  }
  return nullptr;
}

std::string upper(const char* s) {
  std::string r = s;
  for (char& c : r) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return r;
}

// ORT's device types and memory types, named as front ends spell them (messages print them upper-case).
template <class T>
struct Named {
  T value;
  const char* name;
};
constexpr Named<OrtMemoryInfoDeviceType> kOrtDeviceNames[] = {
    {OrtMemoryInfoDeviceType_CPU, "cpu"},
    {OrtMemoryInfoDeviceType_GPU, "gpu"},
    {OrtMemoryInfoDeviceType_FPGA, "fpga"},
    {OrtMemoryInfoDeviceType_NPU, "npu"},
};
constexpr Named<OrtDeviceMemoryType> kMemoryTypeNames[] = {
    {OrtDeviceMemoryType_DEFAULT, "default"},
    {OrtDeviceMemoryType_HOST_ACCESSIBLE, "host_accessible"},
};

// The upper-case name of `value` in `rows` (messages), or `unknown`.
template <class T, size_t N>
std::string upper_name(const Named<T> (&rows)[N], T value, const char* unknown) {
  for (const Named<T>& n : rows) {
    if (n.value == value) return upper(n.name);
  }
  return unknown;
}

// The value named `name` in `rows`; Error(kInvalidArgument) listing the names otherwise.
template <class T, size_t N>
T value_named(const Named<T> (&rows)[N], const std::string& name, const char* what) {
  std::string names;
  for (const Named<T>& n : rows) {
    if (name == n.name) return n.value;
    names += (names.empty() ? "" : ", ") + std::string(n.name);
  }
  throw Error(ErrorKind::kInvalidArgument, "unknown " + std::string(what) + " '" + name + "' (" + names + ")");
}

// The value of `rows` numbered `number`; Error(kInvalidArgument) listing the values otherwise.
template <class T, size_t N>
T value_numbered(const Named<T> (&rows)[N], long long number, const char* what) {
  std::string values;
  for (const Named<T>& n : rows) {
    if (number == static_cast<long long>(n.value)) return n.value;
    values += (values.empty() ? "" : ", ") + std::string(n.name) + " = " + std::to_string(static_cast<int>(n.value));
  }
  throw Error(ErrorKind::kInvalidArgument, std::string(what) + " " + std::to_string(number) + " is none of " + values);
}

}  // namespace

bool data_is_handle(DLDeviceType type) {
  const DlName* row = dl_row(type);
  return row != nullptr && row->handle;
}

const char* device_type_name(DLDeviceType type) {
  const DlName* row = dl_row(type);
  return row ? row->name : nullptr;
}

std::string name_of(DLDevice device) {
  const char* n = device_type_name(device.device_type);
  std::string s = n ? n : "device_type_" + std::to_string(static_cast<int>(device.device_type));
  if (device.device_type == kDLCPU && device.device_id == 0) return s;
  return s + ":" + std::to_string(device.device_id);
}

namespace {

// "kind:id" -> (kind, id); ":id" optional (0). Error(kInvalidArgument) for an id that is not a decimal int32.
std::pair<std::string, int32_t> split_device_name(const std::string& name) {
  const size_t colon = name.find(':');
  int32_t id = 0;
  if (colon != std::string::npos) {
    const std::string digits = name.substr(colon + 1);
    char* end = nullptr;
    const long v = digits.empty() || !std::isdigit(static_cast<unsigned char>(digits[0]))
                       ? -1
                       : std::strtol(digits.c_str(), &end, 10);
    if (v < 0 || v > INT32_MAX || end == nullptr || *end != '\0') {
      throw Error(ErrorKind::kInvalidArgument, "invalid device id in '" + name + "'");
    }
    id = static_cast<int32_t>(v);
  }
  return {name.substr(0, colon), id};
}

}  // namespace

DLDevice dl_device_from_name(const std::string& name) {
  const auto [kind, id] = split_device_name(name);
  for (const DlName& row : kDlNames) {
    if (kind == row.name) return DLDevice{row.type, id};
  }
  throw Error(ErrorKind::kInvalidArgument,
              "unknown device '" + name + "' (expected e.g. 'cpu', 'cuda:0', 'ext_dev:0')");
}

const OrtEpDevice* ep_device_from_name(const std::string& name) {
  const auto [kind, id] = split_device_name(name);
  const std::optional<std::string> ep = kind.empty() ? std::nullopt : resolve_provider(kind);
  if (!ep) {
    throw Error(ErrorKind::kInvalidArgument, "unknown device '" + name +
                                                 "' (expected a DLPack device such as 'cpu', 'cuda:0', 'ext_dev:0', "
                                                 "or an execution provider with a device index such as 'qnn:0')");
  }
  std::vector<const OrtEpDevice*> devices = detail::ep_devices_of(*ep);
  if (devices.empty()) devices = detail::ep_devices_of(ensure_ep(*ep));  // throws what to install
  if (static_cast<size_t>(id) >= devices.size()) {
    throw Error(ErrorKind::kInvalidArgument,
                "device '" + name + "': '" + *ep + "' has devices 0.." + std::to_string(devices.size() - 1));
  }
  return devices[static_cast<size_t>(id)];
}

std::string describe_memory(const OrtMemoryInfo* info) {
  const detail::MemoryFields m = detail::memory_fields(info);
  char vendor[16];
  std::snprintf(vendor, sizeof vendor, "0x%04X", m.vendor_id);
  return std::string(*m.name ? m.name : "?") + ":" + std::to_string(m.device_id) + " (" +
         upper_name(kOrtDeviceNames, m.device_type, "unknown device type") + ", vendor " + vendor + ", " +
         upper_name(kMemoryTypeNames, m.memory_type, "unknown") + " memory)";
}

std::string describe_device(DLDevice device) {
  const DlName* row = dl_row(device.device_type);
  return (row ? std::string(row->enum_name) : "device type " + std::to_string(static_cast<int>(device.device_type))) +
         ":" + std::to_string(device.device_id);
}

OrtMemoryInfoDeviceType ort_device_type_from_name(const std::string& name) {
  return value_named(kOrtDeviceNames, name, "ORT device type");
}

OrtDeviceMemoryType memory_type_from_name(const std::string& name) {
  return value_named(kMemoryTypeNames, name, "memory type");
}

OrtMemoryInfoDeviceType ort_device_type_from_value(long long value) {
  return value_numbered(kOrtDeviceNames, value, "ORT device type");
}

OrtDeviceMemoryType memory_type_from_value(long long value) {
  return value_numbered(kMemoryTypeNames, value, "memory type");
}

}  // namespace ortdlpack
