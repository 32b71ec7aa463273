// The one mapping of ortdlpack::Error to the binding's errors: Python exceptions, for the exception translator, the C
// entry points and the exchange API's set_error, and XLA's FFI error codes, for the jax_function handler
// (xla_ffi.cc). An error's kind gives the class of Python's conventions (Array API standard rules for DLPack); an
// error that carries ORT's code is raised as a class that is also onnxruntime's for that code, so code written for
// onnxruntime (except onnxruntime.capi.onnxruntime_pybind11_state.InvalidArgument) catches it too.
#include <string>

#include "binding.h"

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

// onnxruntime's exception class for each ORT error code (onnxruntime.capi.onnxruntime_pybind11_state.<name>, as its
// binding raises them), and ortdlpack's class for the same code: a subclass of that class and of the Python class of
// the code's kind (error_kind). Both NULL where the installed onnxruntime has no class of that name.
struct OrtClass {
  OrtErrorCode code;
  const char* name;
  PyObject* onnxruntime = nullptr;
  PyObject* ortdlpack = nullptr;
};
OrtClass g_ort_classes[] = {
    {ORT_FAIL, "Fail"},
    {ORT_INVALID_ARGUMENT, "InvalidArgument"},
    {ORT_NO_SUCHFILE, "NoSuchFile"},
    {ORT_NO_MODEL, "NoModel"},
    {ORT_ENGINE_ERROR, "EngineError"},
    {ORT_RUNTIME_EXCEPTION, "RuntimeException"},
    {ORT_INVALID_PROTOBUF, "InvalidProtobuf"},
    {ORT_MODEL_LOADED, "ModelLoaded"},
    {ORT_NOT_IMPLEMENTED, "NotImplemented"},
    {ORT_INVALID_GRAPH, "InvalidGraph"},
    {ORT_EP_FAIL, "EPFail"},
    {ORT_MODEL_LOAD_CANCELED, "ModelLoadCanceled"},
    {ORT_MODEL_REQUIRES_COMPILATION, "ModelRequiresCompilation"},
    {ORT_NOT_FOUND, "NotFound"},
    {ORT_DEVICE_RESET, "DeviceReset"},
};

// Malformed feeds, as ortdlpack's TypeError and what onnxruntime's run raises for them (call_shape_error).
PyObject* g_feeds_type_error = nullptr;
PyObject* g_feed_key_error = nullptr;

PyObject* type_of(const Error& e) {
  if (e.ort_code() != ORT_OK) {
    for (const OrtClass& c : g_ort_classes) {
      if (c.code == e.ort_code() && c.ortdlpack != nullptr) return c.ortdlpack;
    }
  }
  return exception_type(e.kind());
}

}  // namespace

PyObject* exception_type(ErrorKind kind) { return *row(kind).type; }
const char* exception_name(ErrorKind kind) { return row(kind).name; }
int xla_error_code(ErrorKind kind) { return row(kind).xla; }

void raise_onnxruntime_error(nb::python_error& e) {
  for (const OrtClass& c : g_ort_classes) {
    if (c.onnxruntime != nullptr && e.type().is(nb::handle(c.onnxruntime))) {
      nb::raise_from(e, c.ortdlpack, "%U", nb::str(e.value()).ptr());
    }
  }
  throw std::move(e);
}

void call_shape_error(CallShape what, const std::string& message) {
  PyErr_SetString(what == CallShape::kFeedsNoMapping ? g_feeds_type_error : g_feed_key_error, message.c_str());
  throw nb::python_error();
}

bool is_onnxruntime_error(nb::handle type, OrtErrorCode code) {
  for (const OrtClass& c : g_ort_classes) {
    if (c.code == code) return c.onnxruntime != nullptr && (type.is(c.onnxruntime) || type.is(c.ortdlpack));
  }
  return false;
}

int set_python_error() noexcept {
  try {
    throw;
  } catch (const Error& e) {
    PyErr_SetString(type_of(e), e.what());
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
  // ortdlpack.errors.<name> for each of onnxruntime's classes (module process lifetime: the references are kept).
  const nb::object state = nb::module_::import_("onnxruntime.capi.onnxruntime_pybind11_state");
  nb::dict classes;
  for (OrtClass& c : g_ort_classes) {
    if (!nb::hasattr(state, c.name)) continue;
    c.onnxruntime = nb::object(state.attr(c.name)).release().ptr();
    const std::string qualified = std::string("ortdlpack.errors.") + c.name;
    const std::string doc = std::string("onnxruntime's ") + c.name + " (ORT error code " + std::to_string(c.code) +
                            ") raised by ortdlpack: an instance of onnxruntime's class and of " +
                            exception_name(error_kind(c.code));
    c.ortdlpack = PyErr_NewExceptionWithDoc(
        qualified.c_str(), doc.c_str(),
        nb::make_tuple(nb::handle(c.onnxruntime), nb::handle(exception_type(error_kind(c.code)))).ptr(), nullptr);
    if (c.ortdlpack == nullptr) throw nb::python_error();
    classes[c.name] = nb::handle(c.ortdlpack);
  }
  const auto both = [&](const char* name, PyObject* other, const char* doc) {
    PyObject* type =
        PyErr_NewExceptionWithDoc((std::string("ortdlpack.errors.") + name).c_str(), doc,
                                  nb::make_tuple(nb::handle(PyExc_TypeError), nb::handle(other)).ptr(), nullptr);
    if (type == nullptr) throw nb::python_error();
    classes[name] = nb::handle(type);
    return type;
  };
  g_feeds_type_error = both("FeedsTypeError", PyExc_AttributeError,
                            "Feeds that are no mapping: a TypeError (ortdlpack's class) and an AttributeError (what "
                            "onnxruntime's run raises reading input_feed.keys()).");
  g_feed_key_error = both("FeedKeyError", PyExc_ValueError,
                          "A feed keyed by something other than a str: a TypeError (ortdlpack's class) and a "
                          "ValueError (what onnxruntime's run raises: no input has that name, so the input is "
                          "missing).");
  m.attr("_onnxruntime_errors") = classes;
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const Error& e) {
      PyErr_SetString(type_of(e), e.what());
    }
  });
}

}  // namespace ortdlpack::py
