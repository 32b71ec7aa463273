// ortdlpack.run: a user's own onnxruntime.InferenceSession run on DLPack tensors. The core plans the run
// (python::session_info from the session's NodeArgs, run_plan.h); this file binds the plan to onnxruntime: its plain
// run for a host-only plan, else its IOBinding by address with each memory's exact OrtDevice.
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

// What a TypeError for feeds adds: the argument order, which is not onnxruntime's.
constexpr const char* kRunOrder =
    " (ortdlpack's order is run([session,] feeds, output_names=None, *, outputs=None, "
    "device=None), not onnxruntime's run(output_names, input_feed))";

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
  for (const RunPlan::Input& in : r.plan.inputs) {
    bind_at("bind_input", info.inputs()[static_cast<size_t>(in.index)].name.c_str(), in.bound());
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
    bind_at("bind_output", name, t);
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

void bind_run(nb::module_& m) {
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
