// The onnxruntime.OrtValue boundary, through what each onnxruntime version has (its Python API changed under it):
// - wrapping memory as an OrtValue: the private C.OrtValue.from_dlpack(capsule[, is_bool_tensor]), wrapped in the
//   public class (what the public OrtValue.from_dlpack of 1.26+ does, minus its look-ups; 1.23-1.25 have no public
//   one). 1.32+ reads kDLBool; 1.21-1.31 take a bool tensor as uint8 plus the is_bool_tensor flag.
// - reading an OrtValue's memory: C.OrtValue.__dlpack__ / to_dlpack(); before 1.32 a bool tensor comes out as uint8.
#include <algorithm>
#include <string>
#include <vector>

#include <nanobind/stl/vector.h>

#include "binding.h"
#include "ort.h"

namespace ortdlpack::py {
namespace {

struct OrtValueApi {
  PyObject* ortvalue_type = nullptr;  // onnxruntime.OrtValue
  PyObject* c_from_dlpack = nullptr;  // onnxruntime.capi._pybind_state.OrtValue.from_dlpack
  PyObject* c_device = nullptr;       // onnxruntime.capi._pybind_state.OrtDevice
  PyObject* c_vector = nullptr;       // onnxruntime.capi._pybind_state.OrtValueVector
  bool knows_bool = false;            // capsules carry kDLBool both ways (onnxruntime >= 1.32)
};

const OrtValueApi& api() {
  static const OrtValueApi a = [] {
    constexpr const char* kC = "onnxruntime.capi._pybind_state";
    OrtValueApi r;
    r.ortvalue_type = module_attribute("onnxruntime", "OrtValue");
    r.c_from_dlpack = nb::object(nb::handle(module_attribute(kC, "OrtValue")).attr("from_dlpack")).release().ptr();
    r.c_device = module_attribute(kC, "OrtDevice");
    r.c_vector = module_attribute(kC, "OrtValueVector");
    // The ORT in the process is the onnxruntime wheel's (one ORT per process): its C API version is its minor one.
    r.knows_bool = ort_runtime_api_version() >= 32;
    return r;
  }();
  return a;
}

// The DLPack tensor of tensor_of_ortvalue: it owns a copy of the onnxruntime value (an OrtValueVector of one, which
// shares the value's buffer: in onnxruntime <= 1.29 the values IOBinding.get_outputs() returns are freed with the
// binding) and drops it, with the GIL, in its deleter.
struct ValueExport {
  DLManagedTensorVersioned managed{};
  std::vector<int64_t> shape, strides;
  PyObject* owner = nullptr;

  static void deleter(DLManagedTensorVersioned* m) noexcept {
    auto* self = static_cast<ValueExport*>(m->manager_ctx);
    if (self->owner != nullptr && python_alive()) {  // at exit the interpreter frees it
      const PyGILState_STATE gil = PyGILState_Ensure();
      Py_DECREF(self->owner);
      PyGILState_Release(gil);
    }
    delete self;
  }
};

}  // namespace

nb::object onnxruntime_device(const OrtMemoryInfo* memory) {
  const py::OnnxruntimeDevice d = onnxruntime_device_fields(memory);
  return nb::borrow(api().c_device)(d.device_type, d.memory_type, d.vendor_id, d.device_id);
}

Tensor tensor_of_ortvalue(nb::handle ortvalue, const OrtMemoryInfo* memory) {
  if (py::onnxruntime_wraps(to_dlpack_device(memory).device_type)) {
    return import_any(ortvalue, nb::none(), nb::none(), "an output");
  }
  nb::object value = ortvalue.attr("_ortvalue");
  // With the value itself: onnxruntime >= 1.31 has it keep its session alive where the buffer needs it (WebGPU).
  // onnxruntime 1.32 refuses a WebGPU value in a standalone OrtValueVector (the vector cannot keep that session
  // alive); ortdlpack.run binds WebGPU memory from 1.30 on, whose get_outputs() values outlive the binding.
  nb::object owner = nb::borrow(ortvalue);
  if (to_dlpack_device(memory).device_type != kDLWebGPU) {
    nb::object copy = nb::borrow(api().c_vector)();
    copy.attr("push_back")(value);
    owner = nb::make_tuple(copy, ortvalue);
  }
  auto* e = new ValueExport();
  DLManagedTensorVersioned* m = &e->managed;
  m->version = DLPackVersion{DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION};
  m->manager_ctx = e;
  m->deleter = &ValueExport::deleter;
  try {
    e->shape = nb::cast<std::vector<int64_t>>(value.attr("shape")());
    e->strides.assign(e->shape.size(), 1);
    for (size_t i = e->shape.size(); i-- > 1;) e->strides[i - 1] = e->strides[i] * std::max<int64_t>(e->shape[i], 1);
    DLTensor& t = m->dl_tensor;
    t.data = reinterpret_cast<void*>(nb::cast<uintptr_t>(value.attr("data_ptr")()));
    t.device = to_dlpack_device(memory);
    t.ndim = static_cast<int32_t>(e->shape.size());
    t.dtype = to_dlpack_dtype(static_cast<ONNXTensorElementDataType>(nb::cast<int>(value.attr("element_type")())));
    t.shape = e->shape.data();
    t.strides = e->strides.data();
  } catch (...) {
    delete e;  // owner not taken yet
    throw;
  }
  e->owner = owner.release().ptr();
  return import_owned(m, CopyMode::kNever, Target::anywhere());
}

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
  if (!py::onnxruntime_wraps(d.device_type)) {
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
