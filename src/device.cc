#include "ortdlpack/device.h"

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <shared_mutex>
#include <tuple>
#include <vector>

#include "ortdlpack/api.h"
#include "ortdlpack/error.h"

namespace ortdlpack {
namespace {

struct BuiltinRow {
  const char* name;  // the OrtMemoryInfo name ORT's own EPs use; also matched when an old ORT reports vendor 0
  OrtMemoryInfoDeviceType device_type;
  uint32_t vendor_id;
  OrtDeviceMemoryType memory_type;
  DLDeviceType dl_device_type;
};

// The one device table: memory of real devices whose DLPack device type every framework knows. CPU is not a row
// (device type CPU is always kDLCPU, whatever the vendor); neither is HOST_ACCESSIBLE memory of other vendors,
// which is plain host memory and exported as kDLCPU (see resolve()).
constexpr BuiltinRow kBuiltin[] = {
    {"Cuda", OrtMemoryInfoDeviceType_GPU, kVendorNvidia, OrtDeviceMemoryType_DEFAULT, kDLCUDA},
    {"CudaPinned", OrtMemoryInfoDeviceType_GPU, kVendorNvidia, OrtDeviceMemoryType_HOST_ACCESSIBLE, kDLCUDAHost},
    {"Hip", OrtMemoryInfoDeviceType_GPU, kVendorAmd, OrtDeviceMemoryType_DEFAULT, kDLROCM},
    {"HipPinned", OrtMemoryInfoDeviceType_GPU, kVendorAmd, OrtDeviceMemoryType_HOST_ACCESSIBLE, kDLROCMHost},
    {"OneAPI", OrtMemoryInfoDeviceType_GPU, kVendorIntel, OrtDeviceMemoryType_DEFAULT, kDLOneAPI},
    {"Metal", OrtMemoryInfoDeviceType_GPU, kVendorApple, OrtDeviceMemoryType_DEFAULT, kDLMetal},
};

struct MemoryKey {
  OrtMemoryInfoDeviceType device_type;
  uint32_t vendor_id;
  OrtDeviceMemoryType memory_type;
};

MemoryKey key_of(const OrtMemoryInfo* info) {
  const OrtApi& api = ort();
  MemoryKey key{};
  api.MemoryInfoGetDeviceType(info, &key.device_type);
  key.vendor_id = api.MemoryInfoGetVendorId(info);
  key.memory_type = api.MemoryInfoGetDeviceMemType(info);
  return key;
}

// Registered mappings. Read on every export of non-CPU memory, written rarely: a reader-writer lock.
std::shared_mutex g_registry_mutex;
std::vector<DeviceMapping>& registry() {
  static auto* rows = new std::vector<DeviceMapping>();  // never destroyed: lookups may run during exit
  return *rows;
}

bool same_memory(const DeviceMapping& m, OrtMemoryInfoDeviceType t, uint32_t vendor, OrtDeviceMemoryType mem) {
  return m.device_type == t && m.vendor_id == vendor && m.memory_type == mem;
}

const BuiltinRow* builtin_for_memory(const MemoryKey& k, const char* name) {
  for (const BuiltinRow& row : kBuiltin) {
    if (row.vendor_id == k.vendor_id && row.memory_type == k.memory_type &&
        (row.device_type == k.device_type || k.memory_type == OrtDeviceMemoryType_HOST_ACCESSIBLE)) {
      return &row;
    }
  }
  // ORT builds that predate vendor ids in OrtMemoryInfo name their memory instead ("Cuda", "CudaPinned", ...).
  if (k.vendor_id == 0 && name != nullptr) {
    for (const BuiltinRow& row : kBuiltin) {
      if (std::string(row.name) == name) return &row;
    }
  }
  return nullptr;
}

// The one table of DLPack device type names: the enum's name (messages), the name bindings use, and the name
// onnxruntime's Python API gives such memory.
struct DlName {
  DLDeviceType type;
  const char* enum_name;
  const char* name;
  const char* onnxruntime;
};
constexpr DlName kDlNames[] = {
    {kDLCPU, "kDLCPU", "cpu", "cpu"},
    {kDLCUDA, "kDLCUDA", "cuda", "cuda"},
    {kDLCUDAHost, "kDLCUDAHost", "cuda_host", "cpu"},
    {kDLOpenCL, "kDLOpenCL", "opencl", nullptr},
    {kDLVulkan, "kDLVulkan", "vulkan", nullptr},
    {kDLMetal, "kDLMetal", "metal", nullptr},
    {kDLVPI, "kDLVPI", "vpi", nullptr},
    {kDLROCM, "kDLROCM", "rocm", "cuda"},
    {kDLROCMHost, "kDLROCMHost", "rocm_host", "cpu"},
    {kDLExtDev, "kDLExtDev", "ext_dev", nullptr},
    {kDLCUDAManaged, "kDLCUDAManaged", "cuda_managed", nullptr},
    {kDLOneAPI, "kDLOneAPI", "oneapi", nullptr},
    {kDLWebGPU, "kDLWebGPU", "webgpu", nullptr},
    {kDLHexagon, "kDLHexagon", "hexagon", nullptr},
    {kDLMAIA, "kDLMAIA", "maia", nullptr},
    {kDLTrn, "kDLTrn", "trn", nullptr},
};

const DlName* dl_row(DLDeviceType t) {
  for (const DlName& row : kDlNames) {
    if (row.type == t) return &row;
  }
  return nullptr;
}

const char* dl_device_type_name(DLDeviceType t) {
  const DlName* row = dl_row(t);
  return row ? row->enum_name : nullptr;
}

// ORT's device types and memory types, named as bindings spell them (describe() prints them upper-case).
struct OrtDeviceName {
  OrtMemoryInfoDeviceType type;
  const char* name;
};
constexpr OrtDeviceName kOrtDeviceNames[] = {
    {OrtMemoryInfoDeviceType_CPU, "cpu"},
    {OrtMemoryInfoDeviceType_GPU, "gpu"},
    {OrtMemoryInfoDeviceType_FPGA, "fpga"},
    {OrtMemoryInfoDeviceType_NPU, "npu"},
};
struct MemoryTypeName {
  OrtDeviceMemoryType type;
  const char* name;
};
constexpr MemoryTypeName kMemoryTypeNames[] = {
    {OrtDeviceMemoryType_DEFAULT, "default"},
    {OrtDeviceMemoryType_HOST_ACCESSIBLE, "host_accessible"},
};

std::string upper(const char* s) {
  std::string r = s;
  for (char& c : r) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return r;
}

bool refresh_from_env();

const OrtMemoryInfo* create_memory_info(DLDevice device) {
  const OrtApi& api = ort();
  OrtMemoryInfo* info = nullptr;
  if (device.device_type == kDLCPU) {
    check(api.CreateCpuMemoryInfo(OrtDeviceAllocator, OrtMemTypeDefault, &info));
    return info;
  }
  // CUDA managed memory has no ORT memory type of its own; CUDA kernels read it as device memory, so ORT holds it
  // as CUDA memory (and exports it again as kDLCUDA).
  const DLDeviceType type = device.device_type == kDLCUDAManaged ? kDLCUDA : device.device_type;
  for (const BuiltinRow& row : kBuiltin) {
    if (row.dl_device_type == type) {
      check(api.CreateMemoryInfo_V2(row.name, row.device_type, row.vendor_id, device.device_id, row.memory_type, 0,
                                    OrtDeviceAllocator, &info));
      return info;
    }
  }
  for (int attempt = 0; attempt < 2; ++attempt) {
    {
      std::shared_lock<std::shared_mutex> lock(g_registry_mutex);
      for (const DeviceMapping& m : registry()) {
        if (m.dl_device_type == device.device_type) {
          check(api.CreateMemoryInfo_V2(m.name.c_str(), m.device_type, m.vendor_id, device.device_id, m.memory_type,
                                        0, OrtDeviceAllocator, &info));
          return info;
        }
      }
    }
    if (attempt == 0 && !refresh_from_env()) break;
  }
  throw Error(ErrorKind::kUnsupported, "DLPack device " + describe(device) +
                                           " has no ONNX Runtime memory mapped to it (see ortdlpack::register_device)");
}

}  // namespace

namespace {

// Looks `key` up among the registered mappings.
bool find_registered(const MemoryKey& k, DLDeviceType* out) {
  std::shared_lock<std::shared_mutex> lock(g_registry_mutex);
  for (const DeviceMapping& m : registry()) {
    if (same_memory(m, k.device_type, k.vendor_id, k.memory_type)) {
      *out = m.dl_device_type;
      return true;
    }
  }
  return false;
}

// On a miss, EPs registered in the env since the last look may advertise a mapping: pick those up once.
bool refresh_from_env() { return register_ep_devices(env()) > 0; }

}  // namespace

DLDevice to_dlpack_device(const OrtMemoryInfo* info) {
  if (info == nullptr) throw Error(ErrorKind::kInvalidArgument, "OrtMemoryInfo is NULL");
  const OrtApi& api = ort();
  const MemoryKey k = key_of(info);
  int id = 0;
  check(api.MemoryInfoGetId(info, &id));
  if (k.device_type == OrtMemoryInfoDeviceType_CPU && k.memory_type == OrtDeviceMemoryType_DEFAULT) {
    return DLDevice{kDLCPU, 0};
  }
  DLDeviceType registered{};
  if (find_registered(k, &registered)) return DLDevice{registered, id};
  const char* name = nullptr;
  check(api.MemoryInfoGetName(info, &name));
  if (const BuiltinRow* row = builtin_for_memory(k, name)) return DLDevice{row->dl_device_type, id};
  // Host-accessible memory of a device without a host DLPack type of its own is ordinary host memory.
  if (k.memory_type == OrtDeviceMemoryType_HOST_ACCESSIBLE) return DLDevice{kDLCPU, 0};
  if (refresh_from_env() && find_registered(k, &registered)) return DLDevice{registered, id};
  throw Error(ErrorKind::kUnsupported,
              "ONNX Runtime memory " + describe(info) +
                  " has no DLPack device: no framework is known to read it (an EP makes it exportable by "
                  "advertising '" + kEpMetadataDlpackDeviceType + "', or call ortdlpack::register_device)");
}

// DLDevice -> OrtMemoryInfo, created once per device. Entries are never released: tensors imported on a device
// point at its memory info for their whole life (unregister_device() only retires them from lookup).
struct MemoryInfoCache {
  std::mutex mutex;
  std::map<std::pair<int, int32_t>, const OrtMemoryInfo*> live;
  std::vector<const OrtMemoryInfo*> retired;
};
MemoryInfoCache& memory_info_cache() {
  static auto* cache = new MemoryInfoCache();  // process lifetime
  return *cache;
}

const OrtMemoryInfo* memory_info(DLDevice device) {
  static const OrtMemoryInfo* const cpu = create_memory_info(DLDevice{kDLCPU, 0});
  if (device.device_type == kDLCPU) return cpu;
  MemoryInfoCache& cache = memory_info_cache();
  std::lock_guard<std::mutex> lock(cache.mutex);
  const std::pair<int, int32_t> key{static_cast<int>(device.device_type), device.device_id};
  auto it = cache.live.find(key);
  if (it != cache.live.end()) return it->second;
  const OrtMemoryInfo* info = create_memory_info(device);
  cache.live.emplace(key, info);
  return info;
}

bool host_accessible(const OrtMemoryInfo* info) {
  const MemoryKey k = key_of(info);
  return k.device_type == OrtMemoryInfoDeviceType_CPU || k.memory_type == OrtDeviceMemoryType_HOST_ACCESSIBLE;
}

void register_device(const DeviceMapping& m) {
  const std::string what = "register_device(" + m.name + "): ";
  if (m.dl_device_type == kDLCPU || dl_device_type_name(m.dl_device_type) == nullptr) {
    throw Error(ErrorKind::kInvalidArgument, what + "invalid DLPack device type " +
                                                 std::to_string(static_cast<int>(m.dl_device_type)));
  }
  if (m.device_type == OrtMemoryInfoDeviceType_CPU && m.memory_type == OrtDeviceMemoryType_DEFAULT) {
    throw Error(ErrorKind::kInvalidArgument, what + "CPU memory is always kDLCPU");
  }
  for (const BuiltinRow& row : kBuiltin) {
    if (row.device_type == m.device_type && row.vendor_id == m.vendor_id && row.memory_type == m.memory_type) {
      throw Error(ErrorKind::kInvalidArgument, what + "that memory is built in as " +
                                                   dl_device_type_name(row.dl_device_type));
    }
    if (row.dl_device_type == m.dl_device_type) {
      // Labelling foreign memory as CUDA/ROCm/... would let those frameworks dereference it.
      throw Error(ErrorKind::kInvalidArgument, what + dl_device_type_name(m.dl_device_type) +
                                                   " is reserved for its own vendor's memory");
    }
  }
  std::unique_lock<std::shared_mutex> lock(g_registry_mutex);
  for (const DeviceMapping& r : registry()) {
    const bool same = same_memory(r, m.device_type, m.vendor_id, m.memory_type);
    if (same && r.dl_device_type == m.dl_device_type && r.name == m.name) return;
    if (same || r.dl_device_type == m.dl_device_type) {
      throw Error(ErrorKind::kInvalidArgument, what + "conflicts with the mapping registered for '" + r.name +
                                                   "' (" + dl_device_type_name(r.dl_device_type) + ")");
    }
  }
  registry().push_back(m);
}

bool unregister_device(OrtMemoryInfoDeviceType device_type, uint32_t vendor_id, OrtDeviceMemoryType memory_type) {
  std::unique_lock<std::shared_mutex> lock(g_registry_mutex);
  auto& rows = registry();
  for (auto it = rows.begin(); it != rows.end(); ++it) {
    if (same_memory(*it, device_type, vendor_id, memory_type)) {
      MemoryInfoCache& cache = memory_info_cache();
      std::lock_guard<std::mutex> cache_lock(cache.mutex);
      for (auto c = cache.live.begin(); c != cache.live.end();) {
        if (c->first.first == static_cast<int>(it->dl_device_type)) {
          cache.retired.push_back(c->second);
          c = cache.live.erase(c);
        } else {
          ++c;
        }
      }
      rows.erase(it);
      return true;
    }
  }
  return false;
}

int register_ep_devices(OrtEnv* e) {
  const OrtApi& api = ort();
  const OrtEpDevice* const* devices = nullptr;
  size_t count = 0;
  check(api.GetEpDevices(e, &devices, &count));
  int added = 0;
  for (size_t i = 0; i < count; ++i) {
    const char* value = api.GetKeyValue(api.EpDevice_EpMetadata(devices[i]), kEpMetadataDlpackDeviceType);
    if (value == nullptr) continue;
    char* end = nullptr;
    const long dl_type = std::strtol(value, &end, 10);
    const OrtMemoryInfo* info = api.EpDevice_MemoryInfo(devices[i], OrtDeviceMemoryType_DEFAULT);
    if (end == value || *end != '\0' || info == nullptr) continue;
    const MemoryKey k = key_of(info);
    const char* name = nullptr;
    check(api.MemoryInfoGetName(info, &name));
    DLDeviceType existing{};
    if (find_registered(k, &existing)) continue;
    register_device(DeviceMapping{name, k.device_type, k.vendor_id, k.memory_type, static_cast<DLDeviceType>(dl_type)});
    ++added;
  }
  return added;
}

std::string describe(const OrtMemoryInfo* info) {
  const OrtApi& api = ort();
  const MemoryKey k = key_of(info);
  const char* name = nullptr;
  int id = 0;
  check(api.MemoryInfoGetName(info, &name));
  check(api.MemoryInfoGetId(info, &id));
  char vendor[16];
  std::snprintf(vendor, sizeof vendor, "0x%04X", k.vendor_id);
  std::string type = "unknown device type", memory = "unknown";
  for (const OrtDeviceName& n : kOrtDeviceNames) {
    if (n.type == k.device_type) type = upper(n.name);
  }
  for (const MemoryTypeName& n : kMemoryTypeNames) {
    if (n.type == k.memory_type) memory = upper(n.name);
  }
  return std::string(name ? name : "?") + ":" + std::to_string(id) + " (" + type + ", vendor " + vendor + ", " +
         memory + " memory)";
}

std::string describe(DLDevice device) {
  const char* name = dl_device_type_name(device.device_type);
  return (name ? std::string(name) : "device type " + std::to_string(static_cast<int>(device.device_type))) + ":" +
         std::to_string(device.device_id);
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

DLDevice dl_device_from_name(const std::string& name) {
  const size_t colon = name.find(':');
  const std::string kind = name.substr(0, colon);
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
  for (const DlName& row : kDlNames) {
    if (kind == row.name) return DLDevice{row.type, id};
  }
  throw Error(ErrorKind::kInvalidArgument, "unknown device '" + name + "' (expected e.g. 'cpu', 'cuda:0', 'ext_dev:0')");
}

const char* onnxruntime_device_name(DLDeviceType type) {
  const DlName* row = dl_row(type);
  return row ? row->onnxruntime : nullptr;
}

std::pair<const char*, int> onnxruntime_binding_device(const OrtMemoryInfo* memory) {
  if (host_accessible(memory)) return {"cpu", 0};
  const OrtApi& api = ort();
  OrtMemoryInfoDeviceType type = OrtMemoryInfoDeviceType_CPU;
  api.MemoryInfoGetDeviceType(memory, &type);
  int id = 0;
  check(api.MemoryInfoGetId(memory, &id));
  if (type == OrtMemoryInfoDeviceType_GPU) return {api.MemoryInfoGetVendorId(memory) == kVendorNvidia ? "cuda" : "gpu", id};
  return {type == OrtMemoryInfoDeviceType_NPU ? "npu" : "cpu", id};
}

const OrtEpDevice* find_ep_device(OrtEnv* e, const std::string& ep_name, int64_t hardware_type, int64_t vendor_id,
                                  int64_t device_id) {
  const OrtApi& api = ort();
  const OrtEpDevice* const* devices = nullptr;
  size_t count = 0;
  check(api.GetEpDevices(e, &devices, &count));
  for (size_t i = 0; i < count; ++i) {
    const OrtHardwareDevice* d = api.EpDevice_Device(devices[i]);
    if (ep_name == api.EpDevice_EpName(devices[i]) && static_cast<int64_t>(api.HardwareDevice_Type(d)) == hardware_type &&
        static_cast<int64_t>(api.HardwareDevice_VendorId(d)) == vendor_id &&
        static_cast<int64_t>(api.HardwareDevice_DeviceId(d)) == device_id) {
      return devices[i];
    }
  }
  throw Error(ErrorKind::kInvalidArgument, "OrtEpDevice of EP '" + ep_name + "' is not among the environment's EP devices");
}

std::vector<const OrtEpDevice*> ep_devices_of(OrtEnv* e, const std::string& ep_name) {
  const OrtApi& api = ort();
  const OrtEpDevice* const* devices = nullptr;
  size_t count = 0;
  check(api.GetEpDevices(e, &devices, &count));
  std::vector<const OrtEpDevice*> mine;
  for (size_t i = 0; i < count; ++i) {
    if (ep_name == api.EpDevice_EpName(devices[i])) mine.push_back(devices[i]);
  }
  return mine;
}

bool onnxruntime_wraps(DLDeviceType type) { return type == kDLCPU || type == kDLCUDA || type == kDLROCM; }

OrtMemoryInfoDeviceType ort_device_type_from_name(const std::string& name) {
  for (const OrtDeviceName& n : kOrtDeviceNames) {
    if (name == n.name) return n.type;
  }
  throw Error(ErrorKind::kInvalidArgument, "unknown ORT device type '" + name + "' (cpu, gpu, fpga, npu)");
}

OrtDeviceMemoryType memory_type_from_name(const std::string& name) {
  for (const MemoryTypeName& n : kMemoryTypeNames) {
    if (name == n.name) return n.type;
  }
  throw Error(ErrorKind::kInvalidArgument, "unknown memory type '" + name + "' (default, host_accessible)");
}

bool same_memory(const OrtMemoryInfo* a, const OrtMemoryInfo* b) {
  if (a == b) return true;
  if (a == nullptr || b == nullptr) return false;
  const MemoryKey ka = key_of(a), kb = key_of(b);
  int ida = 0, idb = 0;
  check(ort().MemoryInfoGetId(a, &ida));
  check(ort().MemoryInfoGetId(b, &idb));
  return ka.device_type == kb.device_type && ka.vendor_id == kb.vendor_id && ka.memory_type == kb.memory_type &&
         ida == idb;
}

}  // namespace ortdlpack
