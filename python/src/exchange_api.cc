// The DLPack C exchange API (DLPack 1.3), both ways:
// - producer: Tensor.__dlpack_c_exchange_api__, a capsule "dlpack_exchange_api" over one static DLPackExchangeAPI
//   whose functions call the core (allocate, to_dlpack_versioned, from_dlpack);
// - consumer: exchange_api_of(type), the table of another framework's type (torch.Tensor).
#include <vector>

#include "errors.h"
#include "tensors.h"

namespace ortdlpack::py {
namespace {

// Every function is a C entry point: no C++ exception leaves it.

int allocator(DLTensor* prototype, DLManagedTensorVersioned** out, void* error_ctx,
              void (*set_error)(void* error_ctx, const char* kind, const char* message)) {
  try {
    if (prototype == nullptr || out == nullptr) throw Error(ErrorKind::kInvalidArgument, "prototype or out is NULL");
    if (prototype->ndim < 0 || (prototype->ndim > 0 && prototype->shape == nullptr)) {
      throw Error(ErrorKind::kInvalidArgument, "prototype has a negative ndim or a NULL shape");
    }
    const std::vector<int64_t> shape(prototype->shape, prototype->shape + prototype->ndim);
    *out = to_dlpack_versioned(allocate(from_dlpack_dtype(prototype->dtype), shape, prototype->device));
    return 0;
  } catch (const Error& e) {
    if (out != nullptr) *out = nullptr;
    if (set_error != nullptr) set_error(error_ctx, exception_name(e.kind()), e.what());
  } catch (const std::exception& e) {
    if (out != nullptr) *out = nullptr;
    if (set_error != nullptr) set_error(error_ctx, "RuntimeError", e.what());
  }
  return -1;
}

int from_py_object(void* py_object, DLManagedTensorVersioned** out) {
  try {
    nb::handle h(static_cast<PyObject*>(py_object));
    if (!is_tensor(h)) throw nb::type_error("dlpack_exchange_api of ortdlpack.Tensor called with another type");
    *out = to_dlpack_versioned(tensor_of(h).tensor);
    return 0;
  } catch (...) {
    *out = nullptr;
    return set_python_error();
  }
}

int dltensor_from_py_object(void* py_object, DLTensor* out) {
  try {
    nb::handle h(static_cast<PyObject*>(py_object));
    if (!is_tensor(h)) throw nb::type_error("dlpack_exchange_api of ortdlpack.Tensor called with another type");
    PyTensor& self = tensor_of(h);
    // The first call exports once and keeps the export (shape, strides) in the object; later calls copy the header.
    if (self.view == nullptr) self.view = to_dlpack_versioned(self.tensor);
    *out = self.view->dl_tensor;
    return 0;
  } catch (...) {
    return set_python_error();
  }
}

int to_py_object(DLManagedTensorVersioned* tensor, void** out_py_object) {
  try {
    // Ownership was given to us: import_owned frees the tensor if the import fails.
    *out_py_object = wrap(import_owned(tensor, CopyMode::kIfNeeded, Target::anywhere())).release().ptr();
    return 0;
  } catch (...) {
    *out_py_object = nullptr;
    return set_python_error();
  }
}

int current_work_stream(DLDeviceType type, int32_t id, void** out_current_stream) {
  // The stream ortdlpack orders its work on for that device (stream.h); NULL when it has none.
  try {
    *out_current_stream = reinterpret_cast<void*>(claim_import_stream(DLDevice{type, id}));
    return 0;
  } catch (...) {
    *out_current_stream = nullptr;
    return set_python_error();
  }
}

const DLPackExchangeAPI kApi = [] {
  DLPackExchangeAPI api{};
  api.header.version.major = DLPACK_MAJOR_VERSION;
  api.header.version.minor = DLPACK_MINOR_VERSION;
  api.header.prev_api = nullptr;
  api.managed_tensor_allocator = &allocator;
  api.managed_tensor_from_py_object_no_sync = &from_py_object;
  api.managed_tensor_to_py_object_no_sync = &to_py_object;
  api.dltensor_from_py_object_no_sync = &dltensor_from_py_object;
  api.current_work_stream = &current_work_stream;
  return api;
}();

}  // namespace

// The table of a type: its __dlpack_c_exchange_api__ class attribute (class_attribute: no type kept alive, no cache
// of ortdlpack's own that would hold classes made per call).
const DLPackExchangeAPI* exchange_api_of(PyTypeObject* type) {
  static PyObject* const name = PyUnicode_InternFromString("__dlpack_c_exchange_api__");  // process lifetime
  PyObject* capsule = class_attribute(type, name);  // borrowed; the type is alive while its object is
  if (capsule == nullptr || !PyCapsule_IsValid(capsule, "dlpack_exchange_api")) return nullptr;
  auto* api = static_cast<const DLPackExchangeAPI*>(PyCapsule_GetPointer(capsule, "dlpack_exchange_api"));
  // Walk to a table of the major version this build speaks. The chain comes from outside and may be cyclic: a few
  // tables at most (one per DLPack major version there will ever be), else the type has none.
  constexpr int kMaxTables = 16;
  const DLPackExchangeAPIHeader* header = api ? &api->header : nullptr;
  for (int seen = 1; header != nullptr && header->version.major != DLPACK_MAJOR_VERSION; ++seen) {
    header = seen < kMaxTables ? header->prev_api : nullptr;
  }
  api = reinterpret_cast<const DLPackExchangeAPI*>(header);
  if (api == nullptr || api->managed_tensor_from_py_object_no_sync == nullptr) return nullptr;
  return api;
}

void define_exchange_api(nb::handle tensor_cls) {
  nb::object capsule = nb::steal(PyCapsule_New(const_cast<DLPackExchangeAPI*>(&kApi), "dlpack_exchange_api", nullptr));
  if (!capsule.is_valid()) throw nb::python_error();
  nb::setattr(tensor_cls, "__dlpack_c_exchange_api__", capsule);
}

}  // namespace ortdlpack::py
