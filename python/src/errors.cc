// One exception translator: ortdlpack::Error kinds become the Python exceptions the Array API standard asks for.
#include "common.h"

namespace ortdlpack::py {

PyObject* exception_type(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kInvalidArgument: return PyExc_ValueError;
    case ErrorKind::kUnsupported:
    case ErrorKind::kCopyRequired: return PyExc_BufferError;
    case ErrorKind::kRuntime: return PyExc_RuntimeError;
  }
  return PyExc_RuntimeError;
}

int set_python_error() noexcept {
  try {
    throw;
  } catch (const Error& e) {
    PyErr_SetString(exception_type(e.kind()), e.what());
  } catch (nb::python_error& e) {
    e.restore();
  } catch (const nb::builtin_exception& e) {
    // nb::type_error / value_error / buffer_error thrown by the binding itself.
    PyObject* type = PyExc_RuntimeError;
    switch (e.type()) {
      case nb::exception_type::type_error: type = PyExc_TypeError; break;
      case nb::exception_type::value_error: type = PyExc_ValueError; break;
      case nb::exception_type::buffer_error: type = PyExc_BufferError; break;
      default: break;
    }
    PyErr_SetString(type, e.what());
  } catch (const std::bad_alloc&) {
    PyErr_NoMemory();
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
  } catch (...) {
    PyErr_SetString(PyExc_RuntimeError, "ortdlpack: unknown C++ exception");
  }
  return -1;
}

void bind_errors(nb::module_&) {
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const Error& e) {
      PyErr_SetString(exception_type(e.kind()), e.what());
    }
  });
}

}  // namespace ortdlpack::py
