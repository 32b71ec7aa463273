// Creating an OrtSession from a SessionConfig (session_creation.h): every setting checked before ORT is called, then
// made with its C API call; the providers appended with their EP devices; the caller's stream.
#include "session_creation.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ep_library.h"
#include "ep_table.h"
#include "ort.h"
#include "ortdlpack/api.h"
#include "ortdlpack/ep.h"
#include "ortdlpack/error.h"
#include "ortdlpack/handle.h"

namespace ortdlpack {
namespace {

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

// Appends every provider in order, the CPU EP too when listed (as onnxruntime does: ORT then sees it was asked for,
// e.g. against session.disable_cpu_ep_fallback); when it is not listed it is ORT's implicit fallback, last.
void append_providers(const SessionConfig& config, OrtSessionOptions* options, CreatedSession& created) {
  const std::vector<Provider> wanted = wanted_providers(config);
  size_t device_eps = 0;  // providers besides the CPU EP
  for (const Provider& p : wanted) device_eps += canonical_ep_name(p.name) != kCpuEp ? 1 : 0;
  if (config.stream && device_eps != 1) {
    refuse(device_eps == 0 ? "stream needs ep, an EP with a device (host memory has no streams)"
                           : "a stream belongs to one EP's device, and providers lists " + std::to_string(device_eps) +
                                 " besides the CPU EP");
  }
  for (const Provider& p : wanted) {
    const std::string ep = ensure_ep(p.name);  // "" refused there
    for (const std::string& listed : created.providers) {
      if (listed == ep) refuse("provider '" + ep + "' is listed twice");
    }
    created.providers.push_back(ep);
    std::vector<const OrtEpDevice*> devices = select_ep_devices(ep, p.options);
    std::vector<std::pair<std::string, std::string>> ep_options = provider_options(ep, p.options);  // QNN: htp
    created.captures_graphs = created.captures_graphs || captures_graphs(ep, ep_options);
    if (config.stream && ep != kCpuEp) created.stream = caller_stream(config, ep, devices, ep_options);
    std::vector<const char*> keys, values;
    for (const auto& [key, value] : ep_options) {
      keys.push_back(key.c_str());
      values.push_back(value.c_str());
    }
    check(ort().SessionOptionsAppendExecutionProvider_V2(options, env(), devices.data(), devices.size(), keys.data(),
                                                         values.data(), keys.size()));
    created.ep_devices.insert(created.ep_devices.end(), devices.begin(), devices.end());
  }
  if (device_eps != 0) use_env_allocators(options);
  for (const std::string& listed : created.providers) {
    if (listed == kCpuEp) return;  // listed where it was appended
  }
  created.providers.push_back(kCpuEp);
}

}  // namespace

// Whether a session on `ep` with these provider options captures device graphs (the EP row's option, "1"/"true").
bool captures_graphs(const std::string& ep, const std::vector<std::pair<std::string, std::string>>& options) {
  const detail::EpRow* row = detail::find_ep(ep);
  if (row == nullptr || row->graph_capture_option == nullptr) return false;
  for (const auto& [key, value] : options) {
    if (key == row->graph_capture_option && (value == "1" || value == "true" || value == "True")) return true;
  }
  return false;
}

std::vector<Provider> wanted_providers(const SessionConfig& config) {
  if (config.ep) {
    if (!config.providers.empty()) refuse("set ep or providers, not both");
    return {Provider{*config.ep, config.ep_options}};
  }
  if (!config.ep_options.empty()) refuse("ep_options needs ep");
  return config.providers;
}

std::vector<Provider> with_provider_options(
    std::optional<std::vector<Provider>> providers,
    const std::optional<std::vector<std::vector<std::pair<std::string, std::string>>>>& options, bool pairs_given) {
  if (!options) return providers ? std::move(*providers) : std::vector<Provider>{};
  if (!providers) refuse("provider_options needs providers");
  if (options->size() != providers->size()) {
    refuse("provider_options has " + std::to_string(options->size()) + " entries for " +
           std::to_string(providers->size()) + " providers (onnxruntime's rule: one per provider)");
  }
  for (size_t i = 0; i < options->size(); ++i) {
    Provider& p = (*providers)[i];
    if (pairs_given || !p.options.empty()) {
      refuse("providers must be names only where provider_options is given (onnxruntime's rule), and provider '" +
             p.name + "' is given as a (name, options) pair");
    }
    p.options = (*options)[i];
  }
  return std::move(*providers);
}

ProviderHandoff hand_off_providers(const std::vector<Provider>& providers, bool options_given) {
  ProviderHandoff handoff;
  bool plugin = false, all_plugin_or_cpu = true;
  for (const Provider& p : providers) {
    const std::optional<std::string> ep = resolve_provider(p.name);
    ProviderHandoff::Entry e{ep ? *ep : p.name, {}, {}};
    e.options = provider_options(e.ep, p.options);
    const bool is_plugin = e.ep != kCpuEp && !detail::ep_devices_of(e.ep).empty();
    plugin = plugin || is_plugin;
    all_plugin_or_cpu = all_plugin_or_cpu && (is_plugin || e.ep == kCpuEp);
    handoff.entries.push_back(std::move(e));
  }
  handoff.by_devices = plugin && all_plugin_or_cpu && !options_given;
  if (handoff.by_devices) {
    for (size_t i = 0; i < providers.size(); ++i) {
      handoff.entries[i].devices = select_ep_devices(handoff.entries[i].ep, providers[i].options);
    }
  }
  return handoff;
}

CreatedSession create_session(const SessionConfig& config, const CreateFromOptions& create) {
  const OrtApi& api = ort();
  OrtSessionOptions* raw = nullptr;
  check(config.base != nullptr ? api.CloneSessionOptions(config.base, &raw) : api.CreateSessionOptions(&raw));
  const Owned<OrtSessionOptions> options(raw);
  apply_settings(config, raw);
  CreatedSession created;
  append_providers(config, raw, created);
  OrtSession* session = nullptr;
  check(create(raw, &session));
  created.session = Owned<OrtSession>(session);
  return created;
}

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

}  // namespace ortdlpack
