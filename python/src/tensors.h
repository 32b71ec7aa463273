// ortdlpack.Tensor and DLPack both ways: the Python tensor object (tensor.cc), DLPack capsules (capsules.cc), a
// producer's tensor asked for and imported (from_dlpack.cc) and the DLPack C exchange API (exchange_api.cc).
#pragma once

#include <functional>
#include <optional>

#include "extension.h"

namespace ortdlpack::py {

// The Python object behind ortdlpack.Tensor.
struct PyTensor {
  explicit PyTensor(Tensor t) noexcept : tensor(std::move(t)) {}
  PyTensor(const PyTensor&) = delete;
  PyTensor& operator=(const PyTensor&) = delete;
  PyTensor(PyTensor&& other) noexcept : tensor(std::move(other.tensor)), view(other.view) { other.view = nullptr; }
  ~PyTensor() {
    if (view != nullptr) view->deleter(view);
  }

  Tensor tensor;
  // An export of `tensor` made once, on first use by the C exchange API's dltensor_from_py_object_no_sync, which
  // must hand out shape and strides without allocating: they live here as long as the Python object.
  DLManagedTensorVersioned* view = nullptr;
};

// tensor.cc -----------------------------------------------------------------------------------------------------------
// The Python type object of ortdlpack.Tensor (set once by register_tensor).
PyTypeObject* tensor_type();
inline bool is_tensor(nb::handle h) {
  return Py_TYPE(h.ptr()) == tensor_type() || PyObject_TypeCheck(h.ptr(), tensor_type());
}
inline PyTensor& tensor_of(nb::handle h) { return *nb::inst_ptr<PyTensor>(h); }
// A new Python ortdlpack.Tensor owning `t`.
nb::object wrap(Tensor t);
// The shape of `t` as a tuple of ints.
nb::object shape_tuple(const Tensor& t);
// copy=None/True/False (TypeError for anything else).
CopyMode to_copy_mode(nb::handle copy);
// The CopyRunner (placement.h) of every core call that may copy: the copy runs with the GIL released.
void run_without_gil(const std::function<void()>& copy);
// order_for_consumer (stream.h) as the extension calls it: with the GIL released when `t` is in device memory (the
// order may wait on the host); host memory only checks `consumer`.
void order_for_consumer_without_gil(const Tensor& t, std::optional<int64_t> consumer);

// capsules.cc ---------------------------------------------------------------------------------------------------------
// Tensor.__dlpack__: a versioned or legacy capsule, placed at dl_device and ordered for the consumer's `stream`.
nb::object tensor_dlpack(nb::handle self, nb::handle stream, nb::handle max_version, nb::handle dl_device,
                         nb::handle copy);
// A legacy "dltensor" capsule over a versioned export (legacy_view, export.h), for legacy-only consumers such as
// onnxruntime's OrtValue.from_dlpack: read-only and packed sub-byte tensors pass too.
nb::object legacy_capsule_over(DLManagedTensorVersioned* inner);
// An unconsumed DLPack capsule whose tensor onnxruntime's OrtValue.from_dlpack reads as it is (is_plain) as the
// legacy capsule it takes (a versioned one consumed into legacy_capsule_over); an invalid object for any other.
nb::object plain_legacy_capsule(nb::handle capsule);
// Imports a DLPack capsule placed at `target`: the Tensor owns its tensor and the capsule is renamed used_* (on failure
// the capsule still owns it). `immutable`: its producer's arrays are (immutable_arrays).
Tensor import_capsule(PyObject* capsule, CopyMode copy, const Target& target, bool immutable = false);
// Imports a DLPack tensor handed to the extension (from a C exchange API or an export of its own), placed at `target`:
// the Tensor owns it, or, if the import fails, its deleter has run (the one free-on-failure rule of the extension).
Tensor import_owned(DLManagedTensorVersioned* m, CopyMode copy, const Target& target);

// from_dlpack.cc ------------------------------------------------------------------------------------------------------
// What from_dlpack imports, as a core Tensor (no Python object made), its producer asked once. `what` names `x` in
// the TypeError for an object that is no DLPack tensor. JAX arrays and TensorFlow tensors, immutable by contract,
// import read-only. A torch view whose values are not its memory (the negative or conjugate bit) is resolved into a
// copy where `copy` allows one, else refused (CopyRequiredError): its memory holds other values.
Tensor import_any(nb::handle x, nb::handle device, nb::handle copy, const char* what);

// exchange_api.cc -----------------------------------------------------------------------------------------------------
// The DLPackExchangeAPI of `type` (its __dlpack_c_exchange_api__ class attribute), or NULL. Keeps no reference.
const DLPackExchangeAPI* exchange_api_of(PyTypeObject* type);
void define_exchange_api(nb::handle tensor_type);

}  // namespace ortdlpack::py
