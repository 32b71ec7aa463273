#include "ortdlpack/run_plan.h"

#include <string>
#include <utility>

#include "ortdlpack/api.h"
#include "ortdlpack/device.h"
#include "ortdlpack/dtype.h"
#include "ortdlpack/ep_library.h"
#include "ortdlpack/error.h"
#include "ortdlpack/stream.h"
#include "ortdlpack/transfer.h"
#include "tensor_meta.h"

namespace ortdlpack {
namespace {

[[noreturn]] void invalid(const std::string& message) { throw Error(ErrorKind::kInvalidArgument, "run: " + message); }

OrtAllocator* default_allocator() {
  OrtAllocator* allocator = nullptr;
  check(ort().GetAllocatorWithDefaultOptions(&allocator));
  return allocator;
}

std::string shape_string(const int64_t* shape, size_t ndim, const std::vector<std::string>* names = nullptr) {
  std::string s = "[";
  for (size_t i = 0; i < ndim; ++i) {
    if (i) s += ",";
    if (shape[i] >= 0) {
      s += std::to_string(shape[i]);
    } else {
      s += names && i < names->size() && !(*names)[i].empty() ? (*names)[i] : std::string("?");
    }
  }
  return s + "]";
}

std::string tensor_string(const detail::TensorMeta& m) {
  return std::string(dtype_name(m.type)) + shape_string(m.shape, m.ndim);
}

// --- SessionInfo from ORT ----------------------------------------------------------------------------------------

// Fills `io` from ORT's type info (which it releases).
void read_type_info(OrtTypeInfo* type_info, IoInfo& io) {
  const OrtApi& api = ort();
  const Owned<OrtTypeInfo> release(type_info);
  ONNXType onnx_type = ONNX_TYPE_UNKNOWN;
  check(api.GetOnnxTypeFromTypeInfo(type_info, &onnx_type));
  io.is_tensor = onnx_type == ONNX_TYPE_TENSOR;
  if (!io.is_tensor) return;
  const OrtTensorTypeAndShapeInfo* tensor_info = nullptr;
  check(api.CastTypeInfoToTensorInfo(type_info, &tensor_info));
  check(api.GetTensorElementType(tensor_info, &io.element_type));
  size_t ndim = 0;
  check(api.GetDimensionsCount(tensor_info, &ndim));
  io.shape.resize(ndim);
  check(api.GetDimensions(tensor_info, io.shape.data(), ndim));
  std::vector<const char*> names(ndim, nullptr);
  check(api.GetSymbolicDimensions(tensor_info, names.data(), ndim));
  io.dim_names.resize(ndim);
  for (size_t i = 0; i < ndim; ++i) io.dim_names[i] = names[i] ? names[i] : "";
  // ORT < 1.24 cannot tell "no shape" from "scalar": a rank-0 declaration then accepts any rank.
#if ORT_API_VERSION >= 24
  io.has_shape = ort_api_version() >= 24 ? api.TensorTypeAndShape_HasShape(tensor_info) : ndim > 0;
#else
  io.has_shape = ndim > 0;
#endif
}

using GetName = OrtStatus*(ORT_API_CALL*)(const OrtSession*, size_t, OrtAllocator*, char**);
using GetTypeInfo = OrtStatus*(ORT_API_CALL*)(const OrtSession*, size_t, OrtTypeInfo**);
using GetMemory = OrtStatus*(ORT_API_CALL*)(const OrtSession*, const OrtMemoryInfo**, size_t);

std::vector<IoInfo> read_ios(const OrtSession* session, size_t count, GetName get_name, GetTypeInfo get_type,
                             GetMemory get_memory) {
  const OrtApi& api = ort();
  OrtAllocator* allocator = default_allocator();
  std::vector<IoInfo> ios(count);
  for (size_t i = 0; i < count; ++i) {
    char* name = nullptr;
    check(get_name(session, i, allocator, &name));
    ios[i].name = name;
    check(api.AllocatorFree(allocator, name));
    OrtTypeInfo* type_info = nullptr;
    check(get_type(session, i, &type_info));
    read_type_info(type_info, ios[i]);
  }
  // Where the session's EPs want the inputs / produce the outputs. Unknown (NULL) is allowed: treated as host.
  std::vector<const OrtMemoryInfo*> memory(count, nullptr);
  if (count != 0) {
    if (OrtStatus* status = get_memory(session, memory.data(), count)) {
      api.ReleaseStatus(status);
      memory.assign(count, nullptr);
    }
  }
  for (size_t i = 0; i < count; ++i) ios[i].memory = memory[i];
  return ios;
}

// --- SessionInfo from declarations -------------------------------------------------------------------------------

// The OrtMemoryInfo the fields describe, or NULL when neither ORT nor an EP device of the env knows the name.
// ORT maps its built-in allocator names ("Cpu", "Cuda", "CudaPinned", ...) to devices itself (CreateMemoryInfo);
// a plugin EP's memory is found among the env's EP devices by name, vendor and memory type, which gives its device
// type for CreateMemoryInfo_V2.
std::shared_ptr<OrtMemoryInfo> resolve(const IoDeclaration::Memory& m) {
  const OrtApi& api = ort();
  OrtMemoryInfo* info = nullptr;
  if (OrtStatus* status = api.CreateMemoryInfo(m.name.c_str(), m.allocator_type, m.device_id, m.mem_type, &info)) {
    api.ReleaseStatus(status);
    info = nullptr;
  }
  if (info == nullptr) {
    const OrtEpDevice* const* devices = nullptr;
    size_t count = 0;
    check(api.GetEpDevices(env(), &devices, &count));
    for (size_t i = 0; i < count && info == nullptr; ++i) {
      const OrtMemoryInfo* ep_memory = api.EpDevice_MemoryInfo(devices[i], m.device_mem_type);
      if (ep_memory == nullptr) continue;
      const char* name = nullptr;
      check(api.MemoryInfoGetName(ep_memory, &name));
      if (m.name != name || api.MemoryInfoGetVendorId(ep_memory) != m.vendor_id) continue;
      OrtMemoryInfoDeviceType device_type = OrtMemoryInfoDeviceType_CPU;
      api.MemoryInfoGetDeviceType(ep_memory, &device_type);
      check(api.CreateMemoryInfo_V2(m.name.c_str(), device_type, m.vendor_id, m.device_id, m.device_mem_type, 0,
                                    m.allocator_type, &info));
    }
  }
  return std::shared_ptr<OrtMemoryInfo>(info, Releaser<OrtMemoryInfo>{});
}

IoInfo from_declaration(const IoDeclaration& d) {
  IoInfo io;
  io.name = d.name;
  const std::string prefix = "tensor(";
  io.is_tensor = d.type.size() > prefix.size() && d.type.compare(0, prefix.size(), prefix) == 0 && d.type.back() == ')';
  if (!io.is_tensor) return io;
  io.element_type = dtype_from_onnx_name(d.type.substr(prefix.size(), d.type.size() - prefix.size() - 1));
  io.has_shape = d.shape.has_value();
  if (io.has_shape) io.shape = *d.shape;
  io.dim_names = d.dim_names;
  io.dim_names.resize(io.shape.size());
  return io;
}

// --- checks ------------------------------------------------------------------------------------------------------

std::string names_of(const std::vector<IoInfo>& ios) {
  std::string s;
  for (const IoInfo& io : ios) s += (s.empty() ? "'" : ", '") + io.name + "'";
  return s.empty() ? "(none)" : s;
}

// Checks a tensor against the model's declaration; `role` is "input" or "output destination".
void check_against(const Tensor& tensor, const IoInfo& io, const char* role) {
  if (!tensor) invalid(std::string(role) + " '" + io.name + "' is an empty Tensor");
  if (!io.is_tensor) {
    invalid(std::string(role) + " '" + io.name + "' is not a tensor in the model (sequences, maps and optionals "
                                                 "cannot be bound from DLPack)");
  }
  const detail::TensorMeta meta(tensor.ort_value());
  const auto mismatch = [&](const std::string& what) {
    invalid(std::string(role) + " '" + io.name + "': " + what + ": the model expects " + io.describe() + ", got " +
            tensor_string(meta));
  };
  if (meta.type != io.element_type) mismatch("element type mismatch");
  if (!io.has_shape) return;
  if (meta.ndim != io.shape.size()) mismatch("rank mismatch");
  for (size_t i = 0; i < meta.ndim; ++i) {
    if (io.shape[i] >= 0 && meta.shape[i] != io.shape[i]) mismatch("dimension " + std::to_string(i) + " mismatch");
  }
}

bool plain_cpu(const OrtMemoryInfo* m) {
  OrtMemoryInfoDeviceType type = OrtMemoryInfoDeviceType_CPU;
  ort().MemoryInfoGetDeviceType(m, &type);
  return type == OrtMemoryInfoDeviceType_CPU;
}

std::string produced_in(const IoInfo& io) {
  return io.memory != nullptr ? describe(io.memory) : std::string("host memory");
}

// Element types every array library has (what a host-only binding such as numpy can carry).
bool common_type(ONNXTensorElementDataType type) {
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

// The memories (DEFAULT and HOST_ACCESSIBLE) of EP devices.
std::vector<const OrtMemoryInfo*> memories_of(const std::vector<const OrtEpDevice*>& devices) {
  std::vector<const OrtMemoryInfo*> out;
  for (const OrtEpDevice* d : devices) {
    for (OrtDeviceMemoryType type : {OrtDeviceMemoryType_DEFAULT, OrtDeviceMemoryType_HOST_ACCESSIBLE}) {
      if (const OrtMemoryInfo* m = ort().EpDevice_MemoryInfo(d, type)) out.push_back(m);
    }
  }
  return out;
}

}  // namespace

std::string IoInfo::describe() const {
  if (!is_tensor) return "a non-tensor value";
  return std::string(dtype_name(element_type)) + (has_shape ? shape_string(shape.data(), shape.size(), &dim_names)
                                                            : std::string("[any shape]"));
}

SessionInfo::SessionInfo(const OrtSession* session, const std::vector<const OrtEpDevice*>& ep_devices)
    : ep_memory_(memories_of(ep_devices)) {
  if (session == nullptr) throw Error(ErrorKind::kInvalidArgument, "Session: OrtSession is NULL");
  const OrtApi& api = ort();
  size_t n_in = 0, n_out = 0;
  check(api.SessionGetInputCount(session, &n_in));
  check(api.SessionGetOutputCount(session, &n_out));
  inputs_ = read_ios(session, n_in, api.SessionGetInputName, api.SessionGetInputTypeInfo,
                     api.SessionGetMemoryInfoForInputs);
  outputs_ = read_ios(session, n_out, api.SessionGetOutputName, api.SessionGetOutputTypeInfo,
                      api.SessionGetMemoryInfoForOutputs);
}

SessionInfo::SessionInfo(const std::vector<IoDeclaration>& inputs, const std::vector<IoDeclaration>& outputs,
                         const std::vector<std::string>& providers)
    : cpu_only_(providers == std::vector<std::string>{"CPUExecutionProvider"}) {
  std::vector<const OrtEpDevice*> mine;
  for (const std::string& p : providers) {
    if (ships_with_ort(p)) {
      try {
        ensure_ep(p);  // a library shipped with ORT (CUDA, ...): registered now, once
      } catch (const Error&) {  // not there: the session's EP keeps its memory to itself, as before
      }
    }
    const std::vector<const OrtEpDevice*> of = ep_devices_of(env(), p);
    mine.insert(mine.end(), of.begin(), of.end());
  }
  ep_memory_ = memories_of(mine);
  const auto convert = [this](const std::vector<IoDeclaration>& declarations, std::vector<IoInfo>& ios) {
    for (const IoDeclaration& d : declarations) {
      ios.push_back(from_declaration(d));
      if (!d.memory) continue;
      std::shared_ptr<OrtMemoryInfo> memory = resolve(*d.memory);
      ios.back().memory = memory.get();
      if (memory) owned_memory_.push_back(std::move(memory));
    }
  };
  convert(inputs, inputs_);
  convert(outputs, outputs_);
}

bool SessionInfo::writes(const IoInfo& io, const OrtMemoryInfo* memory) const {
  if (host_accessible(memory)) return true;
  if (io.memory != nullptr && same_memory(io.memory, memory)) return true;
  for (const OrtMemoryInfo* m : ep_memory_) {
    if (same_memory(m, memory)) return true;
  }
  return false;
}

int SessionInfo::input_index(const std::string& name) const noexcept {
  for (size_t i = 0; i < inputs_.size(); ++i) {
    if (inputs_[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

int SessionInfo::output_index(const std::string& name) const noexcept {
  for (size_t i = 0; i < outputs_.size(); ++i) {
    if (outputs_[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

RunPlan plan_run(const SessionInfo& info, const Feeds& feeds, const std::vector<std::string>& output_names,
                 const RunOptions& options) {
  const std::vector<IoInfo>& inputs = info.inputs();
  const std::vector<IoInfo>& outputs = info.outputs();
  const OrtMemoryInfo* const cpu = memory_info(DLDevice{kDLCPU, 0});
  RunPlan plan;
  bool host_only = true;

  // --- inputs: each model input exactly once, matching its declaration.
  std::vector<char> fed(inputs.size(), 0);
  plan.inputs.reserve(feeds.size());
  for (const auto& [name, tensor] : feeds) {
    const int i = info.input_index(name);
    if (i < 0) invalid("unknown input '" + name + "' (the model's inputs are " + names_of(inputs) + ")");
    if (fed[i]) invalid("input '" + name + "' is fed twice");
    fed[i] = 1;
    check_against(tensor, inputs[i], "input");
    plan.inputs.push_back(RunPlan::Input{i, tensor, Tensor()});
  }
  std::string missing;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!fed[i]) missing += (missing.empty() ? "'" : ", '") + inputs[i].name + "' (" + inputs[i].describe() + ")";
  }
  if (!missing.empty()) invalid("missing input " + missing);

  // --- outputs: known, distinct names; destinations only for requested outputs.
  if (output_names.empty()) {
    for (size_t i = 0; i < outputs.size(); ++i) plan.outputs.push_back(RunPlan::Output{static_cast<int>(i), Tensor(), nullptr});
  } else {
    std::vector<char> requested(outputs.size(), 0);
    for (const std::string& name : output_names) {
      const int i = info.output_index(name);
      if (i < 0) invalid("unknown output '" + name + "' (the model's outputs are " + names_of(outputs) + ")");
      if (requested[i]) invalid("output '" + name + "' is requested twice");
      requested[i] = 1;
      plan.outputs.push_back(RunPlan::Output{i, Tensor(), nullptr});
    }
  }
  for (const auto& [name, tensor] : options.destinations) {
    const int i = info.output_index(name);
    if (i < 0) invalid("destination for unknown output '" + name + "' (the model's outputs are " + names_of(outputs) + ")");
    RunPlan::Output* out = nullptr;
    for (RunPlan::Output& o : plan.outputs) {
      if (o.index == i) out = &o;
    }
    if (out == nullptr) invalid("destination for output '" + name + "', which is not requested");
    if (out->destination) invalid("output '" + name + "' has two destinations");
    check_against(tensor, outputs[i], "output destination");
    if (tensor.read_only()) invalid("output destination '" + name + "' is read-only: ORT would write into it");
    const OrtMemoryInfo* memory = tensor.memory_info();
    if (!info.writes(outputs[i], memory)) {
      throw Error(ErrorKind::kUnsupported, "run: output destination '" + name + "' is in " + describe(memory) +
                                               ", which the session cannot write: it produces '" + name + "' in " +
                                               produced_in(outputs[i]) + " and has no execution provider on that "
                                               "device (a destination is never copied)");
    }
    out->destination = tensor;
    host_only = false;
  }

  // --- where outputs without a destination are allocated.
  if (options.output_memory != nullptr && options.output_device.has_value()) {
    invalid("RunOptions: set output_memory or output_device, not both");
  }
  const OrtMemoryInfo* requested = options.output_memory ? options.output_memory
                                   : options.output_device ? memory_info(*options.output_device)
                                                           : nullptr;
  for (RunPlan::Output& out : plan.outputs) {
    if (out.destination) continue;
    const IoInfo& io = outputs[static_cast<size_t>(out.index)];
    if (requested != nullptr && !info.writes(io, requested)) {
      invalid("output '" + io.name + "' cannot be placed in " + describe(requested) + ": the session produces it in " +
              produced_in(io) + " and has no execution provider on that device");
    }
    out.memory = requested ? requested : io.memory ? io.memory : cpu;
    host_only = host_only && plain_cpu(out.memory) && io.is_tensor && common_type(io.element_type);
  }

  // --- staging: a host session cannot read device memory, and ORT does not copy such a feed itself: it hands the
  // device pointer to a CPU kernel (seen with ORT 1.29 and a plugin EP's memory). Such feeds are copied to the host
  // through the env's data transfer; every other feed is bound where it is.
  for (RunPlan::Input& in : plan.inputs) {
    const IoInfo& io = inputs[static_cast<size_t>(in.index)];
    const OrtMemoryInfo* memory = in.feed.memory_info();
    if ((io.memory == nullptr || host_accessible(io.memory)) && !host_accessible(memory)) {
      in.staged = to(in.feed, cpu);
      memory = cpu;
    }
    host_only = host_only && plain_cpu(memory) && common_type(io.element_type);
  }
  plan.host_only = host_only;
  return plan;
}

void order_before_run(const RunPlan& plan, const CallerStream* stream) {
  std::vector<const Tensor*> tensors;
  tensors.reserve(plan.inputs.size() + plan.outputs.size());
  for (const RunPlan::Input& in : plan.inputs) tensors.push_back(&in.bound());
  for (const RunPlan::Output& out : plan.outputs) {
    if (out.destination) tensors.push_back(&out.destination);
  }
  order_before_run(tensors, stream);
}

}  // namespace ortdlpack
