// Outputs in the caller's framework (output_type=): each ortdlpack::Tensor a run returns becomes a torch,
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

#include "numpy_arrays.h"
#include "output_frameworks.h"
#include "tensors.h"

namespace ortdlpack::py {
namespace {

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
  return array_of(t);
}

// The from_dlpack of the top-level package that defines `type` (paddle.from_dlpack, tvm_ffi.from_dlpack), or NULL
// when it has none (mlx): looked up once per package and kept (modules are not unloaded). Asked only of producers no
// other rule names.
PyObject* package_from_dlpack(PyTypeObject* type) {
  const std::string top = package_of(type);
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

Framework to_output_type(nb::handle spec, const char* what) {
  if (!PyUnicode_Check(spec.ptr())) {
    throw nb::type_error(
        (std::string(what) + " must be None or one of " + framework_names() + ", not " + type_name(spec.ptr()))
            .c_str());
  }
  const std::string s = nb::cast<std::string>(spec);
  if (const std::optional<Framework> f = framework_named(s)) return *f;
  throw nb::value_error((std::string(what) + " '" + s + "' is none of " + framework_names()).c_str());
}

OutputFramework framework_of(nb::handle feed) {
  if (is_tensor(feed)) return {};
  if (numpy_kind(feed) != NumpyKind::kNone) return {Framework::kNumpy, nullptr};  // (the common case, no module)
  const Framework f = framework_of_type(Py_TYPE(feed.ptr()));
  if (f != Framework::kForeign || PyCapsule_CheckExact(feed.ptr())) {
    return {f == Framework::kForeign ? Framework::kOrtdlpack : f, nullptr};
  }
  // What is no DLPack producer (lists, scalars, dicts, strings: what onnxruntime's run takes) is numpy's, as
  // onnxruntime's outputs are; another producer's framework is its package's from_dlpack, where it has one.
  static PyObject* const dunder = PyUnicode_InternFromString("__dlpack__");  // process lifetime
  if (class_attribute(Py_TYPE(feed.ptr()), dunder) == nullptr) return {Framework::kNumpy, nullptr};
  PyObject* importer = package_from_dlpack(Py_TYPE(feed.ptr()));
  return importer != nullptr ? OutputFramework{Framework::kForeign, importer} : OutputFramework{};
}

nb::object to_framework(const Tensor& t, const OutputFramework& f) {
  switch (f.framework) {
    case Framework::kTorch:
      return to_torch(t);
    case Framework::kNumpy:
      return to_numpy(t);
    case Framework::kCupy: {
      static PyObject* const from_dlpack = module_attribute("cupy", "from_dlpack");
      return nb::borrow(from_dlpack)(wrap(t));
    }
    case Framework::kJax: {
      static PyObject* const from_dlpack = module_attribute("jax.dlpack", "from_dlpack");
      return nb::borrow(from_dlpack)(wrap(t));
    }
    case Framework::kForeign:
      return nb::borrow(f.importer)(wrap(t));
    case Framework::kOrtdlpack:
    case Framework::kTensorflow:  // (TensorFlow's tensors come back as ortdlpack.Tensors: tf.experimental.dlpack)
    case Framework::kLikeFeeds:   // resolved by the caller (framework_of)
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
