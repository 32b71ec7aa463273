// ortdlpack.run and ortdlpack.InferenceSession's run() and bind(): a user's own onnxruntime.InferenceSession run on
// DLPack tensors and on every value onnxruntime's run takes. The core plans the run (py::session_info from the
// session's NodeArgs, run_plan.h), keeps one planner per C session, and hands each plan to onnxruntime through
// onnxruntime_runs.cc (its run, or its IOBinding). Failures of onnxruntime keep their class (raise_onnxruntime_error),
// and a run an EP failed falls back as onnxruntime's does.
#include <climits>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "binding.h"
#include "planner.h"

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
      if (has_attribute(m, "device_mem_type")) {
        mem.device_mem_type = static_cast<OrtDeviceMemoryType>(nb::cast<int>(nb::int_(m.attr("device_mem_type"))));
      }
      if (has_attribute(m, "device_vendor_id")) mem.vendor_id = nb::cast<uint32_t>(m.attr("device_vendor_id"));
      d.memory = std::move(mem);
    }
    out.push_back(std::move(d));
    ++i;
  }
  return out;
}

// c_session.<attribute>, or None where this onnxruntime has no such attribute or the session cannot tell.
nb::object optional_attribute(nb::handle c_session, const char* attribute) {
  if (!has_attribute(c_session, attribute)) return nb::none();
  try {
    return c_session.attr(attribute);
  } catch (nb::python_error& e) {  // a session that cannot tell: unknown (memory: treated as host)
    only_exceptions(e);
    return nb::none();
  }
}

// The InferenceSession's C session (its _sess), read once per run: everything the planner knows comes from that one
// object, never from the Python session's cached attributes, which set_providers() on another thread replaces one
// by one (a run then sees the old session or the new one whole). None while set_providers() re-creates it, as
// onnxruntime's own run sees it then: its class (AttributeError), saying what happened.
nb::object c_session_of(nb::handle session) {
  nb::object c = session.attr("_sess");
  if (c.is_none()) {
    throw nb::attribute_error(
        "InferenceSession.run: the session has no C session: set_providers() (or the fallback) is re-creating it on "
        "another thread, or re-creating it failed");
  }
  return c;
}

}  // namespace

PyPlanner::PyPlanner(nb::handle c)
    : c_session(nb::borrow(c)),
      info(py::session_info(
          declarations(c.attr("inputs_meta"), optional_attribute(c, "input_meminfos")),
          declarations(c.attr("outputs_meta"), optional_attribute(c, "output_meminfos")),
          declarations(has_attribute(c, "overridable_initializers") ? nb::object(c.attr("overridable_initializers"))
                                                                    : nb::object(nb::list()),
                       nb::none()),
          nb::cast<std::vector<std::string>>(c.attr("get_providers")()))),
      host_outputs(py::host_outputs(info)),
      run(c_session.attr("run")) {
  nb::object capture = optional_attribute(c_session, "is_webgpu_graph_capture_enabled");
  if (!capture.is_none()) capture = capture();
  graph_capture = !capture.is_none() && nb::cast<bool>(capture);
  for (const IoInfo& io : info.outputs()) all_outputs.append(nb::str(io.name.c_str()));
}

namespace {

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
      if (nb::cast<PyPlanner&>(planner).c_session.is(c_session_of(session))) return nb::borrow(planner);
    }
  } else if (PyErr_Occurred()) {
    throw nb::python_error();
  }
  if (!PyObject_TypeCheck(session.ptr(), inference_session_type())) {
    throw nb::type_error(
        (std::string("ortdlpack.run: session must be an onnxruntime.InferenceSession, not ") + type_name(session.ptr()))
            .c_str());
  }
  nb::object planner = nb::cast(PyPlanner(c_session_of(session)), nb::rv_policy::move);
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
      if (retried || !is_onnxruntime_error(e.type(), ORT_EP_FAIL) || !has_attribute(session, "_enable_fallback") ||
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
  if (type == nullptr) clear_exception();  // (a session made without the constructor: onnxruntime's model packages)
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

  template <class F>
  void references(F f) {  // (Gc: a BoundRun stored on its own session is a cycle)
    f(session);
    f(planner);
    r.references(f);
    f(binding);
    f(outputs);
  }
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
  if (!b.session.is_valid()) cleared("BoundRun");
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
      b.outputs = to_frameworks(as_requested(b.r.plan, std::move(tensors)), b.r.type);
    }
  } catch (nb::python_error& e) {
    raise_onnxruntime_error(e);
  }
  return nb::steal(PyList_GetSlice(b.outputs.ptr(), 0, PY_SSIZE_T_MAX));  // the caller's list, the same objects
}

}  // namespace

void bind_run(nb::module_& m) {
  nb::class_<PyPlanner>(m, "_Planner", nb::type_slots(Gc<PyPlanner>::slots),
                        "The core's SessionInfo of an onnxruntime.InferenceSession.");
  nb::class_<PyBoundRun>(m, "BoundRun", nb::type_slots(Gc<PyBoundRun>::slots),
                         "A run of an InferenceSession planned and bound once (InferenceSession.bind): every run() "
                         "reruns it on the same feed tensors into the same outputs.")
      .def("run", &run_bound_run, nb::arg("run_options") = nb::none(),
           nb::sig("def run(self, run_options: object | None = None) -> list"),
           "Runs the session and returns the outputs: the same objects every run, written in place. run_options: an "
           "onnxruntime.RunOptions for this run.")
      .def_prop_ro("output_names", [](const PyBoundRun& b) {
        std::vector<std::string> names;
        for (const RunPlan::Output& out : b.r.plan.outputs) names.push_back(out.io->name);
        if (b.r.plan.returned.empty()) return names;
        std::vector<std::string> named;
        for (size_t k : b.r.plan.returned) named.push_back(names[k]);
        return named;
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
