// Session (session.h): creating or borrowing an OrtSession, its metadata, and its runs through the one executor
// (session_executor.h).
#include "ortdlpack/session.h"

#include <algorithm>
#include <string>
#include <utility>

#include "frontend.h"
#include "ortdlpack/error.h"
#include "session_executor.h"

namespace ortdlpack {
namespace {

// A string ORT allocated with the default allocator, copied and freed.
std::string take_string(char* s) {
  std::string out = s != nullptr ? s : "";
  if (s != nullptr) check(ort().AllocatorFree(detail::default_allocator(), s));
  return out;
}

}  // namespace

Session::Session(OrtSession* session, const std::vector<const OrtEpDevice*>& ep_devices)
    : Session(session, BorrowedSession{ep_devices, {}, nullptr, false}) {}

Session::Session(OrtSession* session, const BorrowedSession& how) : impl_(std::make_shared<Impl>(session, how)) {}

Session::Session(const std::string& model_path, const SessionConfig& config)
    : impl_(std::make_shared<Impl>(create_session(config, [&](const OrtSessionOptions* options, OrtSession** out) {
        return ort().CreateSession(env(), model_path.c_str(), options, out);
      }))) {}

Session::Session(const void* model_data, size_t model_size, const SessionConfig& config)
    : impl_(std::make_shared<Impl>(create_session(config, [&](const OrtSessionOptions* options, OrtSession** out) {
        return ort().CreateSessionFromArray(env(), model_data, model_size, options, out);
      }))) {}

Session::~Session() = default;

OrtSession* Session::ort_session() const noexcept { return impl_->session; }
const std::vector<IoInfo>& Session::inputs() const noexcept { return impl_->info.inputs(); }
const std::vector<IoInfo>& Session::outputs() const noexcept { return impl_->info.outputs(); }
const std::vector<std::string>& Session::providers() const noexcept { return impl_->providers; }

ModelMetadata Session::metadata() const {
  const OrtApi& api = ort();
  OrtAllocator* allocator = detail::default_allocator();
  OrtModelMetadata* raw = nullptr;
  check(api.SessionGetModelMetadata(impl_->session, &raw));
  const Owned<OrtModelMetadata> meta(raw);
  const auto field = [&](OrtStatus*(ORT_API_CALL * get)(const OrtModelMetadata*, OrtAllocator*, char**)) {
    char* s = nullptr;
    check(get(raw, allocator, &s));
    return take_string(s);
  };
  ModelMetadata m;
  m.producer_name = field(api.ModelMetadataGetProducerName);
  m.graph_name = field(api.ModelMetadataGetGraphName);
  m.domain = field(api.ModelMetadataGetDomain);
  m.description = field(api.ModelMetadataGetDescription);
  m.graph_description = field(api.ModelMetadataGetGraphDescription);
  check(api.ModelMetadataGetVersion(raw, &m.version));
  char** keys = nullptr;
  int64_t count = 0;
  check(api.ModelMetadataGetCustomMetadataMapKeys(raw, allocator, &keys, &count));
  // Own every key first, so none leaks whatever fails below.
  std::vector<std::string> names;
  for (int64_t i = 0; i < count; ++i) names.push_back(take_string(keys[i]));
  if (keys != nullptr) check(api.AllocatorFree(allocator, keys));
  std::sort(names.begin(), names.end());
  for (const std::string& key : names) {
    char* value = nullptr;
    check(api.ModelMetadataLookupCustomMetadataMap(raw, allocator, key.c_str(), &value));
    m.custom_metadata_map.emplace_back(key, take_string(value));
  }
  return m;
}

std::string Session::end_profiling() {
  char* file = nullptr;
  check(ort().SessionEndProfiling(impl_->session, detail::default_allocator(), &file));
  return take_string(file);
}

uint64_t Session::profiling_start_ns() const {
  uint64_t ns = 0;
  check(ort().SessionGetProfilingStartTimeNs(impl_->session, &ns));
  return ns;
}

std::vector<Tensor> Session::run(const Feeds& feeds, const std::vector<std::string>& output_names,
                                 const RunOptions& options) {
  return impl_->run(feeds, output_names, options, Reader{});
}

// --- Binding -----------------------------------------------------------------------------------------------------

Binding Session::bind(const Feeds& feeds, const std::vector<std::string>& output_names, const RunOptions& options) {
  return detail::SessionAccess::bind(*this, feeds, output_names, options, Reader{});
}

}  // namespace ortdlpack
