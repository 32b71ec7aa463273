#include "run_plan.h"

#include <algorithm>
#include <string>
#include <utility>

#include "ort.h"
#include "ortdlpack/api.h"
#include "ortdlpack/device.h"
#include "ortdlpack/dtype.h"
#include "ortdlpack/error.h"
#include "ortdlpack/placement.h"
#include "ortdlpack/transfer.h"
#include "placement_rules.h"
#include "stream_order.h"

namespace ortdlpack {
namespace {

[[noreturn]] void invalid(const std::string& message) { throw Error(ErrorKind::kInvalidArgument, "run: " + message); }

std::string tensor_string(const Tensor& t) {
  return std::string(dtype_name(t.element_type())) + shape_string(t.shape().data(), t.shape().size());
}

// --- checks ------------------------------------------------------------------------------------------------------

// A check ORT makes too, failed: ORT's code, so a binding raises what ORT's own binding raises for it.
[[noreturn]] void refused(const std::string& message) { throw Error(ORT_INVALID_ARGUMENT, "run: " + message); }

std::string quoted_names(const std::vector<IoInfo>& ios) {
  std::string s;
  for (const IoInfo& io : ios) s += (s.empty() ? "'" : ", '") + io.name + "'";
  return s.empty() ? "(none)" : s;
}

// Checks a tensor against the model's declaration, as ORT does (element type, rank, fixed dimensions; a symbolic
// dimension takes any size: ORT reads its name as a label); `role` is "input" or "output destination".
void check_against(const Tensor& tensor, const IoInfo& io, const char* role) {
  if (!tensor) invalid(std::string(role) + " '" + io.name + "' is an empty Tensor");
  if (!io.has_dlpack_form()) {
    refused(std::string(role) + " '" + io.name + "' is " + io.onnx_type +
            " in the model, which a DLPack tensor cannot be");
  }
  const auto mismatch = [&](const std::string& what) {
    refused(std::string(role) + " '" + io.name + "': " + what + ": the model expects " + io.type_string() + ", got " +
            tensor_string(tensor));
  };
  if (tensor.element_type() != io.element_type) mismatch("element type mismatch");
  if (!io.has_shape) return;
  const ShapeView shape = tensor.shape();
  if (shape.size() != io.shape.size()) mismatch("rank mismatch");
  for (size_t i = 0; i < shape.size(); ++i) {
    if (io.shape[i] >= 0 && shape[i] != io.shape[i]) mismatch("dimension " + std::to_string(i) + " mismatch");
  }
}

std::string produced_in(const IoInfo& io) {
  return io.memory != nullptr ? describe_memory(io.memory) : std::string("host memory");
}

// Whether two tensors share any byte of memory: the same memory and overlapping byte ranges, or, where DLPack's data
// pointer is a buffer handle (WebGPU, ...), the same buffer. The pointers are compared first: no ORT call unless they
// overlap.
bool share_memory(const Tensor& a, const Tensor& b) {
  const auto* pa = static_cast<const char*>(a.data());
  const auto* pb = static_cast<const char*>(b.data());
  if (pa == nullptr || pb == nullptr || a.byte_size() == 0 || b.byte_size() == 0) return false;
  if (!(pa < pb + b.byte_size() && pb < pa + a.byte_size())) return false;
  if (!detail::same_memory(a.memory_info(), b.memory_info())) return false;
  return !(a.has_device() && data_is_handle(a.device().device_type)) || pa == pb;
}

// --- the steps of plan_run ---------------------------------------------------------------------------------------

// Each fed input (tensor or value) known and fed once, each tensor matching its declaration, each required input fed.
void plan_inputs(const SessionInfo& info, const Feeds& feeds, const std::vector<std::string>& values, RunPlan& plan) {
  std::vector<const IoInfo*> fed;
  fed.reserve(feeds.size() + values.size());
  const auto known = [&](const std::string& name) {
    const IoInfo* io = info.find_input(name);
    if (io == nullptr) {  // (onnxruntime's words first, ORT's own check's: what its users look for)
      refused("Invalid input name: " + name + " (the model's inputs are " + quoted_names(info.inputs()) + ")");
    }
    for (const IoInfo* f : fed) {
      if (f == io) refused("input '" + name + "' is fed twice");
    }
    fed.push_back(io);
    return io;
  };
  plan.inputs.reserve(feeds.size());
  for (const auto& [name, tensor] : feeds) {
    const IoInfo* io = known(name);
    check_against(tensor, *io, "input");
    plan.inputs.push_back(RunPlan::Input{io, tensor, Tensor()});
  }
  for (const std::string& name : values) plan.values.push_back(known(name));
  std::string missing, declared;
  for (const IoInfo& io : info.inputs()) {
    if (!io.required() || std::find(fed.begin(), fed.end(), &io) != fed.end()) continue;
    missing += (missing.empty() ? "'" : ", '") + io.name + "'";
    declared += (declared.empty() ? "'" : ", '") + io.name + "' (" + io.type_string() + ")";
  }
  if (!missing.empty()) {  // (onnxruntime's words first, as its run() says it)
    std::string given;
    for (const IoInfo* io : fed) given += (given.empty() ? "'" : ", '") + io->name + "'";
    refused("Required inputs ([" + missing + "]) are missing from input feed ([" + given + "]): missing input " +
            declared);
  }
}

// The requested outputs: known names, each bound once however often it is named (none: every output, in model order).
void plan_outputs(const SessionInfo& info, const std::vector<std::string>& output_names, RunPlan& plan) {
  const std::vector<IoInfo>& outputs = info.outputs();
  if (output_names.empty()) {
    for (const IoInfo& io : outputs) plan.outputs.push_back(RunPlan::Output{&io, Tensor(), nullptr});
    return;
  }
  for (const std::string& name : output_names) {
    const IoInfo* io = info.find_output(name);
    if (io == nullptr) {  // (onnxruntime's words first, ORT's own check's)
      refused("Invalid output name:" + name + " (the model's outputs are " + quoted_names(outputs) + ")");
    }
    size_t at = 0;
    while (at < plan.outputs.size() && plan.outputs[at].io != io) ++at;
    if (at < plan.outputs.size() && plan.returned.empty()) {
      // The first repeat: from here on every place is recorded (names given once each, the common case, allocate
      // nothing for it).
      for (size_t k = 0; k < plan.outputs.size(); ++k) plan.returned.push_back(k);
    }
    if (at == plan.outputs.size()) plan.outputs.push_back(RunPlan::Output{io, Tensor(), nullptr});
    if (!plan.returned.empty()) plan.returned.push_back(at);
  }
}

// ORT writes a destination while it reads the feeds and writes the other outputs: one sharing memory with any of them
// would give a wrong result without an error (torch's out= refuses the same). A feed read twice is no conflict.
void refuse_overlap(const Tensor& destination, const std::string& name, const RunPlan& plan) {
  for (const RunPlan::Input& in : plan.inputs) {
    if (share_memory(destination, in.feed)) {
      refused("output destination '" + name + "' overlaps input '" + in.io->name +
              "' (they share memory): ORT would write the output while it reads the input; pass a destination of "
              "its own");
    }
  }
  for (const RunPlan::Output& o : plan.outputs) {
    if (o.destination && share_memory(destination, o.destination)) {
      refused("output destinations '" + o.io->name + "' and '" + name +
              "' overlap (they share memory): ORT would write both into it; pass a destination of its own to each");
    }
  }
}

// Destinations: only for requested outputs, matching their declaration, writable, in memory the session writes.
void plan_destinations(const SessionInfo& info, const RunOptions& options, RunPlan& plan) {
  for (const auto& [name, tensor] : options.destinations) {
    const IoInfo* io = info.find_output(name);
    if (io == nullptr) {
      invalid("destination for unknown output '" + name + "' (the model's outputs are " + quoted_names(info.outputs()) +
              ")");
    }
    RunPlan::Output* out = nullptr;
    for (RunPlan::Output& o : plan.outputs) {
      if (o.io == io) out = &o;
    }
    if (out == nullptr) invalid("destination for output '" + name + "', which is not requested");
    if (out->destination) invalid("output '" + name + "' has two destinations");
    if (!io->has_dlpack_form()) invalid("output '" + name + "' is " + io->onnx_type + ", which has no destination");
    check_against(tensor, *io, "output destination");
    if (tensor.read_only()) {
      invalid("output destination '" + name + "' is read-only" +
              (tensor.read_only_kind() == ReadOnly::kByContract ? " (its producer's arrays are immutable)" : "") +
              ": ORT would write into it");
    }
    refuse_overlap(tensor, name, plan);  // (before the memory check: sharing memory is wrong on any device)
    const OrtMemoryInfo* memory = tensor.memory_info();
    if (!info.writes(*io, memory)) {
      throw Error(ErrorKind::kUnsupported, "run: output destination '" + name + "' is in " + describe_memory(memory) +
                                               ", which the session cannot write: it produces '" + name + "' in " +
                                               produced_in(*io) +
                                               " and has no execution provider on that "
                                               "device (a destination is never copied)");
    }
    out->destination = tensor;
  }
}

// Where outputs without a destination are allocated: options.output_target (session_io.h), read_on_host's checks.
// A run with values (needs_values) is run by the caller with ORT's own value APIs (onnxruntime's run), which return
// every output in host memory: it takes no destinations and no other placement.
void plan_allocation(const SessionInfo& info, const RunOptions& options, RunPlan& plan) {
  const Target& target = options.output_target;
  const OrtMemoryInfo* host = memory_info(DLDevice{kDLCPU, 0});
  const OrtMemoryInfo* requested = named_memory(target);
  if (options.read_on_host) {  // checked now, before ORT writes anything
    if (requested != nullptr && !host_accessible(requested)) {
      invalid("outputs read on the host (numpy arrays) cannot be placed in " + describe_memory(requested));
    }
    for (const auto& [name, t] : options.destinations) {
      if (!t.host_accessible()) {
        invalid("outputs read on the host (numpy arrays) cannot be written into the destination of '" + name +
                "', in " + describe_memory(t.memory_info()));
      }
    }
  }
  const bool on_host =
      target.kind == Target::Kind::kHost || (target.kind == Target::Kind::kAnywhere && options.read_on_host);
  const bool values = plan.needs_values();
  if (values && (!options.destinations.empty() || (requested != nullptr && !host_accessible(requested)))) {
    const std::string why = !plan.values.empty() ? "input '" + plan.values.front()->name + "' is fed a value"
                                                 : "an output requested has no DLPack form";
    invalid(std::string(options.destinations.empty() ? "outputs cannot be placed in device memory"
                                                     : "outputs cannot be written into destinations") +
            " in a run of values that have no DLPack form (" + why +
            "): such a run returns its outputs in host memory, as onnxruntime's run does");
  }
  for (RunPlan::Output& out : plan.outputs) {
    if (out.destination) continue;
    const IoInfo& io = *out.io;
    if (requested != nullptr && !info.allocates(io, requested)) {
      invalid("output '" + io.name + "' cannot be placed in " + describe_memory(requested) +
              ": the session produces it in " + produced_in(io) + " and has no execution provider on that device");
    }
    const bool produced_usable = io.memory != nullptr && !values && (!on_host || host_accessible(io.memory));
    out.memory = requested ? requested : produced_usable ? io.memory : host;
  }
}

// Staging: a host session cannot read device memory, and ORT does not copy such a feed itself: it hands the device
// pointer to a CPU kernel (seen with ORT 1.29 and a plugin EP's memory). Such feeds are copied to the host through
// the env's data transfer; every other feed is bound where it is.
void plan_staging(RunPlan& plan) {
  for (RunPlan::Input& in : plan.inputs) {
    if ((in.io->memory == nullptr || host_accessible(in.io->memory)) && !in.feed.host_accessible()) {
      in.staged = place(in.feed, Target::host(), CopyMode::kIfNeeded, "run").tensor;
    }
  }
}

}  // namespace

bool RunPlan::needs_values() const noexcept {
  if (!values.empty()) return true;
  for (const Output& out : outputs) {
    if (!out.io->has_dlpack_form()) return true;
  }
  return false;
}

RunPlan plan_run(const SessionInfo& info, const Feeds& feeds, const std::vector<std::string>& output_names,
                 const RunOptions& options, const std::vector<std::string>& values) {
  RunPlan plan;
  plan_inputs(info, feeds, values, plan);
  plan_outputs(info, output_names, plan);
  plan_destinations(info, options, plan);
  plan_allocation(info, options, plan);
  plan_staging(plan);  // last: the one copy a run may make, only once everything else was checked
  return plan;
}

void unalias(const RunPlan& plan, std::vector<Tensor>& outputs) {
  for (size_t k = 0; k < outputs.size() && k < plan.outputs.size(); ++k) {
    if (plan.outputs[k].destination || !outputs[k]) continue;
    for (const RunPlan::Input& in : plan.inputs) {
      if (!share_memory(outputs[k], in.feed) && !share_memory(outputs[k], in.bound())) continue;
      outputs[k] = place(outputs[k], Target::in(outputs[k].memory_info()), CopyMode::kAlways, "run").tensor;
      break;
    }
  }
}

std::vector<Tensor> as_requested(const RunPlan& plan, std::vector<Tensor> outputs) {
  if (plan.returned.empty()) return outputs;
  std::vector<Tensor> named;
  named.reserve(plan.returned.size());
  for (size_t k : plan.returned) named.push_back(outputs[k]);
  return named;
}

Error run_failed(OrtErrorCode code, const std::string& ort_message) {
  return Error(code, "run: the session failed: ONNX Runtime: " + ort_message);
}

void order_before_run(const RunPlan& plan, const CallerStream* stream) {
  std::vector<const Tensor*> tensors;
  tensors.reserve(plan.inputs.size() + plan.outputs.size());
  for (const RunPlan::Input& in : plan.inputs) tensors.push_back(&in.bound());
  for (const RunPlan::Output& out : plan.outputs) {
    if (out.destination) tensors.push_back(&out.destination);
  }
  order_before_run(tensors, stream);
}

}  // namespace ortdlpack
