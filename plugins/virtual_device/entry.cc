// The two C entry points ORT looks up in a plugin EP library.
#include <cstdio>
#include <new>

#include "factory.h"
#include "guarded_memory.h"

namespace {

// The library is compiled against API ORT_API_VERSION. An older ORT returns NULL from GetApi for it; then the
// error status has to come from the newest API the running ORT does offer (CreateStatus exists since API 1).
OrtStatus* TooOldOrtStatus(const OrtApiBase* base) noexcept {
  for (uint32_t v = ORT_API_VERSION - 1; v >= 1; --v) {
    if (const OrtApi* api = base->GetApi(v)) {
      char msg[256];
      std::snprintf(msg, sizeof msg,
                    "ortdlpack virtual device needs ONNX Runtime C API version %d (ORT >= 1.%d); this ONNX Runtime "
                    "(%s) offers API version %u at most",
                    ORT_API_VERSION, ORT_API_VERSION, base->GetVersionString(), v);
      return api->CreateStatus(ORT_NOT_IMPLEMENTED, msg);
    }
  }
  return nullptr;  // unreachable in practice: every ORT offers API 1
}

}  // namespace

extern "C" {

ORTDLPACK_VD_EXPORT OrtStatus* CreateEpFactories(const char* /*registered_name*/, const OrtApiBase* ort_api_base,
                                                 const OrtLogger* /*default_logger*/, OrtEpFactory** factories,
                                                 size_t max_factories, size_t* num_factories) {
  *num_factories = 0;
  const OrtApi* api = ort_api_base->GetApi(ORT_API_VERSION);
  if (api == nullptr) return TooOldOrtStatus(ort_api_base);
  const OrtEpApi* ep_api = api->GetEpApi();
  if (ep_api == nullptr) return api->CreateStatus(ORT_FAIL, "ortdlpack virtual device: this ORT has no EP API");
  if (max_factories < 1) {
    return api->CreateStatus(ORT_INVALID_ARGUMENT, "ortdlpack virtual device: no room for its factory");
  }
  (void)ortdlpack::vd::GuardEnabled();  // read ORTDLPACK_VD_GUARD now, before any allocation

  auto* f = new (std::nothrow) ortdlpack::vd::VdFactory(*api, *ep_api);
  if (f == nullptr) return api->CreateStatus(ORT_FAIL, "ortdlpack virtual device: out of memory");
  if (OrtStatus* st = f->Init()) {
    delete f;
    return st;
  }
  factories[0] = f;
  *num_factories = 1;
  return nullptr;
}

ORTDLPACK_VD_EXPORT OrtStatus* ReleaseEpFactory(OrtEpFactory* factory) {
  delete static_cast<ortdlpack::vd::VdFactory*>(factory);
  return nullptr;
}

}  // extern "C"
