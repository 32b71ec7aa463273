// Internal, for front ends (the Python extension): the one private header a front end includes beyond
// include/ortdlpack/, and what of the core's internals it may use: each header below for the reason its line gives,
// and the entry points of a run a front end makes.
//
// One call per run: a front end converts its arguments into a RunRequest once, calls run() once and converts the
// outputs once. The core plans the run, decides its route — the core's executor for tensors, or the front end's own
// runtime (onnxruntime's Python run) for a plan of values, through the Runtime the front end passes — and carries it
// out with the request's full RunOptions; an option the route cannot honour is refused, never dropped.
//
//   ortdlpack::RunRequest r{feeds, values, output_names, options, reader};
//   ortdlpack::RunResult result = ortdlpack::run(session, r, &runtime);   // route kRuntime: the runtime holds them
#pragma once

#include <dlpack/dlpack.h>
#include <onnxruntime_c_api.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "compiled_sessions.h"   // sessions compiled code (torch's operator, XLA's FFI call) names by a number
#include "device_names.h"        // devices and memory by the names and enum values a front end's users write
#include "dlpack_layout.h"       // a DLPack tensor from outside checked field by field, before a front end reads it
#include "dtype_names.h"         // element types by numpy-style name and by XLA's numbers (the one dtype table)
#include "ep_packages.h"         // the finder of installed EP packages the embedding application installs
#include "frameworks.h"          // the frameworks a front end's users hand tensors to and from (the one table of them)
#include "onnxruntime_python.h"  // onnxruntime's Python API: its device names, the OrtSession behind its sessions
#include "ort.h"                 // the ORT C API idioms (memory fields, the env's EP devices, statuses)
#include "ortdlpack/session.h"
#include "ortdlpack/tensor.h"
#include "run_plan.h"  // the plan a Runtime carries out, and its Reader

namespace ortdlpack {

// A feed a front end's runtime reads its own way.
struct FedValue {
  std::string name;
  // A host array the runtime reads as it is (a numpy array of a type numpy has, a list for a tensor input): on the
  // core's executor's route, the front end makes it a Tensor (Runtime::tensor_of). Otherwise a value without a DLPack
  // form (a sequence, a map, a string array, None), which only the runtime runs.
  bool array = false;
};

// One run, as a front end converted it.
struct RunRequest {
  Feeds feeds;                            // tensors
  std::vector<FedValue> values;           // what the runtime reads its own way (only with a Runtime)
  std::vector<std::string> output_names;  // empty: every output, in model order
  RunOptions options;
  Reader reader;  // who reads the outputs
};

// What a front end does for the core during a run.
class Runtime {
 public:
  virtual ~Runtime() = default;
  /// \brief Value `index` of the request (an array) as a Tensor, for the core's executor.
  virtual Tensor tensor_of(size_t index) = 0;
  /// \brief Carries `plan` out with the runtime's own run: its values as they are, the plan's tensors as it reads them
  /// (RunPlan::Input::bound), RunOptions::run_options as the front end's own object. The outputs stay with the front
  /// end.
  virtual void run_values(const RunPlan& plan) = 0;
  /// \brief Calls `work` (ORT computing) with what the front end holds released (Python's GIL).
  virtual void unlocked(const std::function<void()>& work) = 0;
};

enum class Route {
  kExecutor,  // the core's executor: RunResult::outputs
  kRuntime,   // the front end's runtime: it holds the outputs
};
struct RunResult {
  Route route = Route::kExecutor;
  std::vector<Tensor> outputs;  // in the order requested (kExecutor)
};

/// \brief Plans `request` on `session` and carries it out. The runtime's route takes a plan with a value without a
/// DLPack form (or an output without one), and a plan of arrays the runtime reads as they are whose outputs it returns
/// as the executor would (every output in CPU memory, of an element type numpy has) when nothing is to be written into
/// or placed in memory of the caller's choosing (no destination, no in_place, no output_target, no stream); every
/// other run goes to the core's executor, its arrays made Tensors first. `runtime` NULL: tensors only (values are
/// Error(kInvalidArgument)). The errors of Session::run; the runtime's own, as it raises them.
RunResult run(Session& session, RunRequest& request, Runtime* runtime);

/// \brief Session::bind for `request` (tensors only: its values must be empty), its outputs placed for its reader.
Binding bind(Session& session, const RunRequest& request);

/// \brief The element type a list (or a scalar) fed to input `name` is made of, as onnxruntime makes it: the declared
/// one for a tensor input; UNDEFINED for an input without a DLPack form (a sequence: the list stays a value) and for a
/// name the session has no input of (the plan refuses it).
ONNXTensorElementDataType list_element_type(const Session& session, const std::string& name);

/// \brief The rule of a compiled call's arguments (torch_module's operator, jax_function's FFI call, and the tracers'
/// shape rules): `count` of the model's `inputs`, in the model's order. Error(kInvalidArgument) for more arguments than
/// inputs, or a required input left out (optional inputs may be, at the end).
void check_positional(const std::vector<IoInfo>& inputs, size_t count);
/// \brief Where a compiled call's outputs are allocated: on its first input's device (CPU memory without inputs), as
/// its tracer was told (DerivedShapes::device_input).
Target compiled_outputs_target(const Feeds& feeds);

/// \brief Before a Binding's run: Error(kInvalidArgument) when the producer's tensor bound as input `name` or, with
/// `destination`, as the destination of output `name` (`now`, as its framework describes it today) is no longer the
/// memory bound, in the shape bound (`bound`): torch's resize_() and set_() move a tensor's storage, and the old one
/// may be freed — a run would read it, or write it, and the tensor would not see the results; t_(), unsqueeze_() and
/// the like keep the memory but change what the caller's tensor means by it.
void check_still_bound(const Tensor& bound, const DLTensor& now, const std::string& name, bool destination);

namespace detail {
// What the front end's entry points reach of a Session and a Binding.
struct SessionAccess {
  static Binding bind(Session& session, const Feeds& feeds, const std::vector<std::string>& output_names,
                      const RunOptions& options, const Reader& reader);
  static RunResult run(Session& session, RunRequest& request, Runtime* runtime);
  static const SessionInfo& info(const Session& session) noexcept;
};
}  // namespace detail

}  // namespace ortdlpack
