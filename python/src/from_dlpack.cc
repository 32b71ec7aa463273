// ortdlpack.from_dlpack and as_ortvalue, and a feed's tensor for ortdlpack.run: a Python object's tensor, its producer
// asked for it once (ask: its type's C exchange API, an ml_dtypes array's export, or __dlpack__ with the retries older
// producers need), then imported (capsules.cc) or handed to onnxruntime as it is.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "devices.h"
#include "numpy_arrays.h"
#include "ortvalues.h"
#include "registrations.h"
#include "tensors.h"

namespace ortdlpack::py {
namespace {

// x's tensor through its type's C exchange API (DLPack 1.3): one C call, no capsule. The producer hands it over
// unordered (no_sync): a device tensor is kept only when ortdlpack's stream can be ordered after the producer's
// current work stream (adopt_producer_work), as __dlpack__(stream=ours) would have the producer order it. NULL when
// this route does not apply, cannot order the tensor, or the producer's table refuses it (torch's refuses quantized
// and sparse tensors with a RuntimeError; its __dlpack__ says BufferError, as the protocol wants): __dlpack__ then
// decides.
DLManagedTensorVersioned* exchange_export(nb::handle x) {
  const DLPackExchangeAPI* api = exchange_api_of(Py_TYPE(x.ptr()));
  DLManagedTensorVersioned* m = nullptr;
  if (api == nullptr) return nullptr;
  // The table is the producer's: one that fails, or claims success without a tensor, is asked through __dlpack__.
  if (api->managed_tensor_from_py_object_no_sync(x.ptr(), &m) != 0 || m == nullptr) {
    clear_exception();
    return nullptr;
  }
  const DLDevice device = m->dl_tensor.device;
  if (device.device_type == kDLCPU) return m;
  void* producer_stream = nullptr;
  if (api->current_work_stream != nullptr &&
      api->current_work_stream(device.device_type, device.device_id, &producer_stream) == 0) {
    nb::gil_scoped_release release;  // the host may wait for the producer's stream
    if (adopt_producer_work(device, reinterpret_cast<uintptr_t>(producer_stream))) return m;
  }
  if (m->deleter != nullptr) m->deleter(m);  // DLPack allows a tensor without a deleter
  clear_exception();                         // (after the deleter: an interrupt leaves nothing behind)
  return nullptr;
}

// Interned names and prebuilt arguments of the __dlpack__ call: kw[bits] are the keyword names of a call with
// max_version and, by bit, stream (1), dl_device (2) and copy (4), in that order.
struct Names {
  Names() {
    for (int bits = 0; bits < 8; ++bits) {
      PyObject* t = PyTuple_New(1 + (bits & 1) + ((bits >> 1) & 1) + ((bits >> 2) & 1));
      Py_ssize_t i = 0;
      NB_TUPLE_SET_ITEM(t, i++, PyUnicode_InternFromString("max_version"));
      if (bits & 1) NB_TUPLE_SET_ITEM(t, i++, PyUnicode_InternFromString("stream"));
      if (bits & 2) NB_TUPLE_SET_ITEM(t, i++, PyUnicode_InternFromString("dl_device"));
      if (bits & 4) NB_TUPLE_SET_ITEM(t, i++, PyUnicode_InternFromString("copy"));
      kw[bits] = t;
    }
  }
  PyObject* dlpack = PyUnicode_InternFromString("__dlpack__");
  PyObject* dlpack_device = PyUnicode_InternFromString("__dlpack_device__");
  PyObject* max_version_value = Py_BuildValue("(ii)", DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION);
  PyObject* kw[8];
  PyObject* stream_kw = Py_BuildValue("(s)", "stream");
};
const Names& names() {
  static const Names* n = new Names();  // process lifetime
  return *n;
}

// The stream to name to a producer of a device tensor: ortdlpack's stream for its device, 0 (name none) for host
// memory, devices without a stream, and producers without __dlpack_device__. A numpy array is host memory: its
// __dlpack_device__ is not asked (the call costs as much as the rest of the import).
uintptr_t stream_for_producer(nb::handle x) {
  static PyTypeObject* const ndarray = module_type("numpy", "ndarray");  // numpy is a dependency of the package
  if (PyObject_TypeCheck(x.ptr(), ndarray)) return 0;
  PyObject* dev = PyObject_CallMethodObjArgs(x.ptr(), names().dlpack_device, nullptr);
  if (dev == nullptr) {
    clear_exception();
    return 0;
  }
  nb::object d = nb::steal(dev);
  if (!PyTuple_Check(dev) || NB_TUPLE_GET_SIZE(dev) != 2) return 0;
  const long type = PyLong_AsLong(NB_TUPLE_GET_ITEM(dev, 0));
  const long id = PyLong_AsLong(NB_TUPLE_GET_ITEM(dev, 1));
  if (PyErr_Occurred()) {
    clear_exception();
    return 0;
  }
  if (type == kDLCPU || id < 0) return 0;
  nb::gil_scoped_release release;
  return claim_import_stream(DLDevice{static_cast<DLDeviceType>(type), static_cast<int32_t>(id)});
}

// Asks a producer for a capsule: __dlpack__(max_version=(1, 3)[, stream=...][, dl_device=...][, copy=...]), naming
// ortdlpack's stream for a device tensor (stream.h: the producer orders its pending work before it, as torch does).
// A producer that cannot export on the target device (BufferError; ValueError from numpy < 2.3, the newest numpy
// on CPython 3.10) is asked for the tensor where it is (placing moves it); one older than the 2023.12 standard
// (TypeError for the keywords) is asked again with `stream` alone, then plainly (it then cannot order its work before
// ours). Whatever the producer did not do, placing the import does (a producer that copied says so with IS_COPIED).
// `stream`: stream_for_producer(x).
nb::object call_dlpack(nb::handle x, const Target& target, nb::handle copy, uintptr_t stream) {
  const Names& n = names();
  nb::object stream_value, device_tuple;
  PyObject* args[5] = {x.ptr(), n.max_version_value, nullptr, nullptr, nullptr};
  size_t count = 2;
  int bits = 0;
  if (stream != 0) {
    stream_value = nb::int_(stream);
    args[count++] = stream_value.ptr();
    bits |= 1;
  }
  if (target.kind == Target::Kind::kDevice) {
    device_tuple = nb::make_tuple(static_cast<int>(target.device.device_type), target.device.device_id);
    args[count++] = device_tuple.ptr();
    bits |= 2;
  }
  if (!copy.is_none()) {
    args[count++] = copy.ptr();
    bits |= 4;
  }
  const auto call = [&](PyObject* const* a, size_t positional, PyObject* kwnames) {
    return PyObject_VectorcallMethod(n.dlpack, a, positional | PY_VECTORCALL_ARGUMENTS_OFFSET, kwnames);
  };
  PyObject* r = call(args, 1, n.kw[bits]);
  if (r == nullptr && (bits & 2) &&
      (PyErr_ExceptionMatches(PyExc_BufferError) || PyErr_ExceptionMatches(PyExc_ValueError))) {
    PyErr_Clear();
    if (bits & 4) args[count - 2] = copy.ptr();  // copy moves into dl_device's slot
    r = call(args, 1, n.kw[bits & ~2]);
  }
  if (r == nullptr && PyErr_ExceptionMatches(PyExc_TypeError)) {
    PyErr_Clear();
    PyObject* only_stream[2] = {x.ptr(), stream_value.ptr()};
    r = stream != 0 ? call(only_stream, 1, n.stream_kw) : call(args, 1, nullptr);
    if (r == nullptr && stream != 0 && PyErr_ExceptionMatches(PyExc_TypeError)) {
      PyErr_Clear();
      r = call(args, 1, nullptr);
    }
  }
  if (r == nullptr) throw nb::python_error();
  if (!PyCapsule_CheckExact(r)) {
    Py_DECREF(r);
    throw nb::type_error("__dlpack__() did not return a PyCapsule");
  }
  return nb::steal(r);
}

// What a producer handed over when asked once (ask): a DLPack tensor (its type's C exchange API's, or an ml_dtypes
// array's) or a capsule (its __dlpack__'s), with the stream named to it (0: none). The tensor is owned here until
// imported or handed on (release).
struct Handed {
  Handed() = default;
  Handed(const Handed&) = delete;
  Handed& operator=(const Handed&) = delete;
  ~Handed() {
    if (tensor != nullptr && tensor->deleter != nullptr) tensor->deleter(tensor);
  }
  DLManagedTensorVersioned* release() { return std::exchange(tensor, nullptr); }

  DLManagedTensorVersioned* tensor = nullptr;
  nb::object capsule;
  bool immutable = false;  // the producer's arrays are (immutable_arrays), though its capsule says nothing
  uintptr_t stream = 0;
};

// Asks `x` (no Tensor, capsule nor OrtValue: the caller took those) for its tensor, once: through its type's C
// exchange API, as an ml_dtypes array numpy cannot export, else through __dlpack__ (placed at `target`, `copy` as
// given). TypeError naming `what` for an object that is no DLPack producer.
void ask(nb::handle x, const Target& target, nb::handle copy, const char* what, Handed& h) {
  if ((h.tensor = exchange_export(x)) != nullptr) return;
  if ((h.tensor = numpy_extension_export(x)) != nullptr) return;
  if (!PyObject_HasAttr(x.ptr(), names().dlpack)) {
    throw nb::type_error((std::string(what) +
                          " must be a DLPack producer (an object with __dlpack__) or a DLPack "
                          "capsule, not " +
                          type_name(x.ptr()))
                             .c_str());
  }
  h.stream = stream_for_producer(x);
  h.capsule = call_dlpack(x, target, copy, h.stream);
  h.immutable = immutable_arrays(framework_of_type(Py_TYPE(x.ptr())));
}

// The element type a handed-over tensor has (a capsule's: read, not consumed).
DLDataType handed_dtype(const Handed& h) {
  if (h.tensor != nullptr) return h.tensor->dl_tensor.dtype;
  if (PyCapsule_IsValid(h.capsule.ptr(), "dltensor_versioned")) {
    return static_cast<DLManagedTensorVersioned*>(PyCapsule_GetPointer(h.capsule.ptr(), "dltensor_versioned"))
        ->dl_tensor.dtype;
  }
  if (PyCapsule_IsValid(h.capsule.ptr(), "dltensor")) {
    return static_cast<DLManagedTensor*>(PyCapsule_GetPointer(h.capsule.ptr(), "dltensor"))->dl_tensor.dtype;
  }
  return DLDataType{};
}

// Whether `x`, whose tensor `h` holds, is a torch view whose values are not its memory: its negative or conjugate bit
// set (x.conj().imag, x._neg_view(): a lazy view of values its memory holds negated or conjugated), which torch's
// DLPack export ignores (torch 2.15), numpy's reads raw and torch's own .numpy() refuses. cupy, JAX and TensorFlow
// have no such views (their conj() computes). The conjugate bit is asked of complex tensors only (one call per
// tensor in the common case).
bool lazy_view(nb::handle x, const Handed& h) {
  static PyObject* const is_neg = PyUnicode_InternFromString("is_neg");  // process lifetime
  static PyObject* const is_conj = PyUnicode_InternFromString("is_conj");
  if (class_attribute(Py_TYPE(x.ptr()), is_neg) == nullptr) return false;  // (torch's tensors have it)
  const auto set = [&](PyObject* bit) {
    PyObject* self = x.ptr();
    nb::object r = nb::steal(PyObject_VectorcallMethod(bit, &self, 1 | PY_VECTORCALL_ARGUMENTS_OFFSET, nullptr));
    if (!r.is_valid()) throw nb::python_error();
    return r.is(Py_True);
  };
  return set(is_neg) || (handed_dtype(h).code == kDLComplex && set(is_conj));
}

// A lazy view (lazy_view) as a tensor whose memory holds its values (torch's resolve_conj/resolve_neg: a copy) where
// `copy` allows one, else CopyRequiredError.
nb::object resolve(nb::handle x, CopyMode copy) {
  if (copy == CopyMode::kNever) {
    throw Error(ErrorKind::kCopyRequired,
                "the torch tensor's values are not its memory (its negative or conjugate bit is set: a lazy view such "
                "as x.conj().imag), so its memory would be read as other values: a copy resolves it (copy=None), or "
                "pass x.resolve_neg().resolve_conj()");
  }
  return x.attr("resolve_conj")().attr("resolve_neg")();
}

Tensor import_handed(Handed& h, CopyMode copy, const Target& target) {
  if (h.tensor != nullptr) return import_owned(h.release(), copy, target);
  return import_capsule(h.capsule.ptr(), copy, target, h.immutable);
}

}  // namespace

Tensor import_any(nb::handle x, nb::handle device, nb::handle copy, const char* what) {
  const CopyMode mode = to_copy_mode(copy);
  const Target target = to_target(device, "device");
  if (is_tensor(x)) return place(tensor_of(x).tensor, target, mode, "from_dlpack", nullptr, &run_without_gil).tensor;
  if (PyCapsule_CheckExact(x.ptr())) return import_capsule(x.ptr(), mode, target);
  // onnxruntime.OrtValue: read through what the installed onnxruntime has (ortvalue.cc), bool typed as bool.
  if (is_ortvalue(x)) return import_capsule(capsule_of_ortvalue(x).ptr(), mode, target);
  Handed h;
  ask(x, target, copy, what, h);
  if (!lazy_view(x, h)) return import_handed(h, mode, target);
  Handed values;
  ask(resolve(x, mode), target, copy, what, values);
  return import_handed(values, mode, target);
}

namespace {

nb::object from_dlpack(nb::handle x, nb::handle device, nb::handle copy) {
  Tensor t = import_any(x, device, copy, "from_dlpack: x");
  // An ortdlpack.Tensor that stays where it is, is returned as itself.
  if (is_tensor(x) && t.ort_value() == tensor_of(x).tensor.ort_value()) return nb::borrow(x);
  return wrap(std::move(t));
}

// as_ortvalue: x's tensor goes to onnxruntime's OrtValue.from_dlpack as it is when that reads it correctly (is_plain,
// onnxruntime_python.h): one import, onnxruntime's. Otherwise ortdlpack imports it (copying what must be copied) and
// exports that. A tensor in memory with a stream is ordered on ortdlpack's (a C exchange API's device tensor after
// adopting the producer's work, a producer's named ortdlpack's stream: streams.md rule 1), which ortvalue_of completes:
// onnxruntime would order nothing before its reads.
nb::object as_ortvalue(nb::handle x) {
  if (is_ortvalue(x)) return nb::borrow(x);
  if (is_tensor(x)) return ortvalue_of(tensor_of(x).tensor);
  if (PyCapsule_CheckExact(x.ptr()))
    return ortvalue_of(import_capsule(x.ptr(), CopyMode::kIfNeeded, Target::anywhere()));
  Handed first;
  ask(x, Target::anywhere(), nb::none(), "as_ortvalue: x", first);
  const bool lazy = lazy_view(x, first);
  Handed resolved_view;
  if (lazy) ask(resolve(x, CopyMode::kIfNeeded), Target::anywhere(), nb::none(), "as_ortvalue: x", resolved_view);
  Handed& h = lazy ? resolved_view : first;
  if (h.tensor != nullptr) {
    if (h.tensor->dl_tensor.device.device_type == kDLCPU && is_plain(h.tensor->dl_tensor, h.tensor->flags)) {
      return ortvalue_from_capsule(legacy_capsule_over(h.release()));
    }
  } else if (h.stream == 0) {
    const nb::object legacy = plain_legacy_capsule(h.capsule);
    if (legacy.is_valid()) return ortvalue_from_capsule(legacy);
  }
  return ortvalue_of(import_handed(h, CopyMode::kIfNeeded, Target::anywhere()));
}

}  // namespace

void define_dlpack(nb::module_& m) {
  m.def("from_dlpack", &from_dlpack, nb::arg("x"), nb::kw_only(), nb::arg("device") = nb::none(),
        nb::arg("copy") = nb::none(),
        nb::sig(
            "def from_dlpack(x: object, /, *, device: Device | str | tuple[int, int] | onnxruntime.OrtEpDevice | None "
            "= None, copy: bool | None = None) -> Tensor"),
        "An ortdlpack.Tensor over `x`'s memory: any object with __dlpack__ (numpy, torch, jax, tensorflow, "
        "onnxruntime.OrtValue, ortdlpack.Tensor) or a DLPack capsule. copy: None (copy only if needed), True "
        "(always), False (never: CopyRequiredError, both ValueError and BufferError, if a copy is needed). device: "
        "move the result there (see Device).");
  m.def("as_ortvalue", &as_ortvalue, nb::arg("x"), nb::sig("def as_ortvalue(x: object) -> onnxruntime.OrtValue"),
        "An onnxruntime.OrtValue over x's memory (anything from_dlpack takes), without a copy when x's layout allows "
        "one; x lives as long as the OrtValue. An OrtValue is returned as is.");
}

}  // namespace ortdlpack::py
