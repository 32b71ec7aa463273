// The one mapping of ortdlpack::Error to the extension's errors (errors.h): Python exceptions, for the exception
// translator, the C entry points and the exchange API's set_error, and for the session APIs as onnxruntime raises them;
// XLA's FFI error codes, for the jax_function handler (xla_ffi.cc).
#include "errors.h"

#include <iterator>
#include <string>

#include "registrations.h"

namespace ortdlpack::py {
namespace {

// A needed copy that was not allowed: the Array API's from_dlpack says BufferError, its Raises section (and numpy,
// torch, JAX, numpy's __array__ contract) ValueError. One type that is both.
PyObject* g_copy_required = nullptr;

// XLA's FFI error codes (XLA_FFI_Error_Code: absl's canonical status codes) the handler reports errors with.
constexpr int kXlaInvalidArgument = 3;
constexpr int kXlaInternal = 13;

struct Row {
  ErrorKind kind;
  PyObject* const* type;
  const char* name;  // the kind string of DLPackExchangeAPI's set_error: a Python exception name
  int xla;           // XLA's FFI error code: INTERNAL for what ORT failed at, INVALID_ARGUMENT for the call's errors
};
const Row kRows[] = {
    {ErrorKind::kInvalidArgument, &PyExc_ValueError, "ValueError", kXlaInvalidArgument},
    {ErrorKind::kUnsupported, &PyExc_BufferError, "BufferError", kXlaInvalidArgument},
    {ErrorKind::kCopyRequired, &g_copy_required, "BufferError", kXlaInvalidArgument},
    {ErrorKind::kRuntime, &PyExc_RuntimeError, "RuntimeError", kXlaInternal},
};

const Row& row(ErrorKind kind) {
  for (const Row& r : kRows) {
    if (r.kind == kind) return r;
  }
  return kRows[3];
}

// onnxruntime's exception class of each ORT error code (kOnnxruntimeErrors), by code; NULL: RuntimeError, or a class
// the installed onnxruntime lacks (DeviceReset before 1.32). Process lifetime.
PyObject* g_onnxruntime_classes[std::size(kOnnxruntimeErrors)] = {};

PyObject* onnxruntime_class(OrtErrorCode code) {
  const auto i = static_cast<size_t>(code);
  return i < std::size(g_onnxruntime_classes) ? g_onnxruntime_classes[i] : nullptr;
}

}  // namespace

PyObject* exception_type(ErrorKind kind) { return *row(kind).type; }
const char* exception_name(ErrorKind kind) { return row(kind).name; }
int xla_error_code(ErrorKind kind) { return row(kind).xla; }

void raise_as_onnxruntime(const Error& e) {
  if (e.ort_code() == ORT_OK) {
    PyErr_SetString(exception_type(e.kind()), e.what());
  } else {
    PyObject* type = onnxruntime_class(e.ort_code());
    PyErr_SetString(type != nullptr ? type : PyExc_RuntimeError, onnxruntime_message(e).c_str());
  }
  throw nb::python_error();
}

void add_note(const nb::python_error& e, const std::string& note) {
  nb::handle value = e.value();
  if (nb::hasattr(value, "add_note")) {
    value.attr("add_note")(note);
    return;
  }
  nb::object notes = nb::hasattr(value, "__notes__") ? nb::object(value.attr("__notes__")) : nb::object(nb::list());
  notes.attr("append")(note);
  nb::setattr(value, "__notes__", notes);
}

bool is_onnxruntime_error(nb::handle type, OrtErrorCode code) {
  PyObject* c = onnxruntime_class(code);
  return c != nullptr && type.is(c);
}

int set_python_error() noexcept {
  try {
    throw;
  } catch (const Error& e) {
    PyErr_SetString(exception_type(e.kind()), e.what());
  } catch (nb::python_error& e) {
    e.restore();
  } catch (const nb::builtin_exception& e) {
    // nb::type_error, value_error, ... thrown by the extension itself while converting arguments.
    PyObject* type = PyExc_RuntimeError;
    switch (e.type()) {
      case nb::exception_type::type_error:
        type = PyExc_TypeError;
        break;
      case nb::exception_type::value_error:
        type = PyExc_ValueError;
        break;
      case nb::exception_type::buffer_error:
        type = PyExc_BufferError;
        break;
      case nb::exception_type::attribute_error:
        type = PyExc_AttributeError;
        break;
      case nb::exception_type::index_error:
        type = PyExc_IndexError;
        break;
      case nb::exception_type::key_error:
        type = PyExc_KeyError;
        break;
      default:
        break;
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

void define_errors(nb::module_& m) {
  nb::object bases = nb::make_tuple(nb::handle(PyExc_ValueError), nb::handle(PyExc_BufferError));
  g_copy_required = PyErr_NewExceptionWithDoc(
      "ortdlpack._ortdlpack.CopyRequiredError",
      "The exchange needs a copy and copy=False forbids it. Both ValueError (Array API, numpy's __array__) and "
      "BufferError (DLPack).",
      bases.ptr(), nullptr);
  if (g_copy_required == nullptr) throw nb::python_error();
  m.attr("CopyRequiredError") = nb::handle(g_copy_required);  // the module holds the reference for ever
  // ortdlpack.errors.<name>: onnxruntime's own classes, which the session APIs raise (process lifetime).
  const nb::object state = nb::module_::import_("onnxruntime.capi.onnxruntime_pybind11_state");
  nb::dict classes;
  for (const OnnxruntimeError& c : kOnnxruntimeErrors) {
    if (c.class_name == nullptr || !nb::hasattr(state, c.class_name)) continue;
    g_onnxruntime_classes[c.code] = nb::object(state.attr(c.class_name)).release().ptr();
    classes[c.class_name] = nb::handle(g_onnxruntime_classes[c.code]);
  }
  m.attr("_onnxruntime_errors") = classes;
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const Error& e) {
      PyErr_SetString(exception_type(e.kind()), e.what());
    }
  });
}

}  // namespace ortdlpack::py
