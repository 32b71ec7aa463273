// SessionInfo (session_info.h): a session's inputs, outputs and overridable initializers, read from ORT once.
#include "session_info.h"

#include <string>
#include <utility>
#include <vector>

#include "ort.h"
#include "ortdlpack/api.h"
#include "ortdlpack/device.h"
#include "ortdlpack/dtype.h"
#include "ortdlpack/error.h"
#include "ortdlpack/handle.h"

namespace ortdlpack {
namespace {

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
}  // namespace

std::string shape_string(const int64_t* shape, size_t ndim, const std::vector<std::string>* names) {
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

std::string IoInfo::type_string() const {
  if (!is_tensor) return onnx_type;
  return std::string(dtype_name(element_type)) +
         (has_shape ? shape_string(shape.data(), shape.size(), &dim_names) : std::string("[any shape]"));
}

bool IoInfo::has_dlpack_form() const noexcept { return is_tensor && has_dlpack_dtype(element_type); }

bool IoInfo::holds_tensors() const noexcept {
  std::string t = onnx_type;
  bool wrapped = false;
  for (const char* prefix : {"seq(", "optional(", "seq(", "optional("}) {  // (ONNX nests them at most this deep)
    const size_t n = std::char_traits<char>::length(prefix);
    if (t.compare(0, n, prefix) != 0 || t.back() != ')') continue;
    t = t.substr(n, t.size() - n - 1);
    wrapped = true;
  }
  if (!wrapped || t.compare(0, 7, "tensor(") != 0 || t.back() != ')') return false;
  return has_dlpack_dtype(dtype_from_onnx_name(t.substr(7, t.size() - 8)));
}

bool IoInfo::required() const noexcept { return onnx_type.compare(0, 9, "optional(") != 0; }

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
                         const std::vector<const OrtEpDevice*>& ep_devices)
    : inputs_(std::move(inputs)),
      outputs_(std::move(outputs)),
      initializers_(std::move(initializers)),
      ep_memory_(memories_of(ep_devices)) {}

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

}  // namespace ortdlpack
