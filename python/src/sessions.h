// What the session objects share (session.cc: ortdlpack.Session and Binding; run.cc: ortdlpack.run and
// InferenceSession's run and bind).
#pragma once

#include <memory>

#include "run_arguments.h"

namespace ortdlpack::py {

// run_options= as the core takes it: the OrtRunOptions behind an onnxruntime.RunOptions, NULL for None. TypeError for
// anything else.
const OrtRunOptions* to_run_options(nb::handle run_options);
// The core Session of an ortdlpack.Session (TypeError for any other object): valid while that object lives.
Session& core_session(nb::handle session);
// A C++ owner of a reference to `obj`, for the core to hold: released with the GIL from whichever thread drops it
// (after the interpreter's exit began, left to the interpreter).
std::shared_ptr<const void> python_reference(nb::handle obj);
// Session::bind / bind() for a converted request (the GIL released while the core binds), as a Python Binding whose
// `owner` keeps the session alive.
nb::object bind_request(Session& session, Request& r, nb::handle owner);

}  // namespace ortdlpack::py
