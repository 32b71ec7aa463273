// The onnxruntime.OrtValue boundary, through what each onnxruntime version has (its Python API changed under it):
// - wrapping memory as an OrtValue: the private C.OrtValue.from_dlpack(capsule[, is_bool_tensor]), wrapped in the
//   public class (what the public OrtValue.from_dlpack of 1.26+ does, minus its look-ups; 1.23-1.25 have no public
//   one). 1.32+ reads kDLBool; 1.21-1.31 take a bool tensor as uint8 plus the is_bool_tensor flag.
// - reading an OrtValue's memory: C.OrtValue.__dlpack__ / to_dlpack(); before 1.32 a bool tensor comes out as uint8.
#include <algorithm>
#include <string>
#include <vector>

#include <nanobind/stl/vector.h>

#include "ortvalues.h"
#include "tensors.h"

namespace ortdlpack::py {
namespace {

struct OrtValueApi {
  PyObject* ortvalue_type = nullptr;  // onnxruntime.OrtValue
  PyObject* c_from_dlpack = nullptr;  // onnxruntime.capi._pybind_state.OrtValue.from_dlpack
  bool knows_bool = false;            // capsules carry kDLBool both ways (onnxruntime >= 1.32)
};

const OrtValueApi& api() {
  static const OrtValueApi a = [] {
    constexpr const char* kC = "onnxruntime.capi._pybind_state";
    OrtValueApi r;
    r.ortvalue_type = module_attribute("onnxruntime", "OrtValue");
    r.c_from_dlpack = nb::object(nb::handle(module_attribute(kC, "OrtValue")).attr("from_dlpack")).release().ptr();
    // The ORT in the process is the onnxruntime wheel's (one ORT per process): its C API version is its minor one.
    r.knows_bool = ort_runtime_api_version() >= 32;
    return r;
  }();
  return a;
}

}  // namespace

bool is_ortvalue(nb::handle x) {
  return PyObject_TypeCheck(x.ptr(), reinterpret_cast<PyTypeObject*>(api().ortvalue_type)) != 0;
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
  if (!onnxruntime_wraps(d.device_type)) {
    throw Error(ErrorKind::kUnsupported, "onnxruntime.OrtValue cannot wrap memory on " +
                                             describe_memory(t.memory_info()) +
                                             " (onnxruntime.OrtValue.from_dlpack takes CPU, CUDA and ROCm memory "
                                             "only); ortdlpack.run feeds such tensors to sessions");
  }
  // onnxruntime orders nothing before its reads: device memory is made complete first (streams.md rule 3's None).
  if (!t.host_accessible()) order_for_consumer_without_gil(t, std::nullopt);
  return ortvalue_from_capsule(legacy_capsule_over(to_dlpack_versioned(t)));
}

nb::object capsule_of_ortvalue(nb::handle ortvalue) {
  nb::object inner = ortvalue.attr("_ortvalue");
  nb::object capsule = has_attribute(inner, "__dlpack__") ? inner.attr("__dlpack__")() : inner.attr("to_dlpack")();
  if (!api().knows_bool && nb::cast<std::string>(ortvalue.attr("data_type")()) == "tensor(bool)") {
    // ORT wrote a bool tensor as uint8 into a capsule nobody has consumed yet: say what it is before importing it.
    auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule.ptr(), "dltensor"));
    if (m == nullptr) throw nb::python_error();
    if (m->dl_tensor.dtype.code == kDLUInt && m->dl_tensor.dtype.bits == 8) m->dl_tensor.dtype.code = kDLBool;
  }
  return capsule;
}

}  // namespace ortdlpack::py
