// ortdlpack: how Session creates an OrtSession from a model (SessionConfig): what onnxruntime.SessionOptions lets a
// user set, and the execution providers it runs on.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <onnxruntime_c_api.h>

namespace ortdlpack {

// An execution provider a session is created with, as onnxruntime's `providers=[name or (name, options)]` names
// one: a name users know ("cuda", "CUDAExecutionProvider", "webgpu", a plugin EP's registered name; ep.h registers
// its library when the env lacks it) and its provider options ("device_id" picks one of several EP devices).
struct Provider {
  std::string name;
  std::vector<std::pair<std::string, std::string>> options;
};

// How Session creates an OrtSession from a model: what onnxruntime.SessionOptions lets a user set, each field mapped
// to its ORT C API call; a field left unset (nullopt, empty) is ORT's default. Values are checked before ORT is
// called: Error(kInvalidArgument) naming the field for a value out of range, and for a setting ORT's C API cannot
// make (so nothing a caller set is ever dropped).
struct SessionConfig {
  // Options to start from: a copy of them (CloneSessionOptions) keeps everything set on them, whatever call set it
  // (config entries, free dimension overrides, initializers, custom op libraries, ...); the fields below are applied
  // on top, and the providers appended after any the base already has. NULL: ORT's defaults. Only read during the
  // constructor; what the base refers to (an initializer's memory, a custom op library) must outlive the session.
  const OrtSessionOptions* base = nullptr;

  // Threads: 0 is ORT's default (one per physical core for intra-op); negative values are refused.
  std::optional<int> intra_op_num_threads;  // SetIntraOpNumThreads
  std::optional<int> inter_op_num_threads;  // SetInterOpNumThreads
  // false: run on the env's global thread pools (DisablePerSessionThreads; ORT refuses it when the env has none).
  std::optional<bool> use_per_session_threads;

  // Graph. The two enums of ORT as ints (a caller's value is checked, not cast): GraphOptimizationLevel
  // ORT_DISABLE_ALL, ORT_ENABLE_BASIC, ORT_ENABLE_EXTENDED, ORT_ENABLE_LAYOUT or ORT_ENABLE_ALL
  // (SetSessionGraphOptimizationLevel); ExecutionMode ORT_SEQUENTIAL or ORT_PARALLEL (SetSessionExecutionMode).
  std::optional<int> graph_optimization_level;
  std::optional<int> execution_mode;
  std::optional<std::string> optimized_model_filepath;  // SetOptimizedModelFilePath: where ORT saves it
  // Free dimensions fixed to a value (>= 0): by the symbolic name in the model (AddFreeDimensionOverrideByName)
  // or by the dimension's denotation ("DATA_BATCH"; AddFreeDimensionOverride).
  std::vector<std::pair<std::string, int64_t>> free_dimension_overrides_by_name;
  std::vector<std::pair<std::string, int64_t>> free_dimension_overrides_by_denotation;

  // Memory.
  std::optional<bool> enable_cpu_mem_arena;       // Enable/DisableCpuMemArena
  std::optional<bool> enable_mem_pattern;         // Enable/DisableMemPattern
  std::optional<bool> use_deterministic_compute;  // SetDeterministicCompute
  // Settings ORT's C API has no call for (onnxruntime's Python sets them on ORT's C++ options directly): only their
  // defaults are accepted (true; "DEFAULT"), anything else is Error(kInvalidArgument) saying so.
  std::optional<bool> enable_mem_reuse;
  std::optional<std::string> execution_order;  // "DEFAULT", "PRIORITY_BASED", "MEMORY_EFFICIENT"

  // Logging and profiling.
  std::optional<int> log_severity_level;           // 0 (verbose) .. 4 (fatal): SetSessionLogSeverityLevel
  std::optional<int> log_verbosity_level;          // >= 0, for verbose logging: SetSessionLogVerbosityLevel
  std::optional<std::string> log_id;               // SetSessionLogId
  std::optional<bool> enable_profiling;            // EnableProfiling (Session::end_profiling() ends it)
  std::optional<std::string> profile_file_prefix;  // the profile's file prefix; needs enable_profiling

  // Session config entries ("session.intra_op.allow_spinning" -> "0", ...): AddSessionConfigEntry.
  std::vector<std::pair<std::string, std::string>> entries;

  // The execution providers, in priority order, each appended with SessionOptionsAppendExecutionProvider_V2 (every
  // EP device of it, or the one "device_id" picks) — "CPUExecutionProvider" too when listed, as onnxruntime does;
  // when it is not listed, ORT's CPU EP is the implicit fallback for what none of them runs. A name listed twice and
  // "" are refused. Empty: ORT's CPU EP alone.
  std::vector<Provider> providers;
  // Shorthand for one provider: `providers = {{*ep, ep_options}}` (nullopt or "cpu": ORT's CPU EP). Set `ep` or
  // `providers`, not both; `ep_options` needs `ep`.
  std::optional<std::string> ep;
  std::vector<std::pair<std::string, std::string>> ep_options;

  // A caller's native stream on the EP's device (a cudaStream_t, a plugin EP's stream handle), e.g. the stream a
  // framework computes on. Every run is ordered with it (docs/streams.md rule 6): work queued on it before
  // run() is done before ORT reads or writes, and the outputs are complete for work queued on it after run(). An EP
  // that takes a caller's compute stream (CUDA, TensorRT) computes on it and run() returns without waiting on the
  // host; with others (and CUDA's default stream, 0, which ORT cannot compute on), run() waits for the stream on the
  // host first. Needs exactly one provider besides the CPU EP, on one device.
  std::optional<uintptr_t> stream;
};

/// \brief The providers `config` names: `providers`, or the one `ep` names with `ep_options`.
/// Error(kInvalidArgument) for ep and providers both set, and for ep_options without ep.
std::vector<Provider> wanted_providers(const SessionConfig& config);

/// \brief onnxruntime's `providers=` (nullopt: not given) with its `provider_options=` (one options list per provider,
/// in order; nullopt: not given), by onnxruntime's rules: each provider then takes its options from there.
/// `pairs_given`: providers= named a provider as a (name, options) pair, which onnxruntime takes only without
/// provider_options. Error(kInvalidArgument) for provider_options without providers, a count that differs, and a pair
/// (or a provider with options) beside provider_options.
std::vector<Provider> with_provider_options(
    std::optional<std::vector<Provider>> providers,
    const std::optional<std::vector<std::vector<std::pair<std::string, std::string>>>>& options,
    bool pairs_given = false);

// Providers as another API creates a session on them (onnxruntime's Python InferenceSession): each EP by its name in
// ORT, its options completed, and, where that API must be given EP devices to run a plugin EP at all (onnxruntime
// selects some by name silently not at all: QNN then runs on the CPU EP), the devices of each.
struct ProviderHandoff {
  struct Entry {
    std::string ep;  // resolve_provider() of the name written (an installed EP package registered), else as written
    std::vector<std::pair<std::string, std::string>> options;  // provider_options(): the documented defaults added
    std::vector<const OrtEpDevice*> devices;                   // select_ep_devices(), when by_devices
  };
  std::vector<Entry> entries;
  // Hand devices, not names: every provider is a plugin EP of the env (one with EP devices) or the CPU EP, one at
  // least a plugin EP, and the caller may have them added to options of the session's own (it gave none).
  bool by_devices = false;
};

/// \brief How to hand `providers` (names users write) to another API's session (ProviderHandoff). `options_given`:
/// the caller gave session options of its own, which devices cannot be added to. The errors of resolve_provider() and
/// select_ep_devices().
ProviderHandoff hand_off_providers(const std::vector<Provider>& providers, bool options_given);

}  // namespace ortdlpack
