// The entry points of a front end's run (frontend.h): the route a request takes, decided once, and each route carried
// out with the request's full RunOptions.
#include "frontend.h"

#include <string>
#include <utility>
#include <vector>

#include "ortdlpack/dtype.h"
#include "ortdlpack/error.h"
#include "session_executor.h"

namespace ortdlpack {
namespace {

[[noreturn]] void invalid(const std::string& message) { throw Error(ErrorKind::kInvalidArgument, "run: " + message); }

// Whether an output comes out of the runtime's run as it comes out of the executor: a value without a DLPack form, or
// a tensor in CPU memory of an element type numpy has.
bool runtime_returns_alike(const IoInfo& io) {
  if (!io.has_dlpack_form()) return true;
  return (io.memory == nullptr || detail::is_cpu_memory(io.memory)) && numpy_has(io.element_type);
}

Route route_of(const SessionInfo& info, const RunRequest& r) {
  bool arrays = r.feeds.empty();
  for (const FedValue& v : r.values) {
    if (!v.array) return Route::kRuntime;
    arrays = true;
  }
  const auto requested = [&](const auto& visit) {
    if (r.output_names.empty()) {
      for (const IoInfo& io : info.outputs()) visit(io);
      return;
    }
    for (const std::string& name : r.output_names) {
      if (const IoInfo* io = info.find_output(name)) visit(*io);
    }
  };
  bool no_dlpack_form = false;
  bool alike = true;
  requested([&](const IoInfo& io) {
    no_dlpack_form = no_dlpack_form || !io.has_dlpack_form();
    alike = alike && runtime_returns_alike(io);
  });
  if (no_dlpack_form) return Route::kRuntime;
  const RunOptions& o = r.options;
  const bool placed = !o.destinations.empty() || !o.in_place.empty() ||
                      o.output_target.kind != Target::Kind::kAnywhere || o.stream.has_value();
  return arrays && alike && !placed ? Route::kRuntime : Route::kExecutor;
}

}  // namespace

RunResult detail::SessionAccess::run(Session& session, RunRequest& r, Runtime* runtime) {
  Session::Impl& s = *session.impl_;
  if (runtime == nullptr) {
    if (!r.values.empty()) invalid("input '" + r.values.front().name + "' is fed a value, not a tensor");
    return {Route::kExecutor, s.run(r.feeds, r.output_names, r.options, r.reader)};
  }
  if (route_of(s.info, r) == Route::kRuntime) {
    if (r.options.stream) invalid("RunOptions::stream: a run of values is ordered by the runtime, not by a stream");
    std::vector<std::string> values;
    values.reserve(r.values.size());
    for (const FedValue& v : r.values) values.push_back(v.name);
    const RunPlan plan = plan_run(s.info, r.feeds, r.output_names, r.options, values, r.reader);
    runtime->run_values(plan);
    return {Route::kRuntime, {}};
  }
  for (size_t i = 0; i < r.values.size(); ++i) r.feeds.emplace_back(r.values[i].name, runtime->tensor_of(i));
  RunResult result{Route::kExecutor, {}};
  runtime->unlocked([&] { result.outputs = s.run(r.feeds, r.output_names, r.options, r.reader); });
  return result;
}

Binding detail::SessionAccess::bind(Session& session, const Feeds& feeds, const std::vector<std::string>& output_names,
                                    const RunOptions& options, const Reader& reader) {
  Session::Impl& s = *session.impl_;
  std::optional<CallerStream> per_run = run_stream(options, feeds, s.stream.has_value());
  if (s.stream) adopt_caller_work(*s.stream);
  if (per_run) adopt_caller_work(*per_run);
  Binding b;
  b.impl_ = std::make_unique<Binding::Impl>();
  Binding::Impl& state = *b.impl_;
  state.session = session.impl_;
  state.stream = per_run;
  state.plan = plan_run(s.info, feeds, output_names, options, {}, reader);
  check_tensors_only(state.plan);
  state.run_options = options.run_options;
  OrtIoBinding* raw = nullptr;
  ortdlpack::check(ort().CreateIoBinding(s.session, &raw));
  state.binding = IoBinding(raw);
  state.allocates = bind_plan(state.plan, raw);
  for (size_t k = 0; k < state.plan.outputs.size(); ++k) {
    const RunPlan::Output& out = state.plan.outputs[k];
    state.names.push_back(out.io->name);
    if (!out.destination) state.allocated.push_back(k);
  }
  if (state.plan.returned.empty()) {
    state.returned_names = state.names;
  } else {
    for (size_t k : state.plan.returned) state.returned_names.push_back(state.names[k]);
  }
  state.note_copies();
  return b;
}

const SessionInfo& detail::SessionAccess::info(const Session& session) noexcept { return session.impl_->info; }

RunResult run(Session& session, RunRequest& request, Runtime* runtime) {
  return detail::SessionAccess::run(session, request, runtime);
}

Binding bind(Session& session, const RunRequest& request) {
  if (!request.values.empty()) invalid("input '" + request.values.front().name + "' is fed a value, not a tensor");
  return detail::SessionAccess::bind(session, request.feeds, request.output_names, request.options, request.reader);
}

ONNXTensorElementDataType list_element_type(const Session& session, const std::string& name) {
  const IoInfo* io = detail::SessionAccess::info(session).find_input(name);
  return io != nullptr && io->has_dlpack_form() ? io->element_type : ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;
}

void check_positional(const std::vector<IoInfo>& inputs, size_t count) {
  std::string names;
  for (const IoInfo& io : inputs) names += (names.empty() ? "'" : ", '") + io.name + "'";
  if (count > inputs.size()) {
    throw Error(ErrorKind::kInvalidArgument, "the model takes " + std::to_string(inputs.size()) + " inputs (" + names +
                                                 "), got " + std::to_string(count));
  }
  for (size_t i = count; i < inputs.size(); ++i) {
    if (inputs[i].required()) {
      throw Error(ErrorKind::kInvalidArgument, "input '" + inputs[i].name + "' is missing (the model's inputs: " +
                                                   names + "; " + std::to_string(count) + " given)");
    }
  }
}

Target compiled_outputs_target(const Feeds& feeds) {
  return Target::on(feeds.empty() ? DLDevice{kDLCPU, 0} : feeds.front().second.device());
}

void check_still_bound(const Tensor& bound, const DLTensor& now, const std::string& name, bool destination) {
  const DLDataType dtype = to_dlpack_dtype(bound.element_type());
  // An empty tensor has no memory to read or write (its import binds a pointer of its own, and any strides): its shape
  // is what counts.
  const bool empty = bound.element_count() == 0;
  bool same = (empty || static_cast<const char*>(now.data) + now.byte_offset == bound.data()) &&
              static_cast<size_t>(now.ndim) == bound.shape().size() && now.dtype.code == dtype.code &&
              now.dtype.bits == dtype.bits && now.dtype.lanes == dtype.lanes;
  int64_t compact = 1;  // the stride a compact row-major layout has at dimension d
  for (int32_t d = now.ndim - 1; same && d >= 0; --d) {
    same = now.shape[d] == bound.shape()[static_cast<size_t>(d)] &&
           (empty || now.strides == nullptr || now.shape[d] == 1 || now.strides[d] == compact);
    compact *= now.shape[d];
  }
  if (!same) {
    throw Error(ErrorKind::kInvalidArgument,
                "run: the tensor bound as " + std::string(destination ? "the destination of output '" : "input '") +
                    name +
                    "' has moved to other memory, or taken another shape, since it was bound (torch's resize_() or "
                    "set_(), or an in-place view change such as t_() or unsqueeze_()): its old memory may be freed. " +
                    (destination ? std::string("Bind again with it: bind(..., outputs={'") + name + "': tensor})"
                                 : "Rebind it: run(feeds={'" + name + "': tensor})"));
  }
}

}  // namespace ortdlpack
