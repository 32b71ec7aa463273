#include "ortdlpack/api.h"

#include <atomic>
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
std::atomic<OrtEnv*> g_env{nullptr};

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
    // Newest first: ORT answers NULL for versions it does not know.
    const OrtApi* api = nullptr;
    uint32_t version = ORT_API_VERSION;
    for (; version >= kMinOrtApiVersion && api == nullptr; --version) api = base->GetApi(version);
    if (api == nullptr) {
      throw Error(ErrorKind::kUnsupported, std::string("ortdlpack needs ONNX Runtime >= 1.23 (C API ") +
                                               std::to_string(kMinOrtApiVersion) + "); this one is " +
                                               base->GetVersionString());
    }
    g_base = base;
    g_version = version + 1;
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
  throw Error(code == ORT_NOT_IMPLEMENTED ? ErrorKind::kUnsupported : ErrorKind::kRuntime,
              "ONNX Runtime: " + message);
}

}  // namespace ortdlpack
