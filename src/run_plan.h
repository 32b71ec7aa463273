// Internal: the run plan. Every decision about one session run is made here, once, before ORT runs, with the one
// set of error messages session.h lists: which model input each feed is, whether the session can read it where it
// is (a feed in device memory for an input the session reads from the host is staged to the host), which outputs
// are returned and in which order, where each is written (a caller's destination or memory ORT allocates) and
// whether the session can write there. Session executes a plan with an OrtIoBinding; the Python ortdlpack.run binds
// the same plan to an onnxruntime.IOBinding (or, for a host-only plan, calls InferenceSession.run).
//
//   ortdlpack::SessionInfo info(ort_session);   // or python::session_info() from onnxruntime's NodeArgs
//   ortdlpack::RunPlan plan = ortdlpack::plan_run(info, feeds, {"y"}, options);
#pragma once

#include <onnxruntime_c_api.h>

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "ortdlpack/error.h"
#include "ortdlpack/session_io.h"
#include "ortdlpack/tensor.h"
#include "session_info.h"
#include "stream_order.h"

namespace ortdlpack {

// What one run binds. It shares the feeds and destinations it was planned from (Tensors are shared owners), so it
// stays valid whatever happens to the caller's containers. Its IoInfo pointers point into the SessionInfo it was
// planned with, which must outlive it.
struct RunPlan {
  struct Input {
    const IoInfo* io = nullptr;  // the model input (or overridable initializer) it feeds
    Tensor feed;                 // the caller's tensor
    Tensor staged;               // a host copy of `feed` when the session reads this input from the host
    const Tensor& bound() const noexcept { return staged ? staged : feed; }
  };
  struct Output {
    const IoInfo* io = nullptr;             // the model output
    Tensor destination;                     // the caller's tensor ORT writes into, or empty
    const OrtMemoryInfo* memory = nullptr;  // where ORT allocates it when there is no destination (never NULL then)
  };
  std::vector<Input> inputs;    // in feed order
  std::vector<Output> outputs;  // each requested output once, in the order first requested: what a run binds
  // Where the caller named an output more than once (onnxruntime's run returns it at every place it is named): for
  // each place named, its index in `outputs`. Empty when every output is named once: `outputs` is what is returned.
  std::vector<size_t> returned;
  // The inputs fed with values (plan_run's `values`), which the caller hands to ORT its own way.
  std::vector<const IoInfo*> values;

  // Whether the run involves a value (a value feed, or a requested output without a DLPack form): such a run cannot
  // be bound from Tensors alone.
  bool needs_values() const noexcept;
};
// How many idle IoBindings a session keeps for reuse (Session; ortdlpack.run's onnxruntime.IOBindings): concurrent
// runs beyond that create and release their own.
inline constexpr size_t kIdleBindings = 8;

// Plans a run of the session `info` describes on `feeds` and on `values` (the names of inputs fed with what the
// caller hands to ORT its own way, the Python binding with onnxruntime's run: values without a DLPack form, arrays
// ORT reads as they are; ORT checks them), every required model input exactly once between the two, returning the
// outputs named in `output_names` (empty: every model output, in model order). Stages device feeds the session reads
// from the host (the one copy a run may make). Throws the errors session.h lists.
RunPlan plan_run(const SessionInfo& info, const Feeds& feeds, const std::vector<std::string>& output_names,
                 const RunOptions& options, const std::vector<std::string>& values = {});

// The outputs of a run, in plan order, made safe to hand out: an output ORT allocated over the memory of a bound
// input (an output that is a graph input passed through) is replaced by a copy of it, so no output ever aliases a
// feed (onnxruntime's run returns a new array there too).
void unalias(const RunPlan& plan, std::vector<Tensor>& outputs);

// The outputs of a run (in plan order, one per RunPlan::outputs) in the order the caller named them: repeated where an
// output was named more than once (the same Tensor at each place), else as they are.
std::vector<Tensor> as_requested(const RunPlan& plan, std::vector<Tensor> outputs);

// A run ORT failed with `code`: Error(code) "run: the session failed: ONNX Runtime: <ORT's message>".
Error run_failed(OrtErrorCode code, const std::string& ort_message);

// Right before ORT runs a bound plan: the device work still pending on ortdlpack's streams for the bound inputs and
// destinations (and on a caller's stream) is ordered before the run (stream.h, docs/streams.md).
void order_before_run(const RunPlan& plan, const CallerStream* stream = nullptr);

}  // namespace ortdlpack
