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
#include "run_plan.h"
#include "stream_order.h"

namespace ortdlpack {
namespace {

using Binding = Owned<OrtIoBinding>;

// Idle IoBindings of one session, reused across runs (creating one costs more than a small run).
class BindingPool {
 public:
  explicit BindingPool(OrtSession* session) : session_(session) {}

  Binding acquire() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!idle_.empty()) {
        Binding b = std::move(idle_.back());
        idle_.pop_back();
        return b;
      }
    }
    OrtIoBinding* binding = nullptr;
    check(ort().CreateIoBinding(session_, &binding));
    return Binding(binding);
  }

  void release(Binding binding) noexcept {
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
  std::vector<Binding> idle_;
};

// The caller's stream of `config` on the session's EP device; the EP's compute stream option added to `ep_options`
// when it takes one.
std::optional<CallerStream> caller_stream(const SessionConfig& config, const std::string& ep,
                                          const std::vector<const OrtEpDevice*>& devices,
                                          std::vector<std::pair<std::string, std::string>>& ep_options) {
  if (!config.stream) return std::nullopt;
  if (devices.size() != 1) {
    throw Error(ErrorKind::kInvalidArgument, "Session: a stream belongs to one device, and '" + ep + "' has " +
                                                 std::to_string(devices.size()) + ": pick one with ep_options device_id");
  }
  CallerStream s{detail::default_memory(devices[0]), *config.stream, false};
  check_caller_stream(s);
  const detail::EpRow* row = detail::find_ep(ep);
  const char* key = row != nullptr ? row->compute_stream_option : nullptr;
  if (key != nullptr && s.handle != 0) {  // ORT takes 0 for "no stream of the caller's"
    for (const auto& option : ep_options) {
      if (option.first == key) {
        throw Error(ErrorKind::kInvalidArgument, std::string("Session: stream and ep_options '") + key + "' both set");
      }
    }
    ep_options.emplace_back(key, std::to_string(s.handle));
    s.ort_runs_on_it = true;
  }
  return s;
}

// Session options from a SessionConfig; `ep_devices` receives the EP devices appended (none for the CPU EP) and
// `stream` the caller's stream.
Owned<OrtSessionOptions> session_options(const SessionConfig& config, std::vector<const OrtEpDevice*>& ep_devices,
                                         std::optional<CallerStream>& stream) {
  const OrtApi& api = ort();
  OrtSessionOptions* raw = nullptr;
  check(api.CreateSessionOptions(&raw));
  Owned<OrtSessionOptions> options(raw);
  for (const auto& [threads, what] : {std::pair(config.intra_op_num_threads, "intra_op_num_threads"),
                                       std::pair(config.inter_op_num_threads, "inter_op_num_threads")}) {
    if (threads && *threads < 0) {
      throw Error(ErrorKind::kInvalidArgument, std::string("Session: ") + what + " must be >= 0 (0: ORT's default), not " +
                                                   std::to_string(*threads));
    }
  }
  if (config.intra_op_num_threads) check(api.SetIntraOpNumThreads(raw, *config.intra_op_num_threads));
  if (config.inter_op_num_threads) check(api.SetInterOpNumThreads(raw, *config.inter_op_num_threads));
  for (const auto& [key, value] : config.entries) check(api.AddSessionConfigEntry(raw, key.c_str(), value.c_str()));
  if (!config.ep) {
    if (!config.ep_options.empty()) throw Error(ErrorKind::kInvalidArgument, "Session: ep_options needs ep");
    if (config.stream) throw Error(ErrorKind::kInvalidArgument, "Session: stream needs ep (the CPU EP has none)");
    return options;
  }
  const std::string ep = ensure_ep(*config.ep);  // "" refused there
  ep_devices = detail::select_ep_devices(ep, config.ep_options);
  // Outputs come from the env's shared allocators, not from the allocator of the session's own EP instance: an
  // output may outlive its session, and freeing a WebGPU output after its session was released crashes in the EP
  // (WebGPU EP 0.4, ORT 1.32, plain C API too) unless it came from the shared allocator. The caller's entry wins.
  const bool caller_chose = std::any_of(config.entries.begin(), config.entries.end(),
                                        [](const auto& e) { return e.first == "session.use_env_allocators"; });
  if (!ep_devices.empty() && !caller_chose) check(api.AddSessionConfigEntry(raw, "session.use_env_allocators", "1"));
  std::vector<std::pair<std::string, std::string>> ep_options = config.ep_options;
  stream = caller_stream(config, ep, ep_devices, ep_options);
  std::vector<const char*> keys, values;
  for (const auto& [key, value] : ep_options) {
    keys.push_back(key.c_str());
    values.push_back(value.c_str());
  }
  check(api.SessionOptionsAppendExecutionProvider_V2(raw, env(), ep_devices.data(), ep_devices.size(), keys.data(),
                                                     values.data(), keys.size()));
  return options;
}

// A session created from a config, with the EP devices it was created with and the caller's stream.
struct Created {
  template <class Create>  // `create(options, &session)`: ORT's CreateSession or CreateSessionFromArray
  Created(const SessionConfig& config, Create create) {
    const Owned<OrtSessionOptions> options = session_options(config, ep_devices, stream);
    OrtSession* raw = nullptr;
    check(create(options.get(), &raw));
    session = Owned<OrtSession>(raw);
  }
  Owned<OrtSession> session;
  std::vector<const OrtEpDevice*> ep_devices;
  std::optional<CallerStream> stream;
};

// Binds a plan's inputs and outputs; returns whether any output is allocated by ORT.
bool bind(const SessionInfo& info, const RunPlan& plan, OrtIoBinding* binding) {
  const OrtApi& api = ort();
  for (const RunPlan::Input& in : plan.inputs) {
    const std::string& name = info.inputs()[static_cast<size_t>(in.index)].name;
    detail::check(api.BindInput(binding, name.c_str(), in.bound().ort_value()), "run: binding input '" + name + "'");
  }
  bool any_allocated = false;
  for (const RunPlan::Output& out : plan.outputs) {
    const std::string& name = info.outputs()[static_cast<size_t>(out.index)].name;
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

}  // namespace

struct Session::Impl {
  Impl(OrtSession* borrowed, const std::vector<const OrtEpDevice*>& ep_devices)
      : session(borrowed), info(borrowed, ep_devices), pool(borrowed) {}
  explicit Impl(Created created)
      : owned(std::move(created.session)),
        stream(created.stream),
        session(owned.get()),
        info(session, created.ep_devices),
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
  bool leaves_queued(const RunPlan& plan, const RunOptions& options) const {
    if (!unsynchronized || options.run_options != nullptr) return false;
    for (const RunPlan::Output& out : plan.outputs) {
      if (!detail::same_memory(out.destination ? out.destination.memory_info() : out.memory, stream->memory)) {
        return false;
      }
    }
    return true;
  }

  Owned<OrtSession> owned;  // the session when this class created it (declared first: destroyed last)
  std::optional<CallerStream> stream;    // SessionConfig::stream
  Owned<OrtRunOptions> unsynchronized;   // runs that leave their work queued on `stream` (ORT computes on it)
  OrtSession* session;
  SessionInfo info;
  BindingPool pool;
};

Session::Session(OrtSession* session, const std::vector<const OrtEpDevice*>& ep_devices)
    : impl_(std::make_unique<Impl>(session, ep_devices)) {}

Session::Session(const std::string& model_path, const SessionConfig& config)
    : impl_(std::make_unique<Impl>(Created(config, [&](const OrtSessionOptions* options, OrtSession** out) {
        return ort().CreateSession(env(), model_path.c_str(), options, out);
      }))) {}

Session::Session(const void* model_data, size_t model_size, const SessionConfig& config)
    : impl_(std::make_unique<Impl>(Created(config, [&](const OrtSessionOptions* options, OrtSession** out) {
        return ort().CreateSessionFromArray(env(), model_data, model_size, options, out);
      }))) {}

Session::~Session() = default;

OrtSession* Session::ort_session() const noexcept { return impl_->session; }
const std::vector<IoInfo>& Session::inputs() const noexcept { return impl_->info.inputs(); }
const std::vector<IoInfo>& Session::outputs() const noexcept { return impl_->info.outputs(); }

std::vector<Tensor> Session::run(const Feeds& feeds, const std::vector<std::string>& output_names,
                                 const RunOptions& options) {
  Impl& s = *impl_;
  if (s.stream) adopt_caller_work(*s.stream);  // before planning: a staging copy must read what the caller wrote
  const RunPlan plan = plan_run(s.info, feeds, output_names, options);

  // The binding is cleared on every path.
  struct Lease {
    BindingPool& pool;
    Binding binding;
    ~Lease() { pool.release(std::move(binding)); }
  } lease{s.pool, s.pool.acquire()};
  const bool any_allocated = bind(s.info, plan, lease.binding.get());
  const bool leave_queued = s.leaves_queued(plan, options);
  order_before_run(plan, s.stream ? &*s.stream : nullptr);
  if (OrtStatus* status = ort().RunWithBinding(s.session, leave_queued ? s.unsynchronized.get() : options.run_options,
                                                lease.binding.get())) {
    const Owned<OrtStatus> release(status);
    throw run_failed(ort().GetErrorMessage(status));
  }
  std::vector<Tensor> result = collect(plan, lease.binding.get(), any_allocated);
  if (leave_queued) adopt_caller_work(*s.stream);
  return result;
}

}  // namespace ortdlpack
