// _ortdlpack, the Python extension: what every one of its files uses. The extension converts Python objects and calls
// the C++ core (include/ortdlpack/, and src/frontend.h for what a front end reaches of its internals): every decision
// is the core's; this layer speaks Python (objects, arguments, exceptions, the GIL). Each concept's declarations are in
// a header of its own (tensors.h, sessions.h, ...), defined in the module by registrations.h's functions.
#pragma once

#include <Python.h>
#include <dlpack/dlpack.h>
#include <nanobind/nanobind.h>
// In every file: nb::cast<std::string> instantiated without its caster throws std::bad_cast, and the linker keeps one
// instantiation for all files.
#include <nanobind/stl/string.h>

#include <string>

#include "frontend.h"
#include "ortdlpack/ortdlpack.h"

namespace nb = nanobind;

namespace ortdlpack::py {

// The name of an object's type, for error messages (the abi3 build's limited API has no PyTypeObject::tp_name).
inline std::string type_name(PyObject* obj) {
  return nb::type_name(nb::handle(reinterpret_cast<PyObject*>(Py_TYPE(obj)))).c_str();
}

// Cyclic GC for a bound type T that holds Python objects: T::references(f) calls f(nb::object&) on every one it
// holds, and the type is made with nb::type_slots(Gc<T>::slots), so a cycle through it (a binding stored on its own
// session, ...) is collected: traverse visits them, clear drops them. A method of T called after clear (a finalizer
// in the same cycle) finds them invalid: what T holds in C++ must not depend on them (a Binding's session is kept
// alive by the core).
template <class T>
struct Gc {
  static int traverse(PyObject* self, visitproc visit, void* arg) {
    Py_VISIT(reinterpret_cast<PyObject*>(Py_TYPE(self)));  // a heap type's instances own a reference to it
    if (!nb::inst_ready(self)) return 0;
    int result = 0;
    nb::inst_ptr<T>(self)->references([&](nb::object& o) {
      if (result == 0 && o.is_valid()) result = visit(o.ptr(), arg);
    });
    return result;
  }
  static int clear(PyObject* self) {
    if (nb::inst_ready(self)) {
      nb::inst_ptr<T>(self)->references([](nb::object& o) { nb::object dropped = std::move(o); });
    }
    return 0;
  }
  static inline PyType_Slot slots[] = {{Py_tp_traverse, reinterpret_cast<void*>(&traverse)},
                                       {Py_tp_clear, reinterpret_cast<void*>(&clear)},
                                       {0, nullptr}};
};

// Whether Python objects may still be touched from a C callback (a deleter, the EP package finder): false once the
// interpreter began to exit (atexit ran; the limited API has no Py_IsFinalizing before 3.13). module.cc.
bool python_alive() noexcept;

// Where the extension tries another route after a Python call failed (an attribute a producer lacks, a call form it
// refuses, a value it cannot convert): the error is cleared when it is an Exception; anything else (KeyboardInterrupt,
// SystemExit, GeneratorExit) is never taken for "try another route": it propagates unchanged, as nb::python_error.
// clear_exception() for the error being raised (nothing raised: nothing to do), only_exceptions(e) for a caught one
// (rethrows it unless it is an Exception; call it inside the handler).
inline void clear_exception() {
  if (PyErr_Occurred() != nullptr && PyErr_ExceptionMatches(PyExc_Exception) == 0) throw nb::python_error();
  PyErr_Clear();
}
inline void only_exceptions(const nb::python_error& e) {
  if (!e.matches(PyExc_Exception)) throw;
}
// PyObject_HasAttrString without taking an interrupt for "no": whether getattr(obj, name) succeeds (clear_exception).
inline bool has_attribute(nb::handle obj, const char* name) {
  PyObject* value = PyObject_GetAttrString(obj.ptr(), name);
  if (value == nullptr) {
    clear_exception();
    return false;
  }
  Py_DECREF(value);
  return true;
}

// In a C entry point: turns the exception being handled into a Python error (the core's errors by errors.cc's one
// mapping). Returns -1.
int set_python_error() noexcept;
// The one wrapper of every C entry point (CPython methods, the exchange API, ORT's callbacks): runs `f` and returns
// its value, or turns any exception into a Python error and returns `failed`.
template <class R, class F>
R safe_call(R failed, F&& f) noexcept {
  try {
    return f();
  } catch (...) {
    set_python_error();
    return failed;
  }
}

// What the extension asks of a Python type (producer_types.cc), without keeping it alive: proxy and wrapper
// libraries make a class per call, and a cache keyed by such types would hold every one of them.
// A class attribute of `type` (found along its MRO), borrowed, or nullptr; raises only what clear_exception
// propagates (a metaclass's descriptor interrupted).
PyObject* class_attribute(PyTypeObject* type, PyObject* name);
// The top-level package that defines `type` ("torch" for torch.nn.Parameter; "" when it says none).
std::string package_of(PyTypeObject* type);
// The framework of a tensor of `type` (the core's table, frameworks.h, by package_of), kept for static types.
Framework framework_of_type(PyTypeObject* type);
// `module`.`name` (a type, a function), imported on first use and kept for the process's life (modules are not
// unloaded): the one way the extension caches what it calls or checks of another package. Borrowed.
PyObject* module_attribute(const char* module, const char* name);
// The same for a type: `static PyTypeObject* const t = module_type("onnxruntime", "RunOptions");`.
PyTypeObject* module_type(const char* module, const char* name);

// A str argument (TypeError naming `what` otherwise).
std::string str_of(nb::handle h, const char* what);

}  // namespace ortdlpack::py
