// ortdlpack: running an OrtSession on Tensors (and so on DLPack tensors), without copies, through IoBinding.
//
//   ortdlpack::Session s(session);                               // borrows the OrtSession; caches its metadata
//   std::vector<ortdlpack::Tensor> out = s.run({{"x", from_dlpack(x).tensor}});   // all outputs, model order
//   DLManagedTensorVersioned* y = ortdlpack::to_dlpack_versioned(out[0]);
//
// Inputs are bound where they are when the session can read them there (host memory for the CPU EP; ORT copies
// host feeds to a device EP itself). A feed in device memory for an input the session reads from the host is copied
// to the host first through the env's data transfer: ORT would hand the device pointer to a CPU kernel. Outputs are either
// allocated by the session (on the memory its EP produces them on, or on RunOptions::output_memory) or written into
// caller-preallocated destinations (RunOptions::destinations), in which case the returned Tensor is that
// destination: same OrtValue, same data pointer.
//
// Every decision is the run plan's (run_plan.h): everything that can be checked before ORT runs is checked there and
// reported naming the input or output (unknown or duplicate names, missing inputs, element type, rank and fixed
// dimensions, read-only, mis-shaped or unwritable destinations, output memory the session cannot produce to).
// Session binds the plan to an IoBinding and runs it. Errors from the run itself are Error(kRuntime).
//
// Lifetimes: the feeds are held by the caller's vector for the whole call; ORT's references to them are dropped
// before run() returns (so a DLPack producer's deleter runs when the caller drops its last Tensor, not later).
// Returned Tensors are shared owners of ORT's output values: they live as long as any copy or exported DLPack
// tensor holds them, independently of the Session and of later runs.
#pragma once

#include <dlpack/dlpack.h>
#include <onnxruntime_c_api.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ortdlpack/run_plan.h"
#include "ortdlpack/handle.h"
#include "ortdlpack/stream.h"
#include "ortdlpack/tensor.h"

namespace ortdlpack {

// How Session creates an OrtSession from a model; everything not set here is ORT's default.
struct SessionConfig {
  std::optional<int> intra_op_num_threads;
  std::optional<int> inter_op_num_threads;
  // The EP to run on, by a name users know ("cuda", "CUDAExecutionProvider", a plugin EP's registered name;
  // ep_library.h registers an EP library shipped with ORT when the env lacks it). Empty: ORT's CPU EP.
  std::string ep;
  // The EP's provider options ("device_id" picks one of several EP devices, "use_tf32", ...). Needs `ep`.
  std::vector<std::pair<std::string, std::string>> ep_options;
  // Session config entries ("session.intra_op.allow_spinning" -> "0", ...).
  std::vector<std::pair<std::string, std::string>> entries;
  // A caller's native stream on the EP's device (a cudaStream_t, a plugin EP's stream handle), e.g. the stream a
  // framework computes on. Every run is ordered with it (docs/streams.md rule 6): work queued on it before
  // run() is done before ORT reads or writes, and the outputs are complete for work queued on it after run(). An EP
  // that takes a caller's compute stream (compute_stream_option(): CUDA, TensorRT) computes on it and run() returns
  // without waiting on the host; with others (and CUDA's default stream, 0, which ORT cannot compute on), run()
  // waits for the stream on the host first. Needs `ep`.
  std::optional<uintptr_t> stream;
};

// An OrtSession with its metadata cached and its IoBindings reused. run() may be called from several threads at
// once, as OrtSession::Run may.
class Session {
 public:
  // Borrows `session` (it must outlive the Session). `ep_devices`: the EP devices the session was created with, if
  // any (see SessionInfo).
  explicit Session(OrtSession* session, const std::vector<const OrtEpDevice*>& ep_devices = {});
  // Creates and owns a session on env() from a model file or from the model's bytes (copied by ORT; `data` need not
  // outlive the call). Error(kInvalidArgument) for ep_options without an ep or an unknown device_id;
  // Error(kUnsupported) naming what to install for an EP neither the env nor ORT's folder has; ORT's own errors
  // (a missing file, an invalid model) as they are.
  Session(const std::string& model_path, const SessionConfig& config);
  Session(const void* model_data, size_t model_size, const SessionConfig& config);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  OrtSession* ort_session() const noexcept { return session_; }
  const SessionInfo& info() const noexcept { return info_; }

  // Runs the session on `feeds` (every model input exactly once) and returns the outputs named in
  // `output_names` (empty: every model output, in model order) in that order.
  std::vector<Tensor> run(const Feeds& feeds, const std::vector<std::string>& output_names = {},
                          const RunOptions& options = {});

 private:
  struct Created;  // a session this class creates, with the EP devices it was created with
  explicit Session(Created created);
  using Binding = Owned<OrtIoBinding>;
  Binding acquire();
  void release(Binding binding) noexcept;

  Owned<OrtSession> owned_;  // the session when this class created it (declared first: destroyed last)
  std::optional<CallerStream> stream_;    // SessionConfig::stream
  Owned<OrtRunOptions> unsynchronized_;   // runs that leave their work queued on stream_ (ORT computes on it)
  OrtSession* session_;
  SessionInfo info_;
  std::mutex pool_mutex_;
  std::vector<Binding> pool_;  // idle IoBindings, cleared
};

// One-shot convenience: Session(session).run(...). Queries the session's metadata on every call; keep a Session
// for repeated runs.
std::vector<Tensor> run(OrtSession* session, const Feeds& feeds, const std::vector<std::string>& output_names = {},
                        const RunOptions& options = {});

}  // namespace ortdlpack
