// ortdlpack.Session: an OrtSession created and run entirely in C++ (ortdlpack::Session), for the per-run cost of a
// C++ caller. The session is made with the C API on the shared env (the wheel's ORT, see module.cc); feeds and
// destinations go through from_dlpack (dlpack.cc), so every producer from_dlpack takes is a feed.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <nanobind/stl/string.h>

#include "common.h"

namespace ortdlpack::py {
namespace {

struct OptionsDeleter {
  void operator()(OrtSessionOptions* o) const noexcept { ort().ReleaseSessionOptions(o); }
};
using OptionsPtr = std::unique_ptr<OrtSessionOptions, OptionsDeleter>;

// The Python object: owns the OrtSession, which ortdlpack::Session borrows (so it is destroyed first).
struct PySession {
  explicit PySession(OrtSession* s) : session(s) {
    try {
      core = std::make_unique<Session>(s);
    } catch (...) {
      ort().ReleaseSession(s);
      throw;
    }
  }
  PySession(const PySession&) = delete;
  PySession& operator=(const PySession&) = delete;
  ~PySession() {
    core.reset();
    ort().ReleaseSession(session);
  }

  OrtSession* session;
  std::unique_ptr<Session> core;
};

std::string str_of(nb::handle h, const char* what) {
  if (!PyUnicode_Check(h.ptr())) {
    throw nb::type_error((std::string(what) + " must be str, not " + Py_TYPE(h.ptr())->tp_name).c_str());
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

// Appends the EP named `ep` with `ep_options`; the core picks its EP devices (ep_library.h).
void append_ep(OrtSessionOptions* options, const std::string& ep, nb::handle ep_options) {
  const auto options_pairs = string_pairs(ep_options, "ep_options");
  const std::vector<const OrtEpDevice*> devices = select_ep_devices(ep, options_pairs);
  std::vector<const char*> key_ptrs, value_ptrs;
  for (const auto& [k, v] : options_pairs) {
    key_ptrs.push_back(k.c_str());
    value_ptrs.push_back(v.c_str());
  }
  check(ort().SessionOptionsAppendExecutionProvider_V2(options, env(), devices.data(), devices.size(),
                                                        key_ptrs.data(), value_ptrs.data(), key_ptrs.size()));
}

// Creates the OrtSession from a path (str / os.PathLike) or the model's bytes (any bytes-like object).
OrtSession* create_session(nb::handle model, nb::handle intra, nb::handle inter, nb::handle ep, nb::handle ep_options,
                           nb::handle config) {
  const OrtApi& api = ort();
  OrtSessionOptions* raw = nullptr;
  check(api.CreateSessionOptions(&raw));
  OptionsPtr options(raw);
  if (!intra.is_none()) check(api.SetIntraOpNumThreads(options.get(), nb::cast<int>(intra)));
  if (!inter.is_none()) check(api.SetInterOpNumThreads(options.get(), nb::cast<int>(inter)));
  for (const auto& [k, v] : string_pairs(config, "config")) {
    check(api.AddSessionConfigEntry(options.get(), k.c_str(), v.c_str()));
  }
  if (!ep.is_none()) {
    append_ep(options.get(), str_of(ep, "ep"), ep_options);
  } else if (!ep_options.is_none()) {
    throw nb::value_error("Session: ep_options needs ep");
  }

  OrtSession* session = nullptr;
  if (PyObject_CheckBuffer(model.ptr())) {
    Py_buffer view;
    if (PyObject_GetBuffer(model.ptr(), &view, PyBUF_SIMPLE) != 0) throw nb::python_error();
    OrtStatus* status = nullptr;
    {
      nb::gil_scoped_release release;
      status = api.CreateSessionFromArray(env(), view.buf, static_cast<size_t>(view.len), options.get(), &session);
    }
    PyBuffer_Release(&view);
    check(status);
    return session;
  }
  nb::object path = nb::steal(PyOS_FSPath(model.ptr()));
  if (!path.is_valid() || !PyUnicode_Check(path.ptr())) {
    PyErr_Clear();
    throw nb::type_error(("Session: model must be a path (str, os.PathLike) or the model's bytes, not " +
                          std::string(Py_TYPE(model.ptr())->tp_name)).c_str());
  }
  const std::string p = nb::cast<std::string>(path);
  OrtStatus* status = nullptr;
  {
    nb::gil_scoped_release release;
    status = api.CreateSession(env(), p.c_str(), options.get(), &session);
  }
  check(status);
  return session;
}

nb::object names_of(const std::vector<IoInfo>& ios) {
  nb::object tuple = nb::steal(PyTuple_New(static_cast<Py_ssize_t>(ios.size())));
  for (size_t i = 0; i < ios.size(); ++i) {
    PyTuple_SET_ITEM(tuple.ptr(), static_cast<Py_ssize_t>(i), PyUnicode_FromString(ios[i].name.c_str()));
  }
  return tuple;
}

// Imports every (name, producer) pair of a mapping with `import`, into `out`.
template <class Import>
void for_items(nb::handle mapping, const char* what, std::vector<std::pair<std::string, Tensor>>& out, Import import) {
  if (PyDict_Check(mapping.ptr())) {
    for (auto [k, v] : nb::borrow<nb::dict>(mapping)) out.emplace_back(str_of(k, what), import(v));
    return;
  }
  if (!PyMapping_Check(mapping.ptr()) || !PyObject_HasAttrString(mapping.ptr(), "items")) {
    throw nb::type_error((std::string(what) + "s must be a mapping of names to tensors, not " +
                          Py_TYPE(mapping.ptr())->tp_name).c_str());
  }
  nb::object items = nb::steal(PyMapping_Items(mapping.ptr()));
  if (!items.is_valid()) throw nb::python_error();
  for (nb::handle item : items) {
    out.emplace_back(str_of(item[0], what), import(item[1]));
  }
}

nb::object run(PySession& self, nb::handle feeds, nb::handle output_names, nb::handle outputs, nb::handle device) {
  Feeds inputs;
  for_items(feeds, "feed", inputs, [](nb::handle x) { return tensor_of(from_dlpack(x, nb::none(), nb::none())).tensor; });

  std::vector<std::string> names;
  if (!output_names.is_none()) {
    if (PyUnicode_Check(output_names.ptr())) throw nb::type_error("output_names must be a sequence of str, not str");
    for (nb::handle n : output_names) names.push_back(str_of(n, "an output name"));
  }

  RunOptions options;
  if (!outputs.is_none()) {
    // Destinations are written in place: never a copy (BufferError), and a read-only one is the core's ValueError.
    for_items(outputs, "output", options.destinations,
              [](nb::handle x) { return tensor_of(from_dlpack(x, nb::none(), nb::borrow(Py_False))).tensor; });
  }
  if (!device.is_none()) {
    const Device d = to_device(device);
    if (d.memory != nullptr) {
      options.output_memory = d.memory;  // an EP device's own memory: exactly that
    } else {
      options.output_device = d.dl;
    }
  }

  std::vector<Tensor> results;
  {
    nb::gil_scoped_release release;
    results = self.core->run(inputs, names, options);
  }
  nb::list list;
  for (Tensor& t : results) list.append(wrap(std::move(t)));
  return std::move(list);
}

}  // namespace

void bind_session(nb::module_& m) {
  nb::class_<PySession>(m, "Session",
                        "An ONNX Runtime session created and run in C++: feeds and outputs are DLPack tensors, "
                        "bound without copies (see ortdlpack::Session).")
      .def("__init__",
           [](PySession* self, nb::handle model, nb::handle intra, nb::handle inter, nb::handle ep,
              nb::handle ep_options, nb::handle config) {
             new (self) PySession(create_session(model, intra, inter, ep, ep_options, config));
           },
           nb::arg("model"), nb::kw_only(), nb::arg("intra_op_num_threads") = nb::none(),
           nb::arg("inter_op_num_threads") = nb::none(), nb::arg("ep") = nb::none(),
           nb::arg("ep_options") = nb::none(), nb::arg("config") = nb::none(),
           "model: a path or the model's bytes. ep: None (CPU) or the name of an EP registered in the env, whose EP "
           "devices are appended with ep_options (dict[str, str]). config: session config entries (dict[str, str], "
           "e.g. {'session.intra_op.allow_spinning': '0'}).")
      .def_prop_ro("input_names", [](const PySession& s) { return names_of(s.core->info().inputs()); })
      .def_prop_ro("output_names", [](const PySession& s) { return names_of(s.core->info().outputs()); })
      .def("run", &run, nb::arg("feeds"), nb::arg("output_names") = nb::none(), nb::kw_only(),
           nb::arg("outputs") = nb::none(), nb::arg("device") = nb::none(),
           "Runs on feeds {name: DLPack producer} and returns the outputs named in output_names (None: all) as "
           "Tensors. outputs: {name: preallocated destination} written in place. device: where other outputs go.");
}

}  // namespace ortdlpack::py
