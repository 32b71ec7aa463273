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

// A check ORT's own run makes, failed: ORT's code and ORT's words, nothing added, so that a front end raises exactly
// what onnxruntime raises for it.
[[noreturn]] void as_ort(const std::string& message) { throw Error(ORT_INVALID_ARGUMENT, message); }

std::string tensor_string(const Tensor& t) {
  return std::string(dtype_name(t.element_type())) + shape_string(t.shape().data(), t.shape().size());
}

std::string quoted_names(const std::vector<IoInfo>& ios) {
  std::string s;
  for (const IoInfo& io : ios) s += (s.empty() ? "'" : ", '") + io.name + "'";
  return s.empty() ? "(none)" : s;
}

// "['a', 'b']": a list of names as Python prints it (onnxruntime's messages do).
template <class Names>
std::string python_list(const Names& names) {
  std::string s;
  for (const std::string& n : names) s += (s.empty() ? "'" : ", '") + n + "'";
  return "[" + s + "]";
}

// --- checks ------------------------------------------------------------------------------------------------------

// Checks a destination against the model's declaration: element type, rank and fixed dimensions, as ORT reads them (a
// symbolic dimension takes any size; a declared scalar, rank 0, any shape: ORT checks no shape there). `role()` names
// the destination in a message (made only then: this runs on every run with destinations).
template <class Role>
void check_destination(const Tensor& tensor, const IoInfo& io, const Role& role) {
  if (!tensor) invalid(role() + " is an empty Tensor");
  if (!io.has_dlpack_form()) invalid("output '" + io.name + "' is " + io.onnx_type + ", which has no destination");
  const auto mismatch = [&](const std::string& what) {
    invalid(role() + ": " + what + ": the model declares " + io.type_string() + ", got " + tensor_string(tensor));
  };
  if (tensor.element_type() != io.element_type) mismatch("element type mismatch");
  if (!io.has_shape || io.shape.empty()) return;
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

// Whether two tensors are the same memory exactly: data pointer, element type, shape (both compact) and memory.
bool same_tensor(const Tensor& a, const Tensor& b) {
  return a.data() == b.data() && a.element_type() == b.element_type() && a.shape() == b.shape() &&
         detail::same_memory(a.memory_info(), b.memory_info());
}

// Whether ORT would read input `in` from the host while its feed is elsewhere: such a feed is staged.
bool needs_staging(const RunPlan::Input& in) {
  return (in.io->memory == nullptr || host_accessible(in.io->memory)) && !in.feed.host_accessible();
}

// ORT writes a destination while it reads the feeds and writes the other outputs: one sharing memory with any of them
// would give a wrong result without an error (torch's out= refuses the same). A feed read twice is no conflict, and
// neither is the feed a destination is declared in place of (`own`, an index in plan.inputs; -1: none).
void refuse_overlap(const Tensor& destination, const std::string& name, int own, const RunPlan& plan) {
  for (size_t i = 0; i < plan.inputs.size(); ++i) {
    if (static_cast<int>(i) == own || !share_memory(destination, plan.inputs[i].feed)) continue;
    invalid("output destination '" + name + "' overlaps input '" + plan.inputs[i].io->name +
            "' (they share memory): ORT would write the output while it reads the input; pass a destination of its "
            "own, or declare it in place of that input (in_place) if the model's operator writes it in place");
  }
  for (const RunPlan::Output& o : plan.outputs) {
    if (o.destination && o.io->name != name && share_memory(destination, o.destination)) {
      invalid("output destinations '" + o.io->name + "' and '" + name +
              "' overlap (they share memory): ORT would write both into it; pass a destination of its own to each");
    }
  }
}

// A destination ORT writes output `out`: writable, in memory the session writes that output to.
void check_writable(const Tensor& tensor, const RunPlan::Output& out, const SessionInfo& info) {
  const std::string& name = out.io->name;
  if (tensor.read_only()) {
    invalid("output destination '" + name + "' is read-only" +
            (tensor.read_only_kind() == ReadOnly::kByContract ? " (its producer's arrays are immutable)" : "") +
            ": ORT would write into it");
  }
  const OrtMemoryInfo* memory = tensor.memory_info();
  if (!info.writes(*out.io, memory)) {
    throw Error(ErrorKind::kUnsupported,
                "run: output destination '" + name + "' is in " + describe_memory(memory) +
                    ", which the session cannot write: it produces '" + name + "' in " + produced_in(*out.io) +
                    " and has no execution provider on that device (a destination is never copied)");
  }
}

// --- the steps of plan_run ---------------------------------------------------------------------------------------

// Each fed input (tensor or value) known and fed once, each required input fed: in the order onnxruntime's run checks
// them (its missing inputs first, in its Python's words; then an unknown name, in ORT's).
void plan_inputs(const SessionInfo& info, const Feeds& feeds, const std::vector<std::string>& values, RunPlan& plan) {
  const auto fed = [&](const IoInfo& io) {
    for (const auto& f : feeds) {
      if (f.first == io.name) return true;
    }
    return std::find(values.begin(), values.end(), io.name) != values.end();
  };
  std::vector<std::string> missing;
  for (const IoInfo& io : info.inputs()) {
    if (io.required() && !fed(io)) missing.push_back(io.name);
  }
  if (!missing.empty()) {
    std::vector<std::string> given;
    for (const auto& f : feeds) given.push_back(f.first);
    given.insert(given.end(), values.begin(), values.end());
    throw Error(ErrorKind::kInvalidArgument, "Required inputs (" + python_list(missing) +
                                                 ") are missing from input feed (" + python_list(given) + ").");
  }
  std::vector<const IoInfo*> seen;
  seen.reserve(feeds.size() + values.size());
  const auto known = [&](const std::string& name) {
    const IoInfo* io = info.find_input(name);
    if (io == nullptr) as_ort("Invalid input name: " + name);
    if (std::find(seen.begin(), seen.end(), io) != seen.end()) invalid("input '" + name + "' is fed twice");
    seen.push_back(io);
    return io;
  };
  plan.inputs.reserve(feeds.size());
  for (const auto& [name, tensor] : feeds) {
    const IoInfo* io = known(name);
    if (!tensor) invalid("input '" + name + "' is an empty Tensor");
    plan.inputs.push_back(RunPlan::Input{io, tensor, Tensor()});
  }
  for (const std::string& name : values) plan.values.push_back(known(name));
}

size_t bind_output(RunPlan& plan, const IoInfo* io) {
  size_t at = 0;
  while (at < plan.outputs.size() && plan.outputs[at].io != io) ++at;
  if (at == plan.outputs.size()) plan.outputs.push_back(RunPlan::Output{io, Tensor(), nullptr, -1, -1});
  return at;
}

// Records where an output is returned: from the first place that is not `outputs` itself on, every place (names given
// once each, the common case, allocate nothing for it).
void returned_at(RunPlan& plan, size_t place, size_t at) {
  if (plan.returned.empty() && at == place) return;
  if (plan.returned.empty()) {
    for (size_t k = 0; k < place; ++k) plan.returned.push_back(k);
  }
  plan.returned.push_back(at);
}

// The requested outputs: known names (none: every model output, in model order; a model may list one twice), each
// bound once however often it is named.
void plan_outputs(const SessionInfo& info, const std::vector<std::string>& output_names, RunPlan& plan) {
  const std::vector<IoInfo>& outputs = info.outputs();
  const size_t count = output_names.empty() ? outputs.size() : output_names.size();
  plan.outputs.reserve(count);
  for (size_t place = 0; place < count; ++place) {
    const IoInfo* io = nullptr;
    if (output_names.empty()) {
      io = info.find_output(outputs[place].name);  // (the first of that name)
    } else {
      io = info.find_output(output_names[place]);
      if (io == nullptr) as_ort("Invalid output name:" + output_names[place]);
    }
    returned_at(plan, place, bind_output(plan, io));
  }
}

// The outputs declared written in place of a feed (RunOptions::in_place): a requested output or one bound for it
// alone, its destination the feed itself, which must be a writable tensor the session reads where it is.
void plan_in_place(const SessionInfo& info, const RunOptions& options, RunPlan& plan) {
  if (options.in_place.empty()) return;
  const size_t requested = plan.returned.empty() ? plan.outputs.size() : plan.returned.size();
  for (const auto& [output, input] : options.in_place) {
    const IoInfo* io = info.find_output(output);
    if (io == nullptr) {
      invalid("in_place: unknown output '" + output + "' (the model's outputs are " + quoted_names(info.outputs()) +
              ")");
    }
    size_t fed = 0;
    while (fed < plan.inputs.size() && plan.inputs[fed].io->name != input) ++fed;
    if (fed == plan.inputs.size()) {
      invalid("in_place: output '" + output + "' is declared written in place of input '" + input +
              "', which is not fed a tensor");
    }
    const size_t at = bind_output(plan, io);
    RunPlan::Output& out = plan.outputs[at];
    if (out.in_place >= 0) invalid("in_place: output '" + output + "' is declared in place of two inputs");
    const RunPlan::Input& in = plan.inputs[fed];
    check_destination(in.feed, *io, [&] { return "output '" + output + "' in place of input '" + input + "'"; });
    check_writable(in.feed, out, info);
    if (needs_staging(in)) {
      invalid("in_place: input '" + input + "' is in " + describe_memory(in.feed.memory_info()) +
              ", which the session reads only after a copy to the host: ORT would write the copy, not it");
    }
    out.in_place = static_cast<int>(fed);
    out.destination = in.feed;
  }
  // An output bound for in place only is not returned.
  if (plan.outputs.size() > requested && plan.returned.empty()) {
    for (size_t k = 0; k < requested; ++k) plan.returned.push_back(k);
  }
}

// Destinations: only for requested outputs, matching their declaration, writable, in memory the session writes, and
// overlapping nothing else ORT reads or writes in the run. An output written in place takes the feed itself: a
// destination given for it too must be exactly that memory.
void plan_destinations(const SessionInfo& info, const RunOptions& options, RunPlan& plan) {
  for (RunPlan::Output& out : plan.outputs) {
    if (out.in_place >= 0) refuse_overlap(out.destination, out.io->name, out.in_place, plan);
  }
  for (const auto& [name, tensor] : options.destinations) {
    const IoInfo* io = info.find_output(name);
    if (io == nullptr) {
      invalid("destination for unknown output '" + name + "' (the model's outputs are " + quoted_names(info.outputs()) +
              ")");
    }
    RunPlan::Output* out = nullptr;
    for (size_t k = 0; k < plan.outputs.size(); ++k) {
      if (plan.outputs[k].io == io) out = &plan.outputs[k];
    }
    if (out == nullptr) invalid("destination for output '" + name + "', which is not requested");
    check_destination(tensor, *io, [&] { return "output destination '" + name + "'"; });
    if (out->in_place >= 0) {
      if (!same_tensor(tensor, out->destination)) {
        invalid("output destination '" + name + "' is not the tensor fed as input '" +
                plan.inputs[out->in_place].io->name +
                "', in place of which it is declared: give the same tensor (data pointer, element type, shape and "
                "device), or no destination");
      }
      continue;
    }
    if (out->destination) invalid("output '" + name + "' has two destinations");
    check_writable(tensor, *out, info);
    refuse_overlap(tensor, name, -1, plan);  // (before it is recorded: an overlap is wrong on any device)
    out->destination = tensor;
  }
}

// A graph output that is a graph input: ORT hands back the feed and writes no destination given for it.
void plan_passed_through(const SessionInfo& info, RunPlan& plan) {
  for (RunPlan::Output& out : plan.outputs) {
    const IoInfo* io = info.find_input(out.io->name);
    if (io == nullptr) continue;
    for (size_t i = 0; i < plan.inputs.size(); ++i) {
      if (plan.inputs[i].io == io) out.passes = static_cast<int>(i);
    }
  }
}

std::string framework_reason(const Reader& reader) {
  return std::string(", which ") + framework_name(reader.framework) + " cannot hold (output_type='" +
         framework_name(reader.framework) + "')";
}

// Where outputs without a destination are allocated: options.output_target (session_io.h), then where the reader can
// hold them. A run with values (needs_values) is run by a front end's runtime (onnxruntime's run), which returns
// every output in host memory: it takes no destinations and no other placement.
void plan_allocation(const SessionInfo& info, const RunOptions& options, const Reader& reader, RunPlan& plan) {
  const Target& target = options.output_target;
  const OrtMemoryInfo* host = memory_info(DLDevice{kDLCPU, 0});
  const OrtMemoryInfo* requested = named_memory(target);
  const bool host_reader = options.read_on_host || reads_on_host(reader.framework);
  if (host_reader) {  // checked now, before ORT writes anything
    if (requested != nullptr && !host_accessible(requested)) {
      invalid("outputs read on the host (numpy arrays) cannot be placed in " + describe_memory(requested));
    }
    for (const RunPlan::Output& out : plan.outputs) {
      if (out.destination && !out.destination.host_accessible()) {
        invalid("outputs read on the host (numpy arrays) cannot be written into the destination of '" + out.io->name +
                "', in " + describe_memory(out.destination.memory_info()));
      }
    }
  }
  const bool on_host = target.kind == Target::Kind::kHost || (target.kind == Target::Kind::kAnywhere && host_reader);
  const bool values = plan.needs_values();
  bool destinations = false;
  for (const RunPlan::Output& out : plan.outputs) destinations = destinations || out.destination;
  if (values && (destinations || (requested != nullptr && !host_accessible(requested)))) {
    const std::string why = !plan.values.empty() ? "input '" + plan.values.front()->name + "' is fed a value"
                                                 : "an output requested has no DLPack form";
    invalid(std::string(destinations ? "outputs cannot be written into destinations"
                                     : "outputs cannot be placed in device memory") +
            " in a run of values that have no DLPack form (" + why +
            "): such a run returns its outputs in host memory, as onnxruntime's run does");
  }
  // Where an output the reader cannot hold goes when the reader is implied: the first feed's memory (CPU memory for a
  // host feed, where ORT copies a device output, as onnxruntime's run does).
  const OrtMemoryInfo* fallback = host;
  if (!plan.inputs.empty() && !plan.inputs.front().feed.host_accessible()) {
    fallback = plan.inputs.front().feed.memory_info();
  }
  plan.plain = true;
  for (RunPlan::Output& out : plan.outputs) {
    const IoInfo& io = *out.io;
    if (out.destination) continue;
    plan.plain = plan.plain && io.has_dlpack_form();
    if (requested != nullptr && !info.allocates(io, requested)) {
      invalid("output '" + io.name + "' cannot be placed in " + describe_memory(requested) +
              ": the session produces it in " + produced_in(io) + " and has no execution provider on that device");
    }
    const bool produced_usable = io.memory != nullptr && !values && (!on_host || host_accessible(io.memory));
    out.memory = requested ? requested : produced_usable ? io.memory : host;
    if (values || !io.has_dlpack_form() || holds(reader.framework, out.memory, io.element_type)) continue;
    if (!holds(reader.framework, host, io.element_type)) {
      throw Error(ErrorKind::kUnsupported, "run: output '" + io.name + "' is " + dtype_name(io.element_type) +
                                               framework_reason(reader) +
                                               " (output_type 'numpy' gives an ml_dtypes array, 'ortdlpack' a Tensor)");
    }
    if (!reader.implied || requested != nullptr || !info.allocates(io, fallback)) {
      throw Error(ErrorKind::kUnsupported, "run: output '" + io.name + "' is produced in " +
                                               describe_memory(out.memory) + framework_reason(reader) +
                                               ": name a device it holds (device=) or output_type='ortdlpack'");
    }
    out.memory = fallback;
  }
  for (const RunPlan::Output& out : plan.outputs) {
    if (!out.destination) plan.plain = plan.plain && (out.memory == host || detail::is_cpu_memory(out.memory));
  }
}

// Staging: a host session cannot read device memory, and ORT does not copy such a feed itself: it hands the device
// pointer to a CPU kernel (seen with ORT 1.29 and a plugin EP's memory). Such feeds are copied to the host through
// the env's data transfer; every other feed is bound where it is.
void stage(RunPlan::Input& in) {
  in.staged = needs_staging(in) ? place(in.feed, Target::host(), CopyMode::kIfNeeded, "run").tensor : Tensor();
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
                 const RunOptions& options, const std::vector<std::string>& values, const Reader& reader) {
  RunPlan plan;
  plan_inputs(info, feeds, values, plan);
  plan_outputs(info, output_names, plan);
  plan_in_place(info, options, plan);
  plan_destinations(info, options, plan);
  plan_passed_through(info, plan);
  plan_allocation(info, options, reader, plan);
  for (RunPlan::Input& in : plan.inputs) stage(in);  // last: the one copy a run may make, once all was checked
  return plan;
}

void replan_destinations(const SessionInfo& info, const RunOptions& options, RunPlan& plan) {
  plan_destinations(info, options, plan);
}

bool replan_input(RunPlan& plan, size_t index, const Tensor& feed, const SessionInfo& info) {
  RunPlan::Input& in = plan.inputs[index];
  if (!feed) invalid("input '" + in.io->name + "' is an empty Tensor");
  const int own = static_cast<int>(index);
  RunPlan::Input next{in.io, feed, Tensor()};
  bool in_place = false;
  for (const RunPlan::Output& out : plan.outputs) {
    if (out.in_place == own) {
      in_place = true;
      check_destination(feed, *out.io,
                        [&] { return "output '" + out.io->name + "' in place of input '" + in.io->name + "'"; });
      check_writable(feed, out, info);
      if (needs_staging(next)) {
        invalid("in_place: input '" + in.io->name + "' is in " + describe_memory(feed.memory_info()) +
                ", which the session reads only after a copy to the host: ORT would write the copy, not it");
      }
    } else if (out.destination && share_memory(out.destination, feed)) {
      invalid("output destination '" + out.io->name + "' overlaps input '" + in.io->name +
              "' (they share memory): ORT would write the output while it reads the input");
    }
  }
  std::swap(in, next);  // (`next` holds the previous feed from here on)
  try {
    for (const RunPlan::Output& out : plan.outputs) {
      if (out.in_place == own) refuse_overlap(feed, out.io->name, own, plan);
    }
    stage(in);
  } catch (...) {
    std::swap(in, next);
    throw;
  }
  if (in_place) {
    for (RunPlan::Output& out : plan.outputs) {
      if (out.in_place == own) out.destination = feed;
    }
  }
  return feed.shape() != next.feed.shape();
}

void settle_outputs(const RunPlan& plan, std::vector<Tensor>& outputs) {
  for (size_t k = 0; k < outputs.size() && k < plan.outputs.size(); ++k) {
    const RunPlan::Output& out = plan.outputs[k];
    if (out.destination) {
      if (out.passes >= 0 && !same_tensor(out.destination, plan.inputs[out.passes].feed)) {
        copy(plan.inputs[out.passes].feed, out.destination);
      }
      continue;
    }
    if (!outputs[k]) continue;
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
