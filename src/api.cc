#include "ortdlpack/api.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <mutex>
#include <string>

#include "ortdlpack/error.h"
#include "ortdlpack/handle.h"

namespace ortdlpack {
namespace {

// Written once under g_mutex, then only read: the OrtApi pointer is published with release/acquire so the hot path
// (every export/import) reads it without a lock.
std::mutex g_mutex;
std::atomic<const OrtApi*> g_api{nullptr};
const OrtApiBase* g_base = nullptr;
uint32_t g_version = 0;
uint32_t g_runtime_version = 0;
std::atomic<OrtEnv*> g_env{nullptr};

// "1.N.P" -> N, the newest C API version ORT 1.N serves; 0 for text that is not a 1.x version.
uint32_t runtime_api_version(const char* text) {
  if (text == nullptr || std::strncmp(text, "1.", 2) != 0) return 0;
  uint32_t minor = 0;
  for (const char* p = text + 2; *p >= '0' && *p <= '9' && minor < 1000; ++p) minor = minor * 10 + (*p - '0');
  return minor;
}

}  // namespace

void init(const OrtApiBase* base, OrtEnv* env) {
  if (base == nullptr) throw Error(ErrorKind::kInvalidArgument, "ortdlpack::init: OrtApiBase is NULL");
  std::lock_guard<std::mutex> lock(g_mutex);
  if (g_base != nullptr) {
    if (g_base != base) {
      throw Error(ErrorKind::kInvalidArgument,
                  "ortdlpack::init: already initialised with another ONNX Runtime (one ORT per process)");
    }
  } else {
    // Ask for the API version the runtime has (ORT 1.N serves C API versions up to N), capped at this build's
    // headers. Probing downwards instead makes ORT print an error for every version it does not know.
    const char* text = base->GetVersionString();
    const uint32_t runtime = runtime_api_version(text);
    const uint32_t version = std::min<uint32_t>(runtime, ORT_API_VERSION);
    const OrtApi* api = version >= kMinOrtApiVersion ? base->GetApi(version) : nullptr;
    if (api == nullptr) {
      throw Error(ErrorKind::kUnsupported, std::string("ortdlpack needs ONNX Runtime >= 1.23 (C API ") +
                                               std::to_string(kMinOrtApiVersion) + "); this one is " +
                                               (text != nullptr ? text : "of unknown version") +
                                               ": upgrade the ONNX Runtime you use (e.g. pip install -U "
                                               "'onnxruntime>=1.23' or 'onnxruntime-gpu>=1.23')");
    }
    g_base = base;
    g_version = version;
    g_runtime_version = runtime;
    g_api.store(api, std::memory_order_release);
  }
  if (env != nullptr && g_env.load() == nullptr) g_env.store(env);
}

const OrtApi& ort() {
  const OrtApi* api = g_api.load(std::memory_order_acquire);
  if (api == nullptr) {
    throw Error(ErrorKind::kRuntime, "ortdlpack::init() was not called: no ONNX Runtime API available");
  }
  return *api;
}

uint32_t ort_api_version() {
  ort();
  return g_version;
}

uint32_t ort_runtime_api_version() {
  ort();
  return g_runtime_version;
}

const char* ort_version() {
  ort();
  const char* text = g_base->GetVersionString();
  return text != nullptr ? text : "of unknown version";
}

OrtEnv* env() {
  if (OrtEnv* e = g_env.load()) return e;
  std::lock_guard<std::mutex> lock(g_mutex);
  if (g_env.load() == nullptr) {
    OrtEnv* e = nullptr;
    check(ort().CreateEnv(ORT_LOGGING_LEVEL_WARNING, "ortdlpack", &e));
    g_env.store(e);
  }
  return g_env.load();
}

void check(OrtStatus* status) {
  if (status == nullptr) return;
  const Owned<OrtStatus> owned(status);
  const OrtErrorCode code = ort().GetErrorCode(status);
  const std::string message = ort().GetErrorMessage(status);
  throw Error(code, message);  // ORT's words as they are: a binding says them as ORT's own binding does
}

ErrorKind error_kind(OrtErrorCode code) noexcept {
  switch (code) {
    case ORT_INVALID_ARGUMENT:
    case ORT_NO_SUCHFILE:
    case ORT_NO_MODEL:
    case ORT_INVALID_PROTOBUF:
    case ORT_INVALID_GRAPH:
      return ErrorKind::kInvalidArgument;
    case ORT_NOT_IMPLEMENTED:
      return ErrorKind::kUnsupported;
    default:
      return ErrorKind::kRuntime;
  }
}

}  // namespace ortdlpack
