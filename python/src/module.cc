// _ortdlpack: module definition and the hand-over of the ONNX Runtime API.
//
// The extension links no ORT library (one ORT per process). ortdlpack/__init__.py passes this file's path to
// onnxruntime.SessionOptions().register_custom_ops_library(): the wheel's ORT dlopen()s it (the same handle Python
// already holds) and calls RegisterCustomOps with its own OrtApiBase, which initialises the core.
#include <atomic>
#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include "devices.h"
#include "registrations.h"

namespace {
std::string g_init_error;  // why the hand-over failed, for the ImportError ortdlpack/__init__.py raises
}

extern "C" __attribute__((visibility("default"))) OrtStatus* RegisterCustomOps(OrtSessionOptions*,
                                                                               const OrtApiBase* base) {
  try {
    ortdlpack::init(base);
    return nullptr;
  } catch (const std::exception& e) {
    g_init_error = e.what();
  }
  // Report through ORT when this ORT has any API version this build knows.
  for (uint32_t v = ORT_API_VERSION; base != nullptr && v >= 1; --v) {
    if (const OrtApi* api = base->GetApi(v)) return api->CreateStatus(ORT_FAIL, g_init_error.c_str());
  }
  return nullptr;
}

namespace ortdlpack::py {

std::atomic<bool> g_exiting{false};  // set by the atexit hook the module installs when imported
bool python_alive() noexcept { return Py_IsInitialized() && !g_exiting.load(); }

namespace {

// register_device's arguments: a name or an enum value each, errors naming the argument.
std::string parse_name(nb::handle h, const char* what) {
  if (!PyUnicode_Check(h.ptr())) {
    throw nb::type_error((std::string(what) + " must be a str, not " + type_name(h.ptr())).c_str());
  }
  return nb::cast<std::string>(h);
}

template <class Parse>
auto named(const char* what, Parse parse) {
  try {
    return parse();
  } catch (const Error& e) {  // the core's reason, with the argument's name in front
    throw e.reworded(std::string(what) + ": " + e.what());
  }
}

OrtMemoryInfoDeviceType parse_ort_device_type(nb::handle h) {
  return named("ort_device_type", [&] {
    if (PyUnicode_Check(h.ptr())) return ort_device_type_from_name(nb::cast<std::string>(h));
    return ort_device_type_from_value(to_integer(h, "ort_device_type"));
  });
}

OrtDeviceMemoryType parse_memory_type(nb::handle h) {
  return named("memory_type", [&] {
    if (PyUnicode_Check(h.ptr())) return memory_type_from_name(nb::cast<std::string>(h));
    return memory_type_from_value(to_integer(h, "memory_type"));
  });
}

uint32_t parse_vendor_id(nb::handle h) { return static_cast<uint32_t>(to_integer(h, "vendor_id", 0, UINT32_MAX)); }

DLDeviceType parse_dl_device_type(nb::handle h) {
  if (PyUnicode_Check(h.ptr())) return dl_device_of(to_device(h, "dl_device_type")).device_type;
  return static_cast<DLDeviceType>(to_integer(h, "dl_device_type", 1, INT32_MAX));
}

// The core's EpPackageFinder (ep_packages.h): ortdlpack/_ep_packages.py reads the installed distributions.
std::vector<EpPackage> find_ep_packages(const std::string& distribution) {
  if (!python_alive()) return {};
  nb::gil_scoped_acquire gil;
  std::vector<EpPackage> packages;
  try {
    nb::object found = nb::module_::import_("ortdlpack._ep_packages").attr("find")(distribution);
    for (nb::handle p : found) {
      packages.push_back(EpPackage{nb::cast<std::string>(p[0]), nb::cast<std::string>(p[1]),
                                   nb::cast<std::string>(p[2]), nb::cast<std::string>(p[3]),
                                   nb::cast<std::vector<std::string>>(p[4])});
    }
  } catch (nb::python_error& e) {  // an unreadable package is none; an interrupt propagates through the core
    only_exceptions(e);
  } catch (const std::exception&) {  // (a malformed answer: nb::cast's)
    PyErr_Clear();
  }
  return packages;
}

}  // namespace
}  // namespace ortdlpack::py

NB_MODULE(_ortdlpack, m) {
  using namespace ortdlpack::py;
  // Tensors may legitimately outlive the interpreter's module teardown (held by torch/jax buffers or ORT values
  // until their own teardown): no leak report at exit.
  nb::set_leak_warnings(false);
  m.attr("__version__") = ORTDLPACK_VERSION;
  m.attr("DLPACK_VERSION") = nb::make_tuple(DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION);
  define_errors(m);
  define_device(m);
  define_tensor(m);
  define_dlpack(m);
  define_session(m);
  define_run(m);
  define_compiled_sessions(m);
  define_torch_kernel(m);
  define_xla_ffi(m);
#ifdef ORTDLPACK_PYTHON_TESTING
  nb::module_ testing =
      m.def_submodule("_testing", "Test entry points (a build with ORTDLPACK_PYTHON_TESTING=ON only).");
  define_testing(testing);
#endif

  nb::module_::import_("atexit").attr("register")(nb::cpp_function([] { g_exiting = true; }));
  ortdlpack::set_ep_package_finder(&find_ep_packages);

  m.def("_initialized", [] {
    try {
      ortdlpack::ort();
      return true;
    } catch (const ortdlpack::Error&) {
      return false;
    }
  });
  m.def("_init_error", [] { return g_init_error; });
  m.def("_ort_api_version", &ortdlpack::ort_api_version);
  m.def(
      "_ep_packages",
      [] {
        nb::gil_scoped_release release;
        std::vector<std::tuple<std::string, std::string, std::string, std::vector<std::string>>> rows;
        for (const ortdlpack::EpPackage& p : ortdlpack::installed_ep_packages()) {
          rows.emplace_back(p.distribution, p.version, p.library, p.ep_names);
        }
        return rows;
      },
      nb::sig("def _ep_packages() -> list[tuple[str, str, str, list[str]]]"),
      "For show_config(): (distribution, version, library, EP names) of every installed EP package ortdlpack finds "
      "(the EP table's and every onnxruntime-ep-* one). Registers nothing.");
  m.def("_ep_device_report", &ortdlpack::describe_ep_devices,
        "For show_config(): the lines the core writes about the env's EP devices (describe_ep_devices).");
  m.def("_ep_library_dir", &ortdlpack::ep_library_dir,
        "The folder EP libraries shipped with ORT are registered from (the running ORT's own folder).");
  m.def(
      "_register_ep_devices", [] { return ortdlpack::register_ep_devices(ortdlpack::env()); },
      "Registers the DLPack device of every EP device in the env that advertises 'dlpack.device_type'.");
  m.def(
      "register_device",
      [](nb::handle name, nb::handle ort_device_type, nb::handle vendor_id, nb::handle memory_type,
         nb::handle dl_device_type) {
        ortdlpack::register_device(ortdlpack::DeviceMapping{
            parse_name(name, "name"), parse_ort_device_type(ort_device_type), parse_vendor_id(vendor_id),
            parse_memory_type(memory_type), parse_dl_device_type(dl_device_type)});
      },
      nb::arg("name"), nb::arg("ort_device_type"), nb::arg("vendor_id"), nb::arg("memory_type"),
      nb::arg("dl_device_type"),
      nb::sig("def register_device(name: str, ort_device_type: str | int, vendor_id: int, memory_type: str | int, "
              "dl_device_type: str | int) -> None"),
      "Maps ORT memory (device type 'cpu'/'gpu'/'fpga'/'npu', PCI vendor id, memory type 'default'/"
      "'host_accessible') to a DLPack device type (int or name like 'ext_dev'); `name` is the OrtMemoryInfo name "
      "used when ortdlpack creates memory on it. ValueError when it conflicts with a built-in or earlier mapping.");
  m.def(
      "unregister_device",
      [](nb::handle ort_device_type, nb::handle vendor_id, nb::handle memory_type, nb::handle name) {
        return ortdlpack::unregister_device(parse_ort_device_type(ort_device_type), parse_vendor_id(vendor_id),
                                            parse_memory_type(memory_type), parse_name(name, "name"));
      },
      nb::arg("ort_device_type"), nb::arg("vendor_id"), nb::arg("memory_type"), nb::arg("name") = nb::str(""),
      nb::sig("def unregister_device(ort_device_type: str | int, vendor_id: int, memory_type: str | int, "
              "name: str = '') -> bool"),
      "Removes a mapping added by register_device(); returns whether one was removed. `name` identifies memory "
      "of vendor id 0, as registration does.");
}
