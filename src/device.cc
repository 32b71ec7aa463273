// ORT memory <-> DLPack devices: the EP table's memory rows (ep_table.h), then the registered mappings.
#include "ortdlpack/device.h"

#include <cstdlib>
#include <map>
#include <mutex>
#include <shared_mutex>
#include <utility>
#include <vector>

#include "ep_table.h"
#include "ort.h"
#include "ortdlpack/api.h"
#include "ortdlpack/error.h"

namespace ortdlpack {
namespace {

using detail::MemoryFields;

// Whether a registered mapping covers memory with fields `m` (vendor 0: by name too, as the EP table matches).
bool covers(const DeviceMapping& r, const MemoryFields& m) {
  return r.device_type == m.device_type && r.vendor_id == m.vendor_id && r.memory_type == m.memory_type &&
         (r.vendor_id != 0 || r.name == m.name);
}

MemoryFields fields_of(const DeviceMapping& r) {
  MemoryFields f;
  f.name = r.name.c_str();
  f.device_type = r.device_type;
  f.vendor_id = r.vendor_id;
  f.memory_type = r.memory_type;
  return f;
}

// Registered mappings. Read on every export of memory no table row owns, written rarely: a reader-writer lock.
struct Registry {
  std::shared_mutex mutex;
  std::vector<DeviceMapping> rows;

  bool find(const MemoryFields& m, DLDeviceType* out) {
    std::shared_lock<std::shared_mutex> lock(mutex);
    for (const DeviceMapping& r : rows) {
      if (covers(r, m)) {
        *out = r.dl_device_type;
        return true;
      }
    }
    return false;
  }
};
Registry& registry() {
  static auto* r = new Registry();  // never destroyed: lookups may run during exit
  return *r;
}

// On a miss, EPs registered in the env since the last look may advertise a mapping: pick those up.
bool refresh_from_env() { return register_ep_devices(env()) > 0; }

const OrtMemoryInfo* create_memory_info(const char* name, OrtMemoryInfoDeviceType type, uint32_t vendor, int32_t id,
                                        OrtDeviceMemoryType memory_type) {
  OrtMemoryInfo* info = nullptr;
  check(ort().CreateMemoryInfo_V2(name, type, vendor, id, memory_type, 0, OrtDeviceAllocator, &info));
  return info;
}

// A new OrtMemoryInfo for `device` (the caller caches it).
const OrtMemoryInfo* create_memory_info(DLDevice device) {
  if (device.device_type == kDLCPU) {
    OrtMemoryInfo* info = nullptr;
    check(ort().CreateCpuMemoryInfo(OrtDeviceAllocator, OrtMemTypeDefault, &info));
    return info;
  }
  // CUDA managed memory has no ORT memory type of its own; CUDA kernels read it as device memory, so ORT holds it
  // as CUDA memory (and exports it again as kDLCUDA).
  const DLDeviceType type = device.device_type == kDLCUDAManaged ? kDLCUDA : device.device_type;
  const detail::MemoryRow* row = nullptr;
  if (const detail::EpRow* ep = detail::owner_of(type, &row)) {
    return create_memory_info(row->name, row->device_type, ep->vendor_id, device.device_id, row->memory_type);
  }
  for (int attempt = 0; attempt < 2; ++attempt) {
    {
      std::shared_lock<std::shared_mutex> lock(registry().mutex);
      for (const DeviceMapping& m : registry().rows) {
        if (m.dl_device_type == device.device_type) {
          return create_memory_info(m.name.c_str(), m.device_type, m.vendor_id, device.device_id, m.memory_type);
        }
      }
    }
    if (attempt == 0 && !refresh_from_env()) break;
  }
  throw Error(ErrorKind::kUnsupported, "DLPack device " + describe_device(device) +
                                           " has no ONNX Runtime memory mapped to it (see ortdlpack::register_device)");
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

}  // namespace

DLDevice to_dlpack_device(const OrtMemoryInfo* info) {
  if (info == nullptr) throw Error(ErrorKind::kInvalidArgument, "OrtMemoryInfo is NULL");
  const MemoryFields m = detail::memory_fields(info);
  if (m.device_type == OrtMemoryInfoDeviceType_CPU && m.memory_type == OrtDeviceMemoryType_DEFAULT) {
    return DLDevice{kDLCPU, 0};
  }
  const detail::MemoryRow* row = nullptr;
  if (detail::owner_of(m, &row) != nullptr) return DLDevice{row->dl_type, m.device_id};
  // Host-accessible memory of a device without a host DLPack type of its own is ordinary host memory.
  if (m.memory_type == OrtDeviceMemoryType_HOST_ACCESSIBLE) return DLDevice{kDLCPU, 0};
  DLDeviceType registered{};
  if (registry().find(m, &registered) || (refresh_from_env() && registry().find(m, &registered))) {
    return DLDevice{registered, m.device_id};
  }
  throw Error(ErrorKind::kUnsupported,
              "ONNX Runtime memory " + describe_memory(info) +
                  " has no DLPack device: no framework is known to read it (an EP makes it exportable by "
                  "advertising '" +
                  kEpMetadataDlpackDeviceType + "', or call ortdlpack::register_device)");
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
  OrtMemoryInfoDeviceType type{};
  ort().MemoryInfoGetDeviceType(info, &type);
  return type == OrtMemoryInfoDeviceType_CPU ||
         ort().MemoryInfoGetDeviceMemType(info) == OrtDeviceMemoryType_HOST_ACCESSIBLE;
}

void register_device(const DeviceMapping& m) {
  const std::string what = "register_device(" + m.name + "): ";
  const char* type_name = device_type_name(m.dl_device_type);
  if (m.dl_device_type == kDLCPU || type_name == nullptr) {
    throw Error(ErrorKind::kInvalidArgument,
                what + "invalid DLPack device type " + std::to_string(static_cast<int>(m.dl_device_type)));
  }
  if (m.device_type == OrtMemoryInfoDeviceType_CPU && m.memory_type == OrtDeviceMemoryType_DEFAULT) {
    throw Error(ErrorKind::kInvalidArgument, what + "CPU memory is always kDLCPU");
  }
  const detail::MemoryRow* row = nullptr;
  if (const detail::EpRow* ep = detail::owner_of(fields_of(m), &row)) {
    throw Error(ErrorKind::kInvalidArgument, what + "that memory is built in as " +
                                                 describe_device(DLDevice{row->dl_type, 0}) + " (" + ep->ep_name + ")");
  }
  if (const detail::EpRow* ep = detail::owner_of(m.dl_device_type, &row)) {
    // Labelling foreign memory as CUDA/ROCm/WebGPU/... would let those frameworks dereference it.
    throw Error(ErrorKind::kInvalidArgument, what + describe_device(DLDevice{m.dl_device_type, 0}) +
                                                 " is reserved for the memory of " + ep->ep_name);
  }
  Registry& reg = registry();
  std::unique_lock<std::shared_mutex> lock(reg.mutex);
  for (const DeviceMapping& r : reg.rows) {
    const bool same = covers(r, fields_of(m));
    if (same && r.dl_device_type == m.dl_device_type && r.name == m.name) return;
    if (same || r.dl_device_type == m.dl_device_type) {
      throw Error(ErrorKind::kInvalidArgument, what + "conflicts with the mapping registered for '" + r.name + "' (" +
                                                   describe_device(DLDevice{r.dl_device_type, 0}) + ")");
    }
  }
  reg.rows.push_back(m);
}

bool unregister_device(OrtMemoryInfoDeviceType device_type, uint32_t vendor_id, OrtDeviceMemoryType memory_type,
                       const std::string& name) {
  MemoryFields key;
  key.name = name.c_str();
  key.device_type = device_type;
  key.vendor_id = vendor_id;
  key.memory_type = memory_type;
  Registry& reg = registry();
  std::unique_lock<std::shared_mutex> lock(reg.mutex);
  for (auto it = reg.rows.begin(); it != reg.rows.end(); ++it) {
    if (!covers(*it, key)) continue;
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
    reg.rows.erase(it);
    return true;
  }
  return false;
}

int register_ep_devices(OrtEnv* e) {
  const OrtApi& api = ort();
  int added = 0;
  for (const OrtEpDevice* d : detail::env_ep_devices(e)) {
    const OrtKeyValuePairs* metadata = api.EpDevice_EpMetadata(d);
    const char* value = metadata != nullptr ? api.GetKeyValue(metadata, kEpMetadataDlpackDeviceType) : nullptr;
    const OrtMemoryInfo* info = detail::default_memory(d);
    if (value == nullptr || info == nullptr) continue;
    char* end = nullptr;
    const long dl_type = std::strtol(value, &end, 10);
    if (end == value || *end != '\0') continue;
    const MemoryFields m = detail::memory_fields(info);
    DLDeviceType existing{};
    if (detail::owner_of(m) != nullptr || registry().find(m, &existing)) continue;
    register_device(
        DeviceMapping{m.name, m.device_type, m.vendor_id, m.memory_type, static_cast<DLDeviceType>(dl_type)});
    ++added;
  }
  return added;
}

}  // namespace ortdlpack
