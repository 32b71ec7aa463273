// Internal, for bindings: the one private header a binding includes (beyond include/ortdlpack/), and what of the
// core's internals a binding may use: each header below for the reason its line gives; nothing else.
//
// A binding whose runtime runs some values its own way (the Python binding: onnxruntime's run takes sequences, maps and
// strings, which have no DLPack form) plans a run once, with those values named (plan_run's `values`), and then either
// hands the plan to its runtime (RunPlan::needs_values) or has the session execute it: one executor, Session's, for
// every run of tensors, whatever API created the OrtSession.
//
//   const ortdlpack::SessionInfo& info = ortdlpack::session_info(session);
//   ortdlpack::RunPlan plan = ortdlpack::plan_run(info, feeds, names, options, value_names);
//   if (!plan.needs_values()) outputs = ortdlpack::run_planned(session, plan, options.run_options);
#pragma once

#include <onnxruntime_c_api.h>

#include <vector>

#include "device_names.h"   // devices and memory by the names and enum values a binding's users write
#include "dlpack_layout.h"  // a DLPack tensor from outside checked field by field, before a binding reads it
#include "dtype_names.h"    // element types by numpy-style name and by XLA's numbers (the one dtype table)
#include "ep_packages.h"    // the finder of installed EP packages the embedding application installs
#include "ort.h"            // the ORT C API idioms (memory fields, the env's EP devices, statuses)
#include "ortdlpack/session.h"
#include "ortdlpack/tensor.h"
#include "run_plan.h"      // the run plan a binding makes with values, and its errors
#include "session_info.h"  // a session's inputs and outputs, as plans are checked against

namespace ortdlpack {

/// \brief What every OrtSession of the running ORT starts with in memory (ORT's session class is polymorphic: the
/// address of its vtable), read once from a session made for the purpose: a binding that reaches a session another
/// API of the same ORT created through that API's private layout (onnxruntime's Python) recognises it by it, and
/// never takes anything else for a session.
const void* session_vtable();

/// \brief The session's inputs and outputs as its runs are planned against (valid while the Session lives).
const SessionInfo& session_info(const Session& session) noexcept;

/// \brief Executes a plan made with session_info(session) as Session::run executes its own: bound, ordered, run,
/// collected, unaliased, in the order requested. `run_options` may be NULL. Error(kInvalidArgument) for a plan that
/// needs values, and for a session with a caller's stream (SessionConfig::stream), whose runs plan themselves after
/// adopting the caller's work; the errors of Session::run otherwise.
std::vector<Tensor> run_planned(Session& session, const RunPlan& plan, const OrtRunOptions* run_options);

}  // namespace ortdlpack
