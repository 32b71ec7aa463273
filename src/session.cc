#include "ortdlpack/session.h"

#include <string>
#include <utility>

#include "ortdlpack/api.h"
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

}  // namespace


Session::Session(OrtSession* session, const std::vector<const OrtEpDevice*>& ep_devices)
    : session_(session), info_(session, ep_devices) {}

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

  order_before_run(plan);
  if (OrtStatus* status = api.RunWithBinding(session_, options.run_options, binding)) {
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
  return result;
}

std::vector<Tensor> run(OrtSession* session, const Feeds& feeds, const std::vector<std::string>& output_names,
                        const RunOptions& options) {
  return Session(session).run(feeds, output_names, options);
}

}  // namespace ortdlpack
