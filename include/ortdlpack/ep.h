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
// - only the EPs of the one EP table (docs/devices.md), and EP packages that follow the onnxruntime-ep-<name>
//   convention. An EP the env already has (registered by the user under any name) is used as it is.
#pragma once

#include <string>

namespace ortdlpack {

// The EP name ORT knows for a name users write: "cuda", "CUDA", "CUDAExecutionProvider" -> "CUDAExecutionProvider";
// "cpu", "tensorrt"/"trt", "tensorrt_rtx", "migraphx", "openvino", "mlx", "webgpu" likewise; any other name is
// returned as given (a plugin EP registered by the caller, or one ensure_ep() finds as a package).
std::string canonical_ep_name(const std::string& name);

// Makes sure the env has the EP `name` names (canonical_ep_name() applied): registers its library when the env lacks
// it, once. Returns the EP's name in ORT. Error(kInvalidArgument) for "" and for a name that no table row, no EP of
// the env and no installed EP package has; Error(kUnsupported) saying what to install when the EP is known but its
// library is missing or brought no device.
std::string ensure_ep(const std::string& name);

// The folder EP libraries of ORT distributions are registered from: the running ORT library's own folder, unless
// set_ep_library_dir() named another. "" when it cannot be told (then nothing is registered from a folder).
std::string ep_library_dir();

// Registers EP libraries of ORT distributions from `dir` (absolute; Error(kInvalidArgument) otherwise) instead of
// ORT's own folder. "" restores the default.
void set_ep_library_dir(const std::string& dir);

}  // namespace ortdlpack
