// The Python DLPack protocol (Array API standard 2024.12): capsules, Tensor.__dlpack__ (producer) and
// ortdlpack.from_dlpack (consumer). The tensors themselves are made and checked by the core (export.h, import.h).
#include <cstring>
#include <string>

#include "common.h"

namespace ortdlpack::py {
namespace {

constexpr const char* kVersioned = "dltensor_versioned";
constexpr const char* kUsedVersioned = "used_dltensor_versioned";
constexpr const char* kLegacy = "dltensor";
constexpr const char* kUsedLegacy = "used_dltensor";

// Capsule destructors: a capsule nobody consumed still owns its tensor. A consumer renames it to used_*, after which
// the name no longer matches and nothing is freed here. PyCapsule_IsValid sets no error, so a pending exception
// (the destructor may run during unwinding) is left alone.
void versioned_destructor(PyObject* capsule) {
  if (!PyCapsule_IsValid(capsule, kVersioned)) return;
  auto* m = static_cast<DLManagedTensorVersioned*>(PyCapsule_GetPointer(capsule, kVersioned));
  if (m->deleter != nullptr) m->deleter(m);
}

void legacy_destructor(PyObject* capsule) {
  if (!PyCapsule_IsValid(capsule, kLegacy)) return;
  auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, kLegacy));
  if (m->deleter != nullptr) m->deleter(m);
}

template <class Managed>
nb::object to_capsule(Managed* m, const char* name, PyCapsule_Destructor destructor) {
  PyObject* capsule = PyCapsule_New(m, name, destructor);
  if (capsule == nullptr) {
    m->deleter(m);
    throw nb::python_error();
  }
  return nb::steal(capsule);
}

// A legacy DLManagedTensor over a versioned export: same DLTensor (shape and strides stay in the versioned one).
struct LegacyOverVersioned {
  DLManagedTensor legacy;
  DLManagedTensorVersioned* inner;
  static void deleter(DLManagedTensor* self) noexcept {
    auto* w = static_cast<LegacyOverVersioned*>(self->manager_ctx);
    w->inner->deleter(w->inner);
    delete w;
  }
};

// --- arguments -------------------------------------------------------------------------------------------------

CopyMode parse_copy(nb::handle copy) {
  if (copy.is_none()) return CopyMode::kIfNeeded;
  if (copy.ptr() == Py_True) return CopyMode::kAlways;
  if (copy.ptr() == Py_False) return CopyMode::kNever;
  throw nb::type_error("copy must be True, False or None");
}

// max_version: None (legacy capsule) or a (major, minor) tuple; a versioned capsule for major >= 1.
bool wants_versioned(nb::handle max_version) {
  if (max_version.is_none()) return false;
  if (!PyTuple_Check(max_version.ptr()) || PyTuple_GET_SIZE(max_version.ptr()) != 2) {
    throw nb::type_error("max_version must be None or a (major, minor) tuple of ints");
  }
  const long major = PyLong_AsLong(PyTuple_GET_ITEM(max_version.ptr(), 0));
  if (major == -1 && PyErr_Occurred()) {
    PyErr_Clear();
    throw nb::type_error("max_version must be None or a (major, minor) tuple of ints");
  }
  return major >= 1;
}

// DLPack's `stream` argument as the core takes it (stream.h): None -> nullopt, an int -> its value. The values a
// device accepts, and what each one means, are the core's (order_for_consumer).
std::optional<int64_t> parse_stream(nb::handle stream) {
  if (stream.is_none()) return std::nullopt;
  if (!PyLong_Check(stream.ptr())) throw nb::type_error("stream must be None or an int");
  int overflow = 0;
  const long long v = PyLong_AsLongLongAndOverflow(stream.ptr(), &overflow);
  if (overflow > 0) {  // a pointer above INT64_MAX: the same bits
    return static_cast<int64_t>(PyLong_AsUnsignedLongLongMask(stream.ptr()));
  }
  if (overflow < 0) throw nb::value_error("stream must be None, -1 or a stream handle");
  return static_cast<int64_t>(v);
}

// --- import ----------------------------------------------------------------------------------------------------

// Imports a DLPack capsule: ownership moves into the Tensor and the capsule is renamed used_*. On failure the capsule
// is untouched and still owns its tensor. `copy` True is honoured without a second copy when the producer flagged
// its tensor IS_COPIED.
// With copy True and a `target` device other than the tensor's, the move to the target (place()) is the copy.
Tensor import_capsule(PyObject* capsule, CopyMode copy, const Device* target) {
  const char* name = PyCapsule_GetName(capsule);
  if (name == nullptr) throw nb::python_error();
  ImportOptions options;
  options.copy = copy;
  const auto moves = [&](const DLTensor& t) { return target != nullptr && !same_device(target->dl, t.device); };
  if (std::strcmp(name, kVersioned) == 0) {
    auto* m = static_cast<DLManagedTensorVersioned*>(PyCapsule_GetPointer(capsule, kVersioned));
    if (m == nullptr) throw nb::python_error();
    if (copy == CopyMode::kAlways && m->version.major == DLPACK_MAJOR_VERSION &&
        ((m->flags & DLPACK_FLAG_BITMASK_IS_COPIED) || moves(m->dl_tensor))) {
      options.copy = CopyMode::kIfNeeded;
    }
    Imported r = ortdlpack::from_dlpack(m, options);
    PyCapsule_SetName(capsule, kUsedVersioned);
    return std::move(r.tensor);
  }
  if (std::strcmp(name, kLegacy) == 0) {
    auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, kLegacy));
    if (m == nullptr) throw nb::python_error();
    if (copy == CopyMode::kAlways && moves(m->dl_tensor)) options.copy = CopyMode::kIfNeeded;
    Imported r = ortdlpack::from_dlpack(m, options);
    PyCapsule_SetName(capsule, kUsedLegacy);
    return std::move(r.tensor);
  }
  if (std::strcmp(name, kUsedVersioned) == 0 || std::strcmp(name, kUsedLegacy) == 0) {
    throw nb::value_error("this DLPack capsule was already consumed (a capsule can be imported once)");
  }
  throw nb::type_error(("a PyCapsule named '" + std::string(name) +
                        "' is not a DLPack tensor (expected 'dltensor_versioned' or 'dltensor')").c_str());
}

// Interned names and prebuilt arguments of the __dlpack__ call.
struct Names {
  PyObject* dlpack = PyUnicode_InternFromString("__dlpack__");
  PyObject* max_version_value = Py_BuildValue("(ii)", DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION);
  // kwnames for (max_version[, dl_device][, copy])
  PyObject* kw[4] = {Py_BuildValue("(s)", "max_version"), Py_BuildValue("(ss)", "max_version", "dl_device"),
                     Py_BuildValue("(ss)", "max_version", "copy"),
                     Py_BuildValue("(sss)", "max_version", "dl_device", "copy")};
};
const Names& names() {
  static const Names* n = new Names();  // process lifetime
  return *n;
}

// Asks a producer for a capsule: __dlpack__(max_version=(1, 3)[, dl_device=...][, copy=...]); a producer older
// than the 2023.12 standard raises TypeError for the keywords, and is asked again plainly: `*asked_all` tells which.
nb::object call_dlpack_on_stream(nb::handle x, const std::optional<DLDevice>& device, nb::handle copy,
                                 uintptr_t stream, bool* asked_all);

nb::object call_dlpack(nb::handle x, const std::optional<DLDevice>& device, nb::handle copy, bool* asked_all,
                       uintptr_t stream = 0) {
  if (stream != 0) return call_dlpack_on_stream(x, device, copy, stream, asked_all);
  const Names& n = names();
  PyObject* args[4] = {x.ptr(), n.max_version_value, nullptr, nullptr};
  size_t count = 2;
  int which = 0;
  nb::object device_tuple;
  if (device) {
    device_tuple = nb::make_tuple(static_cast<int>(device->device_type), device->device_id);
    args[count++] = device_tuple.ptr();
    which |= 1;
  }
  if (!copy.is_none()) {
    args[count++] = copy.ptr();
    which |= 2;
  }
  PyObject* r = PyObject_VectorcallMethod(n.dlpack, args, 1 | PY_VECTORCALL_ARGUMENTS_OFFSET, n.kw[which]);
  *asked_all = true;
  if (r == nullptr && device && PyErr_ExceptionMatches(PyExc_BufferError)) {
    // The producer cannot export on the target device: take it where it is, and ortdlpack moves it (place()).
    PyErr_Clear();
    if (which & 2) args[2] = copy.ptr();
    r = PyObject_VectorcallMethod(n.dlpack, args, 1 | PY_VECTORCALL_ARGUMENTS_OFFSET, n.kw[which & 2]);
  }
  if (r == nullptr && PyErr_ExceptionMatches(PyExc_TypeError)) {
    PyErr_Clear();
    *asked_all = false;
    r = PyObject_VectorcallMethod(n.dlpack, args, 1 | PY_VECTORCALL_ARGUMENTS_OFFSET, nullptr);
  }
  if (r == nullptr) throw nb::python_error();
  if (!PyCapsule_CheckExact(r)) {
    Py_DECREF(r);
    throw nb::type_error("__dlpack__() did not return a PyCapsule");
  }
  return nb::steal(r);
}

// The same call for a device tensor, naming ortdlpack's stream for that device (stream.h): the producer orders its
// pending work before it, as torch does for __dlpack__(stream=). Keyword arguments in a dict: device tensors only.
nb::object call_dlpack_on_stream(nb::handle x, const std::optional<DLDevice>& device, nb::handle copy,
                                 uintptr_t stream, bool* asked_all) {
  nb::dict kw;
  kw["stream"] = nb::int_(stream);
  kw["max_version"] = nb::borrow(names().max_version_value);
  if (device) kw["dl_device"] = nb::make_tuple(static_cast<int>(device->device_type), device->device_id);
  if (!copy.is_none()) kw["copy"] = copy;
  nb::object method = x.attr("__dlpack__");
  *asked_all = true;
  PyObject* r = PyObject_Call(method.ptr(), nb::tuple().ptr(), kw.ptr());
  if (r == nullptr && device && PyErr_ExceptionMatches(PyExc_BufferError)) {
    PyErr_Clear();  // cannot export on the target device: take it where it is (place() moves it)
    PyDict_DelItemString(kw.ptr(), "dl_device");
    r = PyObject_Call(method.ptr(), nb::tuple().ptr(), kw.ptr());
  }
  if (r == nullptr && PyErr_ExceptionMatches(PyExc_TypeError)) {
    PyErr_Clear();  // older than the 2023.12 standard: `stream` is all it knows
    *asked_all = false;
    nb::dict only;
    only["stream"] = nb::int_(stream);
    r = PyObject_Call(method.ptr(), nb::tuple().ptr(), only.ptr());
    if (r == nullptr && PyErr_ExceptionMatches(PyExc_TypeError)) {
      PyErr_Clear();  // takes no `stream` at all: it cannot order its work before ours
      r = PyObject_CallNoArgs(method.ptr());
    }
  }
  if (r == nullptr) throw nb::python_error();
  if (!PyCapsule_CheckExact(r)) {
    Py_DECREF(r);
    throw nb::type_error("__dlpack__() did not return a PyCapsule");
  }
  return nb::steal(r);
}

// The stream to name to a producer of a device tensor: ortdlpack's stream for its device, 0 (name none) for host
// memory, devices without a stream, and producers without __dlpack_device__.
uintptr_t stream_for_producer(nb::handle x) {
  PyObject* dev = PyObject_CallMethod(x.ptr(), "__dlpack_device__", nullptr);
  if (dev == nullptr) {
    PyErr_Clear();
    return 0;
  }
  nb::object d = nb::steal(dev);
  if (!PyTuple_Check(dev) || PyTuple_GET_SIZE(dev) != 2) return 0;
  const long type = PyLong_AsLong(PyTuple_GET_ITEM(dev, 0));
  const long id = PyLong_AsLong(PyTuple_GET_ITEM(dev, 1));
  if (PyErr_Occurred()) {
    PyErr_Clear();
    return 0;
  }
  if (type == kDLCPU || id < 0) return 0;
  nb::gil_scoped_release release;
  return consumer_stream(DLDevice{static_cast<DLDeviceType>(type), static_cast<int32_t>(id)});
}

// Moves `t` to `target` when it is elsewhere (copy False: BufferError instead).
Tensor place(Tensor t, const Device* target, CopyMode copy) {
  if (target == nullptr) return t;
  if (same_device(t.device(), target->dl) && target->memory == nullptr) return t;
  if (target->memory != nullptr) {
    int diff = 1;
    check(ort().CompareMemoryInfo(t.memory_info(), target->memory, &diff));
    if (diff == 0) return t;
  }
  if (copy == CopyMode::kNever) {
    throw Error(ErrorKind::kCopyRequired, "from_dlpack: the tensor is on " + describe(t.device()) +
                                              ", moving it to " + describe(target->dl) + " needs a copy (copy=False)");
  }
  nb::gil_scoped_release release;
  return target->memory ? to(t, target->memory) : to(t, target->dl);
}

}  // namespace

nb::object wrap(Tensor t) { return nb::cast(PyTensor(std::move(t)), nb::rv_policy::move); }

nb::object tensor_dlpack(nb::handle self, nb::handle stream, nb::handle max_version, nb::handle dl_device,
                         nb::handle copy) {
  const Tensor& t = tensor_of(self).tensor;
  const bool versioned = wants_versioned(max_version);
  const CopyMode mode = parse_copy(copy);
  const DLDevice device = t.device();
  const std::optional<int64_t> consumer = parse_stream(stream);
  Tensor out = t;
  bool copied = false;
  if (!dl_device.is_none()) {
    const Device target = to_device(dl_device);
    if (!same_device(target.dl, device)) {
      if (mode == CopyMode::kNever) {
        throw nb::buffer_error(("__dlpack__: the tensor is on " + describe(device) + "; exporting it on " +
                                describe(target.dl) + " needs a copy (copy=False)").c_str());
      }
      nb::gil_scoped_release release;
      out = to(t, target.dl);
      copied = true;
    }
  }
  if (mode == CopyMode::kAlways && !copied) {
    nb::gil_scoped_release release;
    out = to(t, t.memory_info());
    copied = true;
  }
  {
    // Complete for the consumer's stream (docs/streams.md): may wait on the host.
    nb::gil_scoped_release release;
    order_for_consumer(out, consumer);
  }
  if (versioned) {
    return to_capsule(to_dlpack_versioned(out, copied ? DLPACK_FLAG_BITMASK_IS_COPIED : 0), kVersioned,
                      versioned_destructor);
  }
  return to_capsule(to_dlpack_legacy(out), kLegacy, legacy_destructor);
}

nb::object legacy_capsule_for_ortvalue(const Tensor& t, bool bool_as_uint8) {
  DLManagedTensorVersioned* inner = to_dlpack_versioned(t);
  auto* w = new (std::nothrow) LegacyOverVersioned{};
  if (w == nullptr) {
    inner->deleter(inner);
    throw std::bad_alloc();
  }
  w->inner = inner;
  w->legacy.dl_tensor = inner->dl_tensor;
  if (bool_as_uint8 && w->legacy.dl_tensor.dtype.code == kDLBool) w->legacy.dl_tensor.dtype.code = kDLUInt;
  w->legacy.manager_ctx = w;
  w->legacy.deleter = &LegacyOverVersioned::deleter;
  return to_capsule(&w->legacy, kLegacy, legacy_destructor);
}

nb::object from_dlpack(nb::handle x, nb::handle device, nb::handle copy) {
  const CopyMode mode = parse_copy(copy);
  std::optional<Device> target;
  if (!device.is_none()) target = to_device(device);
  const Device* tp = target ? &*target : nullptr;

  if (is_tensor(x)) {
    const Tensor& t = tensor_of(x).tensor;
    if (mode == CopyMode::kAlways && (tp == nullptr || same_device(t.device(), tp->dl))) {
      nb::gil_scoped_release release;
      return wrap(to(t, t.memory_info()));
    }
    Tensor placed = place(t, tp, mode);
    if (placed.ort_value() == t.ort_value()) return nb::borrow(x);
    return wrap(std::move(placed));
  }

  if (PyCapsule_CheckExact(x.ptr())) return wrap(place(import_capsule(x.ptr(), mode, tp), tp, mode));

  // The C exchange API (DLPack 1.3) of the producer's type: one C call, no capsule. Used for host tensors; device
  // tensors go through __dlpack__, which orders the producer's work before the export.
  if (const DLPackExchangeAPI* api = exchange_api_of(Py_TYPE(x.ptr()))) {
    DLManagedTensorVersioned* m = nullptr;
    if (api->managed_tensor_from_py_object_no_sync(x.ptr(), &m) != 0) throw nb::python_error();
    if (m->dl_tensor.device.device_type == kDLCPU) {
      ImportOptions options;
      const bool copied_already = (m->flags & DLPACK_FLAG_BITMASK_IS_COPIED) != 0;
      options.copy = mode == CopyMode::kAlways && copied_already ? CopyMode::kIfNeeded : mode;
      if (tp != nullptr && !same_device(tp->dl, m->dl_tensor.device) && mode == CopyMode::kAlways) {
        options.copy = CopyMode::kIfNeeded;  // the move to the target is the copy
      }
      Imported r;
      try {
        r = ortdlpack::from_dlpack(m, options);
      } catch (...) {
        m->deleter(m);
        throw;
      }
      return wrap(place(std::move(r.tensor), tp, mode));
    }
    m->deleter(m);
  }

  // onnxruntime.OrtValue: read through what the installed onnxruntime has (ortvalue.cc), bool typed as bool.
  if (is_ortvalue(x)) return wrap(place(import_capsule(capsule_of_ortvalue(x).ptr(), mode, tp), tp, mode));

  if (!PyObject_HasAttr(x.ptr(), names().dlpack)) {
    throw nb::type_error(("from_dlpack: " + std::string(Py_TYPE(x.ptr())->tp_name) +
                          " is neither a DLPack producer (no __dlpack__) nor a DLPack capsule").c_str());
  }
  // A producer that took dl_device/copy has applied them (and says so with IS_COPIED); an old one has not, and
  // import_capsule/place() do it here.
  bool asked_all = false;
  nb::object capsule = call_dlpack(x, target ? std::optional<DLDevice>(target->dl) : std::nullopt, copy, &asked_all,
                                   stream_for_producer(x));
  return wrap(place(import_capsule(capsule.ptr(), mode, tp), tp, mode));
}

void bind_dlpack(nb::module_& m) {
  m.def("from_dlpack", &from_dlpack, nb::arg("x"), nb::kw_only(), nb::arg("device") = nb::none(),
        nb::arg("copy") = nb::none(),
        nb::sig("def from_dlpack(x: object, /, *, device: object | None = None, copy: bool | None = None) -> Tensor"),
        "An ortdlpack.Tensor over `x`'s memory: any object with __dlpack__ (numpy, torch, jax, tensorflow, "
        "onnxruntime.OrtValue, ortdlpack.Tensor) or a DLPack capsule. copy: None (copy only if needed), True "
        "(always), False (never: BufferError if a copy is needed). device: move the result there (see Device).");
  m.def("_order_before_run", [](nb::handle tensors) {
    std::vector<const Tensor*> ts;
    for (nb::handle h : tensors) {
      if (is_tensor(h)) ts.push_back(&tensor_of(h).tensor);
    }
    nb::gil_scoped_release release;
    order_before_run(ts);
  }, nb::arg("tensors"),
        "Waits for ortdlpack's pending stream work on the devices of these Tensors (others are ignored) before "
        "onnxruntime runs on them (docs/streams.md).");
  m.def("_legacy_capsule", [](nb::handle t) { return legacy_capsule_for_ortvalue(tensor_of(t).tensor); },
        "A legacy 'dltensor' capsule of a Tensor for legacy-only consumers (read-only and sub-byte tensors too).");
}

}  // namespace ortdlpack::py
