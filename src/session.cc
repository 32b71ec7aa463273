#include "ortdlpack/session.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <string>
#include <utility>

#include "ep_library.h"
#include "ort.h"
#include "ortdlpack/api.h"
#include "ortdlpack/device.h"
#include "ortdlpack/ep.h"
#include "ortdlpack/error.h"
#include "ortdlpack/handle.h"
#include "ortdlpack/transfer.h"
#include "run_plan.h"
#include "session_adapter.h"
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

}  // namespace

namespace detail {
struct TensorOfRun {
  static Tensor make(OrtValue* value, const std::shared_ptr<const void>& keeper) {
    Tensor t(value);
    t.owner_->keeper = keeper;
    return t;
  }
};
}  // namespace detail

namespace {

// The outputs of a run, in plan order: the destinations themselves, the others ORT allocated (holding `keeper`).
std::vector<Tensor> collect(const RunPlan& plan, OrtIoBinding* binding, bool any_allocated,
                            const std::shared_ptr<const void>& keeper) {
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
      if (plan.outputs[k].destination) continue;
      int is_tensor = 0;
      check(api.IsTensor(owned[k].get(), &is_tensor));
      if (!is_tensor) {  // a sparse initializer returned as an output declared dense
        const RunPlan::Output& out = plan.outputs[k];
        throw Error(ErrorKind::kUnsupported, "run: output '" + out.io->name + "' is declared " + out.io->onnx_type +
                                                 ", but ORT produced a value that is no dense tensor (a sparse "
                                                 "initializer), which has no DLPack form");
      }
      result[k] = detail::TensorOfRun::make(owned[k].release(), keeper);
    }
  }
  for (size_t k = 0; k < plan.outputs.size(); ++k) {
    if (plan.outputs[k].destination) result[k] = plan.outputs[k].destination;
  }
  return result;
}

// Session binds tensors only: a value without a DLPack form has no Tensor to bind.
void check_tensors_only(const RunPlan& plan) {
  if (!plan.values.empty()) {
    throw Error(ErrorKind::kInvalidArgument, "run: input '" + plan.values[0]->name + "' is fed a value, not a tensor");
  }
  for (const RunPlan::Output& out : plan.outputs) {
    if (!out.io->has_dlpack_form()) {
      throw Error(ErrorKind::kUnsupported, "run: output '" + out.io->name + "' is " + out.io->onnx_type +
                                               ", which has no DLPack form: request the tensor outputs by name");
    }
  }
}

RunPlan plan_tensors(const SessionInfo& info, const Feeds& feeds, const std::vector<std::string>& output_names,
                     const RunOptions& options) {
  RunPlan plan = plan_run(info, feeds, output_names, options);
  check_tensors_only(plan);
  return plan;
}

// The caller's stream of a run (RunOptions::stream), on the device of its first feed or destination in device memory.
std::optional<CallerStream> run_stream(const RunOptions& options, const Feeds& feeds, bool session_has_one) {
  if (!options.stream) return std::nullopt;
  if (session_has_one) {
    throw Error(ErrorKind::kInvalidArgument,
                "run: RunOptions::stream on a session created with SessionConfig::stream, which orders every run");
  }
  const OrtMemoryInfo* memory = nullptr;
  const auto consider = [&memory](const Tensor& t) {
    if (memory == nullptr && t && !t.host_accessible()) memory = t.memory_info();
  };
  for (const auto& feed : feeds) consider(feed.second);
  for (const auto& destination : options.destinations) consider(destination.second);
  if (memory == nullptr) {
    throw Error(
        ErrorKind::kInvalidArgument,
        "run: RunOptions::stream orders device work, and no feed or destination of the run is in device memory");
  }
  CallerStream stream{memory, *options.stream, false};
  check_caller_stream(stream);
  return stream;
}

// The graph a run replays (its run options' gpu_graph_id; ORT's default, graph 0, when unset), or kNoCapture.
constexpr const char* kNoCapture = "-1";
std::string graph_of(const OrtRunOptions* run_options) {
  const char* id = run_options != nullptr ? ort().GetRunConfigEntry(run_options, "gpu_graph_id") : nullptr;
  return id != nullptr ? id : "0";
}

std::vector<std::string> names_of(const std::vector<Provider>& providers) {
  std::vector<std::string> names;
  for (const Provider& p : providers) names.push_back(p.name);
  return names;
}

bool any_captures_graphs(const std::vector<Provider>& providers) {
  for (const Provider& p : providers) {
    if (captures_graphs(canonical_ep_name(p.name), p.options)) return true;
  }
  return false;
}

// A borrowed session's EP devices: those it was created with, and the env's devices of the EPs it runs on.
std::vector<const OrtEpDevice*> with_devices_of(std::vector<const OrtEpDevice*> devices,
                                                const std::vector<Provider>& providers) {
  for (const std::string& p : names_of(providers)) {
    if (detail::ships_with_ort(p)) {
      try {
        ensure_ep(p);           // a library shipped with ORT (CUDA, ...): registered now, once
      } catch (const Error&) {  // not there: the session's EP keeps its memory to itself
      }
    }
    const std::vector<const OrtEpDevice*> of = detail::ep_devices_of(p);
    devices.insert(devices.end(), of.begin(), of.end());
  }
  return devices;
}

// Run options as ORT makes them for a run passed none: made once, where ORT would make them on every such run.
Owned<OrtRunOptions> new_run_options() {
  OrtRunOptions* raw = nullptr;
  check(ort().CreateRunOptions(&raw));
  return Owned<OrtRunOptions>(raw);
}

}  // namespace

struct Session::Impl {
  Impl(OrtSession* borrowed, const BorrowedSession& how)
      : session(borrowed),
        info(borrowed, with_devices_of(how.ep_devices, how.providers)),
        providers(how.providers.empty() ? providers_of(how.ep_devices) : names_of(how.providers)),
        captures_graphs(how.captures_graphs || any_captures_graphs(how.providers)),
        owner(how.owner),
        pool(borrowed) {}
  explicit Impl(CreatedSession created)
      : owned(std::move(created.session)),
        stream(created.stream),
        session(owned.get()),
        info(session, created.ep_devices),
        providers(std::move(created.providers)),
        captures_graphs(created.captures_graphs),
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

  // Binds, runs and collects a plan on an idle IoBinding (the binding is cleared on every path).
  std::vector<Tensor> execute(const RunPlan& plan, const OrtRunOptions* run_options, const CallerStream* per_run) {
    if (captures_graphs && graph_of(run_options) != kNoCapture) {
      throw Error(ErrorKind::kInvalidArgument,
                  "run: the session replays captured device graphs, which read and write the tensors of the run "
                  "that captured them, not this run's: bind() once and run the Binding (one per gpu_graph_id), or "
                  "set the run option gpu_graph_id to -1 for this run");
    }
    struct Lease {
      BindingPool& pool;
      IoBinding binding;
      ~Lease() { pool.release(std::move(binding)); }
    } lease{pool, pool.acquire()};
    const bool any_allocated = bind_plan(plan, lease.binding.get());
    run_bound(plan, lease.binding.get(), run_options, per_run);
    std::vector<Tensor> outputs = collect(plan, lease.binding.get(), any_allocated, owner);
    unalias(plan, outputs);
    return as_requested(plan, std::move(outputs));
  }

  // A Binding of a session that replays graphs runs graph `graph` (its run options' gpu_graph_id): refused when
  // another Binding ran it, whose tensors a replay would read and write instead. ORT's C API cannot release a
  // captured graph: once its Binding is gone the graph stays captured on that Binding's (freed) tensors, so it is
  // never run again (retired).
  void claim_graph(const std::string& graph, const void* binding) {
    if (!captures_graphs || graph == kNoCapture) return;
    const std::lock_guard<std::mutex> lock(graphs_mutex);
    const void*& runs_it = graph_owners[graph];
    if (runs_it != nullptr && runs_it != binding) {
      throw Error(ErrorKind::kInvalidArgument,
                  "run: graph " + graph + " of the session was captured by another Binding" +
                      (runs_it == &kRetired ? " (released since)" : "") +
                      ", whose tensors a replay reads and writes: give this one another gpu_graph_id" +
                      (runs_it == &kRetired ? "" : ", or run that Binding"));
    }
    runs_it = binding;
  }
  void retire_graphs(const void* binding) noexcept {
    const std::lock_guard<std::mutex> lock(graphs_mutex);
    for (auto& [graph, runs_it] : graph_owners) {
      if (runs_it == binding) runs_it = &kRetired;
    }
  }
  static constexpr char kRetired = 0;  // what runs a graph whose Binding is gone: nothing ever again

  // Orders and runs a bound plan (the caller's work already adopted, staging done); `per_run`: the run's own
  // caller's stream (RunOptions::stream), whose later work the outputs are then ordered before.
  void run_bound(const RunPlan& plan, OrtIoBinding* binding, const OrtRunOptions* run_options,
                 const CallerStream* per_run) {
    const bool leave_queued = leaves_queued(plan, run_options);
    order_before_run(plan, stream ? &*stream : per_run);
    const OrtRunOptions* options = leave_queued ? unsynchronized.get() : run_options ? run_options : defaults.get();
    if (OrtStatus* status = ort().RunWithBinding(session, options, binding)) {
      const Owned<OrtStatus> release(status);
      throw run_failed(ort().GetErrorCode(status), ort().GetErrorMessage(status));
    }
    if (leave_queued) adopt_caller_work(*stream);
  }

  // After a run with its own caller's stream: the outputs ORT wrote are complete for work queued on it next.
  static void order_for_caller(const std::vector<Tensor>& outputs, const CallerStream* per_run) {
    if (per_run == nullptr) return;
    for (const Tensor& t : outputs) order_for_consumer(t, static_cast<int64_t>(per_run->handle));
  }

  Owned<OrtSession> owned;              // the session when this class created it (declared first: destroyed last)
  std::optional<CallerStream> stream;   // SessionConfig::stream
  Owned<OrtRunOptions> unsynchronized;  // runs that leave their work queued on `stream` (ORT computes on it)
  Owned<OrtRunOptions> defaults = new_run_options();  // runs without options of their own (read-only: shared)
  OrtSession* session;
  SessionInfo info;
  std::vector<std::string> providers;
  bool captures_graphs;
  std::shared_ptr<const void> owner;  // BorrowedSession::owner
  std::mutex graphs_mutex;
  std::map<std::string, const void*> graph_owners;  // graph id -> the Binding (its Impl) that runs it, or kRetired
  BindingPool pool;
};

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

struct Binding::Impl {
  std::shared_ptr<Session::Impl> session;
  RunPlan plan;                                // after the first run, every output has its destination
  const OrtRunOptions* run_options = nullptr;  // bind()'s RunOptions::run_options
  std::optional<CallerStream> stream;          // bind()'s RunOptions::stream
  IoBinding binding;                           // bound once (outputs again after the first run)
  bool allocated = true;                       // whether the next run has outputs ORT allocates
  std::vector<std::string> names;              // of plan.outputs
  std::vector<Tensor> outputs;                 // plan.outputs' tensors, after the first run
  std::vector<Tensor> returned;                // as_requested(plan, outputs): what run() returns
  std::vector<std::string> returned_names;
  std::mutex mutex;

  ~Impl() { session->retire_graphs(this); }
};

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

Binding::Binding() = default;
Binding::~Binding() = default;
Binding::Binding(Binding&&) noexcept = default;
Binding& Binding::operator=(Binding&&) noexcept = default;

const std::vector<Tensor>& Binding::run(const OrtRunOptions* run_options) {
  if (!impl_) throw Error(ErrorKind::kInvalidArgument, "run: the Binding is empty");
  Impl& b = *impl_;
  const std::lock_guard<std::mutex> lock(b.mutex);
  Session::Impl& s = *b.session;
  const CallerStream* per_run = b.stream ? &*b.stream : nullptr;
  if (s.stream) adopt_caller_work(*s.stream);  // before staging: the copy must read what the caller wrote
  if (per_run != nullptr) adopt_caller_work(*per_run);
  // Staged feeds: their contents may have changed since the last run. The copy into host memory is complete here.
  for (const RunPlan::Input& in : b.plan.inputs) {
    if (in.staged) copy(in.feed, in.staged);
  }
  const OrtRunOptions* options = run_options != nullptr ? run_options : b.run_options;
  s.claim_graph(graph_of(options), &b);  // (b: the Impl, which Binding's moves keep)
  s.run_bound(b.plan, b.binding.get(), options, per_run);
  if (b.allocated) {
    // The first run allocated the outputs: from now on they are the binding's destinations, at fixed addresses.
    std::vector<Tensor> outputs = collect(b.plan, b.binding.get(), true, s.owner);
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
    b.outputs = collect(b.plan, b.binding.get(), false, s.owner);  // only destinations: the caller's own tensors
    b.returned = as_requested(b.plan, b.outputs);
  }
  Session::Impl::order_for_caller(b.outputs, per_run);
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
