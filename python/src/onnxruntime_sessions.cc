// Sessions as onnxruntime's Python API describes them (onnxruntime_sessions.h).
#include "onnxruntime_sessions.h"

#include <memory>
#include <string>
#include <utility>

#include "ep_library.h"
#include "ort.h"
#include "ortdlpack/api.h"
#include "ortdlpack/device.h"
#include "ortdlpack/dtype.h"
#include "ortdlpack/ep.h"
#include "ortdlpack/error.h"
#include "ortdlpack/handle.h"

namespace ortdlpack::py {
namespace {

// The OrtMemoryInfo the fields describe, or NULL when neither ORT nor an EP device of the env knows the name.
// ORT maps its built-in allocator names ("Cpu", "Cuda", "CudaPinned", ...) to devices itself (CreateMemoryInfo);
// a plugin EP's memory is found among the env's EP devices by name, vendor and memory type, which gives its device
// type for CreateMemoryInfo_V2.
std::shared_ptr<OrtMemoryInfo> resolve(const IoDeclaration::Memory& m) {
  const OrtApi& api = ort();
  OrtMemoryInfo* info = nullptr;
  if (detail::failed(api.CreateMemoryInfo(m.name.c_str(), m.allocator_type, m.device_id, m.mem_type, &info))) {
    info = nullptr;
  }
  for (const OrtEpDevice* device : detail::env_ep_devices()) {
    if (info != nullptr) break;
    const OrtMemoryInfo* ep_memory = api.EpDevice_MemoryInfo(device, m.device_mem_type);
    if (ep_memory == nullptr) continue;
    const detail::MemoryFields f = detail::memory_fields(ep_memory);
    if (m.name != f.name || f.vendor_id != m.vendor_id) continue;
    check(api.CreateMemoryInfo_V2(m.name.c_str(), f.device_type, m.vendor_id, m.device_id, m.device_mem_type, 0,
                                  m.allocator_type, &info));
  }
  return std::shared_ptr<OrtMemoryInfo>(info, Releaser<OrtMemoryInfo>{});
}

IoInfo from_declaration(const IoDeclaration& d) {
  IoInfo io;
  io.name = d.name;
  io.onnx_type = d.type;
  const std::string prefix = "tensor(";
  io.is_tensor = d.type.size() > prefix.size() && d.type.compare(0, prefix.size(), prefix) == 0 && d.type.back() == ')';
  if (!io.is_tensor) return io;
  io.element_type = dtype_from_onnx_name(d.type.substr(prefix.size(), d.type.size() - prefix.size() - 1));
  // onnxruntime's NodeArg shows both a scalar and a value of unknown rank as []: any rank is accepted then, as
  // onnxruntime's own run does (ORT runs a scalar input fed another rank and only logs VerifyOutputSizes).
  io.has_shape = d.shape.has_value() && !d.shape->empty();
  if (io.has_shape) io.shape = *d.shape;
  io.dim_names = d.dim_names;
  io.dim_names.resize(io.shape.size());
  return io;
}

}  // namespace

bool numpy_has(ONNXTensorElementDataType type) {
  switch (type) {
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL:
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT8:
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT16:
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32:
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64:
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT8:
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT16:
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT32:
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT64:
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16:
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT:
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE:
      return true;
    default:
      return false;
  }
}

SessionInfo session_info(const std::vector<IoDeclaration>& inputs, const std::vector<IoDeclaration>& outputs,
                         const std::vector<IoDeclaration>& initializers, const std::vector<std::string>& providers) {
  std::vector<const OrtEpDevice*> mine;
  for (const std::string& p : providers) {
    if (detail::ships_with_ort(p)) {
      try {
        ensure_ep(p);           // a library shipped with ORT (CUDA, ...): registered now, once
      } catch (const Error&) {  // not there: the session's EP keeps its memory to itself, as before
      }
    }
    const std::vector<const OrtEpDevice*> of = detail::ep_devices_of(p);
    mine.insert(mine.end(), of.begin(), of.end());
  }
  std::vector<std::shared_ptr<OrtMemoryInfo>> owned;
  const auto convert = [&owned](const std::vector<IoDeclaration>& declarations) {
    std::vector<IoInfo> ios;
    for (const IoDeclaration& d : declarations) {
      ios.push_back(from_declaration(d));
      if (!d.memory) continue;
      std::shared_ptr<OrtMemoryInfo> memory = resolve(*d.memory);
      ios.back().memory = memory.get();
      if (memory) owned.push_back(std::move(memory));
    }
    return ios;
  };
  std::vector<IoInfo> in = convert(inputs);
  std::vector<IoInfo> out = convert(outputs);
  std::vector<IoInfo> init = convert(initializers);
  return SessionInfo(std::move(in), std::move(out), std::move(init), mine, std::move(owned));
}

bool host_outputs(const SessionInfo& info) {
  for (const IoInfo& io : info.outputs()) {
    if (!io.has_dlpack_form()) continue;
    if ((io.memory != nullptr && !detail::is_cpu_memory(io.memory)) || !numpy_has(io.element_type)) return false;
  }
  return true;
}

bool runs_with_values(const RunPlan& plan) {
  if (plan.needs_values()) return true;
  for (const RunPlan::Output& out : plan.outputs) {
    if (out.destination || !detail::is_cpu_memory(out.memory) || !numpy_has(out.io->element_type)) return false;
  }
  for (const RunPlan::Input& in : plan.inputs) {
    if (!detail::is_cpu_memory(in.bound().memory_info())) return false;
  }
  return true;
}

}  // namespace ortdlpack::py
