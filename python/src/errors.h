// The one mapping of the core's errors (ortdlpack::Error) to the extension's: Python exceptions and XLA's FFI error
// codes (errors.cc).
#pragma once

#include <string>

#include "extension.h"

namespace ortdlpack::py {

// The Python exception type for an error kind, by the Array API standard's and numpy's rules for DLPack
// (kInvalidArgument: ValueError; kUnsupported: BufferError; kCopyRequired: ortdlpack.CopyRequiredError, both ValueError
// and BufferError; kRuntime: RuntimeError), and its name as DLPackExchangeAPI's set_error takes it.
PyObject* exception_type(ErrorKind kind);
const char* exception_name(ErrorKind kind);
// The error code (XLA_FFI_Error_Code) XLA's FFI reports an error kind with.
int xla_error_code(ErrorKind kind);

// What the session APIs raise (InferenceSession, ortdlpack.run, Session, Binding, the compiled sessions' kernels): an
// error ORT reports, or one ortdlpack finds first where ORT's run would (it carries ORT's code), as onnxruntime's own
// binding raises it — onnxruntime's class for that code, or RuntimeError where onnxruntime's has none, with its message
// "[ONNXRuntimeError] : <code> : <NAME> : <ORT's message>"; every other error by its kind. Runs `f` and returns what
// it returns; called with the GIL held (`f` may release it inside).
[[noreturn]] void raise_as_onnxruntime(const Error& e);
template <class F>
auto onnxruntime_errors(F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const Error& e) {
    raise_as_onnxruntime(e);
  }
}
// Adds a PEP 678 note to the exception being raised: add_note on CPython 3.11+; before, __notes__ (which tracebacks
// there do not show, but which stays on the object for whoever handles it).
void add_note(const nb::python_error& e, const std::string& note);
// Whether `type` is onnxruntime's exception class for ORT error `code`.
bool is_onnxruntime_error(nb::handle type, OrtErrorCode code);

}  // namespace ortdlpack::py
