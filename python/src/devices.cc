// ortdlpack.Device: how the Python package names a device. Names and their parsing are the core's (device.h);
// this file converts Python objects:
//
//   "cpu", "cuda", "cuda:1", "rocm:0", "ext_dev:0", ...   DLPack device type names (lower case, ":id" optional)
//   "qnn:0", "ggml", "VirtualDeviceEP:1", ...             an EP's device by the EP's name (host memory: "cpu")
//   (2, 0)                                                 a (dl_device_type, device_id) tuple, as __dlpack_device__
//   returns onnxruntime.OrtEpDevice                               an EP device of the env: its DEFAULT memory
//   ortdlpack.Device                                      itself
#include <string>

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include "devices.h"
#include "registrations.h"

namespace ortdlpack::py {
namespace {

// An EP device, whose DEFAULT memory names the device exactly.
Target from_ep_device(const OrtEpDevice* ep) {
  const OrtMemoryInfo* memory = ort().EpDevice_MemoryInfo(ep, OrtDeviceMemoryType_DEFAULT);
  // EPs that use plain host memory (the CPU EP, QNN, ggml) declare none.
  if (memory == nullptr) return Target::on(DLDevice{kDLCPU, 0});
  (void)to_dlpack_device(memory);  // refused now (kUnsupported) when no DLPack device maps it
  return Target::in(memory);
}

// A device name: a DLPack device ("cuda:0"), else an EP's device ("qnn:0").
Target from_name(const std::string& name) {
  try {
    return Target::on(dl_device_from_name(name));
  } catch (const Error&) {
    return from_ep_device(ep_device_from_name(name));
  }
}

PyTypeObject* ep_device_type() {
  static PyTypeObject* const type = module_type("onnxruntime", "OrtEpDevice");
  return type;
}

nb::object dlpack_device(const Target& d) {
  const DLDevice dl = dl_device_of(d);
  return nb::make_tuple(static_cast<int>(dl.device_type), dl.device_id);
}

}  // namespace

long long to_integer(nb::handle h, const char* what, long long min, long long max) {
  PyObject* index = PyNumber_Index(h.ptr());
  if (index == nullptr) {
    clear_exception();
    throw nb::type_error((std::string(what) + " must be an int, not " + type_name(h.ptr())).c_str());
  }
  int overflow = 0;
  const long long v = PyLong_AsLongLongAndOverflow(index, &overflow);
  Py_DECREF(index);
  if (v == -1 && PyErr_Occurred()) throw nb::python_error();
  if (overflow != 0 || v < min || v > max) {
    throw nb::value_error((std::string(what) + " must be in [" + std::to_string(min) + ", " + std::to_string(max) +
                           "], not " + nb::cast<std::string>(nb::str(h)))
                              .c_str());
  }
  return v;
}

const OrtEpDevice* ep_device_of(nb::handle ep) {
  nb::object hw = ep.attr("device");
  return find_ep_device(nb::cast<std::string>(ep.attr("ep_name")),
                        to_integer(hw.attr("type"), "OrtHardwareDevice.type"),
                        to_integer(hw.attr("vendor_id"), "OrtHardwareDevice.vendor_id"),
                        to_integer(hw.attr("device_id"), "OrtHardwareDevice.device_id"));
}

DLDevice dl_device_of(const Target& device) {
  return device.kind == Target::Kind::kMemory ? to_dlpack_device(device.memory) : device.device;
}

Target to_device(nb::handle spec, const char* what) {
  if (nb::isinstance<Target>(spec)) return nb::cast<Target>(spec);
  try {
    if (PyUnicode_Check(spec.ptr())) return from_name(nb::cast<std::string>(spec));
    if (PyObject_TypeCheck(spec.ptr(), ep_device_type())) return from_ep_device(ep_device_of(spec));
  } catch (const Error& e) {  // the core's reason, with the argument's name in front
    throw e.reworded(std::string(what) + ": " + e.what());
  }
  if (PyTuple_Check(spec.ptr()) && NB_TUPLE_GET_SIZE(spec.ptr()) == 2) {
    const std::string in = std::string(what) + " (dl_device_type, device_id)";
    const long long type =
        to_integer(NB_TUPLE_GET_ITEM(spec.ptr(), 0), (in + ": dl_device_type").c_str(), 1, INT32_MAX);
    const long long id = to_integer(NB_TUPLE_GET_ITEM(spec.ptr(), 1), (in + ": device_id").c_str(), 0, INT32_MAX);
    return Target::on(DLDevice{static_cast<DLDeviceType>(type), static_cast<int32_t>(id)});
  }
  throw nb::type_error((std::string(what) +
                        " must be a str ('cpu', 'cuda:0'), a (dl_device_type, device_id) tuple, "
                        "an onnxruntime.OrtEpDevice or an ortdlpack.Device, not " +
                        type_name(spec.ptr()))
                           .c_str());
}

Target to_target(nb::handle spec, const char* what) {
  return spec.is_none() ? Target::anywhere() : to_device(spec, what);
}

nb::object make_device(DLDevice dl) { return nb::cast(Target::on(dl)); }

void define_device(nb::module_& m) {
  nb::class_<Target>(m, "Device",
                     "A device: 'cpu', 'cuda:0', a (dl_device_type, id) tuple, or an onnxruntime.OrtEpDevice.")
      .def(
          "__init__", [](Target* self, nb::handle spec) { new (self) Target(to_device(spec, "spec")); },
          nb::arg("spec"),
          nb::sig("def __init__(self, spec: Device | str | tuple[int, int] | onnxruntime.OrtEpDevice) -> None"))
      .def_prop_ro(
          "type", [](const Target& d) { return static_cast<int>(dl_device_of(d).device_type); },
          "The DLPack device type (DLDeviceType value, e.g. 1 for kDLCPU).")
      .def_prop_ro(
          "id", [](const Target& d) { return dl_device_of(d).device_id; }, "The device index.")
      .def_prop_ro(
          "kind",
          [](const Target& d) -> std::optional<std::string> {
            const char* n = device_type_name(dl_device_of(d).device_type);
            return n ? std::optional<std::string>(n) : std::nullopt;
          },
          "The device type's name ('cpu', 'cuda', ...), None for a type DLPack does not name.")
      .def_prop_ro(
          "onnxruntime_name",
          [](const Target& d) -> std::optional<std::string> {
            const char* n = onnxruntime_device_name(dl_device_of(d).device_type);
            return n ? std::optional<std::string>(n) : std::nullopt;
          },
          "The device name onnxruntime's Python API uses for this memory ('cpu', 'cuda'), None when it has none.")
      .def("__dlpack_device__", &dlpack_device, nb::sig("def __dlpack_device__(self) -> tuple[int, int]"),
           "(dl_device_type, device_id), as Tensor.__dlpack_device__() returns.")
      .def(
          "__eq__",
          [](const Target& d, nb::handle other) -> nb::object {
            try {
              const DLDevice o = dl_device_of(to_device(other, "other"));
              const DLDevice self = dl_device_of(d);
              return nb::bool_(o.device_type == self.device_type && o.device_id == self.device_id);
            } catch (const std::exception&) {  // not a device (ortdlpack, nanobind and Python errors alike)
              return nb::borrow(Py_NotImplemented);
            }
          },
          nb::sig("def __eq__(self, other: object) -> bool"))
      .def("__hash__", [](const Target& d) { return nb::hash(dlpack_device(d)); })
      .def("__str__", [](const Target& d) { return name_of(dl_device_of(d)); })
      .def("__repr__", [](const Target& d) { return "Device('" + name_of(dl_device_of(d)) + "')"; });
}

}  // namespace ortdlpack::py
