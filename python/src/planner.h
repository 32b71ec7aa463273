// What ortdlpack knows of one C session of a user's onnxruntime.InferenceSession (PyPlanner, made in run.cc), and the
// two ways its plans run on onnxruntime (onnxruntime_runs.cc): its run, for a plan of values or of host memory
// (py::runs_with_values), else an IOBinding by address with each memory's exact OrtDevice.
#pragma once

#include <vector>

#include "binding.h"

namespace ortdlpack::py {

// What ortdlpack knows of one C session of an InferenceSession (its `_sess`: set_providers() replaces it), with
// the idle IOBindings of its runs.
struct PyPlanner {
  // From the NodeArgs, memory infos and providers of the session's C session `c_session` (run.cc).
  explicit PyPlanner(nb::handle c_session);
  nb::object c_session;  // held: the planner is replaced when the session's _sess is no longer this one
  SessionInfo info;
  bool host_outputs;   // py::host_outputs
  bool graph_capture;  // WebGPU graph capture: onnxruntime checks every run (_validate_graph_capture_run_api)
  nb::object run;      // c_session.run: onnxruntime's run, without the Python checks the plan makes
  nb::list all_outputs;
  nb::list idle;  // IOBindings, cleared; list.pop/append are atomic under the GIL

  template <class F>
  void references(F f) {  // (Gc; a planner whose c_session the collector cleared is replaced: planner_of)
    f(c_session);
    f(run);
    f(all_outputs);
    f(idle);
  }
};

// Runs the plan with onnxruntime's run: the bound tensors as numpy views (onnxruntime.OrtValues where numpy has no
// view), the values as they are (the caller's own dict when every feed is a value the caller gave).
nb::object run_with_values(const PyPlanner& p, const Request& r, nb::handle session, nb::handle feeds,
                           nb::handle run_options);
// Runs the plan on an IOBinding of the session (idle ones reused; cleared on every path).
nb::object run_with_binding(PyPlanner& p, const Request& r, nb::handle session, nb::handle run_options);
// Binds the plan to an onnxruntime.IOBinding (by address, each memory's exact C.OrtDevice).
void bind(const RunPlan& plan, nb::handle binding);
// Runs the bound plan (ordered first: docs/streams.md) and returns its outputs as Tensors, in plan order.
std::vector<Tensor> run_bound(const RunPlan& plan, nb::handle session, nb::handle binding, nb::handle run_options);

}  // namespace ortdlpack::py
