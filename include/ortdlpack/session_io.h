// ortdlpack: what a session's runs take and give: its inputs and outputs as the model declares them (IoInfo), the
// feeds of a run (Feeds) and where its outputs go (RunOptions). Session (session.h) runs them; the run plan checks
// every one of them before ORT runs.
#pragma once

#include <dlpack/dlpack.h>
#include <onnxruntime_c_api.h>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ortdlpack/placement.h"
#include "ortdlpack/tensor.h"

namespace ortdlpack {

// One input or output of a session, as the model declares it.
struct IoInfo {
  std::string name;
  bool is_tensor = false;  // false for sequences, maps, optionals and sparse tensors
  std::string onnx_type;   // the type as ONNX spells it: "tensor(float)", "seq(tensor(int64))", "map(string,...)"
  ONNXTensorElementDataType element_type = ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;
  std::vector<int64_t> shape;             // -1 for a dynamic dimension
  std::vector<std::string> dim_names;     // the symbolic name of each dynamic dimension ("" when unnamed)
  bool has_shape = false;                 // false when the model gives no rank (any rank accepted)
  const OrtMemoryInfo* memory = nullptr;  // where the session wants the input / produces the output (NULL: host)

  /// \brief "float32[N,3,64,64]": the declared type as messages show it.
  std::string type_string() const;
  /// \brief Whether its values can be DLPack tensors: a tensor of an element type other than string.
  bool has_dlpack_form() const noexcept;
  /// \brief Whether its values hold DLPack tensors inside sequences or optionals (seq(tensor(float)),
  /// optional(tensor(int64)), optional(seq(tensor(uint8)))): a binding hands each tensor over as one.
  bool holds_tensors() const noexcept;
  /// \brief Whether an input must be fed: every one but an optional ("optional(...)") input.
  bool required() const noexcept;
};

struct RunOptions {
  // Preallocated outputs, by output name: ORT writes the result into that Tensor's memory, which must match the
  // model's element type and fixed dimensions, must not be read-only, and must be memory the session can write for
  // that output. The Tensor is returned as that output.
  std::vector<std::pair<std::string, Tensor>> destinations;
  // Where outputs without a destination are allocated (placement.h's Target, read for outputs):
  //   kAnywhere  where the session's EP produces them;
  //   kHost      where the session produces them when the host reads that memory, else CPU memory (ORT copies);
  //   kDevice / kMemory  that device's memory / exactly that memory. CPU memory is always accepted (ORT copies
  //     device outputs to it); other memory only where the session produces that output or of one of its EP devices
  //     (DEFAULT or HOST_ACCESSIBLE): ORT has no allocator for any other (another device's pinned memory included)
  //     and would put the output in CPU memory.
  Target output_target = Target::anywhere();
  // The caller reads every output on the host (a numpy consumer): kAnywhere then means kHost, and an output_target or
  // a destination in memory the host cannot read is Error(kInvalidArgument), before ORT runs.
  bool read_on_host = false;
  // Outputs written in place of a feed, by (output name, input name): ORT writes the output into the very tensor fed
  // as that input, which it reads in the same run. Only for an operator that is written to do so (GroupQueryAttention's
  // past/present share-buffer mode, docs/session.md): any other kernel reading what it writes gives a wrong answer, so
  // without this declaration a destination overlapping a feed is refused. The feed must be a writable tensor the
  // session reads where it is, of the output's declared element type and fixed dimensions; a destination also given
  // for that output must be exactly that tensor (data pointer, element type, shape, memory). An output declared in
  // place is bound whether requested or not, and returned only where requested.
  std::vector<std::pair<std::string, std::string>> in_place;
  // Passed through to ORT's run, RunWithBinding or Run (tags, terminate flag, config entries). May be NULL.
  const OrtRunOptions* run_options = nullptr;
  // A caller's native stream for this run (Session::bind: for every run of the Binding), on the device of the run's
  // device tensors (those of its first feed or destination in device memory), e.g. the stream a framework computes
  // on (XLA's, in a compiled computation): work queued on it before the run is done before ORT reads or writes, and
  // the outputs are complete for work queued on it after the run (docs/streams.md rule 6; ORT computes on its own
  // streams). Error(kInvalidArgument) with a session created with SessionConfig::stream (which orders every run),
  // when no feed or destination is in device memory, and for a handle check_caller_stream refuses. nullopt: none.
  std::optional<uintptr_t> stream;
};

using Feeds = std::vector<std::pair<std::string, Tensor>>;

}  // namespace ortdlpack
