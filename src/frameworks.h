// Internal: the frameworks a front end hands a run's outputs to and takes its feeds from (the Python extension's
// torch, numpy, cupy, jax, tensorflow): the one table of their names, the packages that define their tensor types,
// and what each can hold. A front end names a framework by what it sees (a tensor's package, an output_type= name);
// every decision about a framework (where a run's outputs go for it, whether its arrays are immutable, whether its
// tensors' memory can move) reads this table.
#pragma once

#include <onnxruntime_c_api.h>

#include <cstdint>
#include <optional>
#include <string>

namespace ortdlpack {

enum class Framework : uint8_t {
  kOrtdlpack,   // ortdlpack's own Tensor: any memory, any element type
  kTorch,       // torch.Tensor
  kNumpy,       // numpy.ndarray (onnxruntime's own values too: its run returns numpy arrays)
  kCupy,        // cupy.ndarray
  kJax,         // jax.Array
  kTensorflow,  // tf.Tensor
  kForeign,     // another DLPack framework (paddle, tvm_ffi, ...), through its package's from_dlpack
  kLikeFeeds,   // not a framework: the first feed's, which the front end resolves (framework_of_package)
};

/// \brief The framework output_type= names ("ortdlpack", "torch", "numpy", "cupy", "jax", "like_feeds"), or nullopt.
std::optional<Framework> framework_named(const std::string& name);
/// \brief The names framework_named() takes, quoted, for messages: "'ortdlpack', 'torch', ...".
std::string framework_names();
/// \brief How messages name a framework ("torch").
const char* framework_name(Framework framework);
/// \brief The framework of a tensor whose type the top-level package `package` defines ("torch", "jaxlib", ...):
/// kForeign for any package the table does not name.
Framework framework_of_package(const std::string& package);
/// \brief Whether the framework's arrays are immutable by contract though their DLPack exports carry no READ_ONLY
/// flag (JAX, TensorFlow): imported read-only.
bool immutable_arrays(Framework framework) noexcept;
/// \brief Whether a tensor of the framework can move to other memory under its DLPack export (torch's resize_() and
/// set_() replace a tensor's storage, and the old one may be freed): a Binding asks again before every run.
bool memory_may_move(Framework framework) noexcept;
/// \brief Whether the framework reads only host memory (numpy): a run's outputs for it are placed in host memory, as
/// onnxruntime's run places them (ORT copies).
bool reads_on_host(Framework framework) noexcept;
/// \brief Whether the framework holds a tensor of element type `type` in `memory` (torch: no sub-byte types, no
/// pinned or WebGPU memory). kOrtdlpack and kForeign hold anything.
bool holds(Framework framework, const OrtMemoryInfo* memory, ONNXTensorElementDataType type);

}  // namespace ortdlpack
