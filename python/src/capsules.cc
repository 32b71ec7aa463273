// DLPack capsules both ways (Array API standard 2024.12), over the core's export and import (export.h, import.h):
// Tensor.__dlpack__'s versioned and legacy capsules, legacy capsules for legacy-only consumers, and the import of a
// capsule or of a DLPack tensor handed to the binding (import_owned: its one free-on-failure rule).
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>

#include "devices.h"
#include "numpy_arrays.h"
#include "tensors.h"

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

// max_version: None (legacy capsule) or a (major, minor) tuple; a versioned capsule for major >= 1.
bool wants_versioned(nb::handle max_version) {
  if (max_version.is_none()) return false;
  if (!PyTuple_Check(max_version.ptr()) || NB_TUPLE_GET_SIZE(max_version.ptr()) != 2) {
    throw nb::type_error("max_version must be None or a (major, minor) tuple of ints");
  }
  const long major = PyLong_AsLong(NB_TUPLE_GET_ITEM(max_version.ptr(), 0));
  if (major == -1 && PyErr_Occurred()) {
    clear_exception();
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

// The one import route (capsules and tensors handed over): the core's import, placed (import.h). On failure the
// caller still owns `m`; `consumed()` runs once the Tensor owns it (a capsule is renamed then, so that its
// destructor does not free it again).
template <class Managed, class Consumed>
Tensor import_placed(Managed* m, CopyMode copy, const Target& target, bool immutable, Consumed consumed) {
  ImportOptions options;
  options.copy = copy;
  options.target = target;
  options.read_only = immutable;
  options.run_copy = &run_without_gil;
  Imported r = ortdlpack::from_dlpack(m, options);
  consumed();
  return std::move(r.tensor);
}

}  // namespace

nb::object tensor_dlpack(nb::handle self, nb::handle stream, nb::handle max_version, nb::handle dl_device,
                         nb::handle copy) {
  const Tensor& t = tensor_of(self).tensor;
  const bool versioned = wants_versioned(max_version);
  const CopyMode mode = to_copy_mode(copy);
  const std::optional<int64_t> consumer = parse_stream(stream);
  const Placed p = place(t, to_target(dl_device, "dl_device"), mode, "__dlpack__", nullptr, &run_without_gil);
  order_for_consumer_without_gil(p.tensor, consumer);
  if (versioned) {
    return to_capsule(to_dlpack_versioned(p.tensor, p.copied ? DLPACK_FLAG_BITMASK_IS_COPIED : 0), kVersioned,
                      versioned_destructor);
  }
  return to_capsule(to_dlpack_legacy(p.tensor), kLegacy, legacy_destructor);
}

nb::object legacy_capsule_over(DLManagedTensorVersioned* inner) {
  return to_capsule(legacy_view(inner), kLegacy, legacy_destructor);
}

nb::object plain_legacy_capsule(nb::handle capsule) {
  PyObject* c = capsule.ptr();
  if (PyCapsule_IsValid(c, kLegacy)) {
    const auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(c, kLegacy));
    return is_plain(m->dl_tensor) ? nb::borrow(capsule) : nb::object();
  }
  if (!PyCapsule_IsValid(c, kVersioned)) return nb::object();
  auto* m = static_cast<DLManagedTensorVersioned*>(PyCapsule_GetPointer(c, kVersioned));
  if (!is_plain(m->dl_tensor, m->flags)) return nb::object();
  if (PyCapsule_SetName(c, kUsedVersioned) != 0) throw nb::python_error();
  return legacy_capsule_over(m);
}

Tensor import_capsule(PyObject* capsule, CopyMode copy, const Target& target, bool immutable) {
  const char* name = PyCapsule_GetName(capsule);
  if (name == nullptr) throw nb::python_error();
  if (std::strcmp(name, kVersioned) == 0) {
    auto* m = static_cast<DLManagedTensorVersioned*>(PyCapsule_GetPointer(capsule, kVersioned));
    if (m == nullptr) throw nb::python_error();
    return import_placed(m, copy, target, immutable, [&] { PyCapsule_SetName(capsule, kUsedVersioned); });
  }
  if (std::strcmp(name, kLegacy) == 0) {
    auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, kLegacy));
    if (m == nullptr) throw nb::python_error();
    return import_placed(m, copy, target, immutable, [&] { PyCapsule_SetName(capsule, kUsedLegacy); });
  }
  if (std::strcmp(name, kUsedVersioned) == 0 || std::strcmp(name, kUsedLegacy) == 0) {
    throw Error(ErrorKind::kInvalidArgument,
                "this DLPack capsule was already consumed (a capsule can be imported once)");
  }
  throw nb::type_error(("a PyCapsule named '" + std::string(name) +
                        "' is not a DLPack tensor (expected 'dltensor_versioned' or 'dltensor')")
                           .c_str());
}

Tensor import_owned(DLManagedTensorVersioned* m, CopyMode copy, const Target& target) {
  bool owned = false;  // by the Tensor, once imported
  try {
    return import_placed(m, copy, target, false, [&] { owned = true; });
  } catch (...) {
    if (!owned && m != nullptr && m->deleter != nullptr) m->deleter(m);
    throw;
  }
}

}  // namespace ortdlpack::py
