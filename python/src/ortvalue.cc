// The onnxruntime.OrtValue boundary, through what each onnxruntime version has (its Python API changed under it):
// - wrapping memory as an OrtValue: the private C.OrtValue.from_dlpack(capsule[, is_bool_tensor]), wrapped in the
//   public class (what the public OrtValue.from_dlpack of 1.26+ does, minus its look-ups; 1.23-1.25 have no public
//   one). 1.32+ reads kDLBool; 1.21-1.31 take a bool tensor as uint8 plus the is_bool_tensor flag.
// - reading an OrtValue's memory: C.OrtValue.__dlpack__ / to_dlpack(); before 1.32 a bool tensor comes out as uint8.
#include <cstdio>
#include <string>

#include "common.h"

namespace ortdlpack::py {
namespace {

struct OrtValueApi {
  PyObject* ortvalue_type = nullptr;  // onnxruntime.OrtValue
  PyObject* c_from_dlpack = nullptr;  // onnxruntime.capi._pybind_state.OrtValue.from_dlpack
  bool knows_bool = false;            // capsules carry kDLBool both ways (onnxruntime >= 1.32)
};

const OrtValueApi& api() {
  static const OrtValueApi a = [] {
    nb::module_ ort = nb::module_::import_("onnxruntime");
    nb::module_ c = nb::module_::import_("onnxruntime.capi._pybind_state");
    const std::string version = nb::cast<std::string>(ort.attr("__version__"));
    int major = 0, minor = 0;
    std::sscanf(version.c_str(), "%d.%d", &major, &minor);
    OrtValueApi r;
    r.ortvalue_type = nb::object(ort.attr("OrtValue")).release().ptr();  // kept for the process's life, like the module
    r.c_from_dlpack = nb::object(c.attr("OrtValue").attr("from_dlpack")).release().ptr();
    r.knows_bool = major > 1 || (major == 1 && minor >= 32);
    return r;
  }();
  return a;
}

}  // namespace

bool is_ortvalue(nb::handle x) {
  const int r = PyObject_IsInstance(x.ptr(), api().ortvalue_type);
  if (r < 0) throw nb::python_error();
  return r == 1;
}

nb::object ortvalue_from_capsule(nb::handle capsule) {
  const OrtValueApi& a = api();
  if (a.knows_bool) return nb::borrow(a.ortvalue_type)(nb::borrow(a.c_from_dlpack)(capsule));
  // Before 1.32 onnxruntime reads no kDLBool: a bool tensor goes as uint8 with its is_bool_tensor flag.
  auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule.ptr(), "dltensor"));
  if (m == nullptr) throw nb::python_error();
  const bool is_bool = m->dl_tensor.dtype.code == kDLBool;
  if (is_bool) m->dl_tensor.dtype.code = kDLUInt;
  return nb::borrow(a.ortvalue_type)(nb::borrow(a.c_from_dlpack)(capsule, is_bool));
}

nb::object ortvalue_of(const Tensor& t) {
  const DLDevice d = t.device();
  if (!python::onnxruntime_wraps(d.device_type)) {
    throw Error(ErrorKind::kUnsupported, "onnxruntime.OrtValue cannot wrap memory on " + describe_memory(t.memory_info()) +
                                             " (onnxruntime.OrtValue.from_dlpack takes CPU, CUDA and ROCm memory "
                                             "only); ortdlpack.run feeds such tensors to sessions");
  }
  return ortvalue_from_capsule(legacy_capsule_over(to_dlpack_versioned(t)));
}

nb::object capsule_of_ortvalue(nb::handle ortvalue) {
  nb::object inner = ortvalue.attr("_ortvalue");
  nb::object capsule = nb::hasattr(inner, "__dlpack__") ? inner.attr("__dlpack__")() : inner.attr("to_dlpack")();
  if (!api().knows_bool && nb::cast<std::string>(ortvalue.attr("data_type")()) == "tensor(bool)") {
    // ORT wrote a bool tensor as uint8 into a capsule nobody has consumed yet: say what it is before importing it.
    auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule.ptr(), "dltensor"));
    if (m == nullptr) throw nb::python_error();
    if (m->dl_tensor.dtype.code == kDLUInt && m->dl_tensor.dtype.bits == 8) m->dl_tensor.dtype.code = kDLBool;
  }
  return capsule;
}

}  // namespace ortdlpack::py
