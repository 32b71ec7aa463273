// numpy arrays through numpy's C API (only this file uses it): Tensor.__array__, arrays over a Tensor's or a DLPack
// tensor's host memory (array_over: the one way the binding makes an array over memory it does not copy), what numpy
// makes of an object, and ml_dtypes arrays as DLPack tensors (numpy's own __dlpack__ refuses them).
#include <memory>
#include <string>
#include <vector>

#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>

#include "numpy_arrays.h"

namespace ortdlpack::py {
namespace {

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

// A numpy array of `type` over `ndim` dimensions of host memory at `data` (`strides` in bytes; NULL: row-major),
// whose base is `base` (a reference is taken): numpy keeps `base` alive as long as the array, and never copies.
nb::object array_over(void* data, ONNXTensorElementDataType type, int ndim, const npy_intp* dims,
                      const npy_intp* strides, bool read_only, nb::handle base) {
  PyArray_Descr* descr = descr_of(type);
  Py_INCREF(reinterpret_cast<PyObject*>(descr));  // PyArray_NewFromDescr steals it
  static char empty;  // size-0 tensors may have no data: numpy wants an address all the same
  const int flags =
      (strides == nullptr ? NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED : 0) | (read_only ? 0 : NPY_ARRAY_WRITEABLE);
  nb::object arr =
      nb::steal(PyArray_NewFromDescr(&PyArray_Type, descr, ndim, const_cast<npy_intp*>(dims),
                                     const_cast<npy_intp*>(strides), data != nullptr ? data : &empty, flags, nullptr));
  if (!arr.is_valid()) throw nb::python_error();
  if (PyArray_SetBaseObject(reinterpret_cast<PyArrayObject*>(arr.ptr()), nb::borrow(base).release().ptr()) != 0) {
    throw nb::python_error();
  }
  return arr;
}

}  // namespace

nb::object numpy_dtype_of(ONNXTensorElementDataType type) {
  return nb::borrow(reinterpret_cast<PyObject*>(descr_of(type)));
}

nb::object host_array(const Tensor& t, nb::handle owner, CopyMode copy) {
  const ONNXTensorElementDataType type = t.element_type();
  const ShapeView shape = t.shape();
  npy_intp dims[kMaxNdim];
  for (size_t i = 0; i < shape.size(); ++i) dims[i] = static_cast<npy_intp>(shape[i]);
  if (dtype_bits(type) >= 8) {
    return array_over(t.data(), type, static_cast<int>(shape.size()), dims, nullptr, t.read_only(), owner);
  }
  if (copy == CopyMode::kNever) {
    throw Error(ErrorKind::kCopyRequired, std::string("__array__: a numpy array of ") + dtype_name(type) +
                                              " holds one element per byte: an unpacked copy (copy=False)");
  }
  PyArray_Descr* descr = descr_of(type);
  Py_INCREF(reinterpret_cast<PyObject*>(descr));  // PyArray_NewFromDescr steals it
  nb::object arr = nb::steal(
      PyArray_NewFromDescr(&PyArray_Type, descr, static_cast<int>(shape.size()), dims, nullptr, nullptr, 0, nullptr));
  if (!arr.is_valid()) throw nb::python_error();
  unpack_sub_byte(type, t.data(), t.element_count(),
                  static_cast<uint8_t*>(PyArray_DATA(reinterpret_cast<PyArrayObject*>(arr.ptr()))));
  return arr;
}

nb::object array_of(const Tensor& t) {
  const nb::capsule owner(new Tensor(t), [](void* p) noexcept { delete static_cast<Tensor*>(p); });
  return host_array(t, owner, CopyMode::kIfNeeded);
}

namespace {

// Tensor.__array__(dtype=None, *, copy=None), numpy 2's protocol: copy=False raises (a ValueError) when a copy is
// needed, for the memory (placement.h) and for the dtype alike.
nb::object tensor_array(nb::handle self, nb::handle dtype, nb::handle copy) {
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

}  // namespace

void define_numpy(nb::class_<PyTensor>& cls) {
  if (_import_array() < 0) throw nb::python_error();
  cls.def("__array__", &tensor_array, nb::arg("dtype") = nb::none(), nb::kw_only(), nb::arg("copy") = nb::none(),
          nb::sig("def __array__(self, dtype: object | None = None, *, copy: bool | None = None) -> numpy.ndarray"),
          "A numpy array sharing the tensor's host memory (copied to the host first for device memory). "
          "copy=False: CopyRequiredError (a ValueError) when that, or the dtype, needs a copy.")
      .def(
          "numpy", [](nb::handle self) { return tensor_array(self, nb::none(), nb::none()); },
          nb::sig("def numpy(self) -> numpy.ndarray"),
          "Same as numpy.asarray(tensor): bfloat16/float8/int4 come as ml_dtypes dtypes.");
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

}  // namespace ortdlpack::py
