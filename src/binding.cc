// Binding (session.h): a run planned and bound once, rerun by the one executor (session_executor.h).
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "ortdlpack/error.h"
#include "ortdlpack/session.h"
#include "ortdlpack/transfer.h"
#include "session_executor.h"

namespace ortdlpack {

Binding::Binding() = default;
Binding::~Binding() = default;
Binding::Binding(Binding&&) noexcept = default;
Binding& Binding::operator=(Binding&&) noexcept = default;

std::vector<Tensor> Binding::run(const OrtRunOptions* run_options) { return run(Feeds(), run_options); }

void Binding::Impl::rebind(const Feeds& changed) {
  Session::Impl& s = *session;
  const OrtApi& api = ort();
  if (s.captures_graphs) {
    throw Error(ErrorKind::kInvalidArgument,
                "run: the session replays captured device graphs, which read the tensors bound when they were "
                "captured: copy new values into the bound tensors instead of rebinding them");
  }
  bool reshaped = false;
  for (const auto& [name, tensor] : changed) {
    size_t i = 0;
    while (i < plan.inputs.size() && plan.inputs[i].io->name != name) ++i;
    if (i == plan.inputs.size()) {
      throw Error(ErrorKind::kInvalidArgument,
                  "run: input '" + name + "' is not bound by this Binding (rebinding takes the inputs bind() fed)");
    }
    reshaped = replan_input(plan, i, tensor, s.info) || reshaped;
    const RunPlan::Input& in = plan.inputs[i];
    if (!copied_when_bound(in)) {  // (the others are bound before every run)
      check_binding(api.BindInput(binding.get(), name.c_str(), in.bound().ort_value()), "input", name);
    }
    for (size_t k = 0; k < plan.outputs.size(); ++k) {
      const RunPlan::Output& out = plan.outputs[k];
      if (out.in_place != static_cast<int>(i)) continue;
      check_binding(api.BindOutput(binding.get(), names[k].c_str(), out.destination.ort_value()), "output", names[k]);
      if (!outputs.empty()) outputs[k] = out.destination;
    }
  }
  if (reshaped && !allocates) {
    // The outputs ORT allocated may have other shapes now: ORT allocates them again, where it first did.
    for (size_t k : allocated) {
      RunPlan::Output& out = plan.outputs[k];
      out.destination = Tensor();
      check_binding(api.BindOutputToDevice(binding.get(), names[k].c_str(), out.memory), "output", names[k]);
    }
    allocates = true;
  }
  if (!outputs.empty()) returned = as_requested(plan, outputs);
  note_copies();
}

void Binding::Impl::restore() {
  std::swap(plan, before.plan);
  outputs.swap(before.outputs);
  returned.swap(before.returned);
  allocates = before.allocates;
  note_copies();
  bind_plan(plan, binding.get());
}

std::vector<Tensor> Binding::Impl::run_once(const OrtRunOptions* per_call) {
  Session::Impl& s = *session;
  const OrtApi& api = ort();
  const CallerStream* per_run = stream ? &*stream : nullptr;
  // Staged feeds, and host feeds ORT copied to a device when they were bound: their contents may have changed since
  // the last run (rebound ones too: staged when replanned, bound here). A copy into host memory is complete here.
  for (size_t i : copied) {
    const RunPlan::Input& in = plan.inputs[i];
    if (in.staged) copy(in.feed, in.staged);
    if (copied_when_bound(in)) {
      check_binding(api.BindInput(binding.get(), in.io->name.c_str(), in.bound().ort_value()), "input", in.io->name);
    }
  }
  const OrtRunOptions* options = per_call != nullptr ? per_call : run_options;
  s.claim_graph(graph_of(options), this);  // (this: the Impl, which Binding's moves keep)
  s.run_bound(plan, binding.get(), options, per_run);
  if (allocates) {
    // This run allocated outputs: from now on they are the binding's destinations, at fixed addresses.
    std::vector<Tensor> made = collect(plan, binding.get(), true, s.owner);
    settle_outputs(plan, made);
    for (size_t k : allocated) {
      check_binding(api.BindOutput(binding.get(), names[k].c_str(), made[k].ort_value()), "output", names[k]);
      plan.outputs[k].destination = made[k];
    }
    outputs = std::move(made);
    returned = as_requested(plan, outputs);
    allocates = false;
  } else {
    if (outputs.empty()) {  // only destinations: the caller's own tensors and the feeds written in place
      outputs = collect(plan, binding.get(), false, s.owner);
      returned = as_requested(plan, outputs);
    }
    settle_outputs(plan, outputs);
  }
  Session::Impl::order_for_caller(outputs, per_run);
  return returned;
}

std::vector<Tensor> Binding::run(const Feeds& changed, const OrtRunOptions* run_options) {
  if (!impl_) throw Error(ErrorKind::kInvalidArgument, "run: the Binding is empty");
  Impl& b = *impl_;
  const std::lock_guard<std::mutex> lock(b.mutex);
  Session::Impl& s = *b.session;
  if (s.stream) adopt_caller_work(*s.stream);  // before staging: the copy must read what the caller wrote
  if (b.stream) adopt_caller_work(*b.stream);
  if (changed.empty()) return b.run_once(run_options);
  // A run that rebinds is all or nothing: where the rebinding or the run fails, the Binding binds what it bound
  // before, so what its caller holds as bound stays true.
  b.before.plan = b.plan;
  b.before.outputs = b.outputs;
  b.before.returned = b.returned;
  b.before.allocates = b.allocates;
  try {
    b.rebind(changed);
    std::vector<Tensor> returned = b.run_once(run_options);
    b.before.clear();
    return returned;
  } catch (...) {
    b.restore();
    b.before.clear();
    throw;
  }
}

std::vector<Tensor> Binding::outputs() const {
  if (!impl_) return {};
  const std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->returned;
}

const std::vector<std::string>& Binding::output_names() const noexcept {
  static const std::vector<std::string> none;
  return impl_ ? impl_->returned_names : none;
}

}  // namespace ortdlpack
