#include "ortdlpack/session.h"

#include <string>
#include <utility>

#include "ortdlpack/api.h"
#include "ortdlpack/device.h"
#include "ortdlpack/ep_library.h"
#include "ortdlpack/error.h"

namespace ortdlpack {
namespace {

// Re-throws an ORT failure with what was being done in front of ORT's message.
void check_ctx(OrtStatus* status, const char* what, const std::string& name) {
  if (status == nullptr) return;
  try {
    check(status);
  } catch (const Error& e) {
    throw Error(e.kind(), std::string("run: ") + what + " '" + name + "' failed: " + e.what());
  }
}

OrtAllocator* default_allocator() {
  OrtAllocator* allocator = nullptr;
  check(ort().GetAllocatorWithDefaultOptions(&allocator));
  return allocator;
}

// The caller's stream of `config` on the session's EP device; the EP's compute stream option added to `ep_options`
// when it takes one.
std::optional<CallerStream> caller_stream(const SessionConfig& config, const std::vector<const OrtEpDevice*>& devices,
                                          std::vector<std::pair<std::string, std::string>>& ep_options) {
  if (!config.stream) return std::nullopt;
  if (devices.size() != 1) {
    throw Error(ErrorKind::kInvalidArgument, "Session: a stream belongs to one device, and '" + config.ep + "' has " +
                                                 std::to_string(devices.size()) + ": pick one with ep_options device_id");
  }
  CallerStream s{ort().EpDevice_MemoryInfo(devices[0], OrtDeviceMemoryType_DEFAULT), *config.stream, false};
  check_caller_stream(s);
  const char* key = compute_stream_option(config.ep);
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
  if (config.intra_op_num_threads) check(api.SetIntraOpNumThreads(raw, *config.intra_op_num_threads));
  if (config.inter_op_num_threads) check(api.SetInterOpNumThreads(raw, *config.inter_op_num_threads));
  for (const auto& [key, value] : config.entries) check(api.AddSessionConfigEntry(raw, key.c_str(), value.c_str()));
  if (config.ep.empty()) {
    if (!config.ep_options.empty()) throw Error(ErrorKind::kInvalidArgument, "Session: ep_options needs ep");
    if (config.stream) throw Error(ErrorKind::kInvalidArgument, "Session: stream needs ep (the CPU EP has none)");
    return options;
  }
  ep_devices = select_ep_devices(config.ep, config.ep_options);
  std::vector<std::pair<std::string, std::string>> ep_options = config.ep_options;
  stream = caller_stream(config, ep_devices, ep_options);
  std::vector<const char*> keys, values;
  for (const auto& [key, value] : ep_options) {
    keys.push_back(key.c_str());
    values.push_back(value.c_str());
  }
  check(api.SessionOptionsAppendExecutionProvider_V2(raw, env(), ep_devices.data(), ep_devices.size(), keys.data(),
                                                     values.data(), keys.size()));
  return options;
}

}  // namespace

struct Session::Created {
  // `create(options, &session)`: ORT's CreateSession or CreateSessionFromArray.
  template <class Create>
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

Session::Session(OrtSession* session, const std::vector<const OrtEpDevice*>& ep_devices)
    : session_(session), info_(session, ep_devices) {}

Session::Session(Created created)
    : owned_(std::move(created.session)),
      stream_(created.stream),
      session_(owned_.get()),
      info_(session_, created.ep_devices) {
  if (stream_ && stream_->ort_runs_on_it) {
    // ORT computes on the caller's stream: a run need not wait for it on the host at its end.
    OrtRunOptions* raw = nullptr;
    check(ort().CreateRunOptions(&raw));
    unsynchronized_ = Owned<OrtRunOptions>(raw);
    check(ort().AddRunConfigEntry(raw, "disable_synchronize_execution_providers", "1"));
  }
}

Session::Session(const std::string& model_path, const SessionConfig& config)
    : Session(Created(config, [&](const OrtSessionOptions* options, OrtSession** out) {
        return ort().CreateSession(env(), model_path.c_str(), options, out);
      })) {}

Session::Session(const void* model_data, size_t model_size, const SessionConfig& config)
    : Session(Created(config, [&](const OrtSessionOptions* options, OrtSession** out) {
        return ort().CreateSessionFromArray(env(), model_data, model_size, options, out);
      })) {}

Session::~Session() = default;

Session::Binding Session::acquire() {
  {
    std::lock_guard<std::mutex> lock(pool_mutex_);
    if (!pool_.empty()) {
      Binding b = std::move(pool_.back());
      pool_.pop_back();
      return b;
    }
  }
  OrtIoBinding* binding = nullptr;
  check(ort().CreateIoBinding(session_, &binding));
  return Binding(binding);
}

void Session::release(Binding binding) noexcept {
  // Clearing drops ORT's references to the inputs and outputs: a DLPack producer's memory is not held past run().
  ort().ClearBoundInputs(binding.get());
  ort().ClearBoundOutputs(binding.get());
  constexpr size_t kMaxIdle = 8;
  std::lock_guard<std::mutex> lock(pool_mutex_);
  if (pool_.size() < kMaxIdle) {
    try {
      pool_.push_back(std::move(binding));
    } catch (...) {  // out of memory: the binding is simply released
    }
  }
}

std::vector<Tensor> Session::run(const Feeds& feeds, const std::vector<std::string>& output_names,
                                 const RunOptions& options) {
  const OrtApi& api = ort();
  if (stream_) adopt_caller_work(*stream_);  // before planning: a staging copy must read what the caller wrote
  const RunPlan plan = plan_run(info_, feeds, output_names, options);

  // --- bind, run, collect. The binding is cleared on every path (release()).
  struct Lease {
    Session& self;
    Binding binding;
    ~Lease() { self.release(std::move(binding)); }
  } lease{*this, acquire()};
  OrtIoBinding* binding = lease.binding.get();
  for (const RunPlan::Input& in : plan.inputs) {
    const std::string& name = info_.inputs()[static_cast<size_t>(in.index)].name;
    check_ctx(api.BindInput(binding, name.c_str(), in.bound().ort_value()), "binding input", name);
  }
  bool any_allocated = false;
  for (const RunPlan::Output& out : plan.outputs) {
    const std::string& name = info_.outputs()[static_cast<size_t>(out.index)].name;
    if (out.destination) {
      check_ctx(api.BindOutput(binding, name.c_str(), out.destination.ort_value()), "binding output", name);
    } else {
      any_allocated = true;
      check_ctx(api.BindOutputToDevice(binding, name.c_str(), out.memory), "binding output", name);
    }
  }

  // A run ORT computes on the caller's stream returns with its work queued there when every output is in that
  // device's memory (a host output must be complete on return; readers of another device's memory are not ordered
  // after the caller's stream) and the caller passed no run options of their own.
  bool leave_queued = unsynchronized_ && options.run_options == nullptr;
  for (const RunPlan::Output& out : plan.outputs) {
    leave_queued = leave_queued && same_memory(out.destination ? out.destination.memory_info() : out.memory,
                                               stream_->memory);
  }
  order_before_run(plan, stream_ ? &*stream_ : nullptr);
  if (OrtStatus* status = api.RunWithBinding(session_, leave_queued ? unsynchronized_.get() : options.run_options,
                                             binding)) {
    try {
      check(status);
    } catch (const Error& e) {
      throw Error(e.kind(), std::string("run: the session failed: ") + e.what());
    }
  }

  std::vector<Tensor> result(plan.outputs.size());
  if (any_allocated) {
    OrtAllocator* allocator = default_allocator();
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
  if (leave_queued) adopt_caller_work(*stream_);
  return result;
}

std::vector<Tensor> run(OrtSession* session, const Feeds& feeds, const std::vector<std::string>& output_names,
                        const RunOptions& options) {
  return Session(session).run(feeds, output_names, options);
}

}  // namespace ortdlpack
