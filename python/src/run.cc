// ortdlpack.run and ortdlpack.InferenceSession's run() and bind(): a user's own onnxruntime.InferenceSession run on
// DLPack tensors and on every value onnxruntime's run takes. The core's Session borrows the session's own OrtSession
// (one PyBorrowedSession per C session); each call is converted once, run by the core once (frontend.h: the core's
// executor, or onnxruntime's own run for a plan of values, through OnnxruntimeRun below) and its outputs converted
// once. What onnxruntime's run does itself stays its own: a call whose shape it takes apart (feeds that are no mapping,
// ...) goes to it as it is; an EP's failure falls back as it does; its exceptions are its classes.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "arguments.h"
#include "errors.h"
#include "numpy_arrays.h"
#include "onnxruntime_objects.h"
#include "ortvalues.h"
#include "registrations.h"
#include "session_providers.h"
#include "sessions.h"
#include "tensors.h"

namespace ortdlpack::py {
namespace {

PyTypeObject* inference_session_type() {
  static PyTypeObject* const type = module_type("onnxruntime", "InferenceSession");
  return type;
}

// onnxruntime's own InferenceSession.run, the function (not a bound method).
nb::handle onnxruntime_run() {
  static PyObject* const run = PyObject_GetAttrString(reinterpret_cast<PyObject*>(inference_session_type()), "run");
  return run;
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

// c_session.<attribute>(), or None where this onnxruntime has no such method or the session cannot tell.
nb::object optional_call(nb::handle c_session, const char* attribute) {
  if (!has_attribute(c_session, attribute)) return nb::none();
  try {
    return c_session.attr(attribute)();
  } catch (nb::python_error& e) {
    only_exceptions(e);
    return nb::none();
  }
}

// The provider names and options of a C session (get_providers(), get_provider_options()).
std::vector<Provider> providers_of(nb::handle c) {
  std::vector<Provider> providers;
  const nb::object options = optional_call(c, "get_provider_options");
  for (nb::handle name : c.attr("get_providers")()) {
    Provider p{nb::cast<std::string>(name), {}};
    if (PyDict_Check(options.ptr())) {
      PyObject* of = PyDict_GetItemWithError(options.ptr(), name.ptr());
      if (of == nullptr && PyErr_Occurred()) throw nb::python_error();
      if (of != nullptr && PyDict_Check(of)) p.options = option_pairs(of, "the options of provider " + p.name);
    }
    providers.push_back(std::move(p));
  }
  return providers;
}

// The core's Session over the OrtSession of one C session of an InferenceSession (its `_sess`, which set_providers()
// replaces), or, where ortdlpack cannot reach that OrtSession (a future onnxruntime's layout), why not: then host feeds
// still run through onnxruntime's own run.
struct PyBorrowedSession {
  explicit PyBorrowedSession(nb::handle c) : c_session(nb::borrow(c)), run(c_session.attr("run")) {
    const BorrowedPointer borrowed = onnxruntime_session(c);
    reached = borrowed.status;
    for (nb::handle out : c_session.attr("outputs_meta")) all_outputs.append(out.attr("name"));
    if (borrowed.session == nullptr) return;
    const nb::object capture = optional_call(c_session, "is_webgpu_graph_capture_enabled");
    graph_capture = !capture.is_none() && nb::cast<bool>(capture);
    // Outputs the session allocates keep its C session alive (their EP's allocator may not outlive it: WebGPU).
    core = std::make_unique<Session>(borrowed.session,
                                     BorrowedSession{{}, providers_of(c), python_reference(c), graph_capture});
  }

  nb::object c_session;  // held: it owns the OrtSession the core borrows
  nb::object run;        // c_session.run: onnxruntime's run, without the Python checks the plan makes
  nb::list all_outputs;  // the model's output names, as onnxruntime's run asks for all of them
  std::unique_ptr<Session> core;
  Borrow reached = Borrow::kNoConduit;
  bool graph_capture = false;  // WebGPU graph capture: onnxruntime checks every run of its own
  bool warned = false;         // that the borrow failed, once

  template <class F>
  void references(F f) {  // (Gc; a session whose c_session the collector cleared is replaced: borrowed_session_of)
    f(c_session);
    f(run);
    f(all_outputs);
  }
};

// The borrowed sessions of the InferenceSessions ortdlpack has run, by id(session): (weak reference, borrowed
// session), an entry removed with its session (the weak reference's callback). A dict lookup by id costs a fraction
// of a WeakKeyDictionary's, which makes a weak reference on every call. Process lifetime (never destroyed: it may
// hold sessions at interpreter exit).
PyObject* borrowed_sessions() {
  static PyObject* const dict = PyDict_New();
  return dict;
}

// The borrowed session of `session`'s current C session, made once per C session.
PyBorrowedSession& borrowed_session_of(nb::handle session, nb::object& keep) {
  const nb::object key = nb::steal(PyLong_FromVoidPtr(session.ptr()));
  if (PyObject* entry = PyDict_GetItemWithError(borrowed_sessions(), key.ptr())) {  // borrowed
    if (PyWeakref_GetObject(NB_TUPLE_GET_ITEM(entry, 0)) == session.ptr()) {
      keep = nb::borrow(NB_TUPLE_GET_ITEM(entry, 1));
      PyBorrowedSession& b = nb::cast<PyBorrowedSession&>(keep);
      if (b.c_session.is(c_session_of(session))) return b;
    }
  } else if (PyErr_Occurred()) {
    throw nb::python_error();
  }
  if (!PyObject_TypeCheck(session.ptr(), inference_session_type())) {
    throw nb::type_error(
        (std::string("ortdlpack.run: session must be an onnxruntime.InferenceSession, not ") + type_name(session.ptr()))
            .c_str());
  }
  keep = nb::cast(PyBorrowedSession(c_session_of(session)), nb::rv_policy::move);
  const nb::object forget = nb::cpp_function([key](nb::handle) {
    if (PyDict_DelItem(borrowed_sessions(), key.ptr()) != 0) PyErr_Clear();  // replaced already by one of that id
  });
  const nb::object ref = nb::steal(PyWeakref_NewRef(session.ptr(), forget.ptr()));
  if (!ref.is_valid()) {  // not weak-referenceable: no cache
    PyErr_Clear();
  } else if (PyDict_SetItem(borrowed_sessions(), key.ptr(), nb::make_tuple(ref, keep).ptr()) != 0) {
    throw nb::python_error();
  }
  return nb::cast<PyBorrowedSession&>(keep);
}

// An array onnxruntime's run returned, or a sequence (list) or optional (None) of them, as `type`, over the same
// memory.
nb::object in_framework(nb::handle value, const OutputFramework& type) {
  if (value.is_none() || type.framework == Framework::kNumpy) return nb::borrow(value);
  if (PyList_Check(value.ptr())) {
    nb::list items;
    for (nb::handle item : value) items.append(in_framework(item, type));
    return std::move(items);
  }
  if (numpy_kind(value) != NumpyKind::kNative && numpy_kind(value) != NumpyKind::kOther) return nb::borrow(value);
  if (type.framework == Framework::kTorch) {
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

// The outputs onnxruntime's run returned, made as `type`: arrays become the framework's over the same memory, in
// sequences and optionals too; other values (maps, string arrays) stay as onnxruntime returns them. An array over a
// feed's memory (a graph output that is a graph input: onnxruntime < 1.24 returns the feed itself) is copied first: no
// output aliases a feed.
nb::object outputs_of_run(nb::object produced, nb::handle input_feed, const OutputFramework& type) {
  std::vector<ByteRange> fed;
  for (auto [name, feed] : nb::borrow<nb::dict>(input_feed)) {
    const ByteRange b = array_bytes(feed);
    if (b.begin != nullptr) fed.push_back(b);
  }
  const Py_ssize_t count = PyList_Size(produced.ptr());
  for (Py_ssize_t k = 0; k < count; ++k) {
    nb::object value = nb::borrow(NB_LIST_GET_ITEM(produced.ptr(), k));
    const ByteRange b = array_bytes(value);
    for (const ByteRange& f : fed) {
      if (b.overlaps(f)) {
        value = value.attr("copy")();
        break;
      }
    }
    PyList_SetItem(produced.ptr(), k, in_framework(value, type).release().ptr());
  }
  return produced;
}

// A tensor as onnxruntime's run takes it: a numpy view over host memory of an element type numpy has, else an
// onnxruntime.OrtValue over it (complete: its readers order nothing).
nb::object as_onnxruntime_feed(const Tensor& t) {
  if (t.host_accessible() && numpy_has(t.element_type())) return array_of(t);
  return ortvalue_of(t);
}

// The runtime the core calls back (frontend.h): onnxruntime's own run for a plan of values, the GIL released while ORT
// computes.
struct OnnxruntimeRun final : Runtime {
  OnnxruntimeRun(PyBorrowedSession& borrowed, Request& request, nb::handle caller_session, nb::handle caller_feeds,
                 nb::handle caller_options)
      : s(borrowed), r(request), session(caller_session), feeds(caller_feeds), run_options(caller_options) {}

  Tensor tensor_of(size_t index) override { return value_as_tensor(*s.core, r, index); }

  void run_values(const RunPlan& plan) override {
    if (s.graph_capture) session.attr("_validate_graph_capture_run_api")(run_options);
    nb::object input_feed;
    if (r.run.feeds.empty() && PyDict_Check(feeds.ptr())) {
      input_feed = nb::borrow(feeds);  // the caller's own dict: every feed a value onnxruntime reads
    } else {
      nb::dict d;
      for (const RunPlan::Input& in : plan.inputs) d[in.io->name.c_str()] = as_onnxruntime_feed(in.bound());
      for (size_t k = 0; k < r.values.size(); ++k) d[r.run.values[k].name.c_str()] = r.values[k];
      input_feed = std::move(d);
    }
    bool ortvalues = false;
    for (const nb::object& v : r.values) ortvalues = ortvalues || is_ortvalue(v);
    if (ortvalues && has_attribute(session, "_validate_ortvalue_ownership")) {
      session.attr("_validate_ortvalue_ownership")(input_feed.attr("values")());
    }
    nb::object names = s.all_outputs;
    if (!r.run.output_names.empty()) {
      nb::list named;
      for (const std::string& n : r.run.output_names) named.append(nb::str(n.c_str()));
      names = std::move(named);
    }
    outputs = outputs_of_run(s.run(names, input_feed, run_options), input_feed, r.output);
  }

  void unlocked(const std::function<void()>& work) override {
    nb::gil_scoped_release release;
    work();
  }

  PyBorrowedSession& s;
  Request& r;
  nb::handle session, feeds, run_options;
  nb::object outputs;  // what run_values made
};

// One call of ortdlpack.run / InferenceSession.run, as the caller gave it.
struct RunCall {
  RunArguments arguments;
  nb::handle output_names, run_options;
  const char* malformed_note;  // a note for onnxruntime's error on a malformed call (ortdlpack.run's order), or NULL
};

// A call whose shape onnxruntime's run takes apart itself: onnxruntime's own run, which says what it makes of it
// (its error, or its result).
nb::object to_onnxruntime(nb::handle session, const RunCall& c) {
  try {
    return onnxruntime_run()(session, c.output_names, c.arguments.feeds, c.run_options);
  } catch (nb::python_error& e) {
    if (c.malformed_note != nullptr && e.matches(PyExc_Exception)) add_note(e, c.malformed_note);
    throw;
  }
}

// Why ortdlpack does not run a session on its own OrtSession: "ortdlpack cannot reach the ORT session behind this
// onnxruntime <version>'s InferenceSession (<reason>)".
std::string unreached(const PyBorrowedSession& s) {
  return "ortdlpack cannot reach the ORT session behind this onnxruntime " +
         nb::cast<std::string>(nb::module_::import_("onnxruntime").attr("__version__")) + "'s InferenceSession (" +
         borrow_reason(s.reached) + ")";
}

// Where ortdlpack cannot reach the OrtSession behind the C session: onnxruntime's own run, the tensors as numpy
// arrays over host memory (outputs converted as usual); what needs the OrtSession (device feeds, destinations,
// in_place, device=) is refused. One warning per C session says so.
nb::object without_core(PyBorrowedSession& s, nb::handle session, const RunCall& c, Request& r) {
  const std::string why = unreached(s);
  if (!s.warned) {
    s.warned = true;
    PyErr_WarnEx(PyExc_RuntimeWarning,
                 (why + ": it runs host tensors through onnxruntime's own run, as numpy arrays (python -m ortdlpack "
                        "shows the borrow)")
                     .c_str(),
                 1);
  }
  const RunOptions& o = r.run.options;
  const bool placed = !o.destinations.empty() || !o.in_place.empty() || o.output_target.kind != Target::Kind::kAnywhere;
  nb::dict input_feed;
  for (const auto& [name, t] : r.run.feeds) {
    if (!t.host_accessible() || placed) {
      throw Error(ErrorKind::kUnsupported,
                  why + ": " + (placed ? "outputs=, in_place= and device=" : "input '" + name + "' in device memory") +
                      " need it");
    }
    input_feed[name.c_str()] = array_of(t);
  }
  for (size_t k = 0; k < r.values.size(); ++k) input_feed[r.run.values[k].name.c_str()] = r.values[k];
  nb::object produced = onnxruntime_run()(session, c.output_names, input_feed, c.run_options);
  return outputs_of_run(nb::list(produced), input_feed, r.output);
}

nb::object run_once(nb::handle session, RunCall c) {
  if (!c.run_options.is_none() && !is_run_options(c.run_options)) return to_onnxruntime(session, c);
  // Output names onnxruntime's run iterates (a generator, where it takes one: onnxruntime_takes_iterables), read once,
  // as a list; where it does not, its own TypeError.
  nb::object names;
  PyObject* n = c.output_names.ptr();
  if (!PyList_Check(n) && !PyTuple_Check(n) && !PyUnicode_Check(n) && !PyBytes_Check(n) && !PyDict_Check(n) &&
      n != Py_None && PyIter_Check(n)) {
    if (!onnxruntime_takes_iterables()) return to_onnxruntime(session, c);
    names = nb::steal(PySequence_List(n));
    if (!names.is_valid()) throw nb::python_error();
    c.output_names = c.arguments.output_names = names;
  }
  nb::object keep;
  PyBorrowedSession& s = borrowed_session_of(session, keep);
  Request r;
  try {
    convert(s.core.get(), c.arguments, r);
  } catch (const Malformed&) {
    return to_onnxruntime(session, c);
  }
  if (!s.core) return without_core(s, session, c, r);
  if (!c.run_options.is_none()) r.run.options.run_options = to_run_options(c.run_options);
  OnnxruntimeRun runtime(s, r, session, c.arguments.feeds, c.run_options);
  RunResult result = run(*s.core, r.run, &runtime);
  if (result.route == Route::kRuntime) return runtime.outputs;
  return to_frameworks(result.outputs, r.output);
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

// A run of the session, and once more on the fallback providers when an EP failed it and the session falls back (as
// onnxruntime's run does: the same lines printed, set_providers, disable_fallback).
nb::object run_session(nb::handle session, const RunCall& c) {
  for (bool retried = false;; retried = true) {
    try {
      return run_once(session, c);
    } catch (nb::python_error& e) {  // onnxruntime's run
      if (retried || !is_onnxruntime_error(e.type(), ORT_EP_FAIL) || !falls_back(session)) throw;
      fall_back(session, nb::cast<std::string>(nb::str(e.value())));
    } catch (const Error& e) {  // the core's
      if (retried || e.ort_code() != ORT_EP_FAIL || !falls_back(session)) raise_as_onnxruntime(e);
      fall_back(session, e.what());
    }
  }
}

// The default output type of an ortdlpack.InferenceSession (its constructor's output_type=), else like the feeds.
Framework session_output_type(nb::handle session) {
  static PyObject* const name = PyUnicode_InternFromString("_ortdlpack_output_type");  // process lifetime
  nb::object type = nb::steal(PyObject_GetAttr(session.ptr(), name));
  if (!type.is_valid()) clear_exception();  // (a session made without the constructor: onnxruntime's model packages)
  return !type.is_valid() || type.is_none() ? Framework::kLikeFeeds : to_output_type(type, "output_type");
}

constexpr const char* kRunNames[] = {"session",  "feeds",  "output_names", "outputs",
                                     "in_place", "device", "run_options",  "output_type"};
PyObject* run_function(PyObject*, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  return safe_call<PyObject*>(nullptr, [&] {
    nb::handle a[8];
    parse_arguments({"run", kRunNames, 8, 3, 2}, args, nargs, kwnames, a);
    RunArguments arguments{a[1], a[2], a[3], a[4], a[5], a[7], Framework::kOrtdlpack, true, "feeds"};
    return run_session(a[0], RunCall{arguments, a[2], a[6],
                                     "ortdlpack.run's order is run(session, feeds, output_names=None, *, ...), not "
                                     "onnxruntime's run(output_names, input_feed)"})
        .release()
        .ptr();
  });
}

constexpr const char* kMethodNames[] = {"output_names", "input_feed", "run_options", "outputs",
                                        "in_place",     "device",     "output_type"};
PyObject* inference_session_run(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  return safe_call<PyObject*>(nullptr, [&] {
    nb::handle a[7];
    parse_arguments({"run", kMethodNames, 7, 3, 2}, args, nargs, kwnames, a);
    const Framework type = a[6].is_none() ? session_output_type(self) : to_output_type(a[6], "output_type");
    RunArguments arguments{a[1], a[0], a[3], a[4], a[5], nb::none(), type, true, "input_feed"};
    return run_session(self, RunCall{arguments, a[0], a[2], nullptr}).release().ptr();
  });
}

constexpr const char* kBindNames[] = {"feeds", "output_names", "outputs", "in_place", "device", "output_type"};
PyObject* inference_session_bind(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  return safe_call<PyObject*>(nullptr, [&] {
    nb::handle a[6];
    parse_arguments({"bind", kBindNames, 6, 2, 1}, args, nargs, kwnames, a);
    const Framework type = a[5].is_none() ? session_output_type(self) : to_output_type(a[5], "output_type");
    nb::object keep;
    PyBorrowedSession& s = borrowed_session_of(self, keep);
    if (!s.core) throw Error(ErrorKind::kUnsupported, "bind(): " + unreached(s) + ", which a Binding runs on");
    Request r;
    try {
      convert(s.core.get(), RunArguments{a[0], a[1], a[2], a[3], a[4], nb::none(), type, false, "feeds", true}, r);
    } catch (const Malformed& m) {
      throw nb::type_error(("bind: " + m.message).c_str());
    }
    return onnxruntime_errors([&] { return bind_request(*s.core, r, keep); }).release().ptr();
  });
}

PyMethodDef g_run_def = {
    "run", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>(&run_function)),
    METH_FASTCALL | METH_KEYWORDS,
    "run(session, feeds, output_names=None, *, outputs=None, in_place=None, device=None, run_options=None, "
    "output_type=None)\n--\n\n"
    "Runs `session` (an onnxruntime.InferenceSession) on `feeds` and returns the outputs (ortdlpack.Tensors by "
    "default), in `output_names` order.\n\n"
    "feeds: input name -> DLPack producer (torch, numpy, jax, ..., ortdlpack.Tensor, onnxruntime.OrtValue), or any "
    "value onnxruntime's run takes (a list, a dict, a numpy array of strings, None for an optional input). Tensors "
    "are read where they are.\n"
    "output_names: outputs to return (default: all, in model order).\n"
    "outputs: output name -> preallocated DLPack destination ORT writes into (writable, compact, in memory the "
    "session writes, of the output's type and shape).\n"
    "in_place: output name -> input name: the output is written into the tensor fed as that input (an operator "
    "written to do so: GroupQueryAttention's share-buffer mode).\n"
    "device: where outputs without a destination are allocated (anything ortdlpack.Device takes).\n"
    "run_options: an onnxruntime.RunOptions.\n"
    "output_type: 'ortdlpack' (the default), 'torch', 'numpy', 'cupy', 'jax' or 'like_feeds'.\n"
    "Raises what onnxruntime's run raises for the same feeds (its classes and messages); ortdlpack's own refusals "
    "(destinations, overlaps, devices) are ValueError or BufferError."};

PyMethodDef g_method_def = {
    "run", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>(&inference_session_run)),
    METH_FASTCALL | METH_KEYWORDS,
    "run($self, output_names, input_feed, run_options=None, *, outputs=None, in_place=None, device=None, "
    "output_type=None)\n--\n\n"
    "onnxruntime's run(output_names, input_feed, run_options=None): the same results and errors for the same feeds "
    "(numpy arrays out for numpy feeds; lists, dicts and None as onnxruntime returns them). Feeds may also be DLPack "
    "tensors of any framework (torch, jax, cupy, ..., ortdlpack.Tensor), read where they are.\n\n"
    "outputs: output name -> preallocated destination ORT writes into. in_place: output name -> input name, written "
    "into that feed. device: where other outputs go. output_type: 'torch', 'numpy', 'cupy', 'jax', 'ortdlpack' or "
    "'like_feeds' (the first feed's framework; the default unless the session's constructor set one)."};

PyMethodDef g_bind_def = {
    "bind", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>(&inference_session_bind)),
    METH_FASTCALL | METH_KEYWORDS,
    "bind($self, feeds, output_names=None, *, outputs=None, in_place=None, device=None, output_type=None)\n--\n\n"
    "Plans and binds a run once: the returned Binding's run(run_options=None, *, feeds=None) reruns it on the same "
    "tensors (contents may change; feeds= rebinds the inputs it names, new shapes allowed), into the same outputs."};

}  // namespace

void define_run(nb::module_& m) {
  nb::class_<PyBorrowedSession>(m, "_BorrowedSession", nb::type_slots(Gc<PyBorrowedSession>::slots),
                                "The core's Session over the OrtSession of an onnxruntime.InferenceSession.");
  m.attr("run") = fast_function(&g_run_def);
  // ortdlpack.InferenceSession's run and bind themselves: methods (they bind to the session), no Python frame.
  m.attr("_inference_session_run") = fast_method(inference_session_type(), &g_method_def);
  m.attr("_inference_session_bind") = fast_method(inference_session_type(), &g_bind_def);
  m.def(
      "_check_output_type",
      [](nb::handle output_type) {
        if (!output_type.is_none()) to_output_type(output_type, "output_type");
      },
      nb::arg("output_type").none(), "TypeError/ValueError for an output_type= that names no framework.");
  m.def(
      "_borrow_probe_model",
      [] {
        const std::string model = borrow_probe_model();
        return nb::bytes(model.data(), model.size());
      },
      "For show_config(): an ONNX model's bytes to make an InferenceSession of and ask _borrow_status.");
  m.def(
      "_borrow_status",
      [](nb::handle session) {
        nb::object keep;
        return std::string(borrow_reason(borrowed_session_of(session, keep).reached));
      },
      nb::arg("session"),
      "Whether ortdlpack reaches the OrtSession behind an onnxruntime.InferenceSession, or why not.");
}

}  // namespace ortdlpack::py
