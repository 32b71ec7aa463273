// ortdlpack: access to the ONNX Runtime C API.
//
// The core reaches ORT only through the public C API it is handed once per process: from OrtGetApiBase() when the
// application links ORT, or from the OrtApiBase an ORT build passes to libraries it loads (how the Python package
// shares the ORT inside the onnxruntime wheel). No ORT symbol is linked by the core itself.
#pragma once

#include <onnxruntime_c_api.h>

#include <cstdint>

namespace ortdlpack {

// The oldest ORT API version the core works with (ORT 1.23: EP devices, shared allocators, CopyTensors).
inline constexpr uint32_t kMinOrtApiVersion = 23;

/// \brief Negotiates the newest API version both this build's headers and the running ORT know (>= kMinOrtApiVersion).
/// `env` is the process's OrtEnv if the caller has one; otherwise the core obtains it with CreateEnv, which ORT
/// answers with the existing process-wide env when there is one. Calling init again with the same base is a no-op;
/// with a different ORT it throws (one ORT per process).
void init(const OrtApiBase* base, OrtEnv* env = nullptr);

/// \brief The API table; throws Error(kRuntime) if init() was not called.
const OrtApi& ort();

/// \brief The API version negotiated by init().
uint32_t ort_api_version();

/// \brief The running ORT's version, as it reports it ("1.32.0"): for messages that name it.
const char* ort_version();

/// \brief The ORT environment (created on first use if init() was not given one). ortdlpack never releases it. A
/// program that must exit cleanly releases it last, after its sessions (`ort().ReleaseEnv(env())`, as the fuzzers do
/// at exit): ORT tears down an env left to static destruction in no set order against its own statics
/// (microsoft/onnxruntime#24579).
OrtEnv* env();

/// \brief Turns an OrtStatus into an Error(kRuntime) carrying ORT's message, releasing the status. No-op on nullptr.
void check(OrtStatus* status);

}  // namespace ortdlpack
