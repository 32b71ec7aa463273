// ortdlpack.Tensor: a Python handle on one ortdlpack::Tensor (a shared owner of an ORT OrtValue), its methods and
// properties (__array__ and numpy() are numpy_arrays.cc's, __dlpack__'s capsules capsules.cc's), and how the binding
// calls the core on tensors: copy= as a CopyMode, copies and stream orders with the GIL released.
#include <string>

#include "devices.h"
#include "numpy_arrays.h"
#include "ortvalues.h"
#include "output_frameworks.h"
#include "registrations.h"
#include "tensors.h"

namespace ortdlpack::py {
namespace {

PyTypeObject* g_tensor_type = nullptr;

// Tensor.__dlpack__(*, stream=None, max_version=None, dl_device=None, copy=None).
PyObject* dlpack_method(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  return safe_call<PyObject*>(nullptr, [&] {
    if (nargs != 0) throw nb::type_error("__dlpack__() takes keyword arguments only");
    nb::handle values[4] = {Py_None, Py_None, Py_None, Py_None};
    static const char* const names[4] = {"stream", "max_version", "dl_device", "copy"};
    const Py_ssize_t count = kwnames != nullptr ? NB_TUPLE_GET_SIZE(kwnames) : 0;
    for (Py_ssize_t i = 0; i < count; ++i) {
      PyObject* key = NB_TUPLE_GET_ITEM(kwnames, i);
      size_t k = 0;
      while (k < 4 && PyUnicode_CompareWithASCIIString(key, names[k]) != 0) ++k;
      if (k == 4) {
        throw nb::type_error(
            ("__dlpack__() got an unexpected keyword argument '" + nb::cast<std::string>(nb::handle(key)) + "'")
                .c_str());
      }
      values[k] = args[i];
    }
    return tensor_dlpack(self, values[0], values[1], values[2], values[3]).release().ptr();
  });
}

// Tensor.__dlpack_device__(), called before every __dlpack__ by most consumers.
PyObject* dlpack_device_method(PyObject* self, PyObject*) {
  return safe_call<PyObject*>(nullptr, [&] {
    const DLDevice d = tensor_of(self).tensor.device();
    return Py_BuildValue("(ii)", static_cast<int>(d.device_type), static_cast<int>(d.device_id));
  });
}

// Tensor.data_ptr's value: an int subclass whose call returns the plain int (the property stays an int, and reads as
// torch's and onnxruntime's data_ptr() methods too). The class is made once, by type(), with a C++ __call__.
nb::object address(const void* p) {
  static PyObject* const cls = [] {
    nb::dict ns;
    ns["__slots__"] = nb::tuple();
    ns["__module__"] = "ortdlpack";
    ns["__doc__"] = "An address: an int; calling it returns the int (as torch's data_ptr() does).";
    ns["__call__"] = nb::cpp_function([](nb::handle self) { return nb::steal(PyNumber_Long(self.ptr())); },
                                      nb::is_method(), nb::name("__call__"));
    return nb::handle(reinterpret_cast<PyObject*>(&PyType_Type))(
               "Address", nb::make_tuple(nb::handle(reinterpret_cast<PyObject*>(&PyLong_Type))), ns)
        .release()
        .ptr();  // process lifetime
  }();
  return nb::handle(cls)(nb::steal(PyLong_FromVoidPtr(const_cast<void*>(p))));
}

std::string repr(const Tensor& t) {
  std::string s = "ortdlpack.Tensor(shape=(";
  const ShapeView shape = t.shape();
  for (size_t i = 0; i < shape.size(); ++i)
    s += std::to_string(shape[i]) + (shape.size() == 1 || i + 1 < shape.size() ? ", " : "");
  if (shape.size() == 1) s.resize(s.size() - 1);
  s += std::string("), dtype=") + dtype_name(t.element_type()) +
       ", device=" + nb::cast<std::string>(nb::str(make_device(t.device()))) +
       (t.read_only() ? ", read_only=True" : "") + ")";
  return s;
}

}  // namespace

CopyMode to_copy_mode(nb::handle copy) {
  if (copy.is_none()) return CopyMode::kIfNeeded;
  if (copy.ptr() == Py_True) return CopyMode::kAlways;
  if (copy.ptr() == Py_False) return CopyMode::kNever;
  throw nb::type_error("copy must be True, False or None");
}

void run_without_gil(const std::function<void()>& copy) {
  nb::gil_scoped_release release;
  copy();
}

void order_for_consumer_without_gil(const Tensor& t, std::optional<int64_t> consumer) {
  if (t.host_accessible()) {
    order_for_consumer(t, consumer);  // checks the stream value; never waits
    return;
  }
  // Complete for the consumer's stream (docs/streams.md): may wait on the host.
  nb::gil_scoped_release release;
  order_for_consumer(t, consumer);
}

nb::object wrap(Tensor t) { return nb::cast(PyTensor(std::move(t)), nb::rv_policy::move); }

PyTypeObject* tensor_type() { return g_tensor_type; }

nb::object shape_tuple(const Tensor& t) {
  const ShapeView shape = t.shape();
  nb::object tuple = nb::steal(PyTuple_New(static_cast<Py_ssize_t>(shape.size())));
  for (size_t i = 0; i < shape.size(); ++i) {
    NB_TUPLE_SET_ITEM(tuple.ptr(), static_cast<Py_ssize_t>(i), PyLong_FromLongLong(shape[i]));
  }
  return tuple;
}

void define_tensor(nb::module_& m) {
  auto cls = nb::class_<PyTensor>(
      m, "Tensor", "An ONNX Runtime tensor (a shared OrtValue) that speaks DLPack. Made by from_dlpack().");
  g_tensor_type = reinterpret_cast<PyTypeObject*>(cls.ptr());
  // __dlpack__ and __dlpack_device__ are what every consumer calls: plain CPython methods (keywords read by hand)
  // cost less than nanobind's generic dispatch. Their typed stub signatures come from python/stubgen_patterns.txt.
  static PyMethodDef dlpack_def = {
      "__dlpack__", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>(&dlpack_method)),
      METH_FASTCALL | METH_KEYWORDS,
      "__dlpack__($self, /, *, stream=None, max_version=None, dl_device=None, copy=None)\n--\n\n"
      "A DLPack capsule of the tensor (Array API standard 2024.12): 'dltensor_versioned' when max_version >= (1, 0), "
      "else legacy 'dltensor'."};
  nb::object dlpack = nb::steal(PyDescr_NewMethod(g_tensor_type, &dlpack_def));
  if (!dlpack.is_valid()) throw nb::python_error();
  nb::setattr(cls, "__dlpack__", dlpack);
  static PyMethodDef device_def = {
      "__dlpack_device__", &dlpack_device_method, METH_NOARGS,
      "__dlpack_device__($self, /)\n--\n\n(dl_device_type, device_id) of the tensor's memory."};
  nb::object dlpack_device = nb::steal(PyDescr_NewMethod(g_tensor_type, &device_def));
  if (!dlpack_device.is_valid()) throw nb::python_error();
  nb::setattr(cls, "__dlpack_device__", dlpack_device);
  define_numpy(cls);
  cls.def(
         "to",
         [](nb::handle self, nb::handle device) -> nb::object {
           const Tensor& t = tensor_of(self).tensor;
           const Placed p = place(t, to_target(device, "device"), CopyMode::kIfNeeded, "to", nullptr, &run_without_gil);
           return p.copied ? wrap(p.tensor) : nb::borrow(self);
         },
         nb::arg("device"),
         nb::sig("def to(self, device: Device | str | tuple[int, int] | onnxruntime.OrtEpDevice) -> Tensor"),
         "This tensor on `device` (itself when already there, else a copy).")
      .def_prop_ro(
          "shape", [](nb::handle self) { return shape_tuple(tensor_of(self).tensor); },
          nb::sig("def shape(self) -> tuple[int, ...]"))
      .def_prop_ro("ndim", [](nb::handle self) { return tensor_of(self).tensor.shape().size(); })
      .def_prop_ro("size", [](nb::handle self) { return tensor_of(self).tensor.element_count(); })
      .def_prop_ro("nbytes", [](nb::handle self) { return tensor_of(self).tensor.byte_size(); })
      .def_prop_ro(
          "dtype", [](nb::handle self) { return std::string(dtype_name(tensor_of(self).tensor.element_type())); },
          "numpy-style name of the element type ('float32', 'bool', 'bfloat16', 'float8_e4m3fn', 'int4', ...).")
      .def_prop_ro("device", [](nb::handle self) { return Target::on(tensor_of(self).tensor.device()); })
      .def_prop_ro(
          "data_ptr", [](nb::handle self) { return address(tensor_of(self).tensor.data()); },
          nb::sig("def data_ptr(self) -> int"),
          "Address of the first element (a device address for device memory): an int that can also be "
          "called, so t.data_ptr and t.data_ptr() (torch's and onnxruntime OrtValue's spelling) both give "
          "it.")
      .def(
          "as_framework",
          [](nb::handle self, nb::handle output_type) -> nb::object {
            const Framework type = to_output_type(output_type, "output_type");
            if (type == Framework::kLikeFeeds)
              throw nb::value_error("as_framework: 'like_feeds' names no framework here");
            return type == Framework::kOrtdlpack ? nb::borrow(self)
                                                 : to_framework(tensor_of(self).tensor, OutputFramework{type, nullptr});
          },
          nb::arg("output_type"), nb::sig("def as_framework(self, output_type: str) -> object"),
          "This tensor as a 'torch', 'numpy', 'cupy' or 'jax' array over the same memory, made as run()'s "
          "output_type makes outputs (torch through its C exchange API; ordered for torch's current stream).")
      .def_prop_ro(
          "read_only", [](nb::handle self) { return tensor_of(self).tensor.read_only(); },
          "True when the producer's memory is read-only (DLPack READ_ONLY flag).")
      .def_prop_ro(
          "ortvalue", [](nb::handle self) { return ortvalue_of(tensor_of(self).tensor); },
          nb::sig("def ortvalue(self) -> onnxruntime.OrtValue"),
          "An onnxruntime.OrtValue sharing this tensor's memory (and keeping it alive). CPU, CUDA and ROCm memory.")
      .def("__repr__", [](nb::handle self) { return repr(tensor_of(self).tensor); });
  define_exchange_api(cls);
}

}  // namespace ortdlpack::py
