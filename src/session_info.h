// Internal: a session's inputs and outputs, read once from an OrtSession (SessionInfo): what the run plan (run_plan.h)
// checks a run against.
#pragma once

#include <onnxruntime_c_api.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ortdlpack/session_io.h"

namespace ortdlpack {

// "[N,3,64,64]": how messages write a shape, a dynamic dimension by its name (`names`, when given) or as "?".
std::string shape_string(const int64_t* shape, size_t ndim, const std::vector<std::string>* names = nullptr);

// The inputs and outputs of a session, read once. Immutable after construction, so one SessionInfo can serve
// concurrent runs.
class SessionInfo {
 public:
  // Queried from ORT. The memory infos are the session's own (the SessionInfo must not outlive the OrtSession).
  // `ep_devices`: the EP devices the session was created with, whose memory the session can write outputs to.
  explicit SessionInfo(const OrtSession* session, const std::vector<const OrtEpDevice*>& ep_devices = {});
  // Assembled from declarations (the plan's tests, of models ORT would not load as declared): the IoInfos' memory
  // infos, where they point at any, must outlive it.
  SessionInfo(std::vector<IoInfo> inputs, std::vector<IoInfo> outputs, std::vector<IoInfo> initializers,
              const std::vector<const OrtEpDevice*>& ep_devices);

  const std::vector<IoInfo>& inputs() const noexcept { return inputs_; }
  const std::vector<IoInfo>& outputs() const noexcept { return outputs_; }
  // The initializers a feed may override (ORT's overridable initializers): fed by name like inputs, never required.
  const std::vector<IoInfo>& initializers() const noexcept { return initializers_; }
  // The input (or overridable initializer) / output with that name, or NULL.
  const IoInfo* find_input(const std::string& name) const noexcept;
  const IoInfo* find_output(const std::string& name) const noexcept;
  // Whether the session can write output `io` into `memory` (a caller's destination): host memory always (ORT copies
  // a device output there itself); device memory where the session produces that output or of an EP device the
  // session was created with (ORT copies to it with that EP's data transfer). Any other device memory would reach a
  // kernel that cannot write it (a CPU kernel writing through a device pointer).
  bool writes(const IoInfo& io, const OrtMemoryInfo* memory) const;
  // Whether ORT allocates output `io` in `memory` when asked (BindOutputToDevice): CPU memory, the memory the session
  // produces it in, and the memory of the session's EP devices, whose allocators the session has. For other
  // host-accessible memory (another device's pinned or HOST_ACCESSIBLE memory) ORT has no allocator and silently
  // allocates the output in CPU memory instead (seen with ORT 1.29).
  bool allocates(const IoInfo& io, const OrtMemoryInfo* memory) const;

 private:
  std::vector<IoInfo> inputs_;
  std::vector<IoInfo> outputs_;
  std::vector<IoInfo> initializers_;
  std::vector<const OrtMemoryInfo*> ep_memory_;  // the memory of the session's EP devices (owned by ORT's env)
};

}  // namespace ortdlpack
