// ortdlpack.Device: how the Python package names a device.
//
//   "cpu", "cuda", "cuda:1", "rocm:0", "ext_dev:0", ...   DLPack device type names (lower case, ":id" optional)
//   (2, 0)                                                 a (dl_device_type, device_id) tuple, as __dlpack_device__ returns
//   onnxruntime.OrtEpDevice                               an EP device of the env: its DEFAULT memory
//   ortdlpack.Device                                      itself
#include <cstring>
#include <string>

#include <nanobind/stl/string.h>

#include "common.h"

namespace ortdlpack::py {
namespace {

struct Name {
  const char* name;
  DLDeviceType type;
};

// DLPack's device types under the names the package accepts and prints.
constexpr Name kNames[] = {
    {"cpu", kDLCPU},         {"cuda", kDLCUDA},
    {"cuda_host", kDLCUDAHost}, {"opencl", kDLOpenCL},
    {"vulkan", kDLVulkan},   {"metal", kDLMetal},
    {"vpi", kDLVPI},         {"rocm", kDLROCM},
    {"rocm_host", kDLROCMHost}, {"ext_dev", kDLExtDev},
    {"cuda_managed", kDLCUDAManaged}, {"oneapi", kDLOneAPI},
    {"webgpu", kDLWebGPU},   {"hexagon", kDLHexagon},
    {"maia", kDLMAIA},       {"trn", kDLTrn},
};

const char* type_name(DLDeviceType t) {
  for (const Name& n : kNames) {
    if (n.type == t) return n.name;
  }
  return nullptr;
}

std::string device_str(DLDevice d) {
  const char* n = type_name(d.device_type);
  std::string s = n ? n : "device_type_" + std::to_string(static_cast<int>(d.device_type));
  if (d.device_type == kDLCPU && d.device_id == 0) return s;
  return s + ":" + std::to_string(d.device_id);
}

long long as_int(nb::handle h, const char* what) {
  PyObject* index = PyNumber_Index(h.ptr());
  if (index == nullptr) {
    PyErr_Clear();
    throw nb::type_error((std::string(what) + " must be an integer").c_str());
  }
  const long long v = PyLong_AsLongLong(index);
  Py_DECREF(index);
  if (v == -1 && PyErr_Occurred()) throw nb::python_error();
  return v;
}

DLDevice from_string(const std::string& s) {
  const size_t colon = s.find(':');
  const std::string kind = s.substr(0, colon);
  int32_t id = 0;
  if (colon != std::string::npos) {
    const std::string digits = s.substr(colon + 1);
    char* end = nullptr;
    const long v = digits.empty() ? -1 : std::strtol(digits.c_str(), &end, 10);
    if (v < 0 || v > INT32_MAX || end == nullptr || *end != '\0') {
      throw nb::value_error(("invalid device id in '" + s + "'").c_str());
    }
    id = static_cast<int32_t>(v);
  }
  for (const Name& n : kNames) {
    if (kind == n.name) return DLDevice{n.type, id};
  }
  throw nb::value_error(("unknown device '" + s + "' (expected e.g. 'cpu', 'cuda:0', 'ext_dev:0')").c_str());
}

// An onnxruntime.OrtEpDevice: found again among the env's EP devices through the C API (same EP name and hardware
// device), whose DEFAULT memory then names the device exactly.
Device from_ep_device(nb::handle ep) {
  const std::string ep_name = nb::cast<std::string>(ep.attr("ep_name"));
  nb::object hw = ep.attr("device");
  const long long hw_type = as_int(hw.attr("type"), "OrtHardwareDevice.type");
  const long long vendor = as_int(hw.attr("vendor_id"), "OrtHardwareDevice.vendor_id");
  const long long device_id = as_int(hw.attr("device_id"), "OrtHardwareDevice.device_id");
  const OrtApi& api = ort();
  const OrtEpDevice* const* devices = nullptr;
  size_t count = 0;
  check(api.GetEpDevices(env(), &devices, &count));
  for (size_t i = 0; i < count; ++i) {
    const OrtHardwareDevice* d = api.EpDevice_Device(devices[i]);
    if (std::strcmp(api.EpDevice_EpName(devices[i]), ep_name.c_str()) != 0 ||
        static_cast<long long>(api.HardwareDevice_Type(d)) != hw_type ||
        static_cast<long long>(api.HardwareDevice_VendorId(d)) != vendor ||
        static_cast<long long>(api.HardwareDevice_DeviceId(d)) != device_id) {
      continue;
    }
    const OrtMemoryInfo* memory = api.EpDevice_MemoryInfo(devices[i], OrtDeviceMemoryType_DEFAULT);
    if (memory == nullptr) return Device{};  // EPs that use plain CPU memory (the CPU EP) declare none
    return Device{to_dlpack_device(memory), memory};
  }
  throw nb::value_error(("OrtEpDevice of EP '" + ep_name + "' is not among the environment's EP devices").c_str());
}

PyTypeObject* ep_device_type() {
  static PyTypeObject* type = [] {
    nb::object t = nb::module_::import_("onnxruntime").attr("OrtEpDevice");
    return reinterpret_cast<PyTypeObject*>(t.release().ptr());  // process lifetime
  }();
  return type;
}

}  // namespace

bool same_device(DLDevice a, DLDevice b) { return a.device_type == b.device_type && a.device_id == b.device_id; }

Device to_device(nb::handle spec) {
  if (nb::isinstance<Device>(spec)) return nb::cast<Device>(spec);
  if (PyUnicode_Check(spec.ptr())) return Device{from_string(nb::cast<std::string>(spec))};
  if (PyTuple_Check(spec.ptr())) {
    if (PyTuple_GET_SIZE(spec.ptr()) != 2) throw nb::type_error("a device tuple is (dl_device_type, device_id)");
    const long long type = as_int(PyTuple_GET_ITEM(spec.ptr(), 0), "dl_device_type");
    const long long id = as_int(PyTuple_GET_ITEM(spec.ptr(), 1), "device_id");
    if (type < 1 || type > INT32_MAX || id < 0 || id > INT32_MAX) {
      throw nb::value_error(("invalid DLPack device (" + std::to_string(type) + ", " + std::to_string(id) + ")").c_str());
    }
    return Device{DLDevice{static_cast<DLDeviceType>(type), static_cast<int32_t>(id)}};
  }
  if (PyObject_TypeCheck(spec.ptr(), ep_device_type())) return from_ep_device(spec);
  throw nb::type_error(("a device is a str ('cpu', 'cuda:0'), a (dl_device_type, id) tuple, an onnxruntime.OrtEpDevice "
                        "or an ortdlpack.Device, not " + std::string(Py_TYPE(spec.ptr())->tp_name)).c_str());
}

nb::object make_device(DLDevice dl) { return nb::cast(Device{dl, nullptr}); }

void bind_device(nb::module_& m) {
  nb::class_<Device>(m, "Device",
                     "A device: 'cpu', 'cuda:0', a (dl_device_type, id) tuple, or an onnxruntime.OrtEpDevice.")
      .def("__init__", [](Device* self, nb::handle spec) { new (self) Device(to_device(spec)); }, nb::arg("spec"))
      .def_prop_ro("type", [](const Device& d) { return static_cast<int>(d.dl.device_type); },
                   "The DLPack device type (DLDeviceType value, e.g. 1 for kDLCPU).")
      .def_prop_ro("id", [](const Device& d) { return d.dl.device_id; }, "The device index.")
      .def_prop_ro("kind", [](const Device& d) -> nb::object {
        const char* n = type_name(d.dl.device_type);
        if (n == nullptr) return nb::none();
        return nb::str(n);
      }, "The device type's name ('cpu', 'cuda', ...), None for a type DLPack does not name.")
      .def("__dlpack_device__", [](const Device& d) { return nb::make_tuple(static_cast<int>(d.dl.device_type), d.dl.device_id); },
           "(dl_device_type, device_id), as Tensor.__dlpack_device__() returns.")
      .def("__eq__", [](const Device& d, nb::handle other) -> nb::object {
        try {
          return nb::bool_(same_device(d.dl, to_device(other).dl));
        } catch (const nb::builtin_exception&) {
          return nb::borrow(Py_NotImplemented);
        } catch (const nb::python_error&) {
          return nb::borrow(Py_NotImplemented);
        }
      })
      .def("__hash__", [](const Device& d) { return nb::hash(nb::make_tuple(static_cast<int>(d.dl.device_type), d.dl.device_id)); })
      .def("__str__", [](const Device& d) { return device_str(d.dl); })
      .def("__repr__", [](const Device& d) { return "Device('" + device_str(d.dl) + "')"; });
}

}  // namespace ortdlpack::py
