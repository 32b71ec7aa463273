// The one mapping of ortdlpack::Error to the extension's errors (errors.h): Python exceptions, for the exception
// translator, the C entry points and the exchange API's set_error, and for the session APIs as onnxruntime raises them;
// XLA's FFI error codes, for the jax_function handler (xla_ffi.cc).
#include "errors.h"

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

// onnxruntime's exception class for each ORT error code, as its binding raises them (onnxruntime_pybind_exceptions.cc:
// one class per code, each derived from Exception alone; MODEL_LOADED and codes it does not know fall to its default,
// a RuntimeError), and the name its messages give the code (Status::ToString). `onnxruntime` is NULL where the
// installed onnxruntime has no class of that name (DeviceReset before 1.32).
struct OrtClass {
  OrtErrorCode code;
  const char* status_name;
  const char* name;  // nullptr: raised as RuntimeError
  PyObject* onnxruntime = nullptr;
};
OrtClass g_ort_classes[] = {
    {ORT_FAIL, "FAIL", "Fail"},
    {ORT_INVALID_ARGUMENT, "INVALID_ARGUMENT", "InvalidArgument"},
    {ORT_NO_SUCHFILE, "NO_SUCHFILE", "NoSuchFile"},
    {ORT_NO_MODEL, "NO_MODEL", "NoModel"},
    {ORT_ENGINE_ERROR, "ENGINE_ERROR", "EngineError"},
    {ORT_RUNTIME_EXCEPTION, "RUNTIME_EXCEPTION", "RuntimeException"},
    {ORT_INVALID_PROTOBUF, "INVALID_PROTOBUF", "InvalidProtobuf"},
    {ORT_MODEL_LOADED, "MODEL_LOADED", nullptr},
    {ORT_NOT_IMPLEMENTED, "NOT_IMPLEMENTED", "NotImplemented"},
    {ORT_INVALID_GRAPH, "INVALID_GRAPH", "InvalidGraph"},
    {ORT_EP_FAIL, "EP_FAIL", "EPFail"},
    {ORT_MODEL_LOAD_CANCELED, "MODEL_LOAD_CANCELED", "ModelLoadCanceled"},
    {ORT_MODEL_REQUIRES_COMPILATION, "MODEL_REQUIRES_COMPILATION", "ModelRequiresCompilation"},
    {ORT_NOT_FOUND, "NOT_FOUND", "NotFound"},
    {ORT_DEVICE_RESET, "DEVICE_RESET", "DeviceReset"},
};

const OrtClass* ort_class(OrtErrorCode code) {
  for (const OrtClass& c : g_ort_classes) {
    if (c.code == code) return &c;
  }
  return nullptr;
}

}  // namespace

PyObject* exception_type(ErrorKind kind) { return *row(kind).type; }
const char* exception_name(ErrorKind kind) { return row(kind).name; }
int xla_error_code(ErrorKind kind) { return row(kind).xla; }

void raise_as_onnxruntime(const Error& e) {
  if (e.ort_code() == ORT_OK) {
    PyErr_SetString(exception_type(e.kind()), e.what());
    throw nb::python_error();
  }
  const OrtClass* c = ort_class(e.ort_code());
  const std::string message = "[ONNXRuntimeError] : " + std::to_string(static_cast<int>(e.ort_code())) + " : " +
                              (c != nullptr ? c->status_name : "GENERAL ERROR") + " : " + e.what();
  PyErr_SetString(c != nullptr && c->onnxruntime != nullptr ? c->onnxruntime : PyExc_RuntimeError, message.c_str());
  throw nb::python_error();
}

bool is_onnxruntime_error(nb::handle type, OrtErrorCode code) {
  const OrtClass* c = ort_class(code);
  return c != nullptr && c->onnxruntime != nullptr && type.is(c->onnxruntime);
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
  for (OrtClass& c : g_ort_classes) {
    if (c.name == nullptr || !nb::hasattr(state, c.name)) continue;
    c.onnxruntime = nb::object(state.attr(c.name)).release().ptr();
    classes[c.name] = nb::handle(c.onnxruntime);
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
