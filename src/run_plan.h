// Internal: the run plan. Every decision about one session run is made here, once, before ORT runs, with the one set
// of error messages session.h lists: which model input each feed is, whether the session can read it where it is (a
// feed in device memory for an input the session reads from the host is staged to the host), which outputs are bound
// and which returned in which order, where each is written (a caller's destination, a feed declared in place, or
// memory ORT allocates) and whether the session can write there, and where the outputs go for the framework that
// reads them. What ORT checks itself (element types, ranks, dimensions of the feeds) is left to ORT, so that its
// verdict and its words are the only ones. The executor (session_executor.h) carries a plan out; a front end's
// runtime carries out a plan of values (frontend.h).
//
//   const ortdlpack::SessionInfo& info = ...;   // the session's inputs and outputs
//   ortdlpack::RunPlan plan = ortdlpack::plan_run(info, feeds, {"y"}, options, reader);
#pragma once

#include <onnxruntime_c_api.h>

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "frameworks.h"
#include "ortdlpack/error.h"
#include "ortdlpack/session_io.h"
#include "ortdlpack/tensor.h"
#include "session_info.h"
#include "stream_order.h"

namespace ortdlpack {

// Who reads a run's outputs: the framework a front end makes them in (frameworks.h), and whether the caller named
// it (output_type=) or it is implied (like the feeds).
struct Reader {
  Framework framework = Framework::kOrtdlpack;
  // An output in memory the framework cannot hold is placed where the first feed is (host memory for host feeds:
  // ORT copies there, as onnxruntime's run returns host arrays) when the framework is implied; named, it is
  // Error(kUnsupported) before ORT runs. numpy's outputs are placed in host memory either way (reads_on_host).
  bool implied = false;
};

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
    Tensor destination;                     // the tensor ORT writes into (a caller's, or a feed's in place), or empty
    const OrtMemoryInfo* memory = nullptr;  // where ORT allocates it when there is no destination (never NULL then)
    // The input (index in `inputs`) whose feed is its destination, written in place (RunOptions::in_place); -1: none.
    int in_place = -1;
    // The input (index in `inputs`) it is, when the model passes a graph input through as a graph output: ORT hands
    // back the feed itself and writes no destination, so the executor copies the feed there; -1: none.
    int passes = -1;
  };
  std::vector<Input> inputs;    // in feed order
  std::vector<Output> outputs;  // each bound output once: those requested, in the order first requested, then those
                                // written in place that were not requested
  // Where the caller named an output more than once, or an output is bound without being requested: for each place
  // returned, its index in `outputs`. Empty when `outputs` is exactly what is returned.
  std::vector<size_t> returned;
  // The inputs fed with values (plan_run's `values`), which a front end's runtime hands to ORT its own way.
  std::vector<const IoInfo*> values;
  // Whether every output ORT allocates goes to CPU memory, where ORT's plain Run (no IoBinding) returns outputs: the
  // executor then runs it so.
  bool plain = false;

  // Whether the run involves a value (a value feed, or a requested output without a DLPack form): such a run cannot
  // be bound from Tensors alone.
  bool needs_values() const noexcept;
};
// How many idle IoBindings a session keeps for reuse (Session): concurrent runs beyond that create and release their
// own.
inline constexpr size_t kIdleBindings = 8;

// Plans a run of the session `info` describes on `feeds` and on `values` (the names of inputs fed with what a front
// end's runtime hands to ORT its own way: values without a DLPack form, arrays ORT reads as they are; ORT checks
// them), every required model input once between the two, returning the outputs named in `output_names` (empty:
// every model output, in model order), for `reader`. Stages device feeds the session reads from the host (the one
// copy a run may make). Throws the errors session.h lists.
RunPlan plan_run(const SessionInfo& info, const Feeds& feeds, const std::vector<std::string>& output_names,
                 const RunOptions& options, const std::vector<std::string>& values = {}, const Reader& reader = {});

// The destinations of `options` (none written in place) set again on a plan made for the same output names, feeds'
// memory and destinations' memory, from which they were cleared (PlanCache): each checked as plan_run checks it, its
// shape, element type, writability and overlaps with this run's feeds and destinations included.
void replan_destinations(const SessionInfo& info, const RunOptions& options, RunPlan& plan);

// Rebinds input `index` of a planned run to `feed` (Binding::run's changed feeds): staged again where the session
// reads that input from the host, a destination written in place of it following it, overlaps checked as plan_run
// checks them. Returns whether its shape differs from the previous feed's.
bool replan_input(RunPlan& plan, size_t index, const Tensor& feed, const SessionInfo& info);

// The outputs of a run, in plan order, made right to hand out: an output ORT allocated over the memory of a bound
// input (a graph input passed through) is replaced by a copy of it, so no output ever aliases a feed (onnxruntime's run
// returns a new array there too); a destination of a passed-through output gets the feed's values, which ORT does
// not write there.
void settle_outputs(const RunPlan& plan, std::vector<Tensor>& outputs);

// The outputs of a run (in plan order, one per RunPlan::outputs) in the order the caller named them: repeated where an
// output was named more than once (the same Tensor at each place), without outputs bound but not requested.
std::vector<Tensor> as_requested(const RunPlan& plan, std::vector<Tensor> outputs);

// Right before ORT runs a bound plan: the device work still pending on ortdlpack's streams for the bound inputs and
// destinations (and on a caller's stream) is ordered before the run (stream.h, docs/streams.md).
void order_before_run(const RunPlan& plan, const CallerStream* stream = nullptr);

}  // namespace ortdlpack
