#include "ortdlpack/session.h"

#include <algorithm>
#include <mutex>
#include <string>
#include <utility>

#include "ort.h"
#include "ortdlpack/api.h"
#include "ortdlpack/device.h"
#include "ortdlpack/error.h"
#include "ortdlpack/handle.h"
#include "ortdlpack/transfer.h"
#include "run_plan.h"
#include "session_creation.h"
#include "stream_order.h"

namespace ortdlpack {
namespace {

using IoBinding = Owned<OrtIoBinding>;

// Idle IoBindings of one session, reused across runs (creating one costs more than a small run).
class BindingPool {
 public:
  explicit BindingPool(OrtSession* session) : session_(session) {}

  IoBinding acquire() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!idle_.empty()) {
        IoBinding b = std::move(idle_.back());
        idle_.pop_back();
        return b;
      }
    }
    OrtIoBinding* binding = nullptr;
    check(ort().CreateIoBinding(session_, &binding));
    return IoBinding(binding);
  }

  void release(IoBinding binding) noexcept {
    // Clearing drops ORT's references to the inputs and outputs: a DLPack producer's memory is not held past run().
    ort().ClearBoundInputs(binding.get());
    ort().ClearBoundOutputs(binding.get());
    std::lock_guard<std::mutex> lock(mutex_);
    if (idle_.size() < kIdleBindings) {
      try {
        idle_.push_back(std::move(binding));
      } catch (...) {  // out of memory: the binding is simply released
      }
    }
  }

 private:
  OrtSession* session_;
  std::mutex mutex_;
  std::vector<IoBinding> idle_;
};

// A string ORT allocated with the default allocator, copied and freed.
std::string take_string(char* s) {
  std::string out = s != nullptr ? s : "";
  if (s != nullptr) check(ort().AllocatorFree(detail::default_allocator(), s));
  return out;
}

// ORT's error binding `role` `name` as "run: binding <role> '<name>': ONNX Runtime: ...": the message is made only
// when there is one (a run binds every input and output).
void check_binding(OrtStatus* status, const char* role, const std::string& name) {
  if (status != nullptr) detail::check(status, std::string("run: binding ") + role + " '" + name + "'");
}

// Binds a plan's inputs and outputs; returns whether any output is allocated by ORT.
bool bind_plan(const RunPlan& plan, OrtIoBinding* binding) {
  const OrtApi& api = ort();
  for (const RunPlan::Input& in : plan.inputs) {
    check_binding(api.BindInput(binding, in.io->name.c_str(), in.bound().ort_value()), "input", in.io->name);
  }
  bool any_allocated = false;
  for (const RunPlan::Output& out : plan.outputs) {
    const std::string& name = out.io->name;
    if (out.destination) {
      check_binding(api.BindOutput(binding, name.c_str(), out.destination.ort_value()), "output", name);
    } else {
      any_allocated = true;
      check_binding(api.BindOutputToDevice(binding, name.c_str(), out.memory), "output", name);
    }
  }
  return any_allocated;
}

// The outputs of a run, in plan order: the destinations themselves, the others ORT allocated.
std::vector<Tensor> collect(const RunPlan& plan, OrtIoBinding* binding, bool any_allocated) {
  std::vector<Tensor> result(plan.outputs.size());
  if (any_allocated) {
    const OrtApi& api = ort();
    OrtAllocator* allocator = detail::default_allocator();
    OrtValue** values = nullptr;
    size_t count = 0;
    check(api.GetBoundOutputValues(binding, allocator, &values, &count));
    // Own every value first, so none leaks whatever fails below.
    std::vector<Owned<OrtValue>> owned;
    owned.reserve(count);
    for (size_t k = 0; k < count; ++k) owned.emplace_back(values[k]);
    check(api.AllocatorFree(allocator, values));
    if (count != plan.outputs.size()) {
      throw Error(ErrorKind::kRuntime, "run: ORT returned " + std::to_string(count) + " outputs for " +
                                           std::to_string(plan.outputs.size()) + " bound");
    }
    for (size_t k = 0; k < count; ++k) {
      if (!plan.outputs[k].destination) result[k] = Tensor(owned[k].release());
    }
  }
  for (size_t k = 0; k < plan.outputs.size(); ++k) {
    if (plan.outputs[k].destination) result[k] = plan.outputs[k].destination;
  }
  return result;
}

// A plan Session can bind: tensors only (a value without a DLPack form has no Tensor to bind).
RunPlan plan_tensors(const SessionInfo& info, const Feeds& feeds, const std::vector<std::string>& output_names,
                     const RunOptions& options) {
  RunPlan plan = plan_run(info, feeds, output_names, options);
  for (const RunPlan::Output& out : plan.outputs) {
    if (!out.io->has_dlpack_form()) {
      throw Error(ErrorKind::kUnsupported, "run: output '" + out.io->name + "' is " + out.io->onnx_type +
                                               ", which has no DLPack form: ortdlpack::Session runs tensors (request "
                                               "the tensor outputs by name)");
    }
  }
  return plan;
}

// Run options as ORT makes them for a run passed none: made once, where ORT would make them on every such run.
Owned<OrtRunOptions> new_run_options() {
  OrtRunOptions* raw = nullptr;
  check(ort().CreateRunOptions(&raw));
  return Owned<OrtRunOptions>(raw);
}

}  // namespace

struct Session::Impl {
  Impl(OrtSession* borrowed, const std::vector<const OrtEpDevice*>& ep_devices)
      : session(borrowed), info(borrowed, ep_devices), providers(providers_of(ep_devices)), pool(borrowed) {}
  explicit Impl(CreatedSession created)
      : owned(std::move(created.session)),
        stream(created.stream),
        session(owned.get()),
        info(session, created.ep_devices),
        providers(std::move(created.providers)),
        pool(session) {
    if (stream && stream->ort_runs_on_it) {
      // ORT computes on the caller's stream: a run need not wait for it on the host at its end.
      unsynchronized = new_run_options();
      check(ort().AddRunConfigEntry(unsynchronized.get(), "disable_synchronize_execution_providers", "1"));
    }
  }

  // A run ORT computes on the caller's stream returns with its work queued there when every output is in that
  // device's memory (a host output must be complete on return; readers of another device's memory are not ordered
  // after the caller's stream) and the caller passed no run options of their own.
  bool leaves_queued(const RunPlan& plan, const OrtRunOptions* run_options) const {
    if (!unsynchronized || run_options != nullptr) return false;
    for (const RunPlan::Output& out : plan.outputs) {
      if (!detail::same_memory(out.destination ? out.destination.memory_info() : out.memory, stream->memory)) {
        return false;
      }
    }
    return true;
  }

  // Orders and runs a bound plan (the caller's work already adopted, staging done).
  void run_bound(const RunPlan& plan, OrtIoBinding* binding, const OrtRunOptions* run_options) {
    const bool leave_queued = leaves_queued(plan, run_options);
    order_before_run(plan, stream ? &*stream : nullptr);
    const OrtRunOptions* options = leave_queued ? unsynchronized.get() : run_options ? run_options : defaults.get();
    if (OrtStatus* status = ort().RunWithBinding(session, options, binding)) {
      const Owned<OrtStatus> release(status);
      throw run_failed(ort().GetErrorCode(status), ort().GetErrorMessage(status));
    }
    if (leave_queued) adopt_caller_work(*stream);
  }

  Owned<OrtSession> owned;              // the session when this class created it (declared first: destroyed last)
  std::optional<CallerStream> stream;   // SessionConfig::stream
  Owned<OrtRunOptions> unsynchronized;  // runs that leave their work queued on `stream` (ORT computes on it)
  Owned<OrtRunOptions> defaults = new_run_options();  // runs without options of their own (read-only: shared)
  OrtSession* session;
  SessionInfo info;
  std::vector<std::string> providers;
  BindingPool pool;
};

Session::Session(OrtSession* session, const std::vector<const OrtEpDevice*>& ep_devices)
    : impl_(std::make_shared<Impl>(session, ep_devices)) {}

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
  if (s.stream) adopt_caller_work(*s.stream);  // before planning: a staging copy must read what the caller wrote
  const RunPlan plan = plan_tensors(s.info, feeds, output_names, options);

  // The binding is cleared on every path.
  struct Lease {
    BindingPool& pool;
    IoBinding binding;
    ~Lease() { pool.release(std::move(binding)); }
  } lease{s.pool, s.pool.acquire()};
  const bool any_allocated = bind_plan(plan, lease.binding.get());
  s.run_bound(plan, lease.binding.get(), options.run_options);
  std::vector<Tensor> outputs = collect(plan, lease.binding.get(), any_allocated);
  unalias(plan, outputs);
  return as_requested(plan, std::move(outputs));
}

// --- Binding -----------------------------------------------------------------------------------------------------

struct Binding::Impl {
  std::shared_ptr<Session::Impl> session;
  RunPlan plan;                                // after the first run, every output has its destination
  const OrtRunOptions* run_options = nullptr;  // bind()'s RunOptions::run_options
  IoBinding binding;                           // bound once (outputs again after the first run)
  bool allocated = true;                       // whether the next run has outputs ORT allocates
  std::vector<std::string> names;              // of plan.outputs
  std::vector<Tensor> outputs;                 // plan.outputs' tensors, after the first run
  std::vector<Tensor> returned;                // as_requested(plan, outputs): what run() returns
  std::vector<std::string> returned_names;
  std::mutex mutex;
};

Binding Session::bind(const Feeds& feeds, const std::vector<std::string>& output_names, const RunOptions& options) {
  Impl& s = *impl_;
  if (s.stream) adopt_caller_work(*s.stream);
  Binding b;
  b.impl_ = std::make_unique<Binding::Impl>();
  Binding::Impl& state = *b.impl_;
  state.session = impl_;
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

Binding::Binding() = default;
Binding::~Binding() = default;
Binding::Binding(Binding&&) noexcept = default;
Binding& Binding::operator=(Binding&&) noexcept = default;

const std::vector<Tensor>& Binding::run(const OrtRunOptions* run_options) {
  if (!impl_) throw Error(ErrorKind::kInvalidArgument, "run: the Binding is empty");
  Impl& b = *impl_;
  const std::lock_guard<std::mutex> lock(b.mutex);
  Session::Impl& s = *b.session;
  if (s.stream) adopt_caller_work(*s.stream);  // before staging: the copy must read what the caller wrote
  // Staged feeds: their contents may have changed since the last run. The copy into host memory is complete here.
  for (const RunPlan::Input& in : b.plan.inputs) {
    if (in.staged) copy(in.feed, in.staged);
  }
  s.run_bound(b.plan, b.binding.get(), run_options != nullptr ? run_options : b.run_options);
  if (b.allocated) {
    // The first run allocated the outputs: from now on they are the binding's destinations, at fixed addresses.
    std::vector<Tensor> outputs = collect(b.plan, b.binding.get(), true);
    unalias(b.plan, outputs);
    const OrtApi& api = ort();
    for (size_t k = 0; k < outputs.size(); ++k) {
      RunPlan::Output& out = b.plan.outputs[k];
      if (out.destination) continue;
      check_binding(api.BindOutput(b.binding.get(), b.names[k].c_str(), outputs[k].ort_value()), "output", b.names[k]);
      out.destination = outputs[k];
    }
    b.outputs = std::move(outputs);
    b.returned = as_requested(b.plan, b.outputs);
    b.allocated = false;
  } else if (b.outputs.empty()) {
    b.outputs = collect(b.plan, b.binding.get(), false);  // only destinations: the caller's own tensors
    b.returned = as_requested(b.plan, b.outputs);
  }
  return b.returned;
}

const std::vector<Tensor>& Binding::outputs() const noexcept {
  static const std::vector<Tensor> none;
  return impl_ ? impl_->returned : none;
}

const std::vector<std::string>& Binding::output_names() const noexcept {
  static const std::vector<std::string> none;
  return impl_ ? impl_->returned_names : none;
}

}  // namespace ortdlpack
