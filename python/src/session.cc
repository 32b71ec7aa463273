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

// Creates the core Session from a path (str / os.PathLike) or the model's bytes (any bytes-like object).
void create_session(Session* self, nb::handle model, nb::handle intra, nb::handle inter, nb::handle ep,
                    nb::handle ep_options, nb::handle config, nb::handle stream) {
  SessionConfig c;
  if (!stream.is_none()) {
    if (!PyLong_Check(stream.ptr())) throw nb::type_error("stream must be None or an int (a native stream handle)");
    c.stream = static_cast<uintptr_t>(PyLong_AsUnsignedLongLong(stream.ptr()));  // 0 included
    if (PyErr_Occurred()) {
      PyErr_Clear();
      throw nb::value_error("stream must be a native stream handle (a non-negative int)");
    }
  }
  if (!intra.is_none()) c.intra_op_num_threads = static_cast<int>(to_integer(intra, "intra_op_num_threads", INT_MIN, INT_MAX));
  if (!inter.is_none()) c.inter_op_num_threads = static_cast<int>(to_integer(inter, "inter_op_num_threads", INT_MIN, INT_MAX));
  if (!ep.is_none()) c.ep = str_of(ep, "ep");  // "" is the core's to refuse
  c.ep_options = string_pairs(ep_options, "ep_options");
  c.entries = string_pairs(config, "config");
  if (PyObject_CheckBuffer(model.ptr())) {
    Py_buffer view;
    if (PyObject_GetBuffer(model.ptr(), &view, PyBUF_SIMPLE) != 0) throw nb::python_error();
    const std::unique_ptr<Py_buffer, void (*)(Py_buffer*)> release_view(&view, PyBuffer_Release);
    nb::gil_scoped_release release;
    new (self) Session(view.buf, static_cast<size_t>(view.len), c);
    return;
  }
  nb::object path = nb::steal(PyOS_FSPath(model.ptr()));
  if (!path.is_valid() || !PyUnicode_Check(path.ptr())) {
    PyErr_Clear();
    throw nb::type_error(("Session: model must be a path (str, os.PathLike) or the model's bytes, not " +
                          type_name(model.ptr())).c_str());
  }
  const std::string p = nb::cast<std::string>(path);
  nb::gil_scoped_release release;
  new (self) Session(p, c);
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
constexpr const char* kRunOrder = " (ortdlpack's order is run([session,] feeds, output_names=None, *, outputs=None, "
                                  "device=None), not onnxruntime's run(output_names, input_feed))";

// Imports every (name, producer) pair of the mapping argument `argument` with `import`, into `out`; an import error
// names the entry (`entry` 'name'). `hint` ends the TypeError for an argument that is no mapping.
template <class Import>
void for_items(nb::handle mapping, const char* argument, const char* entry, const char* hint,
               std::vector<std::pair<std::string, Tensor>>& out, Import import) {
  const auto add = [&](nb::handle k, nb::handle v) {
    std::string name = str_of(k, (std::string(argument) + " key").c_str());
    out.emplace_back(name, Tensor());
    try {
      out.back().second = import(v);
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
                          type_name(mapping.ptr()) + hint).c_str());
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

// Converts run()'s arguments (feeds, output_names, outputs=, device=) into `r`, the same way for ortdlpack.run and
// ortdlpack.Session.run.
void convert(Request& r, nb::handle feeds, nb::handle output_names, nb::handle outputs, nb::handle device) {
  for_items(feeds, "feeds", "input", kRunOrder, r.feeds,
            [](nb::handle x) { return import_any(x, nb::none(), nb::none(), "the tensor"); });
  if (!output_names.is_none()) {
    nb::object names = nb::steal(PyUnicode_Check(output_names.ptr()) ? nullptr : PyObject_GetIter(output_names.ptr()));
    if (!names.is_valid()) {
      PyErr_Clear();
      throw nb::type_error((std::string("output_names must be a sequence of str or None, not ") +
                            type_name(output_names.ptr())).c_str());
    }
    while (PyObject* n = PyIter_Next(names.ptr())) r.names.push_back(str_of(nb::steal(n), "output_names[...]"));
    if (PyErr_Occurred()) throw nb::python_error();
  }
  if (!outputs.is_none()) {
    // Destinations are written in place: never a copy (BufferError).
    for_items(outputs, "outputs", "output destination", "", r.options.destinations, [](nb::handle x) {
      refuse_if_autograd_tracks(x);
      return import_any(x, nb::none(), nb::borrow(Py_False), "the tensor");
    });
  }
  if (!device.is_none()) {
    const Device d = to_device(device, "device");
    if (d.memory != nullptr) {
      r.options.output_memory = d.memory;  // an EP device's own memory: exactly that
    } else {
      r.options.output_device = d.dl;
    }
  }
}

nb::object run(Session& self, nb::handle feeds, nb::handle output_names, nb::handle outputs, nb::handle device) {
  Request r;
  convert(r, feeds, output_names, outputs, device);
  std::vector<Tensor> results;
  {
    nb::gil_scoped_release release;
    results = self.run(r.feeds, r.names, r.options);
  }
  nb::list list;
  for (Tensor& t : results) list.append(wrap(std::move(t)));
  return std::move(list);
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

// A planned run returned to Python (not host-only), to be bound to an IOBinding.
struct PyPlan {
  nb::object planner;  // keeps the SessionInfo the plan points into
  Request request;
  const PyPlanner& owner() const { return nb::cast<const PyPlanner&>(planner); }
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
    nb::object t = out.destination ? wrap(out.destination)
                   : bound         ? wrap(tensor_of_ortvalue(produced[k], out.memory))
                                   : from_dlpack(produced[k], nb::none(), nb::none());
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

// ortdlpack.run's one call: converts and plans; a host-only plan is run at once with session.run (the cheapest call
// onnxruntime's Python has: it reads numpy views in place and hands its output buffers to numpy, so no byte is
// copied either way) and its outputs are returned; any other plan is returned (a _Plan), to be run on an IOBinding.
nb::object run_host(nb::handle planner, nb::handle session, nb::handle feeds, nb::handle output_names,
                    nb::handle outputs, nb::handle device, nb::handle run_options) {
  const PyPlanner& p = nb::cast<const PyPlanner&>(planner);
  Request r;
  convert(r, feeds, output_names, outputs, device);
  r.plan = plan_run(p.info, r.feeds, r.names, r.options);
  if (!python::host_only(p.info, r.plan)) return nb::cast(new PyPlan{nb::borrow(planner), std::move(r)}, nb::rv_policy::take_ownership);
  const nb::object run = p.run.is_none() ? session.attr("run") : p.run;
  nb::object names = output_names_of(p, r), inputs = arrays(p, r);
  return results(r, onnxruntime_run([&] { return run(names, inputs, run_options); }), false);
}

// Binds the plan to an onnxruntime.IOBinding. Host tensors by address through IOBinding.bind_input/bind_output (the
// cheapest binding of onnxruntime's public API), other memory by address through its C.SessionIOBinding with the
// memory's exact C.OrtDevice (onnxruntime_device: vendor and memory type, which the public methods cannot say);
// outputs without a destination to the planned memory.
void bind(const PyPlan& p, nb::handle binding) {
  const SessionInfo& info = p.owner().info;
  nb::object raw;
  const auto device_binding = [&]() -> nb::handle {
    if (!raw.is_valid()) raw = binding.attr("_iobinding");
    return raw;
  };
  for (const RunPlan::Input& in : p.request.plan.inputs) {
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
  for (const RunPlan::Output& out : p.request.plan.outputs) {
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
  order_before_run(p.request.plan);
}

// Binds the plan to `binding`, runs the session on it and returns the outputs. IOBinding.get_outputs() (when ORT
// allocated any output) is converted at once: in onnxruntime <= 1.29 those values do not own their memory, which
// clearing the binding frees. The caller clears the binding.
nb::object run_bound(const PyPlan& p, nb::handle session, nb::handle binding, nb::handle run_options) {
  bind(p, binding);
  onnxruntime_run([&] { return session.attr("run_with_iobinding")(binding, run_options); });
  for (const RunPlan::Output& out : p.request.plan.outputs) {
    if (!out.destination) return results(p.request, binding.attr("get_outputs")(), true);
  }
  return results(p.request, nb::none(), true);
}

}  // namespace

void bind_session(nb::module_& m) {
  nb::class_<Session>(m, "Session",
                        "An ONNX Runtime session created and run in C++: feeds and outputs are DLPack tensors, "
                        "bound without copies (see ortdlpack::Session).")
      .def("__init__", &create_session,
           nb::arg("model"), nb::kw_only(), nb::arg("intra_op_num_threads") = nb::none(),
           nb::arg("inter_op_num_threads") = nb::none(), nb::arg("ep") = nb::none(),
           nb::arg("ep_options") = nb::none(), nb::arg("config") = nb::none(), nb::arg("stream") = nb::none(),
           "model: a path or the model's bytes. ep: None (CPU) or an EP's name ('cuda', 'CUDAExecutionProvider', a "
           "registered plugin EP), its EP devices appended with ep_options (dict[str, str]). config: session config "
           "entries (dict[str, str]). stream: a native stream handle of the EP's device (e.g. "
           "torch.cuda.current_stream().cuda_stream) every run is ordered with; CUDA and TensorRT compute on it "
           "(docs/streams.md).")
      .def_prop_ro("input_names", [](const Session& s) { return name_tuple(s.inputs()); })
      .def_prop_ro("output_names", [](const Session& s) { return name_tuple(s.outputs()); })
      .def("run", &run, nb::arg("feeds").none(), nb::arg("output_names") = nb::none(), nb::kw_only(),
           nb::arg("outputs") = nb::none(), nb::arg("device") = nb::none(),
           nb::sig("def run(self, feeds: object, output_names: object | None = None, *, outputs: object | None = None, "
                   "device: object | None = None) -> object"),
           "Runs on feeds {name: DLPack producer} and returns the outputs named in output_names (None: all) as "
           "Tensors. outputs: {name: preallocated destination} written in place. device: where other outputs go.");

  // ortdlpack.run (python/ortdlpack/session.py): the core's plan of a run of an onnxruntime.InferenceSession.
  nb::class_<PyPlanner>(m, "_Planner", "The core's SessionInfo of an onnxruntime.InferenceSession.")
      .def(nb::init<nb::handle>(), nb::arg("session"))
      .def_ro("idle", &PyPlanner::idle)
      .def("run", &run_host, nb::arg("session"), nb::arg("feeds").none(), nb::arg("output_names").none(),
           nb::arg("outputs").none(), nb::arg("device").none(), nb::arg("run_options").none(),
           "Converts run()'s arguments and plans the run (run_plan.h); runs a host-only plan with session.run and "
           "returns its outputs (a list), else returns the plan (a _Plan) for an IOBinding.");
  nb::class_<PyPlan>(m, "_Plan", "One planned run (ortdlpack::RunPlan) and the tensors it binds.")
      .def("run", &run_bound, nb::arg("session"), nb::arg("binding"), nb::arg("run_options").none(),
           "Binds the plan to the onnxruntime.IOBinding, runs the session on it and returns the outputs. The caller "
           "clears the binding.");
}

}  // namespace ortdlpack::py
