// ortdlpack.Tensor: a Python handle on one ortdlpack::Tensor (a shared owner of an ORT OrtValue).
#include <cstring>
#include <memory>
#include <string>
#include <vector>

// numpy's C API, imported by bind_tensor (only this file uses it).
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <nanobind/stl/string.h>
#include <numpy/arrayobject.h>

#include "binding.h"
#include "dlpack_layout.h"
#include "dtype_names.h"

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

nb::object numpy_dtype(nb::handle dtype) {
  static PyObject* const fn = module_attribute("numpy", "dtype");
  return nb::borrow(fn)(dtype);
}

// The numpy dtype of an element type, by the core's name for it: numpy's own, else ml_dtypes' (bfloat16, float8,
// int4: one element per byte). Made once per element type.
PyArray_Descr* descr_of(ONNXTensorElementDataType type) {
  static PyArray_Descr* cache[64] = {};
  const size_t i = static_cast<size_t>(type);
  if (i < 64 && cache[i] != nullptr) return cache[i];
  const char* name = dtype_name(type);
  nb::object dtype;
  try {
    dtype = numpy_dtype(nb::str(name));
  } catch (nb::python_error& e) {
    only_exceptions(e);
    try {
      dtype = numpy_dtype(nb::module_::import_("ml_dtypes").attr(name));
    } catch (nb::python_error& e2) {
      only_exceptions(e2);
      throw nb::type_error(
          (std::string("a numpy array of ") + name + " needs the ml_dtypes package (pip install ml_dtypes)").c_str());
    }
  }
  auto* descr = reinterpret_cast<PyArray_Descr*>(dtype.release().ptr());  // process lifetime
  if (i < 64) cache[i] = descr;
  return descr;
}

}  // namespace

nb::object numpy_dtype_of(ONNXTensorElementDataType type) {
  return nb::borrow(reinterpret_cast<PyObject*>(descr_of(type)));
}

namespace {

// Tensor.__array__(dtype=None, copy=None), numpy 2's protocol: copy=False raises (a ValueError) when a copy is
// needed, for the memory (placement.h) and for the dtype alike.
nb::object to_numpy(nb::handle self, nb::handle dtype, nb::handle copy) {
  const Tensor& t = tensor_of(self).tensor;
  const CopyMode mode = to_copy_mode(copy);
  const bool convert = !dtype.is_none();
  // A dtype conversion copies anyway: the placement then need not.
  const Placed p = place(t, Target::host(), convert && mode == CopyMode::kAlways ? CopyMode::kIfNeeded : mode,
                         "__array__", nullptr, &run_without_gil);
  nb::object owner = p.copied ? wrap(p.tensor) : nb::borrow(self);
  nb::object arr = host_array(p.tensor, owner, mode);
  if (convert) {
    nb::object want = numpy_dtype(dtype);
    if (!want.equal(arr.attr("dtype"))) {
      if (mode == CopyMode::kNever) {
        throw Error(ErrorKind::kCopyRequired, "__array__: converting " + std::string(dtype_name(t.element_type())) +
                                                  " to " + nb::cast<std::string>(nb::str(want)) +
                                                  " needs a copy (copy=False)");
      }
      return arr.attr("astype")(want);
    }
  }
  return arr;
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

// A numpy array over host memory `t` (owned by the Python object `owner`), without copying, except for packed
// sub-byte types, which numpy (ml_dtypes) holds one element per byte: then only when `copy` allows.
nb::object host_array(const Tensor& t, nb::handle owner, CopyMode copy) {
  const ONNXTensorElementDataType type = t.element_type();
  const uint32_t bits = dtype_bits(type);
  const bool packed = bits < 8;
  if (packed && copy == CopyMode::kNever) {
    throw Error(ErrorKind::kCopyRequired, std::string("__array__: a numpy array of ") + dtype_name(type) +
                                              " holds one element per byte: an unpacked copy (copy=False)");
  }
  const ShapeView shape = t.shape();
  npy_intp dims[kMaxNdim];
  for (size_t i = 0; i < shape.size(); ++i) dims[i] = static_cast<npy_intp>(shape[i]);
  PyArray_Descr* descr = descr_of(type);
  Py_INCREF(reinterpret_cast<PyObject*>(descr));  // PyArray_NewFromDescr steals it
  static char empty;  // size-0 tensors may have no data: numpy wants an address all the same
  void* data = packed ? nullptr : t.data() != nullptr ? t.data() : &empty;
  const int flags = packed ? 0 : NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED | (t.read_only() ? 0 : NPY_ARRAY_WRITEABLE);
  nb::object arr = nb::steal(
      PyArray_NewFromDescr(&PyArray_Type, descr, static_cast<int>(shape.size()), dims, nullptr, data, flags, nullptr));
  if (!arr.is_valid()) throw nb::python_error();
  auto* a = reinterpret_cast<PyArrayObject*>(arr.ptr());
  if (packed) {
    unpack_sub_byte(type, t.data(), t.element_count(), static_cast<uint8_t*>(PyArray_DATA(a)));
  } else if (PyArray_SetBaseObject(a, nb::borrow(owner).release().ptr()) != 0) {
    throw nb::python_error();
  }
  return arr;
}

NumpyKind numpy_kind(nb::handle x) {
  if (PyArray_IsAnyScalar(x.ptr())) return NumpyKind::kScalar;
  if (!PyArray_Check(x.ptr())) return NumpyKind::kNone;
  const int type = PyArray_TYPE(reinterpret_cast<PyArrayObject*>(x.ptr()));
  if (type >= NPY_USERDEF)
    return NumpyKind::kOther;  // ml_dtypes' types (bfloat16, float8, int4, ...), by number:
                               // their kinds vary ('V', and 'f' for float8_e5m2)
  switch (PyArray_DESCR(reinterpret_cast<PyArrayObject*>(x.ptr()))->kind) {
    case 'U':
    case 'S':
    case 'O':
    case 'V':  // numpy's void: bytes, as onnxruntime's run takes strings
      return NumpyKind::kStrings;
    default:
      return NumpyKind::kNative;
  }
}

namespace {

// The DLPack tensor numpy_extension_export hands out: shape and strides live here, with a reference to the array.
struct NumpyExport {
  DLManagedTensorVersioned managed{};
  PyObject* array;
  std::vector<int64_t> shape, strides;
};

void release_numpy_export(DLManagedTensorVersioned* m) noexcept {
  auto* e = static_cast<NumpyExport*>(m->manager_ctx);
  if (python_alive()) {  // (after the interpreter's exit began, the array is left to it)
    PyGILState_STATE gil = PyGILState_Ensure();
    Py_DECREF(e->array);
    PyGILState_Release(gil);
  }
  delete e;
}

}  // namespace

ONNXTensorElementDataType numpy_extension_type(nb::handle x) {
  if (numpy_kind(x) != NumpyKind::kOther) return ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;
  try {
    const nb::str name(nb::object(x.attr("dtype")));  // ml_dtypes' names are the table's
    return dtype_from_name(name.c_str());
  } catch (const Error&) {  // a dtype the table lacks (int2, float8_e8m0fnu, records)
    return ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;
  }
}

DLManagedTensorVersioned* numpy_extension_export(nb::handle x) {
  const ONNXTensorElementDataType type = numpy_extension_type(x);
  if (type == ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED) return nullptr;  // numpy's refusal stands
  auto* a = reinterpret_cast<PyArrayObject*>(x.ptr());
  const DLDataType dl = to_dlpack_dtype(type);
  const npy_intp item = PyArray_ITEMSIZE(a);
  if (item != static_cast<npy_intp>(dl.bits < 8 ? 1 : dl.bits / 8)) return nullptr;
  auto e = std::make_unique<NumpyExport>();
  const int ndim = PyArray_NDIM(a);
  for (int i = 0; i < ndim; ++i) {
    if (PyArray_STRIDES(a)[i] % item != 0) return nullptr;  // not a whole number of elements: numpy's refusal stands
    e->shape.push_back(PyArray_DIMS(a)[i]);
    e->strides.push_back(PyArray_STRIDES(a)[i] / item);
  }
  DLManagedTensorVersioned& m = e->managed;
  m.version = {DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION};
  m.flags = (PyArray_ISWRITEABLE(a) ? 0 : DLPACK_FLAG_BITMASK_READ_ONLY) |
            (dl.bits < 8 ? DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED : 0);
  m.dl_tensor = DLTensor{PyArray_DATA(a), DLDevice{kDLCPU, 0}, ndim, dl, e->shape.data(), e->strides.data(), 0};
  m.deleter = release_numpy_export;
  m.manager_ctx = e.get();
  e->array = nb::borrow(x).release().ptr();
  return &e.release()->managed;
}

nb::object numpy_over(DLManagedTensorVersioned* m) {
  // Owned from here: the capsule (the array's base) runs the deleter when numpy lets the array go.
  nb::capsule owner(m, [](void* p) noexcept {
    auto* t = static_cast<DLManagedTensorVersioned*>(p);
    if (t->deleter != nullptr) t->deleter(t);
  });
  const DLTensor& t = m->dl_tensor;
  PyArray_Descr* descr = descr_of(from_dlpack_dtype(t.dtype));
  const npy_intp item = static_cast<npy_intp>(t.dtype.bits / 8);
  npy_intp dims[kMaxNdim], strides[kMaxNdim];
  for (int32_t i = 0; i < t.ndim; ++i) {
    dims[i] = static_cast<npy_intp>(t.shape[i]);
    if (t.strides != nullptr) strides[i] = static_cast<npy_intp>(t.strides[i]) * item;
  }
  npy_intp step = item;  // row-major strides, when the producer gives none
  for (int32_t i = t.ndim - 1; t.strides == nullptr && i >= 0; --i) {
    strides[i] = step;
    step *= dims[i];
  }
  const bool read_only = (m->flags & DLPACK_FLAG_BITMASK_READ_ONLY) != 0;
  Py_INCREF(reinterpret_cast<PyObject*>(descr));  // PyArray_NewFromDescr steals it
  static char empty;
  char* data = t.data != nullptr ? static_cast<char*>(t.data) + t.byte_offset : &empty;
  nb::object arr = nb::steal(PyArray_NewFromDescr(&PyArray_Type, descr, t.ndim, dims, strides, data,
                                                  read_only ? 0 : NPY_ARRAY_WRITEABLE, nullptr));
  if (!arr.is_valid()) throw nb::python_error();
  if (PyArray_SetBaseObject(reinterpret_cast<PyArrayObject*>(arr.ptr()), owner.release().ptr()) != 0) {
    throw nb::python_error();
  }
  return arr;
}

ByteRange array_bytes(nb::handle x) {
  if (!PyArray_Check(x.ptr())) return {};
  auto* a = reinterpret_cast<PyArrayObject*>(x.ptr());
  if (PyArray_SIZE(a) == 0) return {};
  // The lowest and highest bytes its strides reach (strides may be negative).
  const char* data = static_cast<const char*>(PyArray_DATA(a));
  npy_intp lo = 0, hi = PyArray_ITEMSIZE(a);
  for (int i = 0; i < PyArray_NDIM(a); ++i) {
    const npy_intp reach = (PyArray_DIMS(a)[i] - 1) * PyArray_STRIDES(a)[i];
    (reach < 0 ? lo : hi) += reach;
  }
  return {data + lo, data + hi};
}

PyTypeObject* tensor_type() { return g_tensor_type; }

nb::object shape_tuple(const Tensor& t) {
  const ShapeView shape = t.shape();
  nb::object tuple = nb::steal(PyTuple_New(static_cast<Py_ssize_t>(shape.size())));
  for (size_t i = 0; i < shape.size(); ++i) {
    NB_TUPLE_SET_ITEM(tuple.ptr(), static_cast<Py_ssize_t>(i), PyLong_FromLongLong(shape[i]));
  }
  return tuple;
}

void bind_tensor(nb::module_& m) {
  auto cls = nb::class_<PyTensor>(
      m, "Tensor", "An ONNX Runtime tensor (a shared OrtValue) that speaks DLPack. Made by from_dlpack().");
  g_tensor_type = reinterpret_cast<PyTypeObject*>(cls.ptr());
  if (_import_array() < 0) throw nb::python_error();
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
  nb::object device = nb::steal(PyDescr_NewMethod(g_tensor_type, &device_def));
  if (!device.is_valid()) throw nb::python_error();
  nb::setattr(cls, "__dlpack_device__", device);
  cls.def("__array__", &to_numpy, nb::arg("dtype") = nb::none(), nb::kw_only(), nb::arg("copy") = nb::none(),
          nb::sig("def __array__(self, dtype: object | None = None, *, copy: bool | None = None) -> numpy.ndarray"),
          "A numpy array sharing the tensor's host memory (copied to the host first for device memory). "
          "copy=False: CopyRequiredError (a ValueError) when that, or the dtype, needs a copy.")
      .def(
          "numpy", [](nb::handle self) { return to_numpy(self, nb::none(), nb::none()); },
          nb::sig("def numpy(self) -> numpy.ndarray"),
          "Same as numpy.asarray(tensor): bfloat16/float8/int4 come as ml_dtypes dtypes.")
      .def(
          "to",
          [](nb::handle self, nb::handle device) -> nb::object {
            const Tensor& t = tensor_of(self).tensor;
            const Placed p =
                place(t, to_target(device, "device"), CopyMode::kIfNeeded, "to", nullptr, &run_without_gil);
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
            const OutputType type = to_output_type(output_type, "output_type");
            if (type == OutputType::kLikeFeeds)
              throw nb::value_error("as_framework: 'like_feeds' names no framework here");
            return type == OutputType::kTensor ? nb::borrow(self) : to_framework(tensor_of(self).tensor, type);
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
  bind_exchange_api(cls);
}

}  // namespace ortdlpack::py
