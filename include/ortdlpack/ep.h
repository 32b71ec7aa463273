// ortdlpack: execution providers by the names users write, and the libraries that bring them into the env.
//
// Device memory belongs to the EP that brings the device: its allocator and data transfer (transfer.h) and its
// streams (stream.h) are in the env only once its library is registered there (RegisterExecutionProviderLibrary).
// Some EPs ship as libraries of an ORT distribution that nobody registers (onnxruntime-gpu's CUDA EP, used the
// built-in way), others as Python packages of their own (onnxruntime-ep-webgpu, ...). ortdlpack registers the
// library an entry point needs (a session on that EP, memory of that EP's device), once per process:
// - only from the folder of the running ORT library (found with dladdr on the ORT API the core was handed), a
//   folder the caller names (set_ep_library_dir), or the files of an installed EP package as its installer wrote
//   them (the Python package finds them through importlib.metadata) — never the working directory or a search path
//   an environment variable can steer: the path handed to ORT is always absolute;
// - only the EPs of the one EP table (docs/devices.md) and the packages its rows name (onnxruntime-qnn,
//   onnxruntime-ggml, ...), and EP packages that follow the onnxruntime-ep-<name> convention. An EP the env already
//   has (registered by the user under any name) is used as it is.
// A library is registered under the EP's own name (QNN and ggml name their EP after the registration), so that
// onnxruntime finds it by that name too. An EP package the running ORT cannot host (built for a newer ORT, which
// this one refuses) is not registered, and asking for it says why, with both versions.
#pragma once

#include <onnxruntime_c_api.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ortdlpack {

/// \brief The EP name ORT knows for a name users write: "cuda", "CUDA", "CUDAExecutionProvider" ->
/// "CUDAExecutionProvider"; "cpu", "tensorrt"/"trt", "tensorrt_rtx", "migraphx", "openvino", "mlx", "webgpu" likewise;
/// any other name is returned as given (a plugin EP registered by the caller, or one ensure_ep() finds as a package).
std::string canonical_ep_name(const std::string& name);

/// \brief Resolves a provider name users write to the EP's name in ORT, registering the EP's plugin library in the env
/// first when an installed package brings it (unlike canonical_ep_name(), which only names).
///
/// For onnxruntime's `providers=[...]` and `ep=`: "webgpu", "qnn", "QNNExecutionProvider", "ggml", "cuda", ... An EP
/// the env has (its EP devices are there) -> its name. An EP an installed package brings (onnxruntime-ep-*,
/// onnxruntime-qnn, onnxruntime-ggml, the CUDA EP packages) -> its library registered once, under the EP's own
/// name, then its name. An EP of the table that is neither (built into the running ORT, e.g. the CUDA EP of
/// onnxruntime-gpu, or not installed) -> its name, registering nothing: ORT decides, as for its own names.
/// std::nullopt for any other name (not an EP ortdlpack knows: ORT gets it as written). Error(kInvalidArgument)
/// for ""; Error(kUnsupported) saying why when an installed package cannot be used (the running ORT cannot host it:
/// both versions; its library failed to register or brought no device).
std::optional<std::string> resolve_provider(const std::string& name);

/// \brief The provider options of a session on EP `ep_name`, with the default of an option the EP cannot do
/// without added when the caller set neither it nor its alternative: QNN's backend_type=htp unless backend_type or
/// backend_path is set (docs/devices.md). Other EPs' options come back as given.
std::vector<std::pair<std::string, std::string>> provider_options(
    const std::string& ep_name, std::vector<std::pair<std::string, std::string>> options);

/// \brief Makes sure the env has the EP `name` names (canonical_ep_name() applied): registers its library when the env
/// lacks it, once. Returns the EP's name in ORT. Error(kInvalidArgument) for "" and for a name that no table row, no EP
/// of the env and no installed EP package has; Error(kUnsupported) saying what to install when the EP is known but its
/// library is missing or brought no device.
std::string ensure_ep(const std::string& name);

/// \brief The EP devices of the env a session on EP `name` runs on (ensure_ep() applied): all of them, or with a
/// "device_id" option (a decimal index) the device_id-th when the EP has several — the one selection every session
/// path makes (ortdlpack::Session, the providers ortdlpack.InferenceSession hands to onnxruntime).
/// Error(kInvalidArgument) for a device_id the EP has no device at.
std::vector<const OrtEpDevice*> select_ep_devices(const std::string& name,
                                                  const std::vector<std::pair<std::string, std::string>>& options);

/// \brief What ortdlpack makes of each EP device of the env, for a bug report (ortdlpack.show_config): how many,
/// then per device a line (EP name and vendor, hardware type, vendor, vendor id, device id) and, indented, each memory
/// it declares with the DLPack device that memory is exported as (or why none), and whether ortdlpack orders work
/// there with a stream.
std::vector<std::string> describe_ep_devices();

/// \brief The folder EP libraries of ORT distributions are registered from: the running ORT library's own folder,
/// unless set_ep_library_dir() named another. "" when it cannot be told (then nothing is registered from a folder).
std::string ep_library_dir();

/// \brief Registers EP libraries of ORT distributions from `dir` (absolute; Error(kInvalidArgument) otherwise) instead
/// of ORT's own folder. "" restores the default.
void set_ep_library_dir(const std::string& dir);

}  // namespace ortdlpack
