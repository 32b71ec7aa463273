// ortdlpack: running an OrtSession on Tensors (and so on DLPack tensors), without copies, through IoBinding or ORT's
// plain Run.
//
//   ortdlpack::Session s(session);                               // borrows the OrtSession; caches its metadata
//   std::vector<ortdlpack::Tensor> out = s.run({{"x", from_dlpack(x).tensor}});   // all outputs, model order
//   DLManagedTensorVersioned* y = ortdlpack::to_dlpack_versioned(out[0]);
//
//   ortdlpack::SessionConfig config;                               // or a session the core creates and owns
//   config.providers = {{"cuda", {{"device_id", "0"}}}, {"CPUExecutionProvider", {}}};
//   ortdlpack::Session created("model.onnx", config);
//   ortdlpack::Binding b = created.bind({{"x", x}});                 // planned and bound once
//   for (...) { fill(x); const std::vector<ortdlpack::Tensor>& y = b.run(); }   // same tensors every run
//
// Inputs are bound where they are when the session can read them there (host memory for the CPU EP; ORT copies
// host feeds to a device EP itself). A feed in device memory for an input the session reads from the host is copied
// to the host first through the env's data transfer: ORT would hand the device pointer to a CPU kernel. Outputs are
// either allocated by the session (on the memory its EP produces them on, or where RunOptions::output_target asks) or
// written into caller-preallocated destinations (RunOptions::destinations), in which case the returned Tensor is
// that destination: same OrtValue, same data pointer.
//
// What ortdlpack must know before ORT runs is checked before ORT runs, once per run, naming the input or output; what
// ORT checks itself (a feed's element type, rank and dimensions) is ORT's to check, in its words. Refusals ORT's own
// run makes too carry ORT's code and ORT's words (error.h: ORT_INVALID_ARGUMENT), so a front end raises exactly what
// ORT's own Python raises for them; nothing ORT accepts is refused:
//   Error(ORT_INVALID_ARGUMENT): an unknown input name ("Invalid input name: z"), an unknown output name ("Invalid
//     output name:q").
//   Error(kInvalidArgument): a missing required input (onnxruntime's words: "Required inputs (['x']) are missing from
//     input feed ([])."; an optional input or an overridable initializer may be left out); an input fed twice; an
//     empty Tensor; a destination that does not match the output's declared element type, rank and fixed dimensions
//     (a declared scalar takes any shape, as ORT reads it), that is read-only, or that is for an output not requested
//     or with no DLPack form; a destination that shares memory (any byte; a WebGPU buffer: the same buffer) with a
//     feed or with another destination, which ORT would write while reading or writing it (one tensor fed to two
//     inputs is allowed: only writes conflict; a destination declared in place of its feed, RunOptions::in_place,
//     is the one exception); output memory the session cannot produce to (an output_target on a device the session
//     does not write, e.g. a plugin EP's memory for a CPU session); memory the host cannot read under
//     RunOptions::read_on_host.
//   Error(kUnsupported): a destination in memory the session cannot write (device memory for an output a host EP
//     produces: a CPU kernel would write through the device pointer), and a requested output with no DLPack form
//     (a sequence, map or string tensor: Session runs tensors; the Python InferenceSession runs every value).
//     Destinations are never copied.
// Errors from the run itself are ORT's, with its code and its message as they are. An output that is a graph input
// passed through comes back as a copy (never over the feed's memory), or written into its destination.
//
// Lifetimes: the feeds are held by the caller's vector for the whole call; ORT's references to them are dropped
// before run() returns (so a DLPack producer's deleter runs when the caller drops its last Tensor, not later).
// Returned Tensors are shared owners of ORT's output values: they live as long as any copy or exported DLPack
// tensor holds them, independently of the Session and of later runs (a Binding's outputs excepted: every run of the
// Binding writes into them).
#pragma once

#include <dlpack/dlpack.h>
#include <onnxruntime_c_api.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ortdlpack/session_config.h"
#include "ortdlpack/session_io.h"
#include "ortdlpack/tensor.h"

namespace ortdlpack {

// What a model says about itself (onnxruntime's get_modelmeta()): the ModelProto's fields and its metadata_props.
struct ModelMetadata {
  std::string producer_name;
  std::string graph_name;
  std::string domain;
  std::string description;                                               // the model's doc_string
  std::string graph_description;                                         // the graph's doc_string
  int64_t version = 0;                                                   // model_version
  std::vector<std::pair<std::string, std::string>> custom_metadata_map;  // metadata_props, sorted by key
};

class Binding;
namespace detail {
struct SessionAccess;  // frontend.h: what a binding of another language reaches of a Session
}  // namespace detail

// How a borrowed OrtSession was created, as its creator tells it: ORT's C API cannot tell these from a session.
struct BorrowedSession {
  // The EP devices it was created with (SessionOptionsAppendExecutionProvider_V2), whose memory it can write
  // outputs to.
  std::vector<const OrtEpDevice*> ep_devices;
  // The EPs it runs on, by ORT's names, with their provider options (onnxruntime's get_providers(),
  // get_provider_options()): their EP devices in the env are the session's too. A library ORT ships for one of them
  // (onnxruntime-gpu's CUDA EP) is registered first, so that its memory has the env's allocator, data transfer and
  // streams. Options that make an EP capture graphs (see Session) are read as for a session the core creates.
  std::vector<Provider> providers;
  // What keeps the session alive, held by every output the session allocates: an EP's allocator may not outlive
  // its session (freeing a WebGPU output after its session was released crashes in the EP), and a borrowed
  // session's outputs must not depend on its creator's lifetime. NULL: the caller keeps the session alive.
  std::shared_ptr<const void> owner;
  // It replays captured device graphs, whatever its providers' options say (WebGPU's enableGraphCapture set as a
  // session config entry): see Session.
  bool captures_graphs = false;
};

// An OrtSession with its metadata cached and its IoBindings reused. run() may be called from several threads at
// once, as OrtSession::Run may.
//
// A session that replays captured device graphs (BorrowedSession::captures_graphs; a created session whose provider
// options enable it: enable_cuda_graph, trt_cuda_graph_enable, enableGraphCapture) reads and writes, on every replay,
// the buffers of the run it captured, whatever a later run binds: so its runs go through one Binding per graph
// (RunOptions' "gpu_graph_id" run config entry; unset is graph 0), whose addresses never change. run() on it is
// Error(kInvalidArgument) unless the run opts out of capture (gpu_graph_id -1), and so is a Binding's run of a graph
// another Binding of the session ran, live or released (ORT's C API cannot release a captured graph): either would
// silently compute on other tensors.
class Session {
 public:
  /// \brief Borrows `session` (it must outlive the Session and its Bindings). `ep_devices`: the EP devices the session
  /// was created with (SessionOptionsAppendExecutionProvider_V2), whose memory it can write outputs to; ORT's C API
  /// cannot tell them from a session.
  explicit Session(OrtSession* session, const std::vector<const OrtEpDevice*>& ep_devices = {});
  /// \brief Borrows `session` (it must outlive the Session and its Bindings), created as `how` says.
  Session(OrtSession* session, const BorrowedSession& how);
  /// \brief Creates and owns a session on env() from a model file or from the model's bytes (copied by ORT; `data` need
  /// not outlive the call). Error(kInvalidArgument) for a config SessionConfig refuses (a value out of range, a setting
  /// ORT's C API cannot make, ep_options without an ep, an empty or repeated provider, an unknown device_id);
  /// Error(kUnsupported) naming what to install for an EP neither the env nor an installed library has; ORT's own
  /// errors (a missing file, an invalid model) as they are.
  Session(const std::string& model_path, const SessionConfig& config);
  /// \brief As above, from the model's bytes.
  Session(const void* model_data, size_t model_size, const SessionConfig& config);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  /// \brief The OrtSession (borrowed: valid while this Session lives).
  OrtSession* ort_session() const noexcept;
  /// \brief The model's inputs, as read from ORT once (session_io.h).
  const std::vector<IoInfo>& inputs() const noexcept;
  /// \brief The model's outputs, as read from ORT once (session_io.h).
  const std::vector<IoInfo>& outputs() const noexcept;
  /// \brief The EPs the session was created with, in ORT's names and priority order, "CPUExecutionProvider" last (as
  /// onnxruntime's get_providers() lists them). A borrowed OrtSession: the EPs of `ep_devices`, then the CPU EP.
  const std::vector<std::string>& providers() const noexcept;
  /// \brief The model's metadata, read from ORT (SessionGetModelMetadata) on each call.
  ModelMetadata metadata() const;
  /// \brief Profiling (SessionConfig::enable_profiling): ends it and returns the profile's file name
  /// (SessionEndProfiling;
  /// "" when profiling was not enabled), and when it started (ns since the epoch; 0 when not enabled).
  std::string end_profiling();
  /// \brief When profiling started (ns since the epoch; 0 when not enabled).
  uint64_t profiling_start_ns() const;

  /// \brief Runs the session on `feeds` (every required model input exactly once, optional inputs and overridable
  /// initializers when given) and returns the outputs named in `output_names` (empty: every model output, in model
  /// order) in that order.
  std::vector<Tensor> run(const Feeds& feeds, const std::vector<std::string>& output_names = {},
                          const RunOptions& options = {});

  /// \brief Plans and binds a run once, for many runs (Binding): the same checks and errors as run(), made here.
  /// RunOptions::run_options, when set, must outlive the Binding.
  Binding bind(const Feeds& feeds, const std::vector<std::string>& output_names = {}, const RunOptions& options = {});

 private:
  friend class Binding;
  friend struct detail::SessionAccess;
  struct Impl;
  std::shared_ptr<Impl> impl_;  // shared with the Session's Bindings
};

// A run planned and bound once, rerun many times without planning: every run() runs the session on the same feed
// tensors (whose contents may change between runs) into the same output tensors. The outputs are the RunOptions
// destinations or, for the others, what the first run allocated (where run() would have put them), written in place
// by every later run; so no address of an input or output changes from one run to the next (what ORT's CUDA graphs
// need: the CUDA EP's enable_cuda_graph). A feed staged to the host (session.h), and a host feed ORT copies to the
// device it reads that input on, is copied again before every run. run(changed) rebinds the named inputs to new
// tensors (their shapes may change) and replans only those; when a shape changed, the outputs ORT allocated are
// allocated again by that run (a caller's destinations and the outputs written in place stay). Each run is ordered like
// Session::run (docs/streams.md). Runs of one Binding are serialised; a Binding keeps its Session and its feeds alive;
// Bindings of one Session run independently.
class Binding {
 public:
  /// \brief An empty Binding: run() throws Error(kInvalidArgument).
  Binding();
  ~Binding();
  /// \brief Moves the binding; `other` is left empty.
  Binding(Binding&&) noexcept;
  Binding& operator=(Binding&&) noexcept;

  /// \brief Runs the session and returns the outputs in the order bind() was given (the same Tensors every time: a
  /// result a caller wants to keep past the next run must be copied). The list is the caller's own, made before the
  /// next run may start: a run on another thread cannot change it (only the tensors' contents). `run_options`: for
  /// this run (tags, terminate, gpu_graph_id, ...) instead of bind()'s RunOptions::run_options; NULL: bind()'s.
  std::vector<Tensor> run(const OrtRunOptions* run_options = nullptr);
  /// \brief Rebinds the inputs named in `changed` to their new tensors (each an input bound by bind(); a new shape
  /// allowed), then runs as above. The checks of bind() for those feeds; Error(kInvalidArgument) for an input bind()
  /// did not bind, and on a session that replays captured graphs (a replay would read the old tensor). A call that
  /// fails, in its rebinding or in its run, leaves the Binding binding what it bound before.
  std::vector<Tensor> run(const Feeds& changed, const OrtRunOptions* run_options = nullptr);
  /// \brief The outputs of the last run that succeeded (empty before the first), as run() returned them.
  std::vector<Tensor> outputs() const;
  /// \brief The names of the outputs, in order.
  const std::vector<std::string>& output_names() const noexcept;

 private:
  friend struct detail::SessionAccess;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ortdlpack
