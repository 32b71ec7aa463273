#include "run_plan.h"

#include <algorithm>
#include <string>
#include <utility>

#include "ort.h"
#include "ortdlpack/api.h"
#include "ortdlpack/device.h"
#include "ortdlpack/dtype.h"
#include "ortdlpack/error.h"
#include "ortdlpack/placement.h"
#include "ortdlpack/transfer.h"
#include "stream_order.h"

namespace ortdlpack {
namespace {

[[noreturn]] void invalid(const std::string& message) { throw Error(ErrorKind::kInvalidArgument, "run: " + message); }

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

std::string tensor_string(const Tensor& t) {
  return std::string(dtype_name(t.element_type())) + shape_string(t.shape().data(), t.shape().size());
}

// --- SessionInfo from ORT ----------------------------------------------------------------------------------------

// The type as ONNX spells it (what onnxruntime's NodeArg.type reports): "tensor(float)", "seq(tensor(float))",
// "map(int64,tensor(float))", "optional(seq(tensor(int8)))", "sparse_tensor(float)".
std::string onnx_type_string(const OrtTypeInfo* type_info) {
  const OrtApi& api = ort();
  ONNXType onnx_type = ONNX_TYPE_UNKNOWN;
  check(api.GetOnnxTypeFromTypeInfo(type_info, &onnx_type));
  OrtTypeInfo* inner = nullptr;  // the contained type of a sequence, map or optional (owned below)
  switch (onnx_type) {
    case ONNX_TYPE_TENSOR:
    case ONNX_TYPE_SPARSETENSOR: {
      const OrtTensorTypeAndShapeInfo* tensor_info = nullptr;
      ONNXTensorElementDataType element = ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;
      check(api.CastTypeInfoToTensorInfo(type_info, &tensor_info));
      if (tensor_info != nullptr) check(api.GetTensorElementType(tensor_info, &element));
      return std::string(onnx_type == ONNX_TYPE_TENSOR ? "tensor(" : "sparse_tensor(") + onnx_dtype_name(element) + ")";
    }
    case ONNX_TYPE_SEQUENCE: {
      const OrtSequenceTypeInfo* seq = nullptr;
      check(api.CastTypeInfoToSequenceTypeInfo(type_info, &seq));
      check(api.GetSequenceElementType(seq, &inner));
      const Owned<OrtTypeInfo> release(inner);
      return "seq(" + onnx_type_string(inner) + ")";
    }
    case ONNX_TYPE_MAP: {
      const OrtMapTypeInfo* map = nullptr;
      ONNXTensorElementDataType key = ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;
      check(api.CastTypeInfoToMapTypeInfo(type_info, &map));
      check(api.GetMapKeyType(map, &key));
      check(api.GetMapValueType(map, &inner));
      const Owned<OrtTypeInfo> release(inner);
      return std::string("map(") + onnx_dtype_name(key) + "," + onnx_type_string(inner) + ")";
    }
    case ONNX_TYPE_OPTIONAL: {
      const OrtOptionalTypeInfo* optional = nullptr;
      check(api.CastTypeInfoToOptionalTypeInfo(type_info, &optional));
      check(api.GetOptionalContainedTypeInfo(optional, &inner));
      const Owned<OrtTypeInfo> release(inner);
      return "optional(" + onnx_type_string(inner) + ")";
    }
    case ONNX_TYPE_OPAQUE:
      return "opaque";
    default:
      return "undefined";
  }
}

// Fills `io` from ORT's type info (which it releases).
void read_type_info(OrtTypeInfo* type_info, IoInfo& io) {
  const OrtApi& api = ort();
  const Owned<OrtTypeInfo> release(type_info);
  ONNXType onnx_type = ONNX_TYPE_UNKNOWN;
  check(api.GetOnnxTypeFromTypeInfo(type_info, &onnx_type));
  io.onnx_type = onnx_type_string(type_info);
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
  OrtAllocator* allocator = detail::default_allocator();
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
  if (count != 0 && get_memory != nullptr) {  // (overridable initializers have no memory info)
    if (detail::failed(get_memory(session, memory.data(), count))) memory.assign(count, nullptr);
  }
  for (size_t i = 0; i < count; ++i) ios[i].memory = memory[i];
  return ios;
}

// --- checks ------------------------------------------------------------------------------------------------------

// A check ORT makes too, failed: ORT's code, so a binding raises what ORT's own binding raises for it.
[[noreturn]] void refused(const std::string& message) { throw Error(ORT_INVALID_ARGUMENT, "run: " + message); }

std::string quoted_names(const std::vector<IoInfo>& ios) {
  std::string s;
  for (const IoInfo& io : ios) s += (s.empty() ? "'" : ", '") + io.name + "'";
  return s.empty() ? "(none)" : s;
}

// Checks a tensor against the model's declaration, as ORT does (element type, rank, fixed dimensions; a symbolic
// dimension takes any size: ORT reads its name as a label); `role` is "input" or "output destination".
void check_against(const Tensor& tensor, const IoInfo& io, const char* role) {
  if (!tensor) invalid(std::string(role) + " '" + io.name + "' is an empty Tensor");
  if (!io.has_dlpack_form()) {
    refused(std::string(role) + " '" + io.name + "' is " + io.onnx_type +
            " in the model, which a DLPack tensor cannot be");
  }
  const auto mismatch = [&](const std::string& what) {
    refused(std::string(role) + " '" + io.name + "': " + what + ": the model expects " + io.type_string() + ", got " +
            tensor_string(tensor));
  };
  if (tensor.element_type() != io.element_type) mismatch("element type mismatch");
  if (!io.has_shape) return;
  const ShapeView shape = tensor.shape();
  if (shape.size() != io.shape.size()) mismatch("rank mismatch");
  for (size_t i = 0; i < shape.size(); ++i) {
    if (io.shape[i] >= 0 && shape[i] != io.shape[i]) mismatch("dimension " + std::to_string(i) + " mismatch");
  }
}

std::string produced_in(const IoInfo& io) {
  return io.memory != nullptr ? describe_memory(io.memory) : std::string("host memory");
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

const IoInfo* find(const std::vector<IoInfo>& ios, const std::string& name) noexcept {
  for (const IoInfo& io : ios) {
    if (io.name == name) return &io;
  }
  return nullptr;
}

// --- the steps of plan_run ---------------------------------------------------------------------------------------

// Each fed input (tensor or value) known and fed once, each tensor matching its declaration, each required input fed.
void plan_inputs(const SessionInfo& info, const Feeds& feeds, const std::vector<std::string>& values, RunPlan& plan) {
  std::vector<const IoInfo*> fed;
  fed.reserve(feeds.size() + values.size());
  const auto known = [&](const std::string& name) {
    const IoInfo* io = info.find_input(name);
    if (io == nullptr) {  // (onnxruntime's words first, ORT's own check's: what its users look for)
      refused("Invalid input name: " + name + " (the model's inputs are " + quoted_names(info.inputs()) + ")");
    }
    for (const IoInfo* f : fed) {
      if (f == io) refused("input '" + name + "' is fed twice");
    }
    fed.push_back(io);
    return io;
  };
  plan.inputs.reserve(feeds.size());
  for (const auto& [name, tensor] : feeds) {
    const IoInfo* io = known(name);
    check_against(tensor, *io, "input");
    plan.inputs.push_back(RunPlan::Input{io, tensor, Tensor()});
  }
  for (const std::string& name : values) plan.values.push_back(known(name));
  std::string missing, declared;
  for (const IoInfo& io : info.inputs()) {
    if (!io.required() || std::find(fed.begin(), fed.end(), &io) != fed.end()) continue;
    missing += (missing.empty() ? "'" : ", '") + io.name + "'";
    declared += (declared.empty() ? "'" : ", '") + io.name + "' (" + io.type_string() + ")";
  }
  if (!missing.empty()) {  // (onnxruntime's words first, as its run() says it)
    std::string given;
    for (const IoInfo* io : fed) given += (given.empty() ? "'" : ", '") + io->name + "'";
    refused("Required inputs ([" + missing + "]) are missing from input feed ([" + given + "]): missing input " +
            declared);
  }
}

// The requested outputs: known, distinct names (none: every output, in model order).
void plan_outputs(const SessionInfo& info, const std::vector<std::string>& output_names, RunPlan& plan) {
  const std::vector<IoInfo>& outputs = info.outputs();
  if (output_names.empty()) {
    for (const IoInfo& io : outputs) plan.outputs.push_back(RunPlan::Output{&io, Tensor(), nullptr});
    return;
  }
  for (const std::string& name : output_names) {
    const IoInfo* io = info.find_output(name);
    if (io == nullptr) {  // (onnxruntime's words first, ORT's own check's)
      refused("Invalid output name:" + name + " (the model's outputs are " + quoted_names(outputs) + ")");
    }
    for (const RunPlan::Output& o : plan.outputs) {
      if (o.io == io) refused("output '" + name + "' is requested twice");
    }
    plan.outputs.push_back(RunPlan::Output{io, Tensor(), nullptr});
  }
}

// Destinations: only for requested outputs, matching their declaration, writable, in memory the session writes.
void plan_destinations(const SessionInfo& info, const RunOptions& options, RunPlan& plan) {
  for (const auto& [name, tensor] : options.destinations) {
    const IoInfo* io = info.find_output(name);
    if (io == nullptr) {
      invalid("destination for unknown output '" + name + "' (the model's outputs are " + quoted_names(info.outputs()) +
              ")");
    }
    RunPlan::Output* out = nullptr;
    for (RunPlan::Output& o : plan.outputs) {
      if (o.io == io) out = &o;
    }
    if (out == nullptr) invalid("destination for output '" + name + "', which is not requested");
    if (out->destination) invalid("output '" + name + "' has two destinations");
    if (!io->has_dlpack_form()) invalid("output '" + name + "' is " + io->onnx_type + ", which has no destination");
    check_against(tensor, *io, "output destination");
    if (tensor.read_only()) {
      invalid("output destination '" + name + "' is read-only" +
              (tensor.read_only_kind() == ReadOnly::kByContract ? " (its producer's arrays are immutable)" : "") +
              ": ORT would write into it");
    }
    const OrtMemoryInfo* memory = tensor.memory_info();
    if (!info.writes(*io, memory)) {
      throw Error(ErrorKind::kUnsupported, "run: output destination '" + name + "' is in " + describe_memory(memory) +
                                               ", which the session cannot write: it produces '" + name + "' in " +
                                               produced_in(*io) +
                                               " and has no execution provider on that "
                                               "device (a destination is never copied)");
    }
    out->destination = tensor;
  }
}

// Where outputs without a destination are allocated: options.output_memory / output_device, else where the session
// produces them, else the host. A run with values (needs_values) is run by the caller with ORT's own value APIs
// (onnxruntime's run), which return every output in host memory: it takes no destinations and no other placement.
void plan_allocation(const SessionInfo& info, const RunOptions& options, RunPlan& plan) {
  if (options.output_memory != nullptr && options.output_device.has_value()) {
    invalid("RunOptions: set output_memory or output_device, not both");
  }
  const OrtMemoryInfo* requested = options.output_memory   ? options.output_memory
                                   : options.output_device ? memory_info(*options.output_device)
                                                           : nullptr;
  const OrtMemoryInfo* host = memory_info(DLDevice{kDLCPU, 0});
  const bool values = plan.needs_values();
  if (values && (!options.destinations.empty() || (requested != nullptr && !host_accessible(requested)))) {
    const std::string why = !plan.values.empty() ? "input '" + plan.values.front()->name + "' is fed a value"
                                                 : "an output requested has no DLPack form";
    invalid(std::string(options.destinations.empty() ? "outputs cannot be placed in device memory"
                                                     : "outputs cannot be written into destinations") +
            " in a run of values that have no DLPack form (" + why +
            "): such a run returns its outputs in host memory, as onnxruntime's run does");
  }
  for (RunPlan::Output& out : plan.outputs) {
    if (out.destination) continue;
    const IoInfo& io = *out.io;
    if (requested != nullptr && !info.allocates(io, requested)) {
      invalid("output '" + io.name + "' cannot be placed in " + describe_memory(requested) +
              ": the session produces it in " + produced_in(io) + " and has no execution provider on that device");
    }
    out.memory = requested ? requested : io.memory && !values ? io.memory : host;
  }
}

// Staging: a host session cannot read device memory, and ORT does not copy such a feed itself: it hands the device
// pointer to a CPU kernel (seen with ORT 1.29 and a plugin EP's memory). Such feeds are copied to the host through
// the env's data transfer; every other feed is bound where it is.
void plan_staging(RunPlan& plan) {
  for (RunPlan::Input& in : plan.inputs) {
    if ((in.io->memory == nullptr || host_accessible(in.io->memory)) && !in.feed.host_accessible()) {
      in.staged = place(in.feed, Target::host(), CopyMode::kIfNeeded, "run").tensor;
    }
  }
}

// Whether [a, a + an) and [b, b + bn) overlap in the same memory.
bool overlaps(const Tensor& a, const Tensor& b) {
  const auto* pa = static_cast<const char*>(a.data());
  const auto* pb = static_cast<const char*>(b.data());
  if (pa == nullptr || pb == nullptr || a.byte_size() == 0 || b.byte_size() == 0) return false;
  return pa < pb + b.byte_size() && pb < pa + a.byte_size() && detail::same_memory(a.memory_info(), b.memory_info());
}

}  // namespace

std::string IoInfo::type_string() const {
  if (!is_tensor) return onnx_type;
  return std::string(dtype_name(element_type)) +
         (has_shape ? shape_string(shape.data(), shape.size(), &dim_names) : std::string("[any shape]"));
}

bool IoInfo::has_dlpack_form() const noexcept { return is_tensor && has_dlpack_dtype(element_type); }

bool IoInfo::required() const noexcept { return onnx_type.compare(0, 9, "optional(") != 0; }

bool RunPlan::needs_values() const noexcept {
  if (!values.empty()) return true;
  for (const Output& out : outputs) {
    if (!out.io->has_dlpack_form()) return true;
  }
  return false;
}

SessionInfo::SessionInfo(const OrtSession* session, const std::vector<const OrtEpDevice*>& ep_devices)
    : ep_memory_(memories_of(ep_devices)) {
  if (session == nullptr) throw Error(ErrorKind::kInvalidArgument, "Session: OrtSession is NULL");
  const OrtApi& api = ort();
  size_t n_in = 0, n_out = 0;
  check(api.SessionGetInputCount(session, &n_in));
  check(api.SessionGetOutputCount(session, &n_out));
  inputs_ =
      read_ios(session, n_in, api.SessionGetInputName, api.SessionGetInputTypeInfo, api.SessionGetMemoryInfoForInputs);
  outputs_ = read_ios(session, n_out, api.SessionGetOutputName, api.SessionGetOutputTypeInfo,
                      api.SessionGetMemoryInfoForOutputs);
  size_t n_init = 0;
  check(api.SessionGetOverridableInitializerCount(session, &n_init));
  initializers_ = read_ios(session, n_init, api.SessionGetOverridableInitializerName,
                           api.SessionGetOverridableInitializerTypeInfo, nullptr);
}

SessionInfo::SessionInfo(std::vector<IoInfo> inputs, std::vector<IoInfo> outputs, std::vector<IoInfo> initializers,
                         const std::vector<const OrtEpDevice*>& ep_devices,
                         std::vector<std::shared_ptr<OrtMemoryInfo>> owned)
    : inputs_(std::move(inputs)),
      outputs_(std::move(outputs)),
      initializers_(std::move(initializers)),
      ep_memory_(memories_of(ep_devices)),
      owned_memory_(std::move(owned)) {}

bool SessionInfo::writes(const IoInfo& io, const OrtMemoryInfo* memory) const {
  return host_accessible(memory) || allocates(io, memory);
}

bool SessionInfo::allocates(const IoInfo& io, const OrtMemoryInfo* memory) const {
  if (detail::is_cpu_memory(memory)) return true;
  if (io.memory != nullptr && detail::same_memory(io.memory, memory)) return true;
  for (const OrtMemoryInfo* m : ep_memory_) {
    if (detail::same_memory(m, memory)) return true;
  }
  return false;
}

const IoInfo* SessionInfo::find_input(const std::string& name) const noexcept {
  const IoInfo* io = find(inputs_, name);
  return io != nullptr ? io : find(initializers_, name);
}

const IoInfo* SessionInfo::find_output(const std::string& name) const noexcept { return find(outputs_, name); }

RunPlan plan_run(const SessionInfo& info, const Feeds& feeds, const std::vector<std::string>& output_names,
                 const RunOptions& options, const std::vector<std::string>& values) {
  RunPlan plan;
  plan_inputs(info, feeds, values, plan);
  plan_outputs(info, output_names, plan);
  plan_destinations(info, options, plan);
  plan_allocation(info, options, plan);
  plan_staging(plan);  // last: the one copy a run may make, only once everything else was checked
  return plan;
}

void unalias(const RunPlan& plan, std::vector<Tensor>& outputs) {
  for (size_t k = 0; k < outputs.size() && k < plan.outputs.size(); ++k) {
    if (plan.outputs[k].destination || !outputs[k]) continue;
    for (const RunPlan::Input& in : plan.inputs) {
      if (!overlaps(outputs[k], in.feed) && !overlaps(outputs[k], in.bound())) continue;
      outputs[k] = place(outputs[k], Target::in(outputs[k].memory_info()), CopyMode::kAlways, "run").tensor;
      break;
    }
  }
}

Error run_failed(OrtErrorCode code, const std::string& ort_message) {
  return Error(code, "run: the session failed: ONNX Runtime: " + ort_message);
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
