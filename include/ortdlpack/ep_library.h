// ortdlpack: lazy registration of the EP libraries that ship inside the running ONNX Runtime package.
//
// onnxruntime-gpu's CUDA EP is built into the package as a provider library (libonnxruntime_providers_cuda.so),
// but the env knows no CUDA OrtEpDevice — no shared allocator, no data transfer, no stream — until that library is
// registered (RegisterExecutionProviderLibrary). ortdlpack does it for the user, once, the first time it needs memory
// of that vendor. Only the folder of the running ORT is looked at (found with dladdr on ORT's own API functions):
// never a search path, never a library of another package.
#pragma once

#include <cstdint>
#include <string>

namespace ortdlpack {

// Registers, once per process, the provider library in ORT's own folder that brings memory of `vendor_id`
// (0x10DE NVIDIA: CUDA; 0x1002 AMD: MIGraphX; 0x8086 Intel: OpenVINO). Returns true when a library was registered
// by this call; false when there is none for the vendor, it was already tried, or ORT refused it (the caller's own
// error then says what is missing). Thread-safe.
bool register_bundled_ep_library(uint32_t vendor_id);

// What to install to get a device of `vendor_id` into ORT ("" when ortdlpack knows no bundled library for it).
std::string bundled_ep_hint(uint32_t vendor_id);

}  // namespace ortdlpack
