// Session (session.h): creating or borrowing an OrtSession, its metadata, and its runs through the one executor
// (session_executor.h).
#include "ortdlpack/session.h"

#include <algorithm>
#include <string>
#include <utility>

#include "binding_adapter.h"
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
  Impl& s = *impl_;
  const std::optional<CallerStream> per_run = run_stream(options, feeds, s.stream.has_value());
  const CallerStream* caller = s.stream ? &*s.stream : per_run ? &*per_run : nullptr;
  if (caller != nullptr) adopt_caller_work(*caller);  // before planning: a staging copy must read what it wrote
  std::vector<Tensor> outputs =
      s.execute(plan_tensors(s.info, feeds, output_names, options), options.run_options, per_run ? &*per_run : nullptr);
  Impl::order_for_caller(outputs, per_run ? &*per_run : nullptr);
  return outputs;
}

const SessionInfo& session_info(const Session& session) noexcept { return session.impl_->info; }

std::vector<Tensor> run_planned(Session& session, const RunPlan& plan, const OrtRunOptions* run_options) {
  Session::Impl& s = *session.impl_;
  if (s.stream) {
    throw Error(ErrorKind::kInvalidArgument, "run_planned: a session with a caller's stream plans its own runs");
  }
  check_tensors_only(plan);
  return s.execute(plan, run_options, nullptr);
}

// --- Binding -----------------------------------------------------------------------------------------------------

Binding Session::bind(const Feeds& feeds, const std::vector<std::string>& output_names, const RunOptions& options) {
  Impl& s = *impl_;
  std::optional<CallerStream> per_run = run_stream(options, feeds, s.stream.has_value());
  if (s.stream) adopt_caller_work(*s.stream);
  if (per_run) adopt_caller_work(*per_run);
  Binding b;
  b.impl_ = std::make_unique<Binding::Impl>();
  Binding::Impl& state = *b.impl_;
  state.session = impl_;
  state.stream = per_run;
  state.plan = plan_tensors(s.info, feeds, output_names, options);
  state.run_options = options.run_options;
  OrtIoBinding* raw = nullptr;
  check(ort().CreateIoBinding(s.session, &raw));
  state.binding = IoBinding(raw);
  state.allocated = bind_plan(state.plan, raw);
  for (const RunPlan::Output& out : state.plan.outputs) {
    state.names.push_back(out.io->name);
  }
  for (size_t k : state.plan.returned) state.returned_names.push_back(state.names[k]);
  if (state.plan.returned.empty()) state.returned_names = state.names;
  return b;
}

}  // namespace ortdlpack
