// ortdlpack: the execution-provider libraries that own device memory, registered in the env when first needed.
//
// ORT builds ship the EPs that own GPU memory as libraries next to the ORT library (the onnxruntime-gpu wheel:
// onnxruntime/capi/libonnxruntime_providers_cuda.so). Registered in the env (RegisterExecutionProviderLibrary), such
// an EP contributes its devices, their shared allocators and their data transfers — what ortdlpack allocates and
// copies with. Its built-in form (a session created with providers=["CUDAExecutionProvider"]) contributes none of
// that, so ortdlpack registers the library a tensor or a session needs, once, the first time it is needed:
// - only from the folder of the running ORT library (found with dladdr on the ORT API the core was handed) or from
//   a folder the caller names (set_ep_library_dir) — never the working directory or a search path an environment
//   variable can steer: the path handed to ORT is always absolute;
// - only the libraries of the one table in ep_library.cc (CUDA, TensorRT, MIGraphX, OpenVINO).
// An EP the env already has (registered by the user under any name) is used as it is.
#pragma once

#include <onnxruntime_c_api.h>

#include <string>
#include <utility>
#include <vector>

namespace ortdlpack {

// The folder EP libraries are registered from: the running ORT library's own folder, unless set_ep_library_dir()
// named another. "" when it cannot be told (then nothing is registered automatically).
std::string ep_library_dir();

// Registers EP libraries from `dir` (absolute; Error(kInvalidArgument) otherwise) instead of ORT's own folder.
// "" restores the default.
void set_ep_library_dir(const std::string& dir);

// The EP name ORT knows for a name users write: "cuda", "CUDA", "CUDAExecutionProvider" ->
// "CUDAExecutionProvider"; "tensorrt"/"trt", "migraphx", "openvino" likewise; any other name is returned as given
// (a plugin EP registered by the caller).
std::string canonical_ep_name(const std::string& name);

// Whether `name` (canonical_ep_name() applied) is an EP of the table: one whose library ships with ORT builds.
bool ships_with_ort(const std::string& name);

// The provider option that makes EP `name` (canonical_ep_name() applied) compute on a caller's stream, its native
// handle as a decimal string ("user_compute_stream" for CUDA and TensorRT); nullptr when the EP takes none.
const char* compute_stream_option(const std::string& name);

// Makes sure the env has the EP named `name` (canonical_ep_name() applied): registers its library from
// ep_library_dir() when the env lacks it. Returns the canonical name. Error(kUnsupported) saying what to install
// when the EP is neither in the env nor registrable.
std::string ensure_ep(const std::string& name);

// The EP devices a session of EP `name` runs on (ensure_ep() applied): all of them, or with a "device_id" option
// (a decimal index) the device_id-th when the EP has several. Error(kInvalidArgument) for a bad device_id.
std::vector<const OrtEpDevice*> select_ep_devices(const std::string& name,
                                                  const std::vector<std::pair<std::string, std::string>>& options);

// When no EP device of the env serves `memory`'s vendor, registers the library of the EP that owns that memory
// (GPU memory of NVIDIA, AMD, Intel). Returns true only when that added one: the caller may then retry the
// allocation or copy that failed. Called on failure paths only (it lists the env's EP devices).
bool register_ep_for(const OrtMemoryInfo* memory);

// Why the env has no allocator / data transfer for `memory`, and what to install: for error messages.
std::string missing_ep_message(const OrtMemoryInfo* memory);

}  // namespace ortdlpack
