#include "ort.h"

#include <string>

#include "ortdlpack/dtype.h"
#include "ortdlpack/error.h"
#include "ortdlpack/handle.h"

namespace ortdlpack::detail {

MemoryFields memory_fields(const OrtMemoryInfo* info) {
  const OrtApi& api = ort();
  MemoryFields f;
  ortdlpack::check(api.MemoryInfoGetName(info, &f.name));
  ortdlpack::check(api.MemoryInfoGetId(info, &f.device_id));
  api.MemoryInfoGetDeviceType(info, &f.device_type);
  f.vendor_id = api.MemoryInfoGetVendorId(info);
  f.memory_type = api.MemoryInfoGetDeviceMemType(info);
  if (f.name == nullptr) f.name = "";
  return f;
}

bool is_cpu_memory(const OrtMemoryInfo* info) {
  OrtMemoryInfoDeviceType type{};
  ort().MemoryInfoGetDeviceType(info, &type);
  return type == OrtMemoryInfoDeviceType_CPU && ort().MemoryInfoGetDeviceMemType(info) == OrtDeviceMemoryType_DEFAULT;
}

MemoryId memory_id(const OrtMemoryInfo* info) {
  if (info == nullptr) return {};
  const MemoryFields f = memory_fields(info);
  return {false, f.device_type, f.vendor_id, f.memory_type, f.device_id};
}

bool same_memory(const OrtMemoryInfo* a, const OrtMemoryInfo* b) { return a == b || memory_id(a) == memory_id(b); }

EpDeviceList::EpDeviceList(const OrtEnv* e) { ortdlpack::check(ort().GetEpDevices(e, &devices_, &count_)); }

const OrtMemoryInfo* default_memory(const OrtEpDevice* device) {
  return ort().EpDevice_MemoryInfo(device, OrtDeviceMemoryType_DEFAULT);
}

OrtAllocator* default_allocator() {
  OrtAllocator* allocator = nullptr;
  ortdlpack::check(ort().GetAllocatorWithDefaultOptions(&allocator));
  return allocator;
}

void check(OrtStatus* status, const std::string& context) {
  if (status == nullptr) return;
  try {
    ortdlpack::check(status);
  } catch (const Error& e) {
    throw e.reworded(context + ": " + e.what());
  }
}

void check_holds(ONNXTensorElementDataType requested, ONNXTensorElementDataType held, const char* what) {
  if (held == requested) return;
  const std::string as = has_dlpack_dtype(held) ? onnx_dtype_name(held) : "C element type " + std::to_string(held);
  throw Error(ErrorKind::kUnsupported, std::string(what) + ": ONNX Runtime " + ort_version() + " holds " +
                                           onnx_dtype_name(requested) + " tensors as " + as + ", so it cannot carry " +
                                           onnx_dtype_name(requested) + " (its C API and ONNX number the type apart)");
}

bool failed(OrtStatus* status) noexcept {
  const Owned<OrtStatus> release(status);
  return status != nullptr;
}

}  // namespace ortdlpack::detail
