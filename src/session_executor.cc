// The steps of a session run (session_executor.h): binding a plan to an IoBinding, collecting its outputs, the
// checks and settings every run path shares.
#include "session_executor.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ep_library.h"
#include "ortdlpack/device.h"
#include "ortdlpack/ep.h"
#include "ortdlpack/error.h"

namespace ortdlpack {

void check_binding(OrtStatus* status, const char* role, const std::string& name) {
  if (status != nullptr) detail::check(status, std::string("run: binding ") + role + " '" + name + "'");
}

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

namespace detail {
struct TensorOfRun {
  static Tensor make(OrtValue* value, const std::shared_ptr<const void>& keeper) {
    Tensor t(value);
    t.owner_->keeper = keeper;
    return t;
  }
};
}  // namespace detail

std::vector<Tensor> collect(const RunPlan& plan, std::vector<Owned<OrtValue>>& produced,
                            const std::shared_ptr<const void>& keeper) {
  std::vector<Tensor> result(plan.outputs.size());
  for (size_t k = 0; k < plan.outputs.size(); ++k) {
    const RunPlan::Output& out = plan.outputs[k];
    if (out.destination) {
      result[k] = out.destination;
      continue;
    }
    int is_tensor = 0;
    check(ort().IsTensor(produced[k].get(), &is_tensor));
    if (!is_tensor) {  // a sparse initializer returned as an output declared dense
      throw Error(ErrorKind::kUnsupported, "run: output '" + out.io->name + "' is declared " + out.io->onnx_type +
                                               ", but ORT produced a value that is no dense tensor (a sparse "
                                               "initializer), which has no DLPack form");
    }
    result[k] = detail::TensorOfRun::make(produced[k].release(), keeper);
  }
  return result;
}

std::vector<Tensor> collect(const RunPlan& plan, OrtIoBinding* binding, bool any_allocated,
                            const std::shared_ptr<const void>& keeper) {
  std::vector<Owned<OrtValue>> produced;
  if (any_allocated) {
    const OrtApi& api = ort();
    OrtAllocator* allocator = detail::default_allocator();
    OrtValue** values = nullptr;
    size_t count = 0;
    check(api.GetBoundOutputValues(binding, allocator, &values, &count));
    // Own every value first, so none leaks whatever fails below.
    produced.reserve(count);
    for (size_t k = 0; k < count; ++k) produced.emplace_back(values[k]);
    check(api.AllocatorFree(allocator, values));
    if (count != plan.outputs.size()) {
      throw Error(ErrorKind::kRuntime, "run: ORT returned " + std::to_string(count) + " outputs for " +
                                           std::to_string(plan.outputs.size()) + " bound");
    }
  } else {
    produced.resize(plan.outputs.size());
  }
  return collect(plan, produced, keeper);
}

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

bool copied_when_bound(const RunPlan::Input& in) {
  const OrtMemoryInfo* bound = in.bound().memory_info();
  return in.io->memory != nullptr ? !detail::same_memory(bound, in.io->memory) : !detail::is_cpu_memory(bound);
}

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

Owned<OrtRunOptions> new_run_options() {
  OrtRunOptions* raw = nullptr;
  check(ort().CreateRunOptions(&raw));
  return Owned<OrtRunOptions>(raw);
}

}  // namespace ortdlpack
