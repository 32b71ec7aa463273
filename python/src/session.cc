// ortdlpack.Session (and its onnxruntime name, InferenceSession): the core's Session, created and run in C++ on the
// shared env (the wheel's ORT, see module.cc) for the per-run cost of a C++ caller; onnxruntime's constructor
// arguments and both orders of run(); the Binding bind() makes (here and in run.cc), for many runs on the same tensors.
#include <climits>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "arguments.h"
#include "devices.h"
#include "errors.h"
#include "onnxruntime_objects.h"
#include "registrations.h"
#include "session_providers.h"
#include "sessions.h"
#include "tensors.h"

namespace ortdlpack::py {
namespace {

// The Python object behind ortdlpack.Session: the core Session and what its Python arguments keep alive.
struct PySession {
  // The onnxruntime.SessionOptions the core copied: what it refers to (initializers, custom op libraries) lives as
  // long as the session. Declared first: released after the session.
  nb::object sess_options;
  std::unique_ptr<Session> core;
  std::optional<Framework> output_type;  // the session's default for run() and bind()

  template <class F>
  void references(F f) {  // (Gc)
    f(sess_options);
  }
};

// Creates the core Session from a path (str / os.PathLike) or the model's bytes (any bytes-like object).
void create_session(PySession* self, nb::handle model, nb::handle sess_options, nb::handle providers,
                    nb::handle provider_options, nb::handle intra, nb::handle inter, nb::handle ep,
                    nb::handle ep_options, nb::handle config, nb::handle stream, nb::handle output_type) {
  SessionConfig c;
  if (!stream.is_none()) {
    if (!PyLong_Check(stream.ptr())) throw nb::type_error("stream must be None or an int (a native stream handle)");
    c.stream = static_cast<uintptr_t>(PyLong_AsUnsignedLongLong(stream.ptr()));  // 0 included
    if (PyErr_Occurred()) {
      clear_exception();
      throw nb::value_error("stream must be a native stream handle (a non-negative int)");
    }
  }
  c.base = to_base(sess_options);
  c.providers = to_providers(providers, provider_options);
  if (!intra.is_none())
    c.intra_op_num_threads = static_cast<int>(to_integer(intra, "intra_op_num_threads", INT_MIN, INT_MAX));
  if (!inter.is_none())
    c.inter_op_num_threads = static_cast<int>(to_integer(inter, "inter_op_num_threads", INT_MIN, INT_MAX));
  if (!ep.is_none()) c.ep = str_of(ep, "ep");  // "" is the core's to refuse
  if (!ep_options.is_none()) c.ep_options = option_pairs(ep_options, "ep_options");
  c.entries = string_pairs(config, "config");
  std::optional<Framework> type;
  if (!output_type.is_none()) type = to_output_type(output_type, "output_type");
  std::unique_ptr<Session> core;
  if (PyObject_CheckBuffer(model.ptr())) {
    Py_buffer view;
    if (PyObject_GetBuffer(model.ptr(), &view, PyBUF_SIMPLE) != 0) throw nb::python_error();
    const std::unique_ptr<Py_buffer, void (*)(Py_buffer*)> release_view(&view, PyBuffer_Release);
    core = onnxruntime_errors([&] {
      nb::gil_scoped_release release;
      return std::make_unique<Session>(view.buf, static_cast<size_t>(view.len), c);
    });
  } else {
    nb::object path = nb::steal(PyOS_FSPath(model.ptr()));
    if (!path.is_valid() || !PyUnicode_Check(path.ptr())) {
      clear_exception();
      throw nb::type_error(("Session: path_or_bytes must be a path (str, os.PathLike) or the model's bytes, not " +
                            std::string(type_name(model.ptr())))
                               .c_str());
    }
    const std::string p = nb::cast<std::string>(path);
    core = onnxruntime_errors([&] {
      nb::gil_scoped_release release;
      return std::make_unique<Session>(p, c);
    });
  }
  new (self) PySession{nb::borrow(sess_options), std::move(core), type};
}

nb::object name_tuple(const std::vector<IoInfo>& ios) {
  nb::object tuple = nb::steal(PyTuple_New(static_cast<Py_ssize_t>(ios.size())));
  for (size_t i = 0; i < ios.size(); ++i) {
    NB_TUPLE_SET_ITEM(tuple.ptr(), static_cast<Py_ssize_t>(i), PyUnicode_FromString(ios[i].name.c_str()));
  }
  return tuple;
}

// --- ortdlpack.Session -------------------------------------------------------------------------------------------

// onnxruntime's NodeArg, as get_inputs() / get_outputs() return them: name, type ("tensor(float)"), shape (ints,
// the names of symbolic dimensions, None for unknown ones; [] for no shape).
struct PyNodeArg {
  std::string name;
  std::string type;
  nb::object shape;
};

nb::object node_args(const std::vector<IoInfo>& ios) {
  nb::list list;
  for (const IoInfo& io : ios) {
    nb::list shape;
    if (io.has_shape) {
      for (size_t i = 0; i < io.shape.size(); ++i) {
        if (io.shape[i] >= 0) {
          shape.append(nb::int_(io.shape[i]));
        } else if (i < io.dim_names.size() && !io.dim_names[i].empty()) {
          shape.append(nb::str(io.dim_names[i].c_str()));
        } else {
          shape.append(nb::none());
        }
      }
    }
    list.append(nb::cast(PyNodeArg{io.name, io.onnx_type, std::move(shape)}));
  }
  return std::move(list);
}

// onnxruntime's ModelMetadata (get_modelmeta()).
struct PyModelMetadata {
  ModelMetadata meta;
  nb::dict custom_metadata_map() const {
    nb::dict d;
    for (const auto& [k, v] : meta.custom_metadata_map) d[nb::str(k.c_str())] = nb::str(v.c_str());
    return d;
  }
};

// A Binding (bind once, run many) and what its Python side keeps: what owns the session (an ortdlpack.Session: its
// SessionOptions; an InferenceSession's borrowed session: its C session), the type its outputs are made as, the object
// bound for each input (a feed given again as the same object, its memory where it was, is no change) and for each
// output destination (asked, as the feeds are, whether its memory moved), and its outputs
// once made: the same objects every run, as the Binding's outputs are the same tensors, made again where a run
// allocated them anew.
struct PyBinding {
  struct Fed {
    std::string name;  // the input's, or the output's where `destination`
    bool destination;
    nb::object object;
    Tensor tensor;  // what is bound for it
    // Where its memory may move under its export (memory_may_move), its type's C exchange API, which says where it is
    // before every run (check_still_bound); else NULL.
    const DLPackExchangeAPI* movable;
  };
  Binding core;
  nb::object owner;
  const Session* session;  // the owner's, which bind() planned on: what types a list fed anew (alive while `owner` is)
  OutputFramework type;
  std::vector<Fed> fed;
  nb::object outputs;                // a list, after the first run
  std::vector<OrtValue*> made_from;  // the values `outputs` were made from
  // Held through a whole run, so that what this side records (`fed`, `outputs`) changes in the order the core's runs
  // change the binding, whatever thread gets the GIL first; recursive: a feed's conversion may run this Binding again.
  std::unique_ptr<std::recursive_mutex> serial = std::make_unique<std::recursive_mutex>();

  template <class F>
  void references(F f) {  // (Gc: a Binding stored on its own session's subclass is a cycle)
    f(owner);
    for (Fed& x : fed) f(x.object);
    f(outputs);
  }

  // What `r` bound: its feeds (an input fed anew as a value, a list or a scalar, is no object of the caller's any
  // more: its entry goes) and its destinations.
  void record(const Request& r) {
    for (const auto& feed : r.run.feeds) {
      if (Fed* x = find(feed.first)) fed.erase(fed.begin() + (x - fed.data()));
    }
    for (const Request::Bound& b : r.bound) {
      const auto& [name, tensor] = b.destination ? r.run.options.destinations[b.index] : r.run.feeds[b.index];
      const DLPackExchangeAPI* api = b.movable ? exchange_api_of(Py_TYPE(b.object.ptr())) : nullptr;
      fed.push_back(Fed{name, b.destination, b.object, tensor,
                        api != nullptr && api->dltensor_from_py_object_no_sync != nullptr ? api : nullptr});
    }
  }
  Fed* find(const std::string& input) {
    for (Fed& x : fed) {
      if (!x.destination && x.name == input) return &x;
    }
    return nullptr;
  }
};

// Whether the object bound as `x` still is the memory bound (torch's C exchange API describes it without a copy or
// an allocation): Error(kInvalidArgument) where it moved (check_still_bound).
void check_unmoved(const PyBinding::Fed& x) {
  if (x.movable == nullptr) return;
  DLTensor now{};
  if (x.movable->dltensor_from_py_object_no_sync(x.object.ptr(), &now) != 0) throw nb::python_error();
  check_still_bound(x.tensor, now, x.name, x.destination);
}

// Binding.run(run_options=None, *, feeds=None): the feeds that change converted (an input fed again as the object bound
// for it, its memory where it was, changes nothing), the others asked whether their memory moved, one core call.
nb::object run_binding(PyBinding& self, nb::handle run_options, nb::handle feeds) {
  if (!self.owner.is_valid()) {  // (Gc: what it held is gone; a finalizer in its cycle may still call it)
    throw nb::type_error("Binding.run: this Binding was cleared by the garbage collector (a cycle being collected)");
  }
  std::unique_lock<std::recursive_mutex> serial(*self.serial, std::try_to_lock);
  if (!serial.owns_lock()) {  // a run on another thread: waited for without the GIL, which that run takes again
    nb::gil_scoped_release release;
    serial.lock();
  }
  const OrtRunOptions* options = to_run_options(run_options);
  Request changed;
  nb::object changing = nb::borrow(feeds);
  if (PyDict_Check(feeds.ptr())) {
    nb::dict rest;
    bool same = false;  // an entry is the object bound: `rest`, the others, is what changes
    for (auto [name, x] : nb::borrow<nb::dict>(feeds)) {
      PyBinding::Fed* bound = PyUnicode_Check(name.ptr()) ? self.find(nb::cast<std::string>(name)) : nullptr;
      if (bound != nullptr && bound->object.is(x)) {
        check_unmoved(*bound);  // the same object: a change only where its memory moved, which is refused
        same = true;
        continue;
      }
      rest[name] = x;
    }
    if (same) changing = std::move(rest);
  }
  if (!changing.is_none() && !(PyDict_Check(changing.ptr()) && PyDict_Size(changing.ptr()) == 0)) {
    RunArguments a;
    a.feeds = changing;
    a.output_names = a.outputs = a.in_place = a.device = a.output_type = nb::none();
    a.binds = true;
    try {
      convert(self.session, a, changed);
    } catch (const Malformed& m) {
      throw nb::type_error(("Binding.run: " + m.message).c_str());
    }
  }
  for (const PyBinding::Fed& x : self.fed) {
    bool rebound = false;
    for (const auto& feed : changed.run.feeds) rebound = rebound || (!x.destination && feed.first == x.name);
    if (!rebound) check_unmoved(x);
  }
  const std::vector<Tensor> outputs = onnxruntime_errors([&] {
    nb::gil_scoped_release release;
    return self.core.run(changed.run.feeds, options);
  });
  self.record(changed);
  if (!self.outputs.is_valid()) {
    self.outputs = to_frameworks(outputs, self.type);
    for (const Tensor& t : outputs) self.made_from.push_back(t.ort_value());
  } else {
    for (size_t k = 0; k < outputs.size(); ++k) {
      if (self.made_from[k] == outputs[k].ort_value()) continue;  // (a run that allocated anew, a feed rebound)
      PyList_SetItem(self.outputs.ptr(), static_cast<Py_ssize_t>(k),
                     to_framework(outputs[k], self.type).release().ptr());
      self.made_from[k] = outputs[k].ort_value();
    }
  }
  return nb::steal(PyList_GetSlice(self.outputs.ptr(), 0, PY_SSIZE_T_MAX));  // the caller's list, the same objects
}

constexpr const char* kBindingRunNames[] = {"run_options", "feeds"};
PyObject* binding_run(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  return safe_call<PyObject*>(nullptr, [&] {
    nb::handle a[2];
    parse_arguments({"run", kBindingRunNames, 2, 1, 0}, args, nargs, kwnames, a);
    // (the method descriptor checked that `self` is a Binding)
    return run_binding(*nb::inst_ptr<PyBinding>(self), a[0], a[1]).release().ptr();
  });
}

PyMethodDef g_binding_run_def = {
    "run", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>(&binding_run)), METH_FASTCALL | METH_KEYWORDS,
    "run($self, run_options=None, *, feeds=None)\n--\n\n"
    "Runs the session and returns the outputs: the same objects every run, written in place. feeds: input name -> a "
    "new tensor for that input (bound from now on; a new shape allowed: the outputs ORT allocated are allocated "
    "again). run_options: an onnxruntime.RunOptions for this run."};

nb::object bind_session(nb::handle session, nb::handle feeds, nb::handle output_names, nb::handle outputs,
                        nb::handle in_place, nb::handle device, nb::handle output_type) {
  PySession& self = nb::cast<PySession&>(session);
  Request r;
  try {
    convert(self.core.get(),
            RunArguments{feeds, output_names, outputs, in_place, device, output_type,
                         self.output_type.value_or(Framework::kOrtdlpack), false, "feeds", true},
            r);
  } catch (const Malformed& m) {
    throw nb::type_error(("bind: " + m.message).c_str());
  }
  return bind_request(*self.core, r, session);
}

// Session.run in either order: run(feeds, output_names=None, ...) — a mapping first — or onnxruntime's
// run(output_names, input_feed, run_options=None). In onnxruntime's order the outputs are, by default, like the feeds
// (numpy arrays for numpy feeds, as onnxruntime returns them); in ortdlpack's, ortdlpack.Tensors.
nb::object run_session(PySession& self, nb::handle a, nb::handle b, nb::handle c, nb::handle input_feed,
                       nb::handle output_names, nb::handle outputs, nb::handle in_place, nb::handle device,
                       nb::handle output_type, nb::handle run_options) {
  const auto both = [](const char* what) {
    throw nb::type_error((std::string("run: ") + what + " given twice (positionally and by keyword)").c_str());
  };
  nb::handle feeds, names = output_names, options = run_options;
  const char* argument = "feeds";
  Framework none_means = Framework::kOrtdlpack;
  const bool mapping_first =
      PyDict_Check(a.ptr()) || (PyMapping_Check(a.ptr()) && !PyList_Check(a.ptr()) && !PyTuple_Check(a.ptr()) &&
                                !PyUnicode_Check(a.ptr()) && has_attribute(a, "items"));
  if (mapping_first) {
    if (!input_feed.is_none()) throw nb::type_error("run: feeds given twice (a mapping first, and input_feed=)");
    if (!c.is_none()) throw nb::type_error("run(feeds, output_names=None, *, ...) takes 2 positional arguments");
    if (!b.is_none() && !names.is_none()) both("output_names");
    feeds = a;
    if (!b.is_none()) names = b;
  } else {
    // onnxruntime's order
    if (!a.is_none() && !names.is_none()) both("output_names");
    if (!b.is_none() && !input_feed.is_none()) both("input_feed");
    if (!c.is_none() && !options.is_none()) both("run_options");
    if (!a.is_none()) names = a;
    feeds = !b.is_none() ? b : input_feed;
    if (!c.is_none()) options = c;
    if (feeds.is_none()) {
      throw nb::type_error(
          "run: no feeds (a mapping of input names to tensors): run(feeds, output_names=None, *, outputs=None, "
          "in_place=None, device=None, output_type=None, run_options=None) or onnxruntime's run(output_names, "
          "input_feed, run_options=None)");
    }
    argument = "input_feed";
    none_means = Framework::kLikeFeeds;
  }
  Request r;
  try {
    convert(self.core.get(),
            RunArguments{feeds, names, outputs, in_place, device, output_type, self.output_type.value_or(none_means),
                         false, argument, false},
            r);
  } catch (const Malformed& m) {
    throw nb::type_error(("run: " + m.message).c_str());
  }
  r.run.options.run_options = to_run_options(options);
  return to_frameworks(onnxruntime_errors([&] {
                         nb::gil_scoped_release release;
                         return run(*self.core, r.run, nullptr).outputs;
                       }),
                       r.output);
}

}  // namespace

std::shared_ptr<const void> python_reference(nb::handle obj) {
  return std::shared_ptr<const void>(obj.inc_ref().ptr(), [](const void* p) noexcept {
    if (!python_alive()) return;
    const PyGILState_STATE gil = PyGILState_Ensure();
    Py_DECREF(static_cast<PyObject*>(const_cast<void*>(p)));
    PyGILState_Release(gil);
  });
}

const OrtRunOptions* to_run_options(nb::handle run_options) {
  if (run_options.is_none()) return nullptr;
  if (!is_run_options(run_options)) {
    throw nb::type_error(
        ("run_options must be an onnxruntime.RunOptions or None, not " + type_name(run_options.ptr())).c_str());
  }
  return onnxruntime_run_options(run_options, "run_options");
}

nb::object bind_request(Session& session, Request& r, nb::handle owner) {
  Binding b = onnxruntime_errors([&] {
    nb::gil_scoped_release release;
    return bind(session, r.run);
  });
  nb::object binding = nb::cast(PyBinding{std::move(b), nb::borrow(owner), &session, r.output, {}, nb::object(), {}},
                                nb::rv_policy::move);
  nb::cast<PyBinding&>(binding).record(r);
  return binding;
}

Session& core_session(nb::handle session) {
  if (!nb::isinstance<PySession>(session)) {
    throw nb::type_error(("expected an ortdlpack.Session, not " + type_name(session.ptr())).c_str());
  }
  return *nb::cast<PySession&>(session).core;
}

void define_session(nb::module_& m) {
  m.def("_onnxruntime_providers", &onnxruntime_providers, nb::arg("sess_options").none(), nb::arg("providers").none(),
        nb::arg("provider_options").none(), nb::arg("ep").none(), nb::arg("ep_options").none(),
        "ortdlpack.InferenceSession's arguments for onnxruntime: (sess_options, providers, provider_options) from "
        "providers= or ep= / ep_options=, the EP names users write resolved (installed EP packages registered) and "
        "plugin EPs selected by device (the core's hand_off_providers).");
  nb::class_<PyNodeArg>(m, "NodeArg", "An input or output of a session, as onnxruntime's NodeArg describes it.")
      .def_ro("name", &PyNodeArg::name)
      .def_ro("type", &PyNodeArg::type, "The ONNX type: 'tensor(float)', 'seq(tensor(int64))', ...")
      .def_prop_ro(
          "shape", [](const PyNodeArg& a) { return nb::steal(PyList_GetSlice(a.shape.ptr(), 0, PY_SSIZE_T_MAX)); },
          nb::sig("def shape(self) -> list"),
          "Dimensions: ints, the names of symbolic dimensions, None for unknown ones ([]: no shape).")
      .def("__repr__", [](const PyNodeArg& a) {
        return "NodeArg(name='" + a.name + "', type='" + a.type +
               "', shape=" + nb::cast<std::string>(nb::repr(a.shape)) + ")";
      });
  nb::class_<PyModelMetadata>(m, "ModelMetadata", "What a model says about itself (onnxruntime's ModelMetadata).")
      .def_prop_ro("producer_name", [](const PyModelMetadata& x) { return x.meta.producer_name; })
      .def_prop_ro("graph_name", [](const PyModelMetadata& x) { return x.meta.graph_name; })
      .def_prop_ro("domain", [](const PyModelMetadata& x) { return x.meta.domain; })
      .def_prop_ro("description", [](const PyModelMetadata& x) { return x.meta.description; })
      .def_prop_ro("graph_description", [](const PyModelMetadata& x) { return x.meta.graph_description; })
      .def_prop_ro("version", [](const PyModelMetadata& x) { return x.meta.version; })
      .def_prop_ro("custom_metadata_map", &PyModelMetadata::custom_metadata_map,
                   nb::sig("def custom_metadata_map(self) -> dict"));
  auto binding = nb::class_<PyBinding>(m, "Binding", nb::type_slots(Gc<PyBinding>::slots),
                                       "A run planned and bound once (Session.bind, InferenceSession.bind): every "
                                       "run() reruns the session on the same feed tensors into the same outputs "
                                       "(ortdlpack::Binding).")
                     .def_prop_ro("output_names", [](const PyBinding& b) { return b.core.output_names(); });
  // run: a CPython method (no dispatcher per call: what a decode loop calls every step).
  binding.attr("run") = fast_method(reinterpret_cast<PyTypeObject*>(binding.ptr()), &g_binding_run_def);

  nb::class_<PySession>(m, "Session", nb::type_slots(Gc<PySession>::slots),
                        "An ONNX Runtime session created and run in C++, with onnxruntime.InferenceSession's "
                        "interface: feeds and outputs are DLPack tensors, bound without copies (see "
                        "ortdlpack::Session). ortdlpack.InferenceSession is onnxruntime's own session, subclassed.")
      .def("__init__", &create_session, nb::arg("path_or_bytes"), nb::arg("sess_options") = nb::none(),
           nb::arg("providers") = nb::none(), nb::arg("provider_options") = nb::none(), nb::kw_only(),
           nb::arg("intra_op_num_threads") = nb::none(), nb::arg("inter_op_num_threads") = nb::none(),
           nb::arg("ep") = nb::none(), nb::arg("ep_options") = nb::none(), nb::arg("config") = nb::none(),
           nb::arg("stream") = nb::none(), nb::arg("output_type") = nb::none(),
           nb::sig("def __init__(self, path_or_bytes: object, sess_options: object | None = None, providers: object "
                   "| None = None, provider_options: object | None = None, *, intra_op_num_threads: int | None = "
                   "None, inter_op_num_threads: int | None = None, ep: str | None = None, ep_options: dict | None = "
                   "None, config: dict | None = None, stream: int | None = None, output_type: str | None = None) -> "
                   "None"),
           "path_or_bytes: a path or the model's bytes. sess_options: an onnxruntime.SessionOptions, everything "
           "set on it kept. providers: onnxruntime's list of names or (name, options) pairs, provider_options one "
           "dict per provider; or ep, ep_options: one EP. intra_op_num_threads, inter_op_num_threads, config "
           "(session config entries) apply on top of sess_options. stream: a native stream handle of the EP's "
           "device every run is ordered with (docs/streams.md). output_type: the default of run() and bind().")
      .def_prop_ro("input_names", [](const PySession& s) { return name_tuple(s.core->inputs()); })
      .def_prop_ro("output_names", [](const PySession& s) { return name_tuple(s.core->outputs()); })
      .def(
          "get_inputs", [](const PySession& s) { return node_args(s.core->inputs()); },
          nb::sig("def get_inputs(self) -> list"))
      .def(
          "get_outputs", [](const PySession& s) { return node_args(s.core->outputs()); },
          nb::sig("def get_outputs(self) -> list"))
      .def("get_providers", [](const PySession& s) { return s.core->providers(); })
      .def("get_modelmeta", [](const PySession& s) { return PyModelMetadata{s.core->metadata()}; })
      .def(
          "end_profiling", [](PySession& s) { return s.core->end_profiling(); },
          "Ends profiling (sess_options.enable_profiling) and returns the profile's file name.")
      .def("get_profiling_start_time_ns", [](const PySession& s) { return s.core->profiling_start_ns(); })
      .def("run", &run_session, nb::arg("a") = nb::none(), nb::arg("b") = nb::none(), nb::arg("c") = nb::none(),
           nb::kw_only(), nb::arg("input_feed") = nb::none(), nb::arg("output_names") = nb::none(),
           nb::arg("outputs") = nb::none(), nb::arg("in_place") = nb::none(), nb::arg("device") = nb::none(),
           nb::arg("output_type") = nb::none(), nb::arg("run_options") = nb::none(),
           nb::sig("def run(self, *args: object, input_feed: object | None = None, output_names: object | None = "
                   "None, outputs: object | None = None, in_place: dict | None = None, device: object | None = None, "
                   "output_type: str | None = None, run_options: object | None = None) -> list"),
           "run(feeds, output_names=None, *, outputs=None, in_place=None, device=None, output_type=None, "
           "run_options=None), feeds {name: DLPack producer}, returns ortdlpack.Tensors; or onnxruntime's "
           "run(output_names, input_feed, run_options=None), returns outputs like the feeds. outputs: {name: "
           "preallocated destination} written in place. in_place: {output: input}, the output written into that "
           "feed. device: where other outputs go. output_type: 'ortdlpack', 'torch', 'numpy', 'cupy', 'jax' or "
           "'like_feeds'.")
      .def("bind", &bind_session, nb::arg("feeds"), nb::arg("output_names") = nb::none(), nb::kw_only(),
           nb::arg("outputs") = nb::none(), nb::arg("in_place") = nb::none(), nb::arg("device") = nb::none(),
           nb::arg("output_type") = nb::none(),
           nb::sig("def bind(self, feeds: object, output_names: object | None = None, *, outputs: object | None = "
                   "None, in_place: dict | None = None, device: object | None = None, output_type: str | None = "
                   "None) -> Binding"),
           "Plans and binds a run once: the Binding's run() reruns it on the same tensors (contents may change; "
           "run(feeds=...) rebinds the inputs it names), into the same outputs.");
}

}  // namespace ortdlpack::py
