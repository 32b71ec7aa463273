#include "ortdlpack/session.h"

#include <string>
#include <utility>

#include "ortdlpack/api.h"
#include "ortdlpack/device.h"
#include "ortdlpack/dtype.h"
#include "ortdlpack/error.h"
#include "ortdlpack/stream.h"
#include "ortdlpack/transfer.h"
#include "tensor_meta.h"

namespace ortdlpack {
namespace {

[[noreturn]] void invalid(const std::string& message) { throw Error(ErrorKind::kInvalidArgument, "run: " + message); }

// Re-throws an ORT failure with what was being done in front of ORT's message.
void check_ctx(OrtStatus* status, const char* what, const std::string& name) {
  if (status == nullptr) return;
  try {
    check(status);
  } catch (const Error& e) {
    throw Error(e.kind(), std::string("run: ") + what + " '" + name + "' failed: " + e.what());
  }
}

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
      s += names && !(*names)[i].empty() ? (*names)[i] : std::string("?");
    }
  }
  return s + "]";
}

std::string tensor_string(const detail::TensorMeta& m) {
  return std::string(dtype_name(m.type)) + shape_string(m.shape, m.ndim);
}

// Fills `io` from ORT's type info (which it releases).
void read_type_info(OrtTypeInfo* type_info, IoInfo& io) {
  const OrtApi& api = ort();
  struct Release {
    const OrtApi& api;
    OrtTypeInfo* info;
    ~Release() { api.ReleaseTypeInfo(info); }
  } release{api, type_info};
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
  // Where the session's EPs want the inputs / produce the outputs. Unknown (NULL) is allowed: outputs then go to
  // CPU memory.
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

}  // namespace

std::string IoInfo::describe() const {
  if (!is_tensor) return "a non-tensor value";
  return std::string(dtype_name(element_type)) + (has_shape ? shape_string(shape.data(), shape.size(), &dim_names)
                                                            : std::string("[any shape]"));
}

SessionInfo::SessionInfo(const OrtSession* session) {
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

void Session::BindingDeleter::operator()(OrtIoBinding* b) const noexcept { ort().ReleaseIoBinding(b); }

Session::Session(OrtSession* session) : session_(session), info_(session) {}

Session::~Session() = default;

Session::Binding Session::acquire() {
  {
    std::lock_guard<std::mutex> lock(pool_mutex_);
    if (!pool_.empty()) {
      Binding b = std::move(pool_.back());
      pool_.pop_back();
      return b;
    }
  }
  OrtIoBinding* binding = nullptr;
  check(ort().CreateIoBinding(session_, &binding));
  return Binding(binding);
}

void Session::release(Binding binding) noexcept {
  // Clearing drops ORT's references to the inputs and outputs: a DLPack producer's memory is not held past run().
  ort().ClearBoundInputs(binding.get());
  ort().ClearBoundOutputs(binding.get());
  constexpr size_t kMaxIdle = 8;
  std::lock_guard<std::mutex> lock(pool_mutex_);
  if (pool_.size() < kMaxIdle) {
    try {
      pool_.push_back(std::move(binding));
    } catch (...) {  // out of memory: the binding is simply released
    }
  }
}

std::vector<Tensor> Session::run(const Feeds& feeds, const std::vector<std::string>& output_names,
                                 const RunOptions& options) {
  const OrtApi& api = ort();
  const std::vector<IoInfo>& inputs = info_.inputs();
  const std::vector<IoInfo>& outputs = info_.outputs();

  // --- inputs: each model input exactly once, matching its declaration.
  std::vector<char> fed(inputs.size(), 0);
  for (const auto& [name, tensor] : feeds) {
    const int i = info_.input_index(name);
    if (i < 0) invalid("unknown input '" + name + "' (the model's inputs are " + names_of(inputs) + ")");
    if (fed[i]) invalid("input '" + name + "' is fed twice");
    fed[i] = 1;
    check_against(tensor, inputs[i], "input");
  }
  std::string missing;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!fed[i]) missing += (missing.empty() ? "'" : ", '") + inputs[i].name + "' (" + inputs[i].describe() + ")";
  }
  if (!missing.empty()) invalid("missing input " + missing);

  // --- outputs: known, distinct names; destinations only for requested outputs.
  std::vector<int> out_index;
  if (output_names.empty()) {
    for (size_t i = 0; i < outputs.size(); ++i) out_index.push_back(static_cast<int>(i));
  } else {
    std::vector<char> requested(outputs.size(), 0);
    for (const std::string& name : output_names) {
      const int i = info_.output_index(name);
      if (i < 0) invalid("unknown output '" + name + "' (the model's outputs are " + names_of(outputs) + ")");
      if (requested[i]) invalid("output '" + name + "' is requested twice");
      requested[i] = 1;
      out_index.push_back(i);
    }
  }
  std::vector<const Tensor*> destination(out_index.size(), nullptr);
  for (const auto& [name, tensor] : options.destinations) {
    const int i = info_.output_index(name);
    if (i < 0) invalid("destination for unknown output '" + name + "' (the model's outputs are " + names_of(outputs) + ")");
    size_t k = 0;
    while (k < out_index.size() && out_index[k] != i) ++k;
    if (k == out_index.size()) invalid("destination for output '" + name + "', which is not requested");
    if (destination[k] != nullptr) invalid("output '" + name + "' has two destinations");
    check_against(tensor, outputs[i], "output destination");
    if (tensor.read_only()) invalid("output destination '" + name + "' is read-only: ORT would write into it");
    destination[k] = &tensor;
  }
  if (options.output_memory != nullptr && options.output_device.has_value()) {
    invalid("RunOptions: set output_memory or output_device, not both");
  }
  const OrtMemoryInfo* output_memory =
      options.output_memory ? options.output_memory
                            : options.output_device ? memory_info(*options.output_device) : nullptr;
  const OrtMemoryInfo* cpu = nullptr;

  // --- bind, run, collect. The binding is cleared on every path (release()).
  struct Lease {
    Session& self;
    Binding binding;
    ~Lease() { self.release(std::move(binding)); }
  } lease{*this, acquire()};
  OrtIoBinding* binding = lease.binding.get();

  // A host session cannot read device memory, and ORT does not copy such a feed itself: it hands the device pointer
  // to a CPU kernel (seen with ORT 1.29 and a plugin EP's memory). Such feeds are staged to the host through the
  // env's data transfer; every other feed is bound where it is.
  std::vector<Tensor> staged;
  for (const auto& [name, tensor] : feeds) {
    const IoInfo& io = inputs[static_cast<size_t>(info_.input_index(name))];
    const Tensor* bound = &tensor;
    if ((io.memory == nullptr || host_accessible(io.memory)) && !host_accessible(tensor.memory_info())) {
      if (cpu == nullptr) cpu = ortdlpack::memory_info(DLDevice{kDLCPU, 0});
      staged.push_back(to(tensor, cpu));
      bound = &staged.back();
    }
    check_ctx(api.BindInput(binding, name.c_str(), bound->ort_value()), "binding input", name);
  }
  bool any_allocated = false;
  for (size_t k = 0; k < out_index.size(); ++k) {
    const IoInfo& io = outputs[out_index[k]];
    if (destination[k] != nullptr) {
      check_ctx(api.BindOutput(binding, io.name.c_str(), destination[k]->ort_value()), "binding output", io.name);
      continue;
    }
    any_allocated = true;
    const OrtMemoryInfo* memory = output_memory ? output_memory : io.memory;
    if (memory == nullptr) memory = cpu ? cpu : (cpu = ortdlpack::memory_info(DLDevice{kDLCPU, 0}));
    check_ctx(api.BindOutputToDevice(binding, io.name.c_str(), memory), "binding output", io.name);
  }

  // Stream ordering (stream.h, docs/streams.md): ORT runs on its own streams, after ortdlpack's pending work on
  // the feeds' and destinations' devices.
  std::vector<const Tensor*> ordered;
  for (const auto& feed : feeds) ordered.push_back(&feed.second);
  ordered.insert(ordered.end(), destination.begin(), destination.end());
  order_before_run(ordered);

  if (OrtStatus* status = api.RunWithBinding(session_, options.run_options, binding)) {
    try {
      check(status);
    } catch (const Error& e) {
      throw Error(e.kind(), std::string("run: the session failed: ") + e.what());
    }
  }

  std::vector<Tensor> result(out_index.size());
  if (any_allocated) {
    OrtAllocator* allocator = default_allocator();
    OrtValue** values = nullptr;
    size_t count = 0;
    check(api.GetBoundOutputValues(binding, allocator, &values, &count));
    // Own every value first, so none leaks whatever fails below.
    struct ValueRelease {
      void operator()(OrtValue* v) const noexcept { ort().ReleaseValue(v); }
    };
    std::vector<std::unique_ptr<OrtValue, ValueRelease>> owned;
    owned.reserve(count);
    for (size_t k = 0; k < count; ++k) owned.emplace_back(values[k]);
    check(api.AllocatorFree(allocator, values));
    if (count != out_index.size()) {
      throw Error(ErrorKind::kRuntime, "run: ORT returned " + std::to_string(count) + " outputs for " +
                                           std::to_string(out_index.size()) + " bound");
    }
    for (size_t k = 0; k < count; ++k) {
      if (destination[k] == nullptr) result[k] = Tensor(owned[k].release());
    }
  }
  for (size_t k = 0; k < out_index.size(); ++k) {
    if (destination[k] != nullptr) result[k] = *destination[k];
  }
  return result;
}

std::vector<Tensor> run(OrtSession* session, const Feeds& feeds, const std::vector<std::string>& output_names,
                        const RunOptions& options) {
  return Session(session).run(feeds, output_names, options);
}

}  // namespace ortdlpack
