// The two ways a plan of ortdlpack.run / InferenceSession.run runs on onnxruntime (planner.h): its run, or an
// IOBinding by address. Failures of onnxruntime keep their class (raise_onnxruntime_error).
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "planner.h"

namespace ortdlpack::py {
namespace {

// --- running on onnxruntime's run --------------------------------------------------------------------------------

nb::object output_names_of(const PyPlanner& p, const Request& r) {
  if (r.names.empty()) return p.all_outputs;
  nb::list names;
  for (const std::string& n : r.names) names.append(nb::str(n.c_str()));
  return std::move(names);
}

// A tensor as onnxruntime's run takes it: a numpy view over host-readable memory of an element type numpy has, else an
// onnxruntime.OrtValue over it (complete: its readers order nothing).
nb::object run_feed(const Tensor& t) {
  if (t.host_accessible() && py::numpy_has(t.element_type())) {
    nb::capsule owner(new Tensor(t), [](void* q) noexcept { delete static_cast<Tensor*>(q); });
    return host_array(t, owner, CopyMode::kIfNeeded);
  }
  return ortvalue_of(t);
}

// A numpy array onnxruntime's run returned, or a sequence (list) or optional (None) of them, in framework `type`
// over the same memory.
nb::object in_framework(nb::handle value, const OutputFramework& type) {
  if (value.is_none()) return nb::none();
  if (PyList_Check(value.ptr())) {
    nb::list items;
    for (nb::handle item : value) items.append(in_framework(item, type));
    return std::move(items);
  }
  if (type == OutputType::kTorch) {
    // torch's own C function for a numpy array: cheaper than an import and an export through the exchange API. It
    // refuses numpy's ulonglong (onnxruntime's uint64 outputs), which DLPack carries.
    static PyObject* const from_numpy = module_attribute("torch", "from_numpy");
    try {
      return nb::handle(from_numpy)(value);
    } catch (nb::python_error& e) {
      if (!e.matches(PyExc_TypeError)) throw;
    }
  }
  return to_framework(import_any(value, nb::none(), nb::none(), "an output"), type);
}

// The outputs onnxruntime's run returned, made as `r.type` asks: arrays become the framework's over the same memory,
// in sequences and optionals too; other values (maps, string arrays) stay as onnxruntime returns them. An array over a
// feed's memory (a graph output that is a graph input: onnxruntime < 1.24 returns the feed itself) is copied first:
// no output aliases a feed.
nb::object run_results(const Request& r, nb::handle input_feed, nb::object produced) {
  std::vector<ByteRange> fed;
  for (auto [name, feed] : nb::borrow<nb::dict>(input_feed)) {
    const ByteRange b = array_bytes(feed);
    if (b.begin != nullptr) fed.push_back(b);
  }
  const std::vector<RunPlan::Output>& outputs = r.plan.outputs;
  const size_t count = r.plan.returned.empty() ? outputs.size() : r.plan.returned.size();
  for (size_t k = 0; k < count; ++k) {
    const RunPlan::Output& out = outputs[r.plan.returned.empty() ? k : r.plan.returned[k]];  // (onnxruntime's order)
    nb::handle array = NB_LIST_GET_ITEM(produced.ptr(), static_cast<Py_ssize_t>(k));
    const ByteRange b = array_bytes(array);
    for (const ByteRange& f : fed) {
      if (!b.overlaps(f)) continue;
      PyList_SetItem(produced.ptr(), static_cast<Py_ssize_t>(k), array.attr("copy")().release().ptr());
      array = NB_LIST_GET_ITEM(produced.ptr(), static_cast<Py_ssize_t>(k));
      break;
    }
    if (r.type == OutputType::kNumpy) continue;
    if (out.io->has_dlpack_form() || out.io->holds_tensors()) {
      PyList_SetItem(produced.ptr(), static_cast<Py_ssize_t>(k), in_framework(array, r.type).release().ptr());
    }
  }
  return produced;
}

}  // namespace

// Runs the plan with onnxruntime's run: the bound tensors as run_feed makes them, the values as they are (the
// caller's own dict when every feed is a value the caller gave).
nb::object run_with_values(const PyPlanner& p, const Request& r, nb::handle session, nb::handle feeds,
                           nb::handle run_options) {
  if (p.graph_capture) session.attr("_validate_graph_capture_run_api")(run_options);
  nb::object input_feed;
  if (r.feeds.empty() && r.values_as_given && PyDict_Check(feeds.ptr())) {
    input_feed = nb::borrow(feeds);
  } else {
    nb::dict d;
    for (const RunPlan::Input& in : r.plan.inputs) d[in.io->name.c_str()] = run_feed(in.bound());
    for (size_t k = 0; k < r.values.size(); ++k) d[r.value_names[k].c_str()] = r.values[k];
    input_feed = std::move(d);
  }
  bool ortvalues = false;
  for (const nb::object& v : r.values) ortvalues = ortvalues || is_ortvalue(v);
  if (ortvalues && has_attribute(session, "_validate_ortvalue_ownership")) {
    session.attr("_validate_ortvalue_ownership")(input_feed.attr("values")());
  }
  return run_results(r, input_feed, p.run(output_names_of(p, r), input_feed, run_options));
}

// --- running on an IOBinding -------------------------------------------------------------------------------------

// Binds the plan to an onnxruntime.IOBinding. Host tensors by address through IOBinding.bind_input/bind_output (the
// cheapest binding of onnxruntime's public API), other memory by address through its C.SessionIOBinding with the
// memory's exact C.OrtDevice (onnxruntime_device: vendor and memory type, which the public methods cannot say);
// outputs without a destination to the planned memory.
void bind(const RunPlan& plan, nb::handle binding) {
  nb::object raw;
  const auto device_binding = [&]() -> nb::handle {
    if (!raw.is_valid()) raw = binding.attr("_iobinding");
    return raw;
  };
  // `t` by address under `name`, through `method` (bind_input / bind_output) of the binding its memory needs.
  const auto bind_at = [&](const char* method, const char* name, const Tensor& t) {
    const int type = static_cast<int>(t.element_type());
    // An empty tensor's data may be NULL (ORT allocates nothing for it on a device), which onnxruntime's
    // SessionIOBinding.bind_output refuses; no byte of it is read or written, so any other address does.
    static const char empty = 0;
    const uintptr_t data = reinterpret_cast<uintptr_t>(t.data() != nullptr ? t.data() : &empty);
    if (t.host_accessible()) {
      binding.attr(method)(name, "cpu", 0, type, shape_tuple(t), data);
    } else {
      device_binding().attr(method)(name, onnxruntime_device(t.memory_info()), type, shape_tuple(t), data);
    }
  };
  for (const RunPlan::Input& in : plan.inputs) bind_at("bind_input", in.io->name.c_str(), in.bound());
  for (const RunPlan::Output& out : plan.outputs) {
    const char* name = out.io->name.c_str();
    if (out.destination) {
      bind_at("bind_output", name, out.destination);
    } else if (host_accessible(out.memory)) {
      binding.attr("bind_output")(name, "cpu", 0);  // where ORT then allocates
    } else {
      device_binding().attr("bind_output")(name, onnxruntime_device(out.memory));
    }
  }
}

// Runs the bound plan (ordered first: docs/streams.md) and returns its outputs as Tensors, in plan order: the
// destinations themselves, the others from IOBinding.get_outputs() without a copy (converted at once: in onnxruntime
// <= 1.29 those values do not own their memory, which clearing the binding frees), none over a feed's memory.
std::vector<Tensor> run_bound(const RunPlan& plan, nb::handle session, nb::handle binding, nb::handle run_options) {
  {
    nb::gil_scoped_release release;
    order_before_run(plan);
  }
  session.attr("run_with_iobinding")(binding, run_options);
  std::vector<Tensor> outputs(plan.outputs.size());
  nb::object produced;
  for (size_t k = 0; k < plan.outputs.size(); ++k) {
    const RunPlan::Output& out = plan.outputs[k];
    if (out.destination) {
      outputs[k] = out.destination;
      continue;
    }
    if (!produced.is_valid()) produced = binding.attr("get_outputs")();
    outputs[k] = tensor_of_ortvalue(produced[k], out.memory);
  }
  unalias(plan, outputs);
  return outputs;
}

// Runs the plan on an IOBinding of the session (idle ones reused; cleared on every path: drops ORT's and the
// wrapper's references to the caller's memory).
nb::object run_with_binding(PyPlanner& p, const Request& r, nb::handle session, nb::handle run_options) {
  const Py_ssize_t idle = NB_LIST_GET_SIZE(p.idle.ptr());
  nb::object binding = idle != 0 ? nb::steal(PyObject_CallMethod(p.idle.ptr(), "pop", nullptr))
                                 : nb::object(session.attr("io_binding")());
  if (!binding.is_valid()) throw nb::python_error();
  const auto clear = [&] {
    binding.attr("clear_binding_inputs")();
    binding.attr("clear_binding_outputs")();
    if (static_cast<size_t>(NB_LIST_GET_SIZE(p.idle.ptr())) < kIdleBindings) p.idle.append(binding);
  };
  std::vector<Tensor> outputs;
  try {
    bind(r.plan, binding);
    outputs = run_bound(r.plan, session, binding, run_options);
  } catch (...) {
    try {
      clear();
    } catch (nb::python_error&) {  // the run's error is the one to report
    }
    throw;
  }
  clear();
  return to_frameworks(as_requested(r.plan, std::move(outputs)), r.type);
}

}  // namespace ortdlpack::py
