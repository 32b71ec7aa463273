#include "ortdlpack/session.h"

#include <algorithm>
#include <mutex>
#include <string>
#include <utility>

#include "ep_library.h"
#include "ep_table.h"
#include "ort.h"
#include "ortdlpack/api.h"
#include "ortdlpack/device.h"
#include "ortdlpack/ep.h"
#include "ortdlpack/error.h"
#include "ortdlpack/handle.h"
#include "ortdlpack/transfer.h"
#include "run_plan.h"
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

[[noreturn]] void refuse(const std::string& message) {
  throw Error(ErrorKind::kInvalidArgument, "Session: " + message);
}

// The caller's stream of `config` on the EP device `devices` holds (the one provider besides the CPU EP); the EP's
// compute stream option added to `ep_options` when it takes one.
std::optional<CallerStream> caller_stream(const SessionConfig& config, const std::string& ep,
                                          const std::vector<const OrtEpDevice*>& devices,
                                          std::vector<std::pair<std::string, std::string>>& ep_options) {
  if (devices.size() != 1) {
    refuse("a stream belongs to one device, and '" + ep + "' has " + std::to_string(devices.size()) +
           ": pick one with ep_options device_id");
  }
  CallerStream s{detail::default_memory(devices[0]), *config.stream, false};
  check_caller_stream(s);
  const detail::EpRow* row = detail::find_ep(ep);
  const char* key = row != nullptr ? row->compute_stream_option : nullptr;
  if (key != nullptr && s.handle != 0) {  // ORT takes 0 for "no stream of the caller's"
    for (const auto& option : ep_options) {
      if (option.first == key) refuse(std::string("stream and ep_options '") + key + "' both set");
    }
    ep_options.emplace_back(key, std::to_string(s.handle));
    s.ort_runs_on_it = true;
  }
  return s;
}

constexpr const char* kCpuEp = "CPUExecutionProvider";

// The providers of a config: `providers`, or the one `ep` names.
std::vector<Provider> providers_of(const SessionConfig& config) {
  if (config.ep) {
    if (!config.providers.empty()) refuse("set ep or providers, not both");
    return {Provider{*config.ep, config.ep_options}};
  }
  if (!config.ep_options.empty()) refuse("ep_options needs ep");
  return config.providers;
}

// The settings of a config that are not EPs, each with its C API call; values checked first.
void apply_settings(const SessionConfig& c, OrtSessionOptions* o) {
  const OrtApi& api = ort();
  const auto at_least = [](const char* field, const std::optional<int>& v, int low) {
    if (v && *v < low)
      refuse(std::string(field) + " must be >= " + std::to_string(low) + ", got " + std::to_string(*v));
  };
  at_least("intra_op_num_threads", c.intra_op_num_threads, 0);
  at_least("inter_op_num_threads", c.inter_op_num_threads, 0);
  at_least("log_verbosity_level", c.log_verbosity_level, 0);
  if (c.log_severity_level && (*c.log_severity_level < 0 || *c.log_severity_level > 4)) {
    refuse("log_severity_level must be 0 (verbose) .. 4 (fatal), got " + std::to_string(*c.log_severity_level));
  }
  if (c.graph_optimization_level) {
    const int level = *c.graph_optimization_level;
    if (level != ORT_DISABLE_ALL && level != ORT_ENABLE_BASIC && level != ORT_ENABLE_EXTENDED &&
        level != ORT_ENABLE_LAYOUT && level != ORT_ENABLE_ALL) {
      refuse("graph_optimization_level " + std::to_string(level) +
             " is none of ORT_DISABLE_ALL (0), ORT_ENABLE_BASIC (1), ORT_ENABLE_EXTENDED (2), ORT_ENABLE_LAYOUT (3), "
             "ORT_ENABLE_ALL (99)");
    }
  }
  if (c.execution_mode && *c.execution_mode != ORT_SEQUENTIAL && *c.execution_mode != ORT_PARALLEL) {
    refuse("execution_mode " + std::to_string(*c.execution_mode) +
           " is neither ORT_SEQUENTIAL (0) nor ORT_PARALLEL (1)");
  }
  if (c.enable_mem_reuse == false) {
    refuse("enable_mem_reuse=false cannot be set: ONNX Runtime's C API has no call for it");
  }
  if (c.execution_order && *c.execution_order != "DEFAULT") {
    refuse("execution_order '" + *c.execution_order +
           "' cannot be set: ONNX Runtime's C API has no call for it "
           "(only DEFAULT)");
  }
  if (c.profile_file_prefix && c.enable_profiling != true) refuse("profile_file_prefix needs enable_profiling");
  for (const auto* overrides : {&c.free_dimension_overrides_by_name, &c.free_dimension_overrides_by_denotation}) {
    for (const auto& [dim, value] : *overrides) {
      if (dim.empty()) refuse("a free dimension override names no dimension");
      if (value < 0)
        refuse("free dimension '" + dim + "' overridden with " + std::to_string(value) + " (must be >= 0)");
    }
  }

  if (c.intra_op_num_threads) check(api.SetIntraOpNumThreads(o, *c.intra_op_num_threads));
  if (c.inter_op_num_threads) check(api.SetInterOpNumThreads(o, *c.inter_op_num_threads));
  if (c.use_per_session_threads == false) check(api.DisablePerSessionThreads(o));
  if (c.graph_optimization_level) {
    check(api.SetSessionGraphOptimizationLevel(o, static_cast<GraphOptimizationLevel>(*c.graph_optimization_level)));
  }
  if (c.execution_mode) check(api.SetSessionExecutionMode(o, static_cast<ExecutionMode>(*c.execution_mode)));
  if (c.optimized_model_filepath) check(api.SetOptimizedModelFilePath(o, c.optimized_model_filepath->c_str()));
  for (const auto& [name, value] : c.free_dimension_overrides_by_name) {
    check(api.AddFreeDimensionOverrideByName(o, name.c_str(), value));
  }
  for (const auto& [denotation, value] : c.free_dimension_overrides_by_denotation) {
    check(api.AddFreeDimensionOverride(o, denotation.c_str(), value));
  }
  if (c.enable_cpu_mem_arena) check(*c.enable_cpu_mem_arena ? api.EnableCpuMemArena(o) : api.DisableCpuMemArena(o));
  if (c.enable_mem_pattern) check(*c.enable_mem_pattern ? api.EnableMemPattern(o) : api.DisableMemPattern(o));
  if (c.use_deterministic_compute) check(api.SetDeterministicCompute(o, *c.use_deterministic_compute));
  if (c.log_severity_level) check(api.SetSessionLogSeverityLevel(o, *c.log_severity_level));
  if (c.log_verbosity_level) check(api.SetSessionLogVerbosityLevel(o, *c.log_verbosity_level));
  if (c.log_id) check(api.SetSessionLogId(o, c.log_id->c_str()));
  if (c.enable_profiling) {
    // onnxruntime's Python default prefix, so that a profile lands where an onnxruntime user looks for it.
    check(*c.enable_profiling ? api.EnableProfiling(o, c.profile_file_prefix.value_or("onnxruntime_profile_").c_str())
                              : api.DisableProfiling(o));
  }
  for (const auto& [key, value] : c.entries) check(api.AddSessionConfigEntry(o, key.c_str(), value.c_str()));
}

// Outputs of a session on an EP come from the env's shared allocators, not from the allocator of the session's own EP
// instance: an output may outlive its session, and freeing a WebGPU output after its session was released crashes
// in the EP (WebGPU EP 0.4, ORT 1.32, plain C API too) unless it came from the shared allocator. A caller's own
// setting of the entry (SessionConfig::entries, or the options it started from) wins.
void use_env_allocators(OrtSessionOptions* options) {
  constexpr const char* kKey = "session.use_env_allocators";
  int set = 0;
  check(ort().HasSessionConfigEntry(options, kKey, &set));
  if (!set) check(ort().AddSessionConfigEntry(options, kKey, "1"));
}

// A session created from a config: the session, the EP devices it was created with, its providers in ORT's names
// (CPU last) and the caller's stream.
struct Created {
  template <class Create>  // `create(options, &session)`: ORT's CreateSession or CreateSessionFromArray
  Created(const SessionConfig& config, Create create) {
    const OrtApi& api = ort();
    OrtSessionOptions* raw = nullptr;
    check(config.base != nullptr ? api.CloneSessionOptions(config.base, &raw) : api.CreateSessionOptions(&raw));
    const Owned<OrtSessionOptions> options(raw);
    apply_settings(config, raw);
    append_providers(config, raw);
    OrtSession* session_raw = nullptr;
    check(create(raw, &session_raw));
    session = Owned<OrtSession>(session_raw);
  }

  // Appends every provider in order, the CPU EP too when listed (as onnxruntime does: ORT then sees it was asked for,
  // e.g. against session.disable_cpu_ep_fallback); when it is not listed it is ORT's implicit fallback, last.
  void append_providers(const SessionConfig& config, OrtSessionOptions* options) {
    const std::vector<Provider> wanted = providers_of(config);
    size_t device_eps = 0;  // providers besides the CPU EP
    for (const Provider& p : wanted) device_eps += canonical_ep_name(p.name) != kCpuEp ? 1 : 0;
    if (config.stream && device_eps != 1) {
      refuse(device_eps == 0 ? "stream needs ep, an EP with a device (host memory has no streams)"
                             : "a stream belongs to one EP's device, and providers lists " +
                                   std::to_string(device_eps) + " besides the CPU EP");
    }
    for (const Provider& p : wanted) {
      const std::string ep = ensure_ep(p.name);  // "" refused there
      for (const std::string& listed : providers) {
        if (listed == ep) refuse("provider '" + ep + "' is listed twice");
      }
      providers.push_back(ep);
      std::vector<const OrtEpDevice*> devices = detail::select_ep_devices(ep, p.options);
      std::vector<std::pair<std::string, std::string>> ep_options = provider_options(ep, p.options);  // QNN: htp
      if (config.stream && ep != kCpuEp) stream = caller_stream(config, ep, devices, ep_options);
      std::vector<const char*> keys, values;
      for (const auto& [key, value] : ep_options) {
        keys.push_back(key.c_str());
        values.push_back(value.c_str());
      }
      check(ort().SessionOptionsAppendExecutionProvider_V2(options, env(), devices.data(), devices.size(), keys.data(),
                                                           values.data(), keys.size()));
      ep_devices.insert(ep_devices.end(), devices.begin(), devices.end());
    }
    if (device_eps != 0) use_env_allocators(options);
    for (const std::string& listed : providers) {
      if (listed == kCpuEp) return;  // listed where it was appended
    }
    providers.push_back(kCpuEp);
  }

  Owned<OrtSession> session;
  std::vector<const OrtEpDevice*> ep_devices;
  std::vector<std::string> providers;
  std::optional<CallerStream> stream;
};

// The EPs of a borrowed session's EP devices, in order, then the CPU EP.
std::vector<std::string> providers_of(const std::vector<const OrtEpDevice*>& ep_devices) {
  std::vector<std::string> names;
  for (const OrtEpDevice* d : ep_devices) {
    const std::string name = ort().EpDevice_EpName(d);
    bool listed = false;
    for (const std::string& n : names) listed = listed || n == name;
    if (!listed && name != kCpuEp) names.push_back(name);
  }
  names.push_back(kCpuEp);
  return names;
}

// A string ORT allocated with the default allocator, copied and freed.
std::string take_string(char* s) {
  std::string out = s != nullptr ? s : "";
  if (s != nullptr) check(ort().AllocatorFree(detail::default_allocator(), s));
  return out;
}

// Binds a plan's inputs and outputs; returns whether any output is allocated by ORT.
bool bind_plan(const RunPlan& plan, OrtIoBinding* binding) {
  const OrtApi& api = ort();
  for (const RunPlan::Input& in : plan.inputs) {
    const std::string& name = in.io->name;
    detail::check(api.BindInput(binding, name.c_str(), in.bound().ort_value()), "run: binding input '" + name + "'");
  }
  bool any_allocated = false;
  for (const RunPlan::Output& out : plan.outputs) {
    const std::string& name = out.io->name;
    const std::string what = "run: binding output '" + name + "'";
    if (out.destination) {
      detail::check(api.BindOutput(binding, name.c_str(), out.destination.ort_value()), what);
    } else {
      any_allocated = true;
      detail::check(api.BindOutputToDevice(binding, name.c_str(), out.memory), what);
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

}  // namespace

struct Session::Impl {
  Impl(OrtSession* borrowed, const std::vector<const OrtEpDevice*>& ep_devices)
      : session(borrowed), info(borrowed, ep_devices), providers(providers_of(ep_devices)), pool(borrowed) {}
  explicit Impl(Created created)
      : owned(std::move(created.session)),
        stream(created.stream),
        session(owned.get()),
        info(session, created.ep_devices),
        providers(std::move(created.providers)),
        pool(session) {
    if (stream && stream->ort_runs_on_it) {
      // ORT computes on the caller's stream: a run need not wait for it on the host at its end.
      OrtRunOptions* raw = nullptr;
      check(ort().CreateRunOptions(&raw));
      unsynchronized = Owned<OrtRunOptions>(raw);
      check(ort().AddRunConfigEntry(raw, "disable_synchronize_execution_providers", "1"));
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
    if (OrtStatus* status = ort().RunWithBinding(session, leave_queued ? unsynchronized.get() : run_options, binding)) {
      const Owned<OrtStatus> release(status);
      throw run_failed(ort().GetErrorCode(status), ort().GetErrorMessage(status));
    }
    if (leave_queued) adopt_caller_work(*stream);
  }

  Owned<OrtSession> owned;              // the session when this class created it (declared first: destroyed last)
  std::optional<CallerStream> stream;   // SessionConfig::stream
  Owned<OrtRunOptions> unsynchronized;  // runs that leave their work queued on `stream` (ORT computes on it)
  OrtSession* session;
  SessionInfo info;
  std::vector<std::string> providers;
  BindingPool pool;
};

Session::Session(OrtSession* session, const std::vector<const OrtEpDevice*>& ep_devices)
    : impl_(std::make_shared<Impl>(session, ep_devices)) {}

Session::Session(const std::string& model_path, const SessionConfig& config)
    : impl_(std::make_shared<Impl>(Created(config, [&](const OrtSessionOptions* options, OrtSession** out) {
        return ort().CreateSession(env(), model_path.c_str(), options, out);
      }))) {}

Session::Session(const void* model_data, size_t model_size, const SessionConfig& config)
    : impl_(std::make_shared<Impl>(Created(config, [&](const OrtSessionOptions* options, OrtSession** out) {
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
  return outputs;
}

// --- Binding -----------------------------------------------------------------------------------------------------

struct Binding::Impl {
  std::shared_ptr<Session::Impl> session;
  RunPlan plan;                                // after the first run, every output has its destination
  const OrtRunOptions* run_options = nullptr;  // bind()'s RunOptions::run_options
  IoBinding binding;                           // bound once (outputs again after the first run)
  bool allocated = true;                       // whether the next run has outputs ORT allocates
  std::vector<std::string> names;
  std::vector<Tensor> outputs;
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
      detail::check(api.BindOutput(b.binding.get(), b.names[k].c_str(), outputs[k].ort_value()),
                    "run: binding output '" + b.names[k] + "'");
      out.destination = outputs[k];
    }
    b.outputs = std::move(outputs);
    b.allocated = false;
  } else if (b.outputs.empty()) {
    b.outputs = collect(b.plan, b.binding.get(), false);  // only destinations: the caller's own tensors
  }
  return b.outputs;
}

const std::vector<Tensor>& Binding::outputs() const noexcept {
  static const std::vector<Tensor> none;
  return impl_ ? impl_->outputs : none;
}

const std::vector<std::string>& Binding::output_names() const noexcept {
  static const std::vector<std::string> none;
  return impl_ ? impl_->names : none;
}

}  // namespace ortdlpack
