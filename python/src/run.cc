// ortdlpack.run and ortdlpack.InferenceSession's run() and bind(): a user's own onnxruntime.InferenceSession run on
// DLPack tensors and on every value onnxruntime's run takes. The core's Session borrows the session's own OrtSession
// (one PyBorrowedSession per C session), plans each run (binding_adapter.h) and executes every plan of tensors, bind()
// included (a core Binding); a plan of values goes to onnxruntime's run (onnxruntime_runs.cc). Failures of
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
#include "borrowed_session.h"

namespace ortdlpack::py {
namespace {

// What a TypeError for feeds adds: the argument order, which is not onnxruntime's.
constexpr const char* kRunOrder =
    " (ortdlpack's order is run([session,] feeds, output_names=None, *, outputs=None, "
    "device=None), not onnxruntime's run(output_names, input_feed))";

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

// The InferenceSession's C session (its _sess), read once per run: everything ortdlpack knows of a session comes from
// that one object, never from the Python session's cached attributes, which set_providers() on another thread replaces
// one by one (a run then sees the old session or the new one whole). None while set_providers() re-creates it, as
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

// The provider names and options of a C session (get_providers(), get_provider_options()).
std::vector<Provider> providers_of(nb::handle c) {
  std::vector<Provider> providers;
  const nb::object options = optional_attribute(c, "get_provider_options");
  const nb::object all = options.is_none() ? nb::object(nb::dict()) : nb::object(options());
  for (nb::handle name : c.attr("get_providers")()) {
    Provider p{nb::cast<std::string>(name), {}};
    PyObject* options_of = PyDict_Check(all.ptr()) ? PyDict_GetItemWithError(all.ptr(), name.ptr()) : nullptr;
    if (options_of == nullptr && PyErr_Occurred()) throw nb::python_error();
    if (options_of != nullptr && PyDict_Check(options_of)) {
      for (auto [key, value] : nb::borrow<nb::dict>(options_of)) {
        p.options.emplace_back(nb::cast<std::string>(nb::str(key)), nb::cast<std::string>(nb::str(value)));
      }
    }
    providers.push_back(std::move(p));
  }
  return providers;
}

}  // namespace

PyBorrowedSession::PyBorrowedSession(nb::handle c) : c_session(nb::borrow(c)), run(c_session.attr("run")) {
  OrtSession* session = onnxruntime_session(c);
  if (session == nullptr) {
    throw Error(ErrorKind::kUnsupported,
                "ortdlpack: this onnxruntime (" +
                    nb::cast<std::string>(nb::module_::import_("onnxruntime").attr("__version__")) +
                    ") does not hand out the ORT session behind its InferenceSession as ortdlpack knows it "
                    "(onnxruntime 1.23 to 1.32): run it with onnxruntime's own run, or use ortdlpack.Session");
  }
  nb::object capture = optional_attribute(c_session, "is_webgpu_graph_capture_enabled");
  if (!capture.is_none()) capture = capture();
  graph_capture = !capture.is_none() && nb::cast<bool>(capture);
  // Outputs the session allocates keep its C session alive (their EP's allocator may not outlive it: WebGPU).
  core = std::make_unique<Session>(session, BorrowedSession{{}, providers_of(c), python_reference(c), graph_capture});
  host_outputs = py::host_outputs(session_info(*core));
  for (const IoInfo& io : core->outputs()) all_outputs.append(nb::str(io.name.c_str()));
}

namespace {

// --- borrowed sessions
// ----------------------------------------------------------------------------------------------------

// The borrowed sessions of the InferenceSessions ortdlpack has run, by id(session): (weak reference, borrowed
// session), an entry removed with its session (the weak reference's callback). A dict lookup by id costs a fraction
// of a WeakKeyDictionary's, which makes a weak reference on every call. Process lifetime (never destroyed: it may
// hold sessions at interpreter exit).
PyObject* borrowed_sessions() {
  static PyObject* const dict = PyDict_New();
  return dict;
}

PyTypeObject* inference_session_type() {
  static PyTypeObject* const type = module_type("onnxruntime", "InferenceSession");
  return type;
}

// The borrowed session of `session`'s current C session, made once per C session.
nb::object borrowed_session_of(nb::handle session) {
  const nb::object key = nb::steal(PyLong_FromVoidPtr(session.ptr()));
  if (PyObject* entry = PyDict_GetItemWithError(borrowed_sessions(), key.ptr())) {  // borrowed
    if (PyWeakref_GetObject(NB_TUPLE_GET_ITEM(entry, 0)) == session.ptr()) {
      nb::handle borrowed = NB_TUPLE_GET_ITEM(entry, 1);
      if (nb::cast<PyBorrowedSession&>(borrowed).c_session.is(c_session_of(session))) return nb::borrow(borrowed);
    }
  } else if (PyErr_Occurred()) {
    throw nb::python_error();
  }
  if (!PyObject_TypeCheck(session.ptr(), inference_session_type())) {
    throw nb::type_error(
        (std::string("ortdlpack.run: session must be an onnxruntime.InferenceSession, not ") + type_name(session.ptr()))
            .c_str());
  }
  nb::object borrowed = nb::cast(PyBorrowedSession(c_session_of(session)), nb::rv_policy::move);
  const nb::object forget = nb::cpp_function([key](nb::handle) {
    if (PyDict_DelItem(borrowed_sessions(), key.ptr()) != 0) PyErr_Clear();  // replaced already by one of that id
  });
  const nb::object ref = nb::steal(PyWeakref_NewRef(session.ptr(), forget.ptr()));
  if (!ref.is_valid()) {  // not weak-referenceable: no cache
    PyErr_Clear();
    return borrowed;
  }
  if (PyDict_SetItem(borrowed_sessions(), key.ptr(), nb::make_tuple(ref, borrowed).ptr()) != 0) {
    throw nb::python_error();
  }
  return borrowed;
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

// Converts, plans and runs one call on the session's current C session: the core executes a plan of tensors (on
// the host too: its bound run costs less than onnxruntime's), onnxruntime's run one of values. The caller's numpy
// arrays are values, handed to onnxruntime's run as they are (its own results, exactly), when its outputs are what
// the core's would be (host outputs of types numpy has) and the call asks for no destination or placement.
nb::object run_once(nb::handle session, const RunCall& c) {
  const nb::object borrowed = borrowed_session_of(session);
  PyBorrowedSession& s = nb::cast<PyBorrowedSession&>(borrowed);
  const SessionInfo& info = session_info(*s.core);
  const bool arrays_as_they_are = s.host_outputs && c.outputs.is_none() && c.device.is_none();
  Request r;
  convert(r, info.inputs(), info.initializers(), c.feeds, c.feeds_argument, c.hint, c.output_names, c.outputs, c.device,
          c.output_type, c.none_means, arrays_as_they_are ? Values::kOnnxruntimeTakes : Values::kNoDlpackForm);
  r.plan = plan_run(info, r.feeds, r.names, r.options, r.value_names);
  for (const RunPlan::Output& out : r.plan.outputs) {
    if (out.io->has_dlpack_form()) check_framework_holds(r.type, out.io->element_type);  // before ORT runs
  }
  // Nothing to bind (no tensor fed, no destination): onnxruntime's run returns whatever ORT produced, a sparse
  // initializer declared dense included, which the core refuses.
  const bool nothing_bound = r.plan.inputs.empty() && r.options.destinations.empty();
  if (r.plan.needs_values() || (nothing_bound && arrays_as_they_are)) {
    return run_with_values(s, r, session, c.feeds, c.run_options);
  }
  const OrtRunOptions* options =
      c.run_options.is_none() ? nullptr : onnxruntime_run_options(c.run_options, "run_options");
  std::vector<Tensor> outputs;
  {
    nb::gil_scoped_release release;
    outputs = run_planned(*s.core, r.plan, options);
  }
  return to_frameworks(outputs, r.type);
}

// Whether the session falls back to other providers when an EP fails a run (onnxruntime's _enable_fallback).
bool falls_back(nb::handle session) {
  return has_attribute(session, "_enable_fallback") && nb::cast<bool>(session.attr("_enable_fallback"));
}

// What onnxruntime's run does when an EP failed it: prints why, re-creates the session on the fallback providers.
void fall_back(nb::handle session, const std::string& why) {
  const nb::object fallback = session.attr("_fallback_providers");
  nb::print(("EP Error: " + why + " using " + nb::cast<std::string>(nb::str(session.attr("_providers")))).c_str());
  nb::print(("Falling back to " + nb::cast<std::string>(nb::str(fallback)) + " and retrying.").c_str());
  session.attr("set_providers")(fallback);
  session.attr("disable_fallback")();
}

// A run of the session: run_once, and once more on the fallback providers when an EP failed and the session falls
// back (onnxruntime's run: the same lines printed, set_providers, disable_fallback). onnxruntime's exceptions are
// raised as ortdlpack's classes for them (instances of both).
nb::object run_session(nb::handle session, const RunCall& c) {
  check_run_options(c.run_options);
  for (bool retried = false;; retried = true) {
    try {
      return run_once(session, c);
    } catch (nb::python_error& e) {  // onnxruntime's run
      if (retried || !is_onnxruntime_error(e.type(), ORT_EP_FAIL) || !falls_back(session)) raise_onnxruntime_error(e);
      fall_back(session, nb::cast<std::string>(nb::str(e.value())));
    } catch (const Error& e) {  // the core's
      if (retried || e.ort_code() != ORT_EP_FAIL || !falls_back(session)) throw;
      fall_back(session, e.what());
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

// A run planned and bound once by the core (Session::bind) on the session's own OrtSession: a Binding, as
// ortdlpack.Session.bind returns; it keeps the borrowed session (and so the OrtSession) alive.
nb::object bind_inference_session(nb::handle session, nb::handle feeds, nb::handle output_names, nb::handle outputs,
                                  nb::handle device, nb::handle output_type) {
  nb::object borrowed = borrowed_session_of(session);
  PyBorrowedSession& s = nb::cast<PyBorrowedSession&>(borrowed);
  const SessionInfo& info = session_info(*s.core);
  Request r;
  convert(r, info.inputs(), info.initializers(), feeds, "feeds", "", output_names, outputs, device, output_type,
          OutputType::kLikeFeeds, Values::kNone);
  Binding b;
  {
    nb::gil_scoped_release release;
    b = s.core->bind(r.feeds, r.names, r.options);
  }
  return make_binding(std::move(b), borrowed, r.type);
}

}  // namespace

void bind_run(nb::module_& m) {
  nb::class_<PyBorrowedSession>(m, "_BorrowedSession", nb::type_slots(Gc<PyBorrowedSession>::slots),
                                "The core's Session over the OrtSession of an onnxruntime.InferenceSession.");
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
