// Binding (session.h): a run planned and bound once, rerun by the one executor (session_executor.h).
#include <mutex>
#include <string>
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

std::vector<Tensor> Binding::run(const Feeds& changed, const OrtRunOptions* run_options) {
  if (!impl_) throw Error(ErrorKind::kInvalidArgument, "run: the Binding is empty");
  Impl& b = *impl_;
  const std::lock_guard<std::mutex> lock(b.mutex);
  Session::Impl& s = *b.session;
  const OrtApi& api = ort();
  const CallerStream* per_run = b.stream ? &*b.stream : nullptr;
  if (s.stream) adopt_caller_work(*s.stream);  // before staging: the copy must read what the caller wrote
  if (per_run != nullptr) adopt_caller_work(*per_run);
  if (!changed.empty()) {
    if (s.captures_graphs) {
      throw Error(ErrorKind::kInvalidArgument,
                  "run: the session replays captured device graphs, which read the tensors bound when they were "
                  "captured: copy new values into the bound tensors instead of rebinding them");
    }
    bool reshaped = false;
    for (const auto& [name, tensor] : changed) {
      size_t i = 0;
      while (i < b.plan.inputs.size() && b.plan.inputs[i].io->name != name) ++i;
      if (i == b.plan.inputs.size()) {
        throw Error(ErrorKind::kInvalidArgument,
                    "run: input '" + name + "' is not bound by this Binding (rebinding takes the inputs bind() fed)");
      }
      reshaped = replan_input(b.plan, i, tensor, s.info) || reshaped;
      const RunPlan::Input& in = b.plan.inputs[i];
      if (!copied_when_bound(in)) {  // (the others are bound below, before every run)
        check_binding(api.BindInput(b.binding.get(), name.c_str(), in.bound().ort_value()), "input", name);
      }
      for (size_t k = 0; k < b.plan.outputs.size(); ++k) {
        const RunPlan::Output& out = b.plan.outputs[k];
        if (out.in_place != static_cast<int>(i)) continue;
        check_binding(api.BindOutput(b.binding.get(), b.names[k].c_str(), out.destination.ort_value()), "output",
                      b.names[k]);
        if (!b.outputs.empty()) b.outputs[k] = out.destination;
      }
    }
    if (reshaped && !b.allocates) {
      // The outputs ORT allocated may have other shapes now: ORT allocates them again, where it first did.
      for (size_t k : b.allocated) {
        RunPlan::Output& out = b.plan.outputs[k];
        out.destination = Tensor();
        check_binding(api.BindOutputToDevice(b.binding.get(), b.names[k].c_str(), out.memory), "output", b.names[k]);
      }
      b.allocates = true;
    }
    if (!b.outputs.empty()) b.returned = as_requested(b.plan, b.outputs);
    b.note_copies();
  }
  // Staged feeds, and host feeds ORT copied to a device when they were bound: their contents may have changed since
  // the last run (rebound ones too: staged when replanned, bound here). A copy into host memory is complete here.
  for (size_t i : b.copied) {
    const RunPlan::Input& in = b.plan.inputs[i];
    if (in.staged) copy(in.feed, in.staged);
    if (copied_when_bound(in)) {
      check_binding(api.BindInput(b.binding.get(), in.io->name.c_str(), in.bound().ort_value()), "input", in.io->name);
    }
  }
  const OrtRunOptions* options = run_options != nullptr ? run_options : b.run_options;
  s.claim_graph(graph_of(options), &b);  // (b: the Impl, which Binding's moves keep)
  s.run_bound(b.plan, b.binding.get(), options, per_run);
  if (b.allocates) {
    // This run allocated outputs: from now on they are the binding's destinations, at fixed addresses.
    std::vector<Tensor> outputs = collect(b.plan, b.binding.get(), true, s.owner);
    settle_outputs(b.plan, outputs);
    for (size_t k : b.allocated) {
      check_binding(api.BindOutput(b.binding.get(), b.names[k].c_str(), outputs[k].ort_value()), "output", b.names[k]);
      b.plan.outputs[k].destination = outputs[k];
    }
    b.outputs = std::move(outputs);
    b.returned = as_requested(b.plan, b.outputs);
    b.allocates = false;
  } else {
    if (b.outputs.empty()) {  // only destinations: the caller's own tensors and the feeds written in place
      b.outputs = collect(b.plan, b.binding.get(), false, s.owner);
      b.returned = as_requested(b.plan, b.outputs);
    }
    settle_outputs(b.plan, b.outputs);
  }
  Session::Impl::order_for_caller(b.outputs, per_run);
  return b.returned;
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
