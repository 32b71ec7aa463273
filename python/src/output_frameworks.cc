// Outputs in the caller's framework (output_type=, issue 19): each ortdlpack::Tensor a run returns becomes a torch,
// numpy, cupy or jax array over the same memory, made the cheapest way the framework has — torch through its C
// exchange API (managed_tensor_to_py_object_no_sync of torch.Tensor.__dlpack_c_exchange_api__), numpy through its C
// API (host_array), cupy and jax through their from_dlpack. Stream rules are those of any DLPack export
// (docs/streams.md): a device tensor is made complete for the consumer's stream first (torch's current stream, as
// torch.from_dlpack names it).
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <nanobind/stl/string.h>

#include "binding.h"

namespace ortdlpack::py {
namespace {

struct Name {
  OutputType type;
  const char* name;
};
constexpr Name kNames[] = {{OutputType::kTensor, "ortdlpack"}, {OutputType::kTorch, "torch"},
                           {OutputType::kNumpy, "numpy"},      {OutputType::kCupy, "cupy"},
                           {OutputType::kJax, "jax"},          {OutputType::kLikeFeeds, "like_feeds"}};

std::string known_names() {
  std::string s;
  for (const Name& n : kNames) s += std::string(s.empty() ? "'" : ", '") + n.name + "'";
  return s;
}

PyTypeObject* torch_tensor_type() {
  static PyTypeObject* const type = module_type("torch", "Tensor");
  return type;
}

// torch's C exchange API (NULL for a torch without one), looked up once.
const DLPackExchangeAPI* torch_api() {
  static const DLPackExchangeAPI* const api = exchange_api_of(torch_tensor_type());
  return api;
}

}  // namespace

void order_for_torch(const Tensor& t) {
  if (t.host_accessible()) return;
  // Complete for the stream torch computes on now, as torch.from_dlpack asks of __dlpack__.
  const DLPackExchangeAPI* api = torch_api();
  const DLDevice d = t.device();
  void* stream = nullptr;
  if (api != nullptr && api->current_work_stream != nullptr &&
      api->current_work_stream(d.device_type, d.device_id, &stream) != 0) {
    throw nb::python_error();
  }
  order_for_consumer_without_gil(
      t, stream != nullptr ? std::optional<int64_t>(reinterpret_cast<intptr_t>(stream)) : std::optional<int64_t>());
}

namespace {

// torch: the tensor handed to torch's C exchange API, which takes ownership of the DLPack tensor.
nb::object to_torch(const Tensor& t) {
  check_framework_holds(OutputType::kTorch, t.element_type());
  const DLPackExchangeAPI* api = torch_api();
  if (api == nullptr || api->managed_tensor_to_py_object_no_sync == nullptr) {
    static PyObject* const from_dlpack =
        module_attribute("torch", "from_dlpack");  // a torch without the C exchange API
    return nb::borrow(from_dlpack)(wrap(t));
  }
  order_for_torch(t);
  DLManagedTensorVersioned* managed = to_dlpack_versioned(t);
  void* out = nullptr;
  if (api->managed_tensor_to_py_object_no_sync(managed, &out) != 0) throw nb::python_error();  // it freed `managed`
  return nb::steal(static_cast<PyObject*>(out));
}

// numpy: an array over the tensor's host memory, owned by a capsule holding a share of it.
nb::object to_numpy(const Tensor& t) {
  if (!t.host_accessible()) {
    throw Error(ErrorKind::kInvalidArgument, "output_type 'numpy': the output is in " +
                                                 describe_memory(t.memory_info()) +
                                                 ", which numpy cannot read (its outputs are placed in host memory "
                                                 "unless device= says otherwise)");
  }
  const nb::capsule owner(new Tensor(t), [](void* p) noexcept { delete static_cast<Tensor*>(p); });
  return host_array(t, owner, CopyMode::kIfNeeded);
}

// The output type of a Python type's framework (framework_of_type): torch, numpy (and onnxruntime's own values,
// OrtValue and SparseTensor: its run returns numpy for them), cupy, jax; anything else: ortdlpack's Tensor.
OutputType output_type_of(PyTypeObject* type) {
  switch (framework_of_type(type)) {
    case Framework::kTorch:
      return OutputType::kTorch;
    case Framework::kNumpy:
    case Framework::kOnnxruntime:
      return OutputType::kNumpy;
    case Framework::kCupy:
      return OutputType::kCupy;
    case Framework::kJax:
      return OutputType::kJax;
    case Framework::kTensorflow:
    case Framework::kOther:
      break;
  }
  return OutputType::kTensor;
}

// The from_dlpack of the top-level package that defines `type` (paddle.from_dlpack, tvm_ffi.from_dlpack), or NULL
// when it has none (mlx): looked up once per package and kept (modules are not unloaded). Asked only of producers no
// other rule names.
PyObject* package_from_dlpack(PyTypeObject* type) {
  const std::string module = module_of(type);
  const std::string top = module.substr(0, module.find('.'));
  static std::unordered_map<std::string, PyObject*> found;  // under the GIL; process lifetime
  auto it = found.find(top);
  if (it != found.end()) return it->second;
  PyObject* importer = nullptr;
  if (!top.empty()) {
    nb::object package = nb::steal(PyImport_GetModule(nb::str(top.c_str()).ptr()));  // imported: its type exists
    if (!package.is_valid()) clear_exception();
    if (package.is_valid() && has_attribute(package, "from_dlpack")) {
      nb::object f = package.attr("from_dlpack");
      if (PyCallable_Check(f.ptr()) != 0) importer = f.release().ptr();
    }
  }
  found.emplace(top, importer);
  return importer;
}

}  // namespace

OutputType to_output_type(nb::handle spec, const char* what) {
  if (!PyUnicode_Check(spec.ptr())) {
    throw nb::type_error(
        (std::string(what) + " must be None or one of " + known_names() + ", not " + type_name(spec.ptr())).c_str());
  }
  const std::string s = nb::cast<std::string>(spec);
  for (const Name& n : kNames) {
    if (s == n.name) return n.type;
  }
  throw nb::value_error((std::string(what) + " '" + s + "' is none of " + known_names()).c_str());
}

OutputFramework framework_of(nb::handle feed) {
  if (is_tensor(feed)) return OutputType::kTensor;
  if (numpy_kind(feed) != NumpyKind::kNone) return OutputType::kNumpy;  // (the common case, without its module)
  const OutputType type = output_type_of(Py_TYPE(feed.ptr()));
  if (type != OutputType::kTensor || PyCapsule_CheckExact(feed.ptr())) return type;
  // What is no DLPack producer (lists, scalars, dicts, strings: what onnxruntime's run takes) is numpy's, as
  // onnxruntime's outputs are; another producer's framework is its package's from_dlpack, where it has one.
  static PyObject* const dunder = PyUnicode_InternFromString("__dlpack__");  // process lifetime
  if (class_attribute(Py_TYPE(feed.ptr()), dunder) == nullptr) return OutputType::kNumpy;
  PyObject* importer = package_from_dlpack(Py_TYPE(feed.ptr()));
  return importer != nullptr ? OutputFramework(OutputType::kForeign, importer) : OutputFramework(OutputType::kTensor);
}

bool needs_host(const OutputFramework& f) { return f == OutputType::kNumpy; }

void check_framework_holds(const OutputFramework& type, ONNXTensorElementDataType element_type) {
  // torch has no sub-byte dtypes (int4, uint4, float4_e2m1fn): its DLPack import refuses them.
  if (type == OutputType::kTorch && element_type != ONNX_TENSOR_ELEMENT_DATA_TYPE_STRING &&
      element_type != ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED && dtype_bits(element_type) < 8) {
    throw Error(ErrorKind::kUnsupported, std::string("output_type 'torch': torch has no ") + dtype_name(element_type) +
                                             " dtype (output_type 'numpy' gives an ml_dtypes array, 'ortdlpack' a "
                                             "Tensor)");
  }
}

nb::object to_framework(const Tensor& t, const OutputFramework& f) {
  switch (f.type) {
    case OutputType::kTorch:
      return to_torch(t);
    case OutputType::kNumpy:
      return to_numpy(t);
    case OutputType::kCupy: {
      static PyObject* const from_dlpack = module_attribute("cupy", "from_dlpack");
      return nb::borrow(from_dlpack)(wrap(t));
    }
    case OutputType::kJax: {
      static PyObject* const from_dlpack = module_attribute("jax.dlpack", "from_dlpack");
      return nb::borrow(from_dlpack)(wrap(t));
    }
    case OutputType::kForeign:
      return nb::borrow(f.importer)(wrap(t));
    case OutputType::kTensor:
    case OutputType::kLikeFeeds:  // resolved by the caller (framework_of); a Tensor when nothing says otherwise
      break;
  }
  return wrap(t);
}

nb::object to_frameworks(const std::vector<Tensor>& tensors, const OutputFramework& type) {
  nb::object list = nb::steal(PyList_New(static_cast<Py_ssize_t>(tensors.size())));
  if (!list.is_valid()) throw nb::python_error();
  for (size_t k = 0; k < tensors.size(); ++k) {
    NB_LIST_SET_ITEM(list.ptr(), static_cast<Py_ssize_t>(k), to_framework(tensors[k], type).release().ptr());
  }
  return list;
}

}  // namespace ortdlpack::py
