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

const std::vector<Tensor>& Binding::run(const OrtRunOptions* run_options) {
  if (!impl_) throw Error(ErrorKind::kInvalidArgument, "run: the Binding is empty");
  Impl& b = *impl_;
  const std::lock_guard<std::mutex> lock(b.mutex);
  Session::Impl& s = *b.session;
  const CallerStream* per_run = b.stream ? &*b.stream : nullptr;
  if (s.stream) adopt_caller_work(*s.stream);  // before staging: the copy must read what the caller wrote
  if (per_run != nullptr) adopt_caller_work(*per_run);
  // Staged feeds: their contents may have changed since the last run. The copy into host memory is complete here.
  for (const RunPlan::Input& in : b.plan.inputs) {
    if (in.staged) copy(in.feed, in.staged);
  }
  const OrtRunOptions* options = run_options != nullptr ? run_options : b.run_options;
  s.claim_graph(graph_of(options), &b);  // (b: the Impl, which Binding's moves keep)
  s.run_bound(b.plan, b.binding.get(), options, per_run);
  if (b.allocated) {
    // The first run allocated the outputs: from now on they are the binding's destinations, at fixed addresses.
    std::vector<Tensor> outputs = collect(b.plan, b.binding.get(), true, s.owner);
    unalias(b.plan, outputs);
    const OrtApi& api = ort();
    for (size_t k = 0; k < outputs.size(); ++k) {
      RunPlan::Output& out = b.plan.outputs[k];
      if (out.destination) continue;
      check_binding(api.BindOutput(b.binding.get(), b.names[k].c_str(), outputs[k].ort_value()), "output", b.names[k]);
      out.destination = outputs[k];
    }
    b.outputs = std::move(outputs);
    b.returned = as_requested(b.plan, b.outputs);
    b.allocated = false;
  } else if (b.outputs.empty()) {
    b.outputs = collect(b.plan, b.binding.get(), false, s.owner);  // only destinations: the caller's own tensors
    b.returned = as_requested(b.plan, b.outputs);
  }
  Session::Impl::order_for_caller(b.outputs, per_run);
  return b.returned;
}

const std::vector<Tensor>& Binding::outputs() const noexcept {
  static const std::vector<Tensor> none;
  return impl_ ? impl_->returned : none;
}

const std::vector<std::string>& Binding::output_names() const noexcept {
  static const std::vector<std::string> none;
  return impl_ ? impl_->returned_names : none;
}

}  // namespace ortdlpack
