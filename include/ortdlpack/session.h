// ortdlpack: running an OrtSession on Tensors (and so on DLPack tensors), without copies, through IoBinding.
//
//   ortdlpack::Session s(session);                               // borrows the OrtSession; caches its metadata
//   std::vector<ortdlpack::Tensor> out = s.run({{"x", from_dlpack(x).tensor}});   // all outputs, model order
//   DLManagedTensorVersioned* y = ortdlpack::to_dlpack_versioned(out[0]);
//
// Inputs are bound where they are when the session can read them there (host memory for the CPU EP; ORT copies
// host feeds to a device EP itself). A feed in device memory for an input the session reads from the host is copied
// to the host first through the env's data transfer: ORT would hand the device pointer to a CPU kernel. Outputs are
// either allocated by the session (on the memory its EP produces them on, or on RunOptions::output_memory) or
// written into caller-preallocated destinations (RunOptions::destinations), in which case the returned Tensor is
// that destination: same OrtValue, same data pointer.
//
// Everything that can be checked before ORT runs is checked before ORT runs, once per run, with one set of messages
// naming the input or output:
//   Error(kInvalidArgument): unknown, duplicate or missing names; element type, rank or fixed-dimension mismatch;
//     a named dimension ("N") whose value the inputs contradict, or a destination's ("N" of an output is the value
//     an input gave it: ONNX's dimension variables denote one value across a graph's inputs and outputs);
//     an empty Tensor; a non-tensor model input/output; a read-only destination; output memory the session cannot
//     produce to (a `device` of a device the session does not write, e.g. a plugin EP's memory for a CPU session)
//     and conflicting RunOptions.
//   Error(kUnsupported): a destination in memory the session cannot write (device memory for an output a host EP
//     produces: a CPU kernel would write through the device pointer). Destinations are never copied.
// Errors from the run itself are Error(kRuntime) "run: the session failed: ONNX Runtime: ...".
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
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ortdlpack/tensor.h"

namespace ortdlpack {

// One input or output of a session, as the model declares it.
struct IoInfo {
  std::string name;
  bool is_tensor = false;  // false for sequences/maps/optionals, which ortdlpack cannot bind
  std::string onnx_type;   // the type as ONNX spells it: "tensor(float)", "seq(tensor(int64))", "map(string,...)"
  ONNXTensorElementDataType element_type = ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;
  std::vector<int64_t> shape;             // -1 for a dynamic dimension
  std::vector<std::string> dim_names;     // the symbolic name of each dynamic dimension ("" when unnamed)
  bool has_shape = false;                 // false when the model gives no rank (any rank accepted)
  const OrtMemoryInfo* memory = nullptr;  // where the session wants the input / produces the output (NULL: host)

  // "float32[N,3,64,64]": the declared type as messages show it.
  std::string type_string() const;
};

// How Session creates an OrtSession from a model; everything not set here is ORT's default.
struct SessionConfig {
  std::optional<int> intra_op_num_threads;  // >= 0 (0: ORT's default); Error(kInvalidArgument) otherwise
  std::optional<int> inter_op_num_threads;
  // The EP to run on, by a name users know ("cuda", "CUDAExecutionProvider", "webgpu", a plugin EP's registered
  // name; ep.h registers its library when the env lacks it). nullopt or "cpu": ORT's CPU EP; "" is refused.
  std::optional<std::string> ep;
  // The EP's provider options ("device_id" picks one of several EP devices, "use_tf32", ...). Needs `ep`.
  std::vector<std::pair<std::string, std::string>> ep_options;
  // Session config entries ("session.intra_op.allow_spinning" -> "0", ...).
  std::vector<std::pair<std::string, std::string>> entries;
  // A caller's native stream on the EP's device (a cudaStream_t, a plugin EP's stream handle), e.g. the stream a
  // framework computes on. Every run is ordered with it (docs/streams.md rule 6): work queued on it before
  // run() is done before ORT reads or writes, and the outputs are complete for work queued on it after run(). An EP
  // that takes a caller's compute stream (CUDA, TensorRT) computes on it and run() returns without waiting on the
  // host; with others (and CUDA's default stream, 0, which ORT cannot compute on), run() waits for the stream on the
  // host first. Needs `ep`.
  std::optional<uintptr_t> stream;
};

struct RunOptions {
  // Preallocated outputs, by output name: ORT writes the result into that Tensor's memory, which must match the
  // model's element type and fixed dimensions, must not be read-only, and must be memory the session can write for
  // that output. The Tensor is returned as that output.
  std::vector<std::pair<std::string, Tensor>> destinations;
  // Where outputs without a destination are allocated. Neither set: where the session's EP produces them.
  // At most one of the two may be set. Host memory is always accepted (ORT copies device outputs to it); device
  // memory only where the session produces that output.
  const OrtMemoryInfo* output_memory = nullptr;
  std::optional<DLDevice> output_device;
  // Passed through to RunWithBinding (tags, terminate flag, config entries). May be NULL.
  const OrtRunOptions* run_options = nullptr;
};

using Feeds = std::vector<std::pair<std::string, Tensor>>;

// An OrtSession with its metadata cached and its IoBindings reused. run() may be called from several threads at
// once, as OrtSession::Run may.
class Session {
 public:
  // Borrows `session` (it must outlive the Session). `ep_devices`: the EP devices the session was created with
  // (SessionOptionsAppendExecutionProvider_V2), whose memory it can write outputs to; ORT's C API cannot tell them
  // from a session.
  explicit Session(OrtSession* session, const std::vector<const OrtEpDevice*>& ep_devices = {});
  // Creates and owns a session on env() from a model file or from the model's bytes (copied by ORT; `data` need not
  // outlive the call). Error(kInvalidArgument) for ep_options without an ep, an empty ep name or an unknown
  // device_id; Error(kUnsupported) naming what to install for an EP neither the env nor an installed library has;
  // ORT's own errors (a missing file, an invalid model) as they are.
  Session(const std::string& model_path, const SessionConfig& config);
  Session(const void* model_data, size_t model_size, const SessionConfig& config);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  OrtSession* ort_session() const noexcept;
  const std::vector<IoInfo>& inputs() const noexcept;
  const std::vector<IoInfo>& outputs() const noexcept;

  // Runs the session on `feeds` (every model input exactly once) and returns the outputs named in
  // `output_names` (empty: every model output, in model order) in that order.
  std::vector<Tensor> run(const Feeds& feeds, const std::vector<std::string>& output_names = {},
                          const RunOptions& options = {});

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ortdlpack
