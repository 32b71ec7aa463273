// The one mapping from ortdlpack::Error kinds to Python exceptions (Array API standard rules for DLPack), used by the
// exception translator, the C entry points and the exchange API's set_error.
#include "common.h"

namespace ortdlpack::py {
namespace {

// A needed copy that was not allowed: the Array API's from_dlpack says BufferError, its Raises section (and numpy,
// torch, JAX, numpy's __array__ contract) ValueError. One type that is both.
PyObject* g_copy_required = nullptr;

struct Row {
  ErrorKind kind;
  PyObject* const* type;
  const char* name;  // the kind string of DLPackExchangeAPI's set_error: a Python exception name
};
const Row kRows[] = {
    {ErrorKind::kInvalidArgument, &PyExc_ValueError, "ValueError"},
    {ErrorKind::kUnsupported, &PyExc_BufferError, "BufferError"},
    {ErrorKind::kCopyRequired, &g_copy_required, "BufferError"},
    {ErrorKind::kRuntime, &PyExc_RuntimeError, "RuntimeError"},
};

const Row& row(ErrorKind kind) {
  for (const Row& r : kRows) {
    if (r.kind == kind) return r;
  }
  return kRows[3];
}

}  // namespace

PyObject* exception_type(ErrorKind kind) { return *row(kind).type; }
const char* exception_name(ErrorKind kind) { return row(kind).name; }

int set_python_error() noexcept {
  try {
    throw;
  } catch (const Error& e) {
    PyErr_SetString(exception_type(e.kind()), e.what());
  } catch (nb::python_error& e) {
    e.restore();
  } catch (const nb::builtin_exception& e) {
    // nb::type_error / value_error / buffer_error thrown by the binding itself while converting arguments.
    PyErr_SetString(e.type() == nb::exception_type::type_error     ? PyExc_TypeError
                    : e.type() == nb::exception_type::value_error  ? PyExc_ValueError
                    : e.type() == nb::exception_type::buffer_error ? PyExc_BufferError
                                                                   : PyExc_RuntimeError,
                    e.what());
  } catch (const std::bad_alloc&) {
    PyErr_NoMemory();
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
  } catch (...) {
    PyErr_SetString(PyExc_RuntimeError, "ortdlpack: unknown C++ exception");
  }
  return -1;
}

void bind_errors(nb::module_& m) {
  nb::object bases = nb::make_tuple(nb::handle(PyExc_ValueError), nb::handle(PyExc_BufferError));
  g_copy_required = PyErr_NewExceptionWithDoc(
      "ortdlpack._ortdlpack.CopyRequiredError",
      "The exchange needs a copy and copy=False forbids it. Both ValueError (Array API, numpy's __array__) and "
      "BufferError (DLPack).",
      bases.ptr(), nullptr);
  if (g_copy_required == nullptr) throw nb::python_error();
  m.attr("CopyRequiredError") = nb::handle(g_copy_required);  // the module holds the reference for ever
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const Error& e) {
      PyErr_SetString(exception_type(e.kind()), e.what());
    }
  });
}

}  // namespace ortdlpack::py
