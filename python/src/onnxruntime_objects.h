// The ORT structs behind onnxruntime's Python SessionOptions, RunOptions and InferenceSession (onnxruntime_objects.cc):
// reached through pybind11's cross-binding conduit, which checks the C++ type by name, and, for the session, recognised
// by its vtable (session_at, onnxruntime_python.h).
#pragma once

#include "extension.h"

namespace ortdlpack::py {

// Whether `x` is an onnxruntime.SessionOptions / RunOptions.
bool is_session_options(nb::handle x);
bool is_run_options(nb::handle x);
// The ORT struct behind an onnxruntime.SessionOptions / RunOptions (type checked by the caller), borrowed: valid while
// the Python object lives. ValueError naming `what` when the installed onnxruntime does not hand it out; `hint` ends
// that message.
const OrtSessionOptions* onnxruntime_session_options(nb::handle options, const char* what, const char* hint);
const OrtRunOptions* onnxruntime_run_options(nb::handle options, const char* what);

// The OrtSession behind a C session, or why not: no pybind11 conduit to its SessionIOBinding (another object, a
// future onnxruntime), a first word that cannot be read, or an object that does not start with ORT's session vtable.
BorrowedPointer onnxruntime_session(nb::handle c_session);

}  // namespace ortdlpack::py
