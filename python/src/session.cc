// ortdlpack.Session (and its onnxruntime name, InferenceSession): the core's Session, created and run in C++ on the
// shared env (the wheel's ORT, see module.cc) for the per-run cost of a C++ caller; onnxruntime's constructor
// arguments and both orders of run(); bind() for many runs on the same tensors.
#include <climits>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "common.h"

namespace ortdlpack::py {
namespace {

// The (key, value) pairs of a dict[str, str] argument (None: none).
std::vector<std::pair<std::string, std::string>> string_pairs(nb::handle dict, const char* what) {
  std::vector<std::pair<std::string, std::string>> pairs;
  if (dict.is_none()) return pairs;
  if (!PyDict_Check(dict.ptr())) throw nb::type_error((std::string(what) + " must be a dict[str, str]").c_str());
  for (auto [k, v] : nb::borrow<nb::dict>(dict)) pairs.emplace_back(str_of(k, what), str_of(v, what));
  return pairs;
}

// A provider option value as ORT takes it, a string: str as it is, bool as "1"/"0", int and float as Python writes
// them (onnxruntime accepts these too).
std::string option_value(nb::handle v, const std::string& what) {
  if (PyUnicode_Check(v.ptr())) return nb::cast<std::string>(v);
  if (PyBool_Check(v.ptr())) return v.is(Py_True) ? "1" : "0";
  if (PyLong_Check(v.ptr()) || PyFloat_Check(v.ptr())) return nb::cast<std::string>(nb::str(v));
  throw nb::type_error((what + " must be a str, bool, int or float, not " + type_name(v.ptr())).c_str());
}

std::vector<std::pair<std::string, std::string>> option_pairs(nb::handle dict, const std::string& what) {
  if (!PyDict_Check(dict.ptr())) {
    throw nb::type_error((what + " must be a dict of option names to values, not " + type_name(dict.ptr())).c_str());
  }
  std::vector<std::pair<std::string, std::string>> pairs;
  for (auto [k, v] : nb::borrow<nb::dict>(dict)) {
    std::string key = str_of(k, (what + " key").c_str());
    pairs.emplace_back(key, option_value(v, what + "['" + key + "']"));
  }
  return pairs;
}

// onnxruntime's providers=[name or (name, options)] and provider_options=[options, ...] (one per provider), as the
// core's providers (which checks the names).
std::vector<Provider> to_providers(nb::handle providers, nb::handle provider_options) {
  std::vector<Provider> out;
  if (providers.is_none()) {
    if (!provider_options.is_none()) throw nb::value_error("provider_options needs providers");
    return out;
  }
  if (!PyList_Check(providers.ptr()) && !PyTuple_Check(providers.ptr())) {
    throw nb::type_error((std::string("providers must be a list of provider names or (name, options) pairs, not ") +
                          type_name(providers.ptr()))
                             .c_str());
  }
  for (nb::handle p : providers) {
    if (PyUnicode_Check(p.ptr())) {
      out.push_back(Provider{nb::cast<std::string>(p), {}});
    } else if ((PyTuple_Check(p.ptr()) || PyList_Check(p.ptr())) && nb::len(p) == 2 && PyUnicode_Check(p[0].ptr())) {
      const std::string name = nb::cast<std::string>(p[0]);
      out.push_back(Provider{name, option_pairs(p[1], "the options of provider '" + name + "'")});
    } else {
      throw nb::type_error((std::string("providers entries must be a name (str) or a (name, options) pair, not ") +
                            nb::cast<std::string>(nb::repr(p)))
                               .c_str());
    }
  }
  if (provider_options.is_none()) return out;
  if (!PyList_Check(provider_options.ptr()) && !PyTuple_Check(provider_options.ptr())) {
    throw nb::type_error((std::string("provider_options must be a list of dicts, one per provider, not ") +
                          type_name(provider_options.ptr()))
                             .c_str());
  }
  if (nb::len(provider_options) != out.size()) {
    throw nb::value_error(("provider_options has " + std::to_string(nb::len(provider_options)) + " entries for " +
                           std::to_string(out.size()) + " providers (onnxruntime's rule: one per provider)")
                              .c_str());
  }
  size_t i = 0;
  for (nb::handle options : provider_options) {
    Provider& p = out[i++];
    std::vector<std::pair<std::string, std::string>> more =
        option_pairs(options, "provider_options[" + std::to_string(i - 1) + "]");
    if (!more.empty() && !p.options.empty()) {
      throw nb::value_error(
          ("provider '" + p.name + "' has options both in providers and in provider_options").c_str());
    }
    if (!more.empty()) p.options = std::move(more);
  }
  return out;
}

// The OrtSessionOptions behind an onnxruntime.SessionOptions, for the core to copy (SessionConfig::base).
const OrtSessionOptions* to_base(nb::handle sess_options) {
  if (sess_options.is_none()) return nullptr;
  check_onnxruntime_options_type(sess_options, "SessionOptions", "sess_options");
  if (nb::cast<bool>(sess_options.attr("has_providers")())) {
    // ORT cannot list them: the session's providers, and the memory it may write outputs to, would be unknown.
    throw nb::value_error(
        "sess_options has execution providers added to it (add_provider, add_provider_for_devices): "
        "pass them as providers= instead");
  }
  return onnxruntime_session_options(sess_options, "sess_options", ": pass the settings as ortdlpack.Session keywords");
}

// The Python object behind ortdlpack.Session: the core Session and what its Python arguments keep alive.
struct PySession {
  // The onnxruntime.SessionOptions the core copied: what it refers to (initializers, custom op libraries) lives as
  // long as the session. Declared first: released after the session.
  nb::object sess_options;
  std::unique_ptr<Session> core;
  std::optional<OutputType> output_type;  // the session's default for run() and bind()
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
      PyErr_Clear();
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
  c.ep_options = string_pairs(ep_options, "ep_options");
  c.entries = string_pairs(config, "config");
  std::optional<OutputType> type;
  if (!output_type.is_none()) type = to_output_type(output_type, "output_type");
  std::unique_ptr<Session> core;
  if (PyObject_CheckBuffer(model.ptr())) {
    Py_buffer view;
    if (PyObject_GetBuffer(model.ptr(), &view, PyBUF_SIMPLE) != 0) throw nb::python_error();
    const std::unique_ptr<Py_buffer, void (*)(Py_buffer*)> release_view(&view, PyBuffer_Release);
    nb::gil_scoped_release release;
    core = std::make_unique<Session>(view.buf, static_cast<size_t>(view.len), c);
  } else {
    nb::object path = nb::steal(PyOS_FSPath(model.ptr()));
    if (!path.is_valid() || !PyUnicode_Check(path.ptr())) {
      PyErr_Clear();
      throw nb::type_error(("Session: path_or_bytes must be a path (str, os.PathLike) or the model's bytes, not " +
                            std::string(type_name(model.ptr())))
                               .c_str());
    }
    const std::string p = nb::cast<std::string>(path);
    nb::gil_scoped_release release;
    core = std::make_unique<Session>(p, c);
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

// The OrtRunOptions behind an onnxruntime.RunOptions (tags, log levels, terminate, config entries: all of it).
const OrtRunOptions* to_run_options(nb::handle run_options) {
  return onnxruntime_run_options(run_options, "run_options");
}

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

// A Binding (bind once, run many) and what its Python side keeps: the session's Python object (its SessionOptions
// and, through the core, the session), the type its outputs are made as, and those outputs once made: the same
// objects every run, as the Binding's outputs are the same tensors.
struct PyBinding {
  Binding core;
  nb::object session;
  OutputType type;
  nb::object outputs;  // a list, after the first run
};

nb::object bind_session_run(nb::handle session, nb::handle feeds, nb::handle output_names, nb::handle outputs,
                            nb::handle device, nb::handle output_type) {
  PySession& self = nb::cast<PySession&>(session);
  Request r;
  convert(r, self.core->inputs(), {}, feeds, "feeds", "", output_names, outputs, device, output_type,
          self.output_type.value_or(OutputType::kTensor), Values::kNone);
  Binding b;
  {
    nb::gil_scoped_release release;
    b = self.core->bind(r.feeds, r.names, r.options);
  }
  return nb::cast(PyBinding{std::move(b), nb::borrow(session), r.type, nb::object()}, nb::rv_policy::move);
}

nb::object run_binding(PyBinding& self, nb::handle run_options) {
  const OrtRunOptions* options = run_options.is_none() ? nullptr : to_run_options(run_options);
  {
    nb::gil_scoped_release release;
    self.core.run(options);
  }
  if (!self.outputs.is_valid()) self.outputs = to_frameworks(self.core.outputs(), self.type);
  return nb::steal(PyList_GetSlice(self.outputs.ptr(), 0, PY_SSIZE_T_MAX));  // the caller's list, the same objects
}

// Session.run in either order: run(feeds, output_names=None, ...) — a mapping first — or onnxruntime's
// run(output_names, input_feed, run_options=None). In onnxruntime's order the outputs are, by default, like the feeds
// (numpy arrays for numpy feeds, as onnxruntime returns them); in ortdlpack's, ortdlpack.Tensors.
nb::object run_session(PySession& self, nb::handle a, nb::handle b, nb::handle c, nb::handle input_feed,
                       nb::handle output_names, nb::handle outputs, nb::handle device, nb::handle output_type,
                       nb::handle run_options) {
  const auto both = [](const char* what) {
    throw nb::type_error((std::string("run: ") + what + " given twice (positionally and by keyword)").c_str());
  };
  nb::handle feeds, names = output_names, options = run_options;
  const char* argument = "feeds";
  OutputType none_means = OutputType::kTensor;
  const bool mapping_first =
      PyDict_Check(a.ptr()) || (PyMapping_Check(a.ptr()) && !PyList_Check(a.ptr()) && !PyTuple_Check(a.ptr()) &&
                                !PyUnicode_Check(a.ptr()) && PyObject_HasAttrString(a.ptr(), "items"));
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
          "run: no feeds (a mapping of input names to tensors): run(feeds, output_names=None, *, "
          "outputs=None, device=None, "
          "output_type=None, run_options=None) or onnxruntime's run(output_names, input_feed, "
          "run_options=None)");
    }
    argument = "input_feed";
    none_means = OutputType::kLikeFeeds;
  }
  if (self.output_type && output_type.is_none()) none_means = *self.output_type;
  Request r;
  convert(r, self.core->inputs(), {}, feeds, argument, "", names, outputs, device, output_type, none_means,
          Values::kNone);
  if (!options.is_none()) r.options.run_options = to_run_options(options);
  std::vector<Tensor> results;
  {
    nb::gil_scoped_release release;
    results = self.core->run(r.feeds, r.names, r.options);
  }
  return to_frameworks(results, r.type);
}

// onnxruntime.InferenceSession's providers= as ortdlpack.InferenceSession hands them to onnxruntime: each name a
// user writes resolved to the EP's name in ORT (provider_name: "webgpu", "qnn", an installed EP package registered
// once under its EP's own name), its options completed with the defaults ortdlpack documents (provider_options).
// onnxruntime selects some plugin EPs by name silently not at all (QNN runs on the CPU EP): when every provider is a
// plugin EP of the env (an EP with EP devices; or the CPU EP) and the caller gave no SessionOptions, they are selected
// by their EP devices on a SessionOptions of ortdlpack's (add_provider_for_devices, priority order), and providers=
// goes as None. What is not a list of names or (name, options) pairs goes to onnxruntime as it is (its errors are
// onnxruntime's). Returns (sess_options, providers, provider_options).
nb::object onnxruntime_providers(nb::handle sess_options, nb::handle providers, nb::handle provider_options) {
  using ortdlpack::provider_name;
  const nb::object unchanged = nb::make_tuple(sess_options, providers, provider_options);
  if (providers.is_none() || (!PyList_Check(providers.ptr()) && !PyTuple_Check(providers.ptr()))) return unchanged;
  const bool separate = !provider_options.is_none();
  if (separate && (!PyList_Check(provider_options.ptr()) || nb::len(provider_options) != nb::len(providers))) {
    return unchanged;
  }
  struct Entry {
    std::string ep;
    nb::object options;  // a dict, or None
  };
  std::vector<Entry> entries;
  size_t i = 0;
  for (nb::handle p : providers) {
    nb::object name, options = separate ? nb::object(provider_options[i]) : nb::object(nb::none());
    ++i;
    if (PyUnicode_Check(p.ptr())) {
      name = nb::borrow(p);
    } else if (!separate && PyTuple_Check(p.ptr()) && nb::len(p) == 2 && PyUnicode_Check(p[0].ptr()) &&
               PyDict_Check(p[1].ptr())) {
      name = p[0];
      options = p[1];
    } else {
      return unchanged;
    }
    if ((!options.is_none() && !PyDict_Check(options.ptr()))) return unchanged;
    std::optional<std::string> ep;
    {
      const std::string written = nb::cast<std::string>(name);
      nb::gil_scoped_release release;  // registering an EP library asks the package finder, which takes the GIL
      ep = provider_name(written);
    }
    entries.push_back(Entry{ep ? *ep : nb::cast<std::string>(name), options});
  }
  const nb::object ort = nb::module_::import_("onnxruntime");
  nb::list devices = nb::list(ort.attr("get_ep_devices")());
  const auto devices_of = [&](const std::string& ep) {
    nb::list of;
    for (nb::handle d : devices) {
      if (nb::cast<std::string>(d.attr("ep_name")) == ep) of.append(d);
    }
    return of;
  };
  bool plugin = false, by_devices = sess_options.is_none();
  for (const Entry& e : entries) {
    const bool is_plugin = e.ep != "CPUExecutionProvider" && nb::len(devices_of(e.ep)) != 0;
    plugin = plugin || is_plugin;
    by_devices = by_devices && (is_plugin || e.ep == "CPUExecutionProvider");
  }
  const auto completed = [](const Entry& e) {
    std::vector<std::pair<std::string, std::string>> given;
    if (!e.options.is_none()) {
      for (auto [k, v] : nb::borrow<nb::dict>(e.options)) given.emplace_back(nb::str(k).c_str(), nb::str(v).c_str());
    }
    nb::dict d;
    for (const auto& [k, v] : ortdlpack::provider_options(e.ep, std::move(given))) d[k.c_str()] = v.c_str();
    return d;
  };
  if (plugin && by_devices) {
    nb::object so = ort.attr("SessionOptions")();
    for (const Entry& e : entries) so.attr("add_provider_for_devices")(devices_of(e.ep), completed(e));
    return nb::make_tuple(so, nb::none(), nb::none());
  }
  nb::list names;
  for (const Entry& e : entries) {
    names.append(separate ? nb::object(nb::str(e.ep.c_str())) : nb::object(nb::make_tuple(e.ep.c_str(), completed(e))));
  }
  nb::list options;
  if (separate) {
    for (const Entry& e : entries) options.append(completed(e));
  }
  return nb::make_tuple(sess_options, names, separate ? nb::object(options) : nb::object(nb::none()));
}

}  // namespace

Session& core_session(nb::handle session) {
  if (!nb::isinstance<PySession>(session)) {
    throw nb::type_error(("expected an ortdlpack.Session, not " + type_name(session.ptr())).c_str());
  }
  return *nb::cast<PySession&>(session).core;
}

void bind_session(nb::module_& m) {
  m.def("_onnxruntime_providers", &onnxruntime_providers, nb::arg("sess_options").none(), nb::arg("providers").none(),
        nb::arg("provider_options").none(),
        "ortdlpack.InferenceSession's providers= for onnxruntime: (sess_options, providers, provider_options) with "
        "the EP names users write resolved (installed EP packages registered) and plugin EPs selected by device.");
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
  nb::class_<PyBinding>(m, "Binding",
                        "A run planned and bound once (Session.bind): every run() reruns the session on the same "
                        "feed tensors into the same outputs (ortdlpack::Binding).")
      .def("run", &run_binding, nb::arg("run_options") = nb::none(),
           nb::sig("def run(self, run_options: object | None = None) -> list"),
           "Runs the session and returns the outputs: the same objects every run, written in place. run_options: an "
           "onnxruntime.RunOptions for this run.")
      .def_prop_ro("output_names", [](const PyBinding& b) { return b.core.output_names(); });

  nb::class_<PySession>(m, "Session",
                        "An ONNX Runtime session created and run in C++, with onnxruntime.InferenceSession's "
                        "interface: feeds and outputs are DLPack tensors, bound without copies (see "
                        "ortdlpack::Session). ortdlpack.InferenceSession is this class.")
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
           nb::arg("outputs") = nb::none(), nb::arg("device") = nb::none(), nb::arg("output_type") = nb::none(),
           nb::arg("run_options") = nb::none(),
           nb::sig("def run(self, *args: object, input_feed: object | None = None, output_names: object | None = "
                   "None, outputs: object | None = None, device: object | None = None, output_type: str | None = "
                   "None, run_options: object | None = None) -> list"),
           "run(feeds, output_names=None, *, outputs=None, device=None, output_type=None, run_options=None), feeds "
           "{name: DLPack producer}, returns ortdlpack.Tensors; or onnxruntime's run(output_names, input_feed, "
           "run_options=None), returns outputs like the feeds. outputs: {name: preallocated destination} written in "
           "place. device: where other outputs go. output_type: 'ortdlpack', 'torch', 'numpy', 'cupy', 'jax' or "
           "'like_feeds'.")
      .def("bind", &bind_session_run, nb::arg("feeds"), nb::arg("output_names") = nb::none(), nb::kw_only(),
           nb::arg("outputs") = nb::none(), nb::arg("device") = nb::none(), nb::arg("output_type") = nb::none(),
           nb::sig("def bind(self, feeds: object, output_names: object | None = None, *, outputs: object | None = "
                   "None, device: object | None = None, output_type: str | None = None) -> Binding"),
           "Plans and binds a run once: the Binding's run() reruns it on the same tensors (contents may change, "
           "shapes may not), into the same outputs.");
}

}  // namespace ortdlpack::py
