// A user's onnxruntime.InferenceSession as the core runs it (PyBorrowedSession, made in run.cc): the core's Session
// over the OrtSession of one C session of it (its `_sess`, which set_providers() replaces), so that every run of
// tensors goes through the core's one executor; and onnxruntime's own run for a plan of values (onnxruntime_runs.cc).
#pragma once

#include <memory>

#include "binding.h"

namespace ortdlpack::py {

struct PyBorrowedSession {
  // The core's Session over `c_session`'s OrtSession, with its providers and whether it captures graphs (run.cc).
  // Error(kUnsupported) where this onnxruntime does not hand its OrtSession out (onnxruntime_session()).
  explicit PyBorrowedSession(nb::handle c_session);
  nb::object c_session;  // held: it owns the OrtSession the core borrows; replaced when `_sess` is no longer this one
  std::unique_ptr<Session> core;
  bool host_outputs;  // py::host_outputs
  bool
      graph_capture;  // WebGPU graph capture: onnxruntime checks every run of its own (_validate_graph_capture_run_api)
  nb::object run;     // c_session.run: onnxruntime's run, without the Python checks the plan makes
  nb::list all_outputs;

  template <class F>
  void references(F f) {  // (Gc; a session whose c_session the collector cleared is replaced: borrowed_session_of)
    f(c_session);
    f(run);
    f(all_outputs);
  }
};

// Runs the plan with onnxruntime's run: the bound tensors as numpy views (onnxruntime.OrtValues where numpy has no
// view), the values as they are (the caller's own dict when every feed is a value the caller gave).
nb::object run_with_values(const PyBorrowedSession& s, const Request& r, nb::handle session, nb::handle feeds,
                           nb::handle run_options);

}  // namespace ortdlpack::py
