// ortdlpack.run and ortdlpack.InferenceSession's run() and bind(): a user's own onnxruntime.InferenceSession run on
// DLPack tensors and on every value onnxruntime's run takes. The core plans the run (py::session_info from the
// session's NodeArgs, run_plan.h); this file hands the plan to onnxruntime: its run for a plan of values or of host
// memory (py::runs_with_values), else its IOBinding by address with each memory's exact OrtDevice. Failures of
// onnxruntime keep their class (raise_onnxruntime_error), and a run an EP failed falls back as onnxruntime's does.
#include <climits>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "binding.h"

namespace ortdlpack::py {
namespace {

// What a TypeError for feeds adds: the argument order, which is not onnxruntime's.
constexpr const char* kRunOrder =
    " (ortdlpack's order is run([session,] feeds, output_names=None, *, outputs=None, "
    "device=None), not onnxruntime's run(output_names, input_feed))";

using py::IoDeclaration;

// The declarations of an InferenceSession's inputs or outputs (NodeArg: name, type, shape; OrtMemoryInfo fields).
std::vector<IoDeclaration> declarations(nb::handle args, nb::handle memories) {
  std::vector<IoDeclaration> out;
  size_t i = 0;
  for (nb::handle arg : args) {
    IoDeclaration d;
    d.name = nb::cast<std::string>(arg.attr("name"));
    d.type = nb::cast<std::string>(arg.attr("type"));
    nb::object shape = arg.attr("shape");
    if (PyList_Check(shape.ptr()) || PyTuple_Check(shape.ptr())) {
      d.shape.emplace();
      for (nb::handle dim : shape) {
        const bool fixed = PyLong_Check(dim.ptr());
        d.shape->push_back(fixed ? nb::cast<int64_t>(dim) : -1);
        d.dim_names.push_back(!fixed && PyUnicode_Check(dim.ptr()) ? nb::cast<std::string>(dim) : "");
      }
    }
    if (!memories.is_none()) {
      nb::handle m = memories[i];
      IoDeclaration::Memory mem;
      mem.name = nb::cast<std::string>(m.attr("name"));
      mem.device_id = nb::cast<int>(m.attr("device_id"));
      mem.mem_type = static_cast<OrtMemType>(nb::cast<int>(nb::int_(m.attr("mem_type"))));
      mem.allocator_type = static_cast<OrtAllocatorType>(nb::cast<int>(nb::int_(m.attr("allocator_type"))));
      if (nb::hasattr(m, "device_mem_type")) {
        mem.device_mem_type = static_cast<OrtDeviceMemoryType>(nb::cast<int>(nb::int_(m.attr("device_mem_type"))));
      }
      if (nb::hasattr(m, "device_vendor_id")) mem.vendor_id = nb::cast<uint32_t>(m.attr("device_vendor_id"));
      d.memory = std::move(mem);
    }
    out.push_back(std::move(d));
    ++i;
  }
  return out;
}

// session.<method>(), or None where this onnxruntime has no such method or the session cannot tell.
nb::object optional_call(nb::handle session, const char* method) {
  if (!nb::hasattr(session, method)) return nb::none();
  try {
    return session.attr(method)();
  } catch (nb::python_error&) {  // a session that cannot tell: unknown (memory: treated as host)
    return nb::none();
  }
}

// What ortdlpack knows of one C session of an InferenceSession (its `_sess`: set_providers() replaces it), with
// the idle IOBindings of its runs.
struct PyPlanner {
  explicit PyPlanner(nb::handle session)
      : c_session(session.attr("_sess")),
        info(py::session_info(
            declarations(session.attr("get_inputs")(), optional_call(session, "get_input_memory_infos")),
            declarations(session.attr("get_outputs")(), optional_call(session, "get_output_memory_infos")),
            declarations(nb::hasattr(session, "get_overridable_initializers")
                             ? nb::object(session.attr("get_overridable_initializers")())
                             : nb::object(nb::list()),
                         nb::none()),
            nb::cast<std::vector<std::string>>(session.attr("get_providers")()))),
        host_outputs(py::host_outputs(info)),
        run(c_session.attr("run")) {
    nb::object capture = optional_call(c_session, "is_webgpu_graph_capture_enabled");
    graph_capture = !capture.is_none() && nb::cast<bool>(capture);
    for (const IoInfo& io : info.outputs()) all_outputs.append(nb::str(io.name.c_str()));
  }
  nb::object c_session;  // held: the planner is replaced when the session's _sess is no longer this one
  SessionInfo info;
  bool host_outputs;   // py::host_outputs
  bool graph_capture;  // WebGPU graph capture: onnxruntime checks every run (_validate_graph_capture_run_api)
  nb::object run;      // c_session.run: onnxruntime's run, without the Python checks the plan makes
  nb::list all_outputs;
  nb::list idle;  // IOBindings, cleared; list.pop/append are atomic under the GIL
};

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

// The outputs onnxruntime's run returned, made as `r.type` asks: arrays become the framework's over the same memory;
// values without a DLPack form (lists, dicts, None, string arrays) stay as onnxruntime returns them. An array over a
// feed's memory (a graph output that is a graph input: onnxruntime < 1.24 returns the feed itself) is copied first:
// no output aliases a feed.
nb::object run_results(const Request& r, nb::handle input_feed, nb::object produced) {
  std::vector<ByteRange> fed;
  for (auto [name, feed] : nb::borrow<nb::dict>(input_feed)) {
    const ByteRange b = array_bytes(feed);
    if (b.begin != nullptr) fed.push_back(b);
  }
  const std::vector<RunPlan::Output>& outputs = r.plan.outputs;
  for (size_t k = 0; k < outputs.size(); ++k) {
    nb::handle array = NB_LIST_GET_ITEM(produced.ptr(), static_cast<Py_ssize_t>(k));
    const ByteRange b = array_bytes(array);
    for (const ByteRange& f : fed) {
      if (!b.overlaps(f)) continue;
      PyList_SetItem(produced.ptr(), static_cast<Py_ssize_t>(k), array.attr("copy")().release().ptr());
      array = NB_LIST_GET_ITEM(produced.ptr(), static_cast<Py_ssize_t>(k));
      break;
    }
    if (r.type == OutputType::kNumpy || !outputs[k].io->has_dlpack_form()) continue;
    nb::object t;
    if (r.type == OutputType::kTorch) {
      // torch's own C function for a numpy array: cheaper than an import and an export through the exchange API. It
      // refuses numpy's ulonglong (onnxruntime's uint64 outputs), which DLPack carries.
      static PyObject* const from_numpy = module_attribute("torch", "from_numpy");
      t = nb::steal(PyObject_CallOneArg(from_numpy, array.ptr()));
      if (!t.is_valid()) {
        if (!PyErr_ExceptionMatches(PyExc_TypeError)) throw nb::python_error();
        PyErr_Clear();
      }
    }
    if (!t.is_valid()) t = to_framework(import_any(array, nb::none(), nb::none(), "an output"), r.type);
    PyList_SetItem(produced.ptr(), static_cast<Py_ssize_t>(k), t.release().ptr());
  }
  return produced;
}

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
  if (ortvalues && nb::hasattr(session, "_validate_ortvalue_ownership")) {
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
  return to_frameworks(outputs, r.type);
}

// --- planners ----------------------------------------------------------------------------------------------------

// The planners of the InferenceSessions ortdlpack has run, by id(session): (weak reference, planner), an entry
// removed with its session (the weak reference's callback). A dict lookup by id costs a fraction of a
// WeakKeyDictionary's, which makes a weak reference on every call. Process lifetime (never destroyed: it may hold
// planners at interpreter exit).
PyObject* planners() {
  static PyObject* const dict = PyDict_New();
  return dict;
}

PyTypeObject* inference_session_type() {
  static PyTypeObject* const type = module_type("onnxruntime", "InferenceSession");
  return type;
}

// The planner of `session`'s current C session, made once per C session.
nb::object planner_of(nb::handle session) {
  const nb::object key = nb::steal(PyLong_FromVoidPtr(session.ptr()));
  if (PyObject* entry = PyDict_GetItemWithError(planners(), key.ptr())) {  // borrowed
    if (PyWeakref_GetObject(NB_TUPLE_GET_ITEM(entry, 0)) == session.ptr()) {
      nb::handle planner = NB_TUPLE_GET_ITEM(entry, 1);
      const nb::object c_session = session.attr("_sess");
      if (nb::cast<PyPlanner&>(planner).c_session.is(c_session)) return nb::borrow(planner);
    }
  } else if (PyErr_Occurred()) {
    throw nb::python_error();
  }
  if (!PyObject_TypeCheck(session.ptr(), inference_session_type())) {
    throw nb::type_error(
        (std::string("ortdlpack.run: session must be an onnxruntime.InferenceSession, not ") + type_name(session.ptr()))
            .c_str());
  }
  nb::object planner = nb::cast(PyPlanner(session), nb::rv_policy::move);
  const nb::object forget = nb::cpp_function([key](nb::handle) {
    if (PyDict_DelItem(planners(), key.ptr()) != 0) PyErr_Clear();  // replaced already by a session of that id
  });
  const nb::object ref = nb::steal(PyWeakref_NewRef(session.ptr(), forget.ptr()));
  if (!ref.is_valid()) {  // not weak-referenceable: no cache
    PyErr_Clear();
    return planner;
  }
  if (PyDict_SetItem(planners(), key.ptr(), nb::make_tuple(ref, planner).ptr()) != 0) throw nb::python_error();
  return planner;
}

void check_run_options(nb::handle run_options) {
  if (run_options.is_none()) return;
  check_onnxruntime_options_type(run_options, "RunOptions", "run_options");
}

// One run's arguments, as ortdlpack.run and InferenceSession.run take them.
struct RunCall {
  nb::handle feeds, output_names, outputs, device, run_options, output_type;
  OutputType none_means;
  const char* feeds_argument;
  const char* hint;
};

// Converts, plans and runs one call on the session's current C session. The caller's numpy arrays go to
// onnxruntime's run as they are when that is where the run goes (host outputs, no destination, no placement).
nb::object run_once(nb::handle session, const RunCall& c) {
  const nb::object planner = planner_of(session);
  PyPlanner& p = nb::cast<PyPlanner&>(planner);
  const bool arrays_as_they_are = p.host_outputs && c.outputs.is_none() && c.device.is_none();
  Request r;
  convert(r, p.info.inputs(), p.info.initializers(), c.feeds, c.feeds_argument, c.hint, c.output_names, c.outputs,
          c.device, c.output_type, c.none_means,
          arrays_as_they_are ? Values::kOnnxruntimeTakes : Values::kNoDlpackForm);
  r.plan = plan_run(p.info, r.feeds, r.names, r.options, r.value_names);
  for (const RunPlan::Output& out : r.plan.outputs) {
    if (out.io->has_dlpack_form()) check_framework_holds(r.type, out.io->element_type);  // before ORT runs
  }
  if (py::runs_with_values(r.plan)) return run_with_values(p, r, session, c.feeds, c.run_options);
  return run_with_binding(p, r, session, c.run_options);
}

// A run of the session: run_once, and once more on the fallback providers when an EP failed and the session falls
// back (onnxruntime's run: the same lines printed, set_providers, disable_fallback). onnxruntime's exceptions are
// raised as ortdlpack's classes for them (instances of both).
nb::object run_session(nb::handle session, const RunCall& c) {
  check_run_options(c.run_options);
  for (bool retried = false;; retried = true) {
    try {
      return run_once(session, c);
    } catch (nb::python_error& e) {
      if (retried || !is_onnxruntime_error(e.type(), ORT_EP_FAIL) || !nb::hasattr(session, "_enable_fallback") ||
          !nb::cast<bool>(session.attr("_enable_fallback"))) {
        raise_onnxruntime_error(e);
      }
      const nb::object fallback = session.attr("_fallback_providers");
      nb::print(("EP Error: " + nb::cast<std::string>(nb::str(e.value())) + " using " +
                 nb::cast<std::string>(nb::str(session.attr("_providers"))))
                    .c_str());
      nb::print(("Falling back to " + nb::cast<std::string>(nb::str(fallback)) + " and retrying.").c_str());
      session.attr("set_providers")(fallback);
      session.attr("disable_fallback")();
    }
  }
}

// ortdlpack.run(session, feeds, output_names=None, *, ...).
nb::object run_function(nb::handle session, nb::handle feeds, nb::handle output_names, nb::handle outputs,
                        nb::handle device, nb::handle run_options, nb::handle output_type) {
  return run_session(session, RunCall{feeds, output_names, outputs, device, run_options, output_type,
                                      OutputType::kTensor, "feeds", kRunOrder});
}

// The default output_type of an ortdlpack.InferenceSession (its constructor's output_type=), or None.
nb::object session_output_type(nb::handle session) {
  static PyObject* const name = PyUnicode_InternFromString("_ortdlpack_output_type");  // process lifetime
  PyObject* type = PyObject_GetAttr(session.ptr(), name);
  if (type == nullptr) PyErr_Clear();  // (a session made without the constructor: onnxruntime's model packages)
  return type != nullptr ? nb::steal(type) : nb::none();
}

// InferenceSession.run(output_names, input_feed, run_options=None, *, ...): outputs like the feeds by default.
nb::object inference_session_run(nb::handle session, nb::handle output_names, nb::handle input_feed,
                                 nb::handle run_options, nb::handle outputs, nb::handle device,
                                 nb::handle output_type) {
  if (!PyObject_TypeCheck(session.ptr(), inference_session_type())) {
    throw nb::type_error("InferenceSession.run: self must be an onnxruntime.InferenceSession");
  }
  const nb::object type = output_type.is_none() ? session_output_type(session) : nb::borrow(output_type);
  return run_session(session, RunCall{input_feed, output_names, outputs, device, run_options, type,
                                      OutputType::kLikeFeeds, "input_feed", ""});
}

// --- InferenceSession.bind ---------------------------------------------------------------------------------------

// A run of an InferenceSession planned and bound once: every run() reruns it on the same tensors into the same
// outputs (after the first run, the outputs ORT allocated are bound as destinations at fixed addresses).
struct PyBoundRun {
  nb::object session;
  nb::object planner;  // keeps the SessionInfo the plan points into
  Request r;
  nb::object binding;  // an onnxruntime.IOBinding, bound once
  nb::object outputs;  // a list, after the first run
};

nb::object bind_inference_session(nb::handle session, nb::handle feeds, nb::handle output_names, nb::handle outputs,
                                  nb::handle device, nb::handle output_type) {
  nb::object planner = planner_of(session);
  PyPlanner& p = nb::cast<PyPlanner&>(planner);
  PyBoundRun b{nb::borrow(session), planner, Request(), nb::object(), nb::object()};
  convert(b.r, p.info.inputs(), p.info.initializers(), feeds, "feeds", "", output_names, outputs, device, output_type,
          OutputType::kLikeFeeds, Values::kNone);
  b.r.plan = plan_run(p.info, b.r.feeds, b.r.names, b.r.options);
  for (const RunPlan::Output& out : b.r.plan.outputs) {
    if (!out.io->has_dlpack_form()) {
      throw Error(ErrorKind::kUnsupported, "bind: output '" + out.io->name + "' is " + out.io->onnx_type +
                                               ", which has no DLPack form: request the tensor outputs by name");
    }
  }
  b.binding = session.attr("io_binding")();
  bind(b.r.plan, b.binding);
  return nb::cast(std::move(b), nb::rv_policy::move);
}

nb::object run_bound_run(PyBoundRun& b, nb::handle run_options) {
  check_run_options(run_options);
  try {
    if (b.outputs.is_valid()) {
      run_bound(b.r.plan, b.session, b.binding, run_options);
    } else {
      std::vector<Tensor> tensors = run_bound(b.r.plan, b.session, b.binding, run_options);
      // From now on the outputs are destinations, at fixed addresses, written in place by every run.
      for (size_t k = 0; k < tensors.size(); ++k) b.r.plan.outputs[k].destination = tensors[k];
      b.binding.attr("clear_binding_outputs")();
      bind(RunPlan{{}, b.r.plan.outputs, {}}, b.binding);
      b.outputs = to_frameworks(tensors, b.r.type);
    }
  } catch (nb::python_error& e) {
    raise_onnxruntime_error(e);
  }
  return nb::steal(PyList_GetSlice(b.outputs.ptr(), 0, PY_SSIZE_T_MAX));  // the caller's list, the same objects
}

}  // namespace

void bind_run(nb::module_& m) {
  nb::class_<PyPlanner>(m, "_Planner", "The core's SessionInfo of an onnxruntime.InferenceSession.");
  nb::class_<PyBoundRun>(m, "BoundRun",
                         "A run of an InferenceSession planned and bound once (InferenceSession.bind): every run() "
                         "reruns it on the same feed tensors into the same outputs.")
      .def("run", &run_bound_run, nb::arg("run_options") = nb::none(),
           nb::sig("def run(self, run_options: object | None = None) -> list"),
           "Runs the session and returns the outputs: the same objects every run, written in place. run_options: an "
           "onnxruntime.RunOptions for this run.")
      .def_prop_ro("output_names", [](const PyBoundRun& b) {
        std::vector<std::string> names;
        for (const RunPlan::Output& out : b.r.plan.outputs) names.push_back(out.io->name);
        return names;
      });
  // ortdlpack.InferenceSession.run itself: a method (it binds to the session), no Python frame around it.
  m.attr("_inference_session_run") = nb::cpp_function(
      &inference_session_run, nb::is_method(), nb::name("run"), nb::arg("output_names").none(),
      nb::arg("input_feed").none(), nb::arg("run_options").none() = nb::none(), nb::kw_only(),
      nb::arg("outputs").none() = nb::none(), nb::arg("device").none() = nb::none(),
      nb::arg("output_type").none() = nb::none(),
      nb::sig("def run(self, output_names: object, input_feed: object, run_options: object | None = None, *, "
              "outputs: object | None = None, device: object | None = None, output_type: str | None = None) -> "
              "list"),
      R"(onnxruntime's run(output_names, input_feed, run_options=None): the same results for the same feeds (numpy arrays
out for numpy feeds; lists, dicts and None as onnxruntime returns them). Feeds may also be DLPack tensors of any
framework (torch, jax, cupy, ..., ortdlpack.Tensor), read where they are.

outputs: output name -> preallocated destination ORT writes into. device: where other outputs go.
output_type: 'torch', 'numpy', 'cupy', 'jax', 'ortdlpack' or 'like_feeds' (the first feed's framework; the default
unless the session's constructor set one).)");
  m.def(
      "_check_output_type",
      [](nb::handle output_type) {
        if (!output_type.is_none()) to_output_type(output_type, "output_type");
      },
      nb::arg("output_type").none(), "TypeError/ValueError for an output_type= that names no framework.");
  m.def("_inference_session_bind", &bind_inference_session, nb::arg("session"), nb::arg("feeds"),
        nb::arg("output_names").none(), nb::arg("outputs").none(), nb::arg("device").none(),
        nb::arg("output_type").none(), "ortdlpack.InferenceSession.bind.");
  m.def("run", &run_function, nb::arg("session"), nb::arg("feeds").none(), nb::arg("output_names") = nb::none(),
        nb::kw_only(), nb::arg("outputs") = nb::none(), nb::arg("device") = nb::none(),
        nb::arg("run_options") = nb::none(), nb::arg("output_type") = nb::none(),
        nb::sig("def run(session: onnxruntime.InferenceSession, feeds: object, output_names: object | None = None, "
                "*, outputs: object | None = None, device: object | None = None, run_options: object | None = None, "
                "output_type: str | None = None) -> list"),
        R"(Runs `session` on `feeds` and returns the outputs (ortdlpack.Tensors by default), in `output_names` order.

session: an onnxruntime.InferenceSession (ortdlpack.InferenceSession included).
feeds: input name -> DLPack producer (torch, numpy, jax, ..., ortdlpack.Tensor, onnxruntime.OrtValue), or any value
    onnxruntime's run takes (a list, a dict, a numpy array of strings, None for an optional input). Tensors are read
    where they are, without a copy unless ORT cannot hold the layout; lists for tensor inputs are made arrays of the
    declared element type, as onnxruntime does.
output_names: outputs to return (default: all, in model order).
outputs: output name -> preallocated DLPack destination (e.g. a torch tensor); ORT writes the result into it (it
    must be writable, compact, in memory the session writes, and match the model's type and shape).
device: where outputs without a destination are allocated (anything ortdlpack.Device takes). Default: where the
    session's execution provider produces them.
run_options: an onnxruntime.RunOptions, passed through.
output_type: 'ortdlpack' (the default), 'torch', 'numpy', 'cupy', 'jax' or 'like_feeds' (the first feed's
    framework), each over the output's memory; 'numpy' places the outputs in host memory. Outputs without a DLPack
    form (sequences, maps, string tensors, optionals without a value) come as onnxruntime returns them: lists,
    dicts, numpy arrays of objects, None; a run with such values returns its outputs in host memory.
Raises what onnxruntime raises for the same feeds (its classes: ortdlpack.errors' are instances of them and of
ValueError/BufferError/RuntimeError), ValueError (a read-only destination; a device the session cannot produce outputs
on), BufferError (a destination that would need a copy or that the session cannot write), TypeError (a session that
is no InferenceSession, run_options that are no RunOptions, arguments of the wrong type).)");
}

}  // namespace ortdlpack::py
