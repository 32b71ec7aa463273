// ortdlpack.Session: the core's Session (created and run in C++, for the per-run cost of a C++ caller, on the shared
// env: the wheel's ORT, see module.cc), and ortdlpack.run's binding of the core's run plan to an
// onnxruntime.InferenceSession. Feeds and destinations go through import_any (dlpack.cc), so every producer
// from_dlpack takes is a feed.
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

std::string str_of(nb::handle h, const char* what) {
  if (!PyUnicode_Check(h.ptr())) {
    throw nb::type_error((std::string(what) + " must be str, not " + type_name(h.ptr())).c_str());
  }
  return nb::cast<std::string>(h);
}

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
  const nb::object type = nb::module_::import_("onnxruntime").attr("SessionOptions");
  if (!PyObject_TypeCheck(sess_options.ptr(), reinterpret_cast<PyTypeObject*>(type.ptr()))) {
    throw nb::type_error((std::string("sess_options must be an onnxruntime.SessionOptions or None, not ") +
                          type_name(sess_options.ptr()))
                             .c_str());
  }
  if (nb::cast<bool>(sess_options.attr("has_providers")())) {
    // ORT cannot list them: the session's providers, and the memory it may write outputs to, would be unknown.
    throw nb::value_error(
        "sess_options has execution providers added to it (add_provider, add_provider_for_devices): "
        "pass them as providers= instead");
  }
  const OrtSessionOptions* base = onnxruntime_session_options(sess_options);
  if (base == nullptr) {
    throw nb::value_error(
        "sess_options: this onnxruntime does not hand out the ORT options behind its "
        "SessionOptions (pybind11's conduit): pass the settings as ortdlpack.Session keywords");
  }
  return base;
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

// A request converted from Python: the feeds and destinations as Tensors (held for the run), the output names, where
// outputs go, and (ortdlpack.run) its plan.
struct Request {
  Feeds feeds;
  std::vector<std::string> names;
  RunOptions options;
  RunPlan plan;
  OutputType type = OutputType::kTensor;  // what the outputs are made as (output_type=, like_feeds resolved)
};

// Adds a PEP 678 note to the exception being raised (add_note on 3.11+, __notes__ before, which tracebacks then do
// not show but which stays on the object).
void add_note(const nb::python_error& e, const std::string& note) {
  nb::handle value = e.value();
  if (nb::hasattr(value, "add_note")) {
    value.attr("add_note")(note);
    return;
  }
  nb::object notes = nb::hasattr(value, "__notes__") ? nb::object(value.attr("__notes__")) : nb::object(nb::list());
  notes.attr("append")(note);
  nb::setattr(value, "__notes__", notes);
}

// What a TypeError for feeds adds: the argument order, which is not onnxruntime's.
constexpr const char* kRunOrder =
    " (ortdlpack's order is run([session,] feeds, output_names=None, *, outputs=None, "
    "device=None), not onnxruntime's run(output_names, input_feed))";

// Imports every (name, producer) pair of the mapping argument `argument` with `import`, into `out`; an import error
// names the entry (`entry` 'name'). `hint` ends the TypeError for an argument that is no mapping.
template <class Import>
void for_items(nb::handle mapping, const char* argument, const char* entry, const char* hint,
               std::vector<std::pair<std::string, Tensor>>& out, Import import) {
  const auto add = [&](nb::handle k, nb::handle v) {
    if (!PyUnicode_Check(k.ptr())) {  // (the message is made only then: this runs per feed and per run)
      throw nb::type_error((std::string(argument) + " key must be str, not " + type_name(k.ptr())).c_str());
    }
    std::string name = nb::cast<std::string>(k);
    out.emplace_back(name, Tensor());
    try {
      out.back().second = import(name, v);
    } catch (nb::python_error& e) {
      // Raised by Python code (a producer's own __dlpack__): kept as it is, class and object, with a note.
      add_note(e, std::string("ortdlpack: raised importing ") + entry + " '" + name + "'");
      throw;
    } catch (...) {
      // ortdlpack's own error: the same Python exception type with the entry's name in front.
      set_python_error();
      nb::python_error e;
      nb::raise_from(e, nb::borrow(e.type()), "%s '%s': %U", entry, name.c_str(), nb::str(e.value()).ptr());
    }
  };
  if (PyDict_Check(mapping.ptr())) {
    for (auto [k, v] : nb::borrow<nb::dict>(mapping)) add(k, v);
    return;
  }
  if (!PyMapping_Check(mapping.ptr()) || PyList_Check(mapping.ptr()) || PyTuple_Check(mapping.ptr()) ||
      !PyObject_HasAttrString(mapping.ptr(), "items")) {
    throw nb::type_error((std::string(argument) + " must be a mapping of " + entry + " names to tensors, not " +
                          type_name(mapping.ptr()) + hint)
                             .c_str());
  }
  nb::object items = nb::steal(PyMapping_Items(mapping.ptr()));
  if (!items.is_valid()) throw nb::python_error();
  for (nb::handle item : items) add(item[0], item[1]);
}

// A destination torch's autograd tracks (requires_grad): ORT's write would bypass it, and torch itself refuses to
// write such a leaf in place or to export any such tensor. Asked of types that have the attribute only (no exception
// is made for others).
void refuse_if_autograd_tracks(nb::handle x) {
  static PyObject* const attribute = PyUnicode_InternFromString("requires_grad");  // process lifetime
  if (class_attribute(Py_TYPE(x.ptr()), attribute) == nullptr) return;
  nb::object tracked = nb::steal(PyObject_GetAttr(x.ptr(), attribute));
  if (!tracked.is_valid()) throw nb::python_error();
  if (PyObject_IsTrue(tracked.ptr()) == 1) {
    throw Error(ErrorKind::kInvalidArgument,
                "requires grad: ORT's write would bypass autograd, as torch's own in-place writes to such a leaf and "
                "its export would (\"Can't export tensors that require gradient, use tensor.detach()\"): pass a "
                "detached tensor");
  }
}

// A list or a Python scalar fed for input `io`, as onnxruntime takes lists: a numpy array of the input's declared
// element type (one copy, allowed: it is no tensor). NULL `io` (an unknown input, which the plan refuses) or a
// non-tensor input: numpy's own type.
nb::object as_array(nb::handle x, const IoInfo* io) {
  static PyObject* const asarray =
      nb::object(nb::module_::import_("numpy").attr("asarray")).release().ptr();  // process lifetime
  try {
    if (io == nullptr || !io->is_tensor) return nb::borrow(asarray)(x);
    return nb::borrow(asarray)(x, numpy_dtype_of(io->element_type));
  } catch (nb::python_error& e) {
    throw Error(ErrorKind::kInvalidArgument,
                std::string("a ") + type_name(x.ptr()) + " numpy cannot make " +
                    (io != nullptr && io->is_tensor ? std::string("a ") + dtype_name(io->element_type) + " array"
                                                    : "an array") +
                    " of (" + nb::cast<std::string>(nb::str(e.value())) + ")");
  }
}

const IoInfo* find_input(const std::vector<IoInfo>& inputs, const std::string& name) {
  for (const IoInfo& io : inputs) {
    if (io.name == name) return &io;
  }
  return nullptr;
}

// Converts run()'s arguments (feeds, output_names, outputs=, device=, output_type=) into `r`, the same way for
// ortdlpack.run and ortdlpack.Session.run (and bind). `feeds_argument` names the feeds in errors, `hint` ends the
// TypeError for feeds that are no mapping. output_type None is `none_means`.
void convert(Request& r, const std::vector<IoInfo>& inputs, nb::handle feeds, const char* feeds_argument,
             const char* hint, nb::handle output_names, nb::handle outputs, nb::handle device, nb::handle output_type,
             OutputType none_means) {
  nb::handle first;  // the first feed (like_feeds)
  for_items(feeds, feeds_argument, "input", hint, r.feeds, [&](const std::string& name, nb::handle x) {
    if (!first.is_valid()) first = x;
    if (PyList_Check(x.ptr()) || PyLong_Check(x.ptr()) || PyFloat_Check(x.ptr())) {
      return import_any(as_array(x, find_input(inputs, name)), nb::none(), nb::none(), "the tensor");
    }
    return import_any(x, nb::none(), nb::none(), "the tensor");
  });
  r.type = output_type.is_none() ? none_means : to_output_type(output_type, "output_type");
  if (r.type == OutputType::kLikeFeeds) r.type = first.is_valid() ? framework_of(first) : OutputType::kNumpy;
  if (!output_names.is_none()) {
    nb::object names = nb::steal(PyUnicode_Check(output_names.ptr()) ? nullptr : PyObject_GetIter(output_names.ptr()));
    if (!names.is_valid()) {
      PyErr_Clear();
      throw nb::type_error(
          (std::string("output_names must be a sequence of str or None, not ") + type_name(output_names.ptr()))
              .c_str());
    }
    while (PyObject* n = PyIter_Next(names.ptr())) r.names.push_back(str_of(nb::steal(n), "output_names[...]"));
    if (PyErr_Occurred()) throw nb::python_error();
  }
  if (!outputs.is_none()) {
    // Destinations are written in place: never a copy (BufferError).
    for_items(outputs, "outputs", "output destination", "", r.options.destinations,
              [](const std::string&, nb::handle x) {
                refuse_if_autograd_tracks(x);
                return import_any(x, nb::none(), nb::borrow(Py_False), "the tensor");
              });
  }
  const OrtMemoryInfo* placed = nullptr;  // where device= puts the outputs
  if (!device.is_none()) {
    const Device d = to_device(device, "device");
    if (d.memory != nullptr) {
      r.options.output_memory = d.memory;  // an EP device's own memory: exactly that
    } else {
      r.options.output_device = d.dl;
    }
    placed = d.memory != nullptr ? d.memory : memory_info(d.dl);
  } else if (needs_host(r.type)) {
    r.options.output_device = DLDevice{kDLCPU, 0};  // ORT copies a device output to the host itself
  }
  if (needs_host(r.type)) {
    // Checked now, before ORT writes anything.
    if (placed != nullptr && !host_accessible(placed)) {
      throw nb::value_error(
          ("output_type 'numpy' needs outputs in host memory; device= puts them in " + describe_memory(placed))
              .c_str());
    }
    for (const auto& [name, t] : r.options.destinations) {
      if (!t.host_accessible()) {
        throw nb::value_error(("output_type 'numpy' needs outputs in host memory; the destination of '" + name +
                               "' is in " + describe_memory(t.memory_info()))
                                  .c_str());
      }
    }
  }
}

// --- ortdlpack.Session -------------------------------------------------------------------------------------------

// The OrtRunOptions behind an onnxruntime.RunOptions (tags, log levels, terminate, config entries: all of it).
const OrtRunOptions* to_run_options(nb::handle run_options) {
  const nb::object type = nb::module_::import_("onnxruntime").attr("RunOptions");
  if (!PyObject_TypeCheck(run_options.ptr(), reinterpret_cast<PyTypeObject*>(type.ptr()))) {
    throw nb::type_error(
        (std::string("run_options must be an onnxruntime.RunOptions or None, not ") + type_name(run_options.ptr()))
            .c_str());
  }
  const OrtRunOptions* options = onnxruntime_run_options(run_options);
  if (options == nullptr) {
    throw nb::value_error(
        "run_options: this onnxruntime does not hand out the ORT options behind its RunOptions "
        "(pybind11's conduit)");
  }
  return options;
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
  convert(r, self.core->inputs(), feeds, "feeds", "", output_names, outputs, device, output_type,
          self.output_type.value_or(OutputType::kTensor));
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
  convert(r, self.core->inputs(), feeds, argument, "", names, outputs, device, output_type, none_means);
  if (!options.is_none()) r.options.run_options = to_run_options(options);
  std::vector<Tensor> results;
  {
    nb::gil_scoped_release release;
    results = self.core->run(r.feeds, r.names, r.options);
  }
  return to_frameworks(results, r.type);
}

// --- ortdlpack.run: the plan of a run of an onnxruntime.InferenceSession --------------------------------------

using python::IoDeclaration;

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

// session.get_input_memory_infos() / get_output_memory_infos(), or None where this onnxruntime has none.
nb::object memory_infos(nb::handle session, const char* method) {
  if (!nb::hasattr(session, method)) return nb::none();
  try {
    return session.attr(method)();
  } catch (nb::python_error&) {  // a session that cannot tell: unknown memory, treated as host
    return nb::none();
  }
}

// InferenceSession.run's own run (its C++ session's `run`, same arguments) when calling it directly changes nothing:
// the session's class does not override run() and the core says the session never falls back to another EP (what
// run() adds around it is checking the feeds, which the plan did, and that fallback). None otherwise. Holds the C++
// session, not the InferenceSession (no cycle).
nb::object direct_run(nb::handle session, const std::vector<std::string>& providers) {
  nb::object inference_session = nb::module_::import_("onnxruntime").attr("InferenceSession");
  if (!python::cpu_only(providers) || !nb::hasattr(session, "_sess") ||
      !PyObject_TypeCheck(session.ptr(), reinterpret_cast<PyTypeObject*>(inference_session.ptr())) ||
      !nb::handle(Py_TYPE(session.ptr())).attr("run").is(inference_session.attr("run"))) {
    return nb::none();
  }
  return session.attr("_sess").attr("run");
}

// The SessionInfo of an InferenceSession, with the idle IOBindings of its runs.
struct PyPlanner {
  explicit PyPlanner(nb::handle session)
      : PyPlanner(session, nb::cast<std::vector<std::string>>(session.attr("get_providers")())) {}
  PyPlanner(nb::handle session, const std::vector<std::string>& providers)
      : info(python::session_info(
            declarations(session.attr("get_inputs")(), memory_infos(session, "get_input_memory_infos")),
            declarations(session.attr("get_outputs")(), memory_infos(session, "get_output_memory_infos")), providers)),
        run(direct_run(session, providers)) {
    for (const IoInfo& io : info.outputs()) all_outputs.append(nb::str(io.name.c_str()));
  }
  SessionInfo info;
  nb::object run;  // direct_run()
  nb::list all_outputs;
  nb::list idle;  // IOBindings, cleared; list.pop/append are atomic under the GIL
};

// The bound tensor of each input as a numpy array (the host-only call's feeds), by input name.
nb::object arrays(const PyPlanner& planner, const Request& r) {
  nb::dict d;
  for (const RunPlan::Input& in : r.plan.inputs) {
    const Tensor& t = in.bound();
    nb::capsule owner(new Tensor(t), [](void* q) noexcept { delete static_cast<Tensor*>(q); });
    d[planner.info.inputs()[static_cast<size_t>(in.index)].name.c_str()] = host_array(t, owner, CopyMode::kIfNeeded);
  }
  return std::move(d);
}

nb::object output_names_of(const PyPlanner& planner, const Request& r) {
  if (r.names.empty()) return planner.all_outputs;
  nb::list names;
  for (const std::string& n : r.names) names.append(nb::str(n.c_str()));
  return std::move(names);
}

// The outputs as Tensors: the destinations themselves, the others from `produced` (what session.run returned, or
// IOBinding.get_outputs() when `bound`, in plan order) without a copy.
nb::object results(const Request& r, nb::handle produced, bool bound) {
  const std::vector<RunPlan::Output>& outputs = r.plan.outputs;
  nb::object list = nb::steal(PyList_New(static_cast<Py_ssize_t>(outputs.size())));
  for (size_t k = 0; k < outputs.size(); ++k) {
    const RunPlan::Output& out = outputs[k];
    nb::object t;
    if (out.destination) {
      t = to_framework(out.destination, r.type);
    } else if (bound) {
      t = to_framework(tensor_of_ortvalue(produced[k], out.memory), r.type);
    } else if (r.type == OutputType::kNumpy) {
      t = nb::borrow(produced[k]);  // session.run's own numpy array, which owns ORT's buffer
    } else if (r.type == OutputType::kTorch) {
      // torch's own C function for a numpy array: cheaper than an import and an export through the exchange API.
      static PyObject* const from_numpy = nb::object(nb::module_::import_("torch").attr("from_numpy")).release().ptr();
      t = nb::borrow(from_numpy)(produced[k]);
    } else {
      t = to_framework(import_any(produced[k], nb::none(), nb::none(), "an output"), r.type);
    }
    NB_LIST_SET_ITEM(list.ptr(), static_cast<Py_ssize_t>(k), t.release().ptr());
  }
  return list;
}

// Calls onnxruntime to run the session. A failure of ORT's own (its message in onnxruntime's exception:
// python::ort_message) is raised as Session::run raises it (run_failed), onnxruntime's exception as its cause;
// anything else as it is.
template <class Call>
nb::object onnxruntime_run(Call&& call) {
  try {
    return call();
  } catch (nb::python_error& e) {
    const std::optional<std::string> message = python::ort_message(nb::cast<std::string>(nb::str(e.value())));
    if (!message) throw;
    const Error failed = run_failed(*message);
    nb::raise_from(e, exception_type(failed.kind()), "%s", failed.what());
  }
}

// Binds the plan to an onnxruntime.IOBinding. Host tensors by address through IOBinding.bind_input/bind_output (the
// cheapest binding of onnxruntime's public API), other memory by address through its C.SessionIOBinding with the
// memory's exact C.OrtDevice (onnxruntime_device: vendor and memory type, which the public methods cannot say);
// outputs without a destination to the planned memory.
void bind(const PyPlanner& p, const Request& r, nb::handle binding) {
  const SessionInfo& info = p.info;
  nb::object raw;
  const auto device_binding = [&]() -> nb::handle {
    if (!raw.is_valid()) raw = binding.attr("_iobinding");
    return raw;
  };
  for (const RunPlan::Input& in : r.plan.inputs) {
    const Tensor& t = in.bound();
    const char* name = info.inputs()[static_cast<size_t>(in.index)].name.c_str();
    const int type = static_cast<int>(t.element_type());
    const uintptr_t data = reinterpret_cast<uintptr_t>(t.data());
    if (t.host_accessible()) {
      binding.attr("bind_input")(name, "cpu", 0, type, shape_tuple(t), data);
    } else {
      device_binding().attr("bind_input")(name, onnxruntime_device(t.memory_info()), type, shape_tuple(t), data);
    }
  }
  for (const RunPlan::Output& out : r.plan.outputs) {
    const char* name = info.outputs()[static_cast<size_t>(out.index)].name.c_str();
    const Tensor& t = out.destination;
    if (!t) {
      if (host_accessible(out.memory)) {
        binding.attr("bind_output")(name, "cpu", 0);  // where ORT then allocates
      } else {
        device_binding().attr("bind_output")(name, onnxruntime_device(out.memory));
      }
      continue;
    }
    const int type = static_cast<int>(t.element_type());
    const uintptr_t data = reinterpret_cast<uintptr_t>(t.data());
    if (t.host_accessible()) {
      binding.attr("bind_output")(name, "cpu", 0, type, shape_tuple(t), data);
    } else {
      device_binding().attr("bind_output")(name, onnxruntime_device(t.memory_info()), type, shape_tuple(t), data);
    }
  }
  // Last: the run follows at once (docs/streams.md).
  nb::gil_scoped_release release;
  order_before_run(r.plan);
}

// Binds the plan to `binding`, runs the session on it and returns the outputs. IOBinding.get_outputs() (when ORT
// allocated any output) is converted at once: in onnxruntime <= 1.29 those values do not own their memory, which
// clearing the binding frees. The caller clears the binding.
nb::object run_bound(const PyPlanner& p, const Request& r, nb::handle session, nb::handle binding,
                     nb::handle run_options) {
  bind(p, r, binding);
  onnxruntime_run([&] { return session.attr("run_with_iobinding")(binding, run_options); });
  for (const RunPlan::Output& out : r.plan.outputs) {
    if (!out.destination) return results(r, binding.attr("get_outputs")(), true);
  }
  return results(r, nb::none(), true);
}

// The planners of the InferenceSessions ortdlpack.run has met, by id(session): (weak reference, planner), an entry
// removed with its session (the weak reference's callback). A dict lookup by id costs a fraction of a
// WeakKeyDictionary's, which makes a weak reference on every call. Process lifetime (never destroyed: it may hold
// planners at interpreter exit).
PyObject* planners() {
  static PyObject* const dict = PyDict_New();
  return dict;
}

PyObject* inference_session_type() {
  static PyObject* const type =
      nb::object(nb::module_::import_("onnxruntime").attr("InferenceSession")).release().ptr();
  return type;
}

// The core's planner of `session`, made once per session.
nb::object planner_of(nb::handle session) {
  const nb::object key = nb::steal(PyLong_FromVoidPtr(session.ptr()));
  if (PyObject* entry = PyDict_GetItemWithError(planners(), key.ptr())) {  // borrowed
    if (PyWeakref_GetObject(NB_TUPLE_GET_ITEM(entry, 0)) == session.ptr())
      return nb::borrow(NB_TUPLE_GET_ITEM(entry, 1));
  } else if (PyErr_Occurred()) {
    throw nb::python_error();
  }
  if (!PyObject_TypeCheck(session.ptr(), reinterpret_cast<PyTypeObject*>(inference_session_type()))) {
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

// ortdlpack.run: converts and plans (run_plan.h); a host-only plan runs with session.run (the cheapest call
// onnxruntime's Python has: it reads numpy views in place and hands its output buffers to numpy, so no byte is copied
// either way), any other plan on an IOBinding of the session (idle ones reused, cleared).
nb::object run_inference_session(nb::handle session, nb::handle feeds, nb::handle output_names, nb::handle outputs,
                                 nb::handle device, nb::handle run_options, nb::handle output_type) {
  const nb::object planner = planner_of(session);
  PyPlanner& p = nb::cast<PyPlanner&>(planner);
  if (!run_options.is_none()) {
    static PyObject* const type = nb::object(nb::module_::import_("onnxruntime").attr("RunOptions")).release().ptr();
    if (!PyObject_TypeCheck(run_options.ptr(), reinterpret_cast<PyTypeObject*>(type))) {
      throw nb::type_error((std::string("ortdlpack.run: run_options must be an onnxruntime.RunOptions or None, not ") +
                            type_name(run_options.ptr()))
                               .c_str());
    }
  }
  Request r;
  convert(r, p.info.inputs(), feeds, "feeds", kRunOrder, output_names, outputs, device, output_type,
          OutputType::kTensor);
  r.plan = plan_run(p.info, r.feeds, r.names, r.options);
  if (python::host_only(p.info, r.plan)) {
    const nb::object run = p.run.is_none() ? nb::object(session.attr("run")) : p.run;
    nb::object names = output_names_of(p, r), inputs = arrays(p, r);
    return results(r, onnxruntime_run([&] { return run(names, inputs, run_options); }), false);
  }
  const Py_ssize_t idle = NB_LIST_GET_SIZE(p.idle.ptr());
  nb::object binding = idle != 0 ? nb::steal(PyObject_CallMethod(p.idle.ptr(), "pop", nullptr))
                                 : nb::object(session.attr("io_binding")());
  if (!binding.is_valid()) throw nb::python_error();
  // Cleared on every path: drops ORT's and the wrapper's references to the caller's memory.
  const auto clear = [&] {
    binding.attr("clear_binding_inputs")();
    binding.attr("clear_binding_outputs")();
    if (static_cast<size_t>(NB_LIST_GET_SIZE(p.idle.ptr())) < kIdleBindings) p.idle.append(binding);
  };
  nb::object result;
  try {
    result = run_bound(p, r, session, binding, run_options);
  } catch (...) {
    try {
      clear();
    } catch (nb::python_error&) {  // the run's error is the one to report
    }
    throw;
  }
  clear();
  return result;
}

}  // namespace

void bind_session(nb::module_& m) {
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

  // ortdlpack.run: the core's plan of a run of an onnxruntime.InferenceSession.
  nb::class_<PyPlanner>(m, "_Planner", "The core's SessionInfo of an onnxruntime.InferenceSession.");
  m.def("run", &run_inference_session, nb::arg("session"), nb::arg("feeds").none(),
        nb::arg("output_names") = nb::none(), nb::kw_only(), nb::arg("outputs") = nb::none(),
        nb::arg("device") = nb::none(), nb::arg("run_options") = nb::none(), nb::arg("output_type") = nb::none(),
        nb::sig("def run(session: onnxruntime.InferenceSession, feeds: object, output_names: object | None = None, "
                "*, outputs: object | None = None, device: object | None = None, run_options: object | None = None, "
                "output_type: str | None = None) -> list"),
        R"(Runs `session` on `feeds` and returns the outputs (ortdlpack.Tensors by default), in `output_names` order.

session: an onnxruntime.InferenceSession.
feeds: input name -> DLPack producer, onnxruntime.OrtValue, ortdlpack.Tensor, list or scalar; every model input
    exactly once. Imported without a copy unless ORT cannot hold the layout (lists and scalars: converted with numpy
    to the declared element type).
output_names: outputs to return (default: all, in model order).
outputs: output name -> preallocated DLPack destination (e.g. a torch tensor); ORT writes the result into it (it
    must be writable, compact, in memory the session writes, and match the model's type and shape).
device: where outputs without a destination are allocated (anything ortdlpack.Device takes). Default: where the
    session's execution provider produces them.
run_options: an onnxruntime.RunOptions, passed through.
output_type: 'ortdlpack' (the default), 'torch', 'numpy', 'cupy', 'jax' or 'like_feeds' (the first feed's
    framework), each over the output's memory; 'numpy' places the outputs in host memory.
Raises ValueError (unknown, duplicate or missing names; element type, rank or dimension mismatch; a read-only
destination; a device the session cannot produce outputs on), BufferError (a destination that would need a copy or
that the session cannot write), TypeError (a feed that is no tensor, a session that is no InferenceSession,
run_options that are no RunOptions, arguments of the wrong type), RuntimeError (the run failed).)");
}

}  // namespace ortdlpack::py
