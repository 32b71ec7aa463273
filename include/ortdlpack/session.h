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
// Everything that can be checked before ORT runs is checked, and reported as Error(kInvalidArgument) naming the
// input or output: unknown or duplicate names, missing inputs, element type, rank and fixed dimensions against the
// model, read-only or mis-shaped destinations. Errors from the run itself are Error(kRuntime).
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

#include "ortdlpack/tensor.h"

namespace ortdlpack {

// One input or output of a session, as the model declares it.
struct IoInfo {
  std::string name;
  bool is_tensor = false;  // false for sequences/maps/optionals, which ortdlpack cannot bind
  ONNXTensorElementDataType element_type = ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;
  std::vector<int64_t> shape;           // -1 for a dynamic dimension
  std::vector<std::string> dim_names;   // the symbolic name of each dynamic dimension ("" when unnamed)
  bool has_shape = false;               // false when the model gives no rank (any rank accepted)
  const OrtMemoryInfo* memory = nullptr;  // where the session wants the input / produces the output (may be NULL)

  // "float32[N,3,64,64]": how error messages show the declared type.
  std::string describe() const;
};

// The inputs and outputs of a session, queried from ORT once. Immutable after construction, so one SessionInfo can
// serve concurrent runs.
class SessionInfo {
 public:
  explicit SessionInfo(const OrtSession* session);

  const std::vector<IoInfo>& inputs() const noexcept { return inputs_; }
  const std::vector<IoInfo>& outputs() const noexcept { return outputs_; }
  // Index of the input/output with that name, or -1.
  int input_index(const std::string& name) const noexcept;
  int output_index(const std::string& name) const noexcept;

 private:
  std::vector<IoInfo> inputs_;
  std::vector<IoInfo> outputs_;
};

struct RunOptions {
  // Preallocated outputs, by output name: ORT writes the result into that Tensor's memory, which must match the
  // model's element type and fixed dimensions and must not be read-only. The Tensor is returned as that output.
  std::vector<std::pair<std::string, Tensor>> destinations;
  // Where outputs without a destination are allocated. Neither set: where the session's EP produces them.
  // At most one of the two may be set.
  const OrtMemoryInfo* output_memory = nullptr;
  std::optional<DLDevice> output_device;
  // Passed through to RunWithBinding (tags, terminate flag, config entries). May be NULL.
  const OrtRunOptions* run_options = nullptr;
};

using Feeds = std::vector<std::pair<std::string, Tensor>>;

// An OrtSession (borrowed: it must outlive the Session) with its metadata cached and its IoBindings reused.
// run() may be called from several threads at once, as OrtSession::Run may.
class Session {
 public:
  explicit Session(OrtSession* session);
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
  struct BindingDeleter {
    void operator()(OrtIoBinding* b) const noexcept;
  };
  using Binding = std::unique_ptr<OrtIoBinding, BindingDeleter>;
  Binding acquire();
  void release(Binding binding) noexcept;

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
