// ortdlpack: the run plan. Every decision about one session run is made here, once, before ORT runs, with one set of
// error messages: which model input each feed is, whether the session can read it where it is (a feed in device
// memory for an input the session reads from the host is staged to the host), which outputs are returned and in
// which order, where each is written (a caller's destination or memory ORT allocates) and whether the session can
// write there. ortdlpack::Session executes a plan with an OrtIoBinding; the Python ortdlpack.run binds the same plan
// to an onnxruntime.IOBinding (or, when the plan is host-only, calls InferenceSession.run).
//
//   ortdlpack::SessionInfo info(ort_session);               // or from another API's metadata (see SessionInfo)
//   ortdlpack::RunPlan plan = ortdlpack::plan_run(info, feeds, {"y"}, options);
//
// Errors (all before ORT runs), each naming the input or output:
//   Error(kInvalidArgument): unknown, duplicate or missing names; element type, rank or fixed-dimension mismatch;
//     an empty Tensor; a non-tensor model input/output; a read-only destination; output memory the session cannot
//     produce to (a `device=` in memory of a device the session does not write, e.g. a plugin EP's memory for a
//     CPU session) and conflicting RunOptions.
//   Error(kUnsupported): a destination in memory the session cannot write (device memory for an output a host EP
//     produces: a CPU kernel would write through the device pointer). Destinations are never copied.
#pragma once

#include <dlpack/dlpack.h>
#include <onnxruntime_c_api.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ortdlpack/stream.h"
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
  const OrtMemoryInfo* memory = nullptr;  // where the session wants the input / produces the output (NULL: host)

  // "float32[N,3,64,64]": how error messages show the declared type.
  std::string describe() const;
};

// A session input or output as an API without ORT's C types reports it (onnxruntime's Python NodeArg and
// OrtMemoryInfo): the ONNX type string ("tensor(float)"), dimensions (-1 for a symbolic or unknown one, with its
// name), and the fields of the memory it lives in.
struct IoDeclaration {
  std::string name;
  std::string type;                       // "tensor(float)", "seq(tensor(float))", ...
  std::optional<std::vector<int64_t>> shape;  // nullopt: no shape declared
  std::vector<std::string> dim_names;
  struct Memory {
    std::string name;                     // the OrtMemoryInfo name ("Cpu", "Cuda", an EP's allocator name)
    int device_id = 0;
    OrtMemType mem_type = OrtMemTypeDefault;
    OrtAllocatorType allocator_type = OrtDeviceAllocator;
    OrtDeviceMemoryType device_mem_type = OrtDeviceMemoryType_DEFAULT;
    uint32_t vendor_id = 0;
  };
  std::optional<Memory> memory;           // nullopt: unknown (host)
};

// The inputs and outputs of a session, read once. Immutable after construction, so one SessionInfo can serve
// concurrent runs.
class SessionInfo {
 public:
  // Queried from ORT. The memory infos are the session's own (the SessionInfo must not outlive the OrtSession).
  // `ep_devices`: the EP devices the session was created with (SessionOptionsAppendExecutionProvider_V2), whose
  // memory the session can write outputs to; ORT's C API cannot tell them from a session.
  explicit SessionInfo(const OrtSession* session, const std::vector<const OrtEpDevice*>& ep_devices = {});
  // Converted from declarations. Memory is resolved to an OrtMemoryInfo owned by this SessionInfo: ORT's own for the
  // names ORT knows (CreateMemoryInfo), else the memory of the env's EP device with that name, vendor and memory type.
  // Memory neither knows stays unknown (NULL), as when ORT cannot tell a session's memory: it is treated as host.
  // `providers`: the session's execution provider names; the env's EP devices of those EPs are the session's (an EP
  // library shipped with ORT that the env lacks is registered first, as ensure_ep() does: a built-in CUDA EP
  // session's memory then has the env's allocator, data transfer and streams).
  SessionInfo(const std::vector<IoDeclaration>& inputs, const std::vector<IoDeclaration>& outputs,
              const std::vector<std::string>& providers = {});

  const std::vector<IoInfo>& inputs() const noexcept { return inputs_; }
  const std::vector<IoInfo>& outputs() const noexcept { return outputs_; }
  // Whether the session runs on ORT's CPU EP alone (its providers, when declared, are exactly that one): it never
  // falls back to another EP, so a binding may call its plain run without the fallback around it.
  bool cpu_only() const noexcept { return cpu_only_; }
  // Index of the input/output with that name, or -1.
  int input_index(const std::string& name) const noexcept;
  int output_index(const std::string& name) const noexcept;
  // Whether the session can write output `io` into `memory`: host memory always (ORT copies a device output there
  // itself); device memory where the session produces that output or of an EP device the session was created with
  // (ORT copies to it with that EP's data transfer). Any other device memory would reach a kernel that cannot write
  // it (a CPU kernel writing through a device pointer).
  bool writes(const IoInfo& io, const OrtMemoryInfo* memory) const;

 private:
  std::vector<IoInfo> inputs_;
  std::vector<IoInfo> outputs_;
  std::vector<std::shared_ptr<OrtMemoryInfo>> owned_memory_;  // the memory infos made from declarations
  std::vector<const OrtMemoryInfo*> ep_memory_;  // the memory of the session's EP devices (owned by ORT's env)
  bool cpu_only_ = false;
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

// What one run binds. It shares the feeds and destinations it was planned from (Tensors are shared owners), so it
// stays valid whatever happens to the caller's containers.
struct RunPlan {
  struct Input {
    int index = -1;  // the model input
    Tensor feed;     // the caller's tensor
    Tensor staged;   // a host copy of `feed` when the session reads this input from the host
    const Tensor& bound() const noexcept { return staged ? staged : feed; }
  };
  struct Output {
    int index = -1;                         // the model output
    Tensor destination;                     // the caller's tensor ORT writes into, or empty
    const OrtMemoryInfo* memory = nullptr;  // where ORT allocates it when there is no destination (never NULL then)
  };
  std::vector<Input> inputs;    // in feed order
  std::vector<Output> outputs;  // in the order they are returned
  // Every bound input is in CPU memory, no output has a destination and every output is allocated in CPU memory:
  // a binding may then use a host-only call (onnxruntime's InferenceSession.run on numpy views) instead of an
  // IoBinding.
  bool host_only = false;
};

// Plans a run of the session `info` describes on `feeds` (every model input exactly once), returning the outputs
// named in `output_names` (empty: every model output, in model order). Stages device feeds the session reads from
// the host (the one copy a run may make). Throws the errors listed at the top of this file.
RunPlan plan_run(const SessionInfo& info, const Feeds& feeds, const std::vector<std::string>& output_names,
                 const RunOptions& options);

// Right before ORT runs a bound plan: the device work still pending on ortdlpack's streams for the bound inputs and
// destinations (and on a caller's stream) is ordered before the run (stream.h, docs/streams.md).
void order_before_run(const RunPlan& plan, const CallerStream* stream = nullptr);

}  // namespace ortdlpack
