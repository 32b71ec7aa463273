// A plan of ortdlpack.run / InferenceSession.run that onnxruntime's own run carries out (borrowed_session.h,
// RunPlan::needs_values): values without a DLPack form, or numpy arrays it reads as they are. The core executes every
// other plan.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "borrowed_session.h"

namespace ortdlpack::py {
namespace {

// --- running on onnxruntime's run --------------------------------------------------------------------------------

nb::object output_names_of(const PyBorrowedSession& p, const Request& r) {
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
nb::object run_with_values(const PyBorrowedSession& p, const Request& r, nb::handle session, nb::handle feeds,
                           nb::handle run_options) {
  if (p.graph_capture) session.attr("_validate_graph_capture_run_api")(run_options);
  nb::object input_feed;
  if (r.feeds.empty() && PyDict_Check(feeds.ptr())) {
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

}  // namespace ortdlpack::py
