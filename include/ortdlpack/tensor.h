// ortdlpack: Tensor, a shared owner of one ORT tensor OrtValue.
//
// ORT's C API has no reference-counted values, so a Tensor adds the count: copies of a Tensor share one OrtValue,
// released when the last copy (or the last DLPack tensor exported from it) goes. It also carries what ORT cannot
// hold: whether the memory is read-only (ORT has no read-only tensors; see import.h).
//
// A tensor's element type, shape, data pointer and memory never change, so they are read from ORT once, when the
// Tensor is made, and the accessors below only read held fields (the shape is a view, like tvm-ffi's ShapeView).
#pragma once

#include <dlpack/dlpack.h>
#include <onnxruntime_c_api.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "ortdlpack/handle.h"

namespace ortdlpack {

// A read-only view of a shape held elsewhere (by the Tensor it came from; valid while that Tensor lives).
class ShapeView {
 public:
  using value_type = int64_t;
  using const_iterator = const int64_t*;
  using iterator = const_iterator;

  /// \brief An empty shape (a scalar's).
  ShapeView() noexcept = default;
  /// \brief A view of `ndim` dims at `dims` (not copied).
  ShapeView(const int64_t* dims, size_t ndim) noexcept : dims_(dims), ndim_(ndim) {}

  /// \brief The dims.
  const int64_t* data() const noexcept { return dims_; }
  /// \brief The number of dims (the rank).
  size_t size() const noexcept { return ndim_; }
  /// \brief Whether the rank is 0.
  bool empty() const noexcept { return ndim_ == 0; }
  /// \brief Dim `i` (unchecked).
  int64_t operator[](size_t i) const noexcept { return dims_[i]; }
  /// \brief The first dim.
  const_iterator begin() const noexcept { return dims_; }
  /// \brief Past the last dim.
  const_iterator end() const noexcept { return dims_ + ndim_; }
  /// \brief A copy of the dims.
  operator std::vector<int64_t>() const { return std::vector<int64_t>(begin(), end()); }

  friend bool operator==(ShapeView a, ShapeView b) noexcept {
    if (a.ndim_ != b.ndim_) return false;
    for (size_t i = 0; i < a.ndim_; ++i) {
      if (a.dims_[i] != b.dims_[i]) return false;
    }
    return true;
  }
  friend bool operator!=(ShapeView a, ShapeView b) noexcept { return !(a == b); }
  friend bool operator==(ShapeView a, const std::vector<int64_t>& b) noexcept {
    return a == ShapeView(b.data(), b.size());
  }
  friend bool operator==(const std::vector<int64_t>& a, ShapeView b) noexcept { return b == a; }

 private:
  const int64_t* dims_ = nullptr;
  size_t ndim_ = 0;
};

// Whether a Tensor's memory may be written, and who said it may not (ORT has no read-only tensors: the Tensor
// carries it). Either way ORT never writes it (a read-only destination is refused) and exports carry READ_ONLY.
enum class ReadOnly {
  kNo,
  kFlagged,     // its producer said so (DLPack READ_ONLY): never exported without the flag, so never as legacy DLPack
  kByContract,  // its producer's arrays are immutable by contract, their capsules carry no flag (JAX, TensorFlow):
                // a legacy export is what that producer hands out itself, so it is allowed
};

namespace detail {
struct TensorOfImport;
struct TensorOfRun;
}  // namespace detail

class Tensor {
 public:
  /// \brief An empty Tensor (no value: operator bool is false).
  Tensor() noexcept = default;

  /// \brief Takes ownership of `value`, also if it throws (the rule of ortdlpack.h: then released), which must be a
  /// tensor (Error(kInvalidArgument) otherwise).
  explicit Tensor(OrtValue* value, ReadOnly read_only = ReadOnly::kNo) : Tensor(value, read_only, nullptr) {}

  /// \brief Borrowed: valid while this Tensor (or a copy) lives.
  OrtValue* ort_value() const noexcept { return owner_ ? owner_->value.get() : nullptr; }
  /// \brief Whether the Tensor holds a value.
  explicit operator bool() const noexcept { return owner_ != nullptr; }
  /// \brief Whether the memory may not be written (read_only_kind() says who said so).
  bool read_only() const noexcept { return owner_ && owner_->read_only != ReadOnly::kNo; }
  /// \brief Whether the memory may be written, and who said it may not.
  ReadOnly read_only_kind() const noexcept { return owner_ ? owner_->read_only : ReadOnly::kNo; }
  /// \brief How many Tensors and exported DLPack tensors share the OrtValue.
  long use_count() const noexcept { return owner_.use_count(); }

  /// \brief Held fields: no ORT call. An empty Tensor has none (UNDEFINED, no dims, NULL).
  ONNXTensorElementDataType element_type() const noexcept {
    return owner_ ? owner_->type : ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;
  }
  /// \brief The dims (a view held by this Tensor).
  ShapeView shape() const noexcept { return owner_ ? ShapeView(owner_->dims, owner_->ndim) : ShapeView(); }
  /// \brief The number of elements.
  size_t element_count() const noexcept { return owner_ ? owner_->count : 0; }
  /// \brief The bytes the elements occupy.
  size_t byte_size() const noexcept { return owner_ ? owner_->bytes : 0; }
  /// \brief The data pointer (a device pointer for device memory).
  void* data() const noexcept { return owner_ ? owner_->data : nullptr; }
  const OrtMemoryInfo* memory_info() const noexcept { return owner_ ? owner_->memory : nullptr; }
  /// \brief Whether the host reads the memory directly (CPU, pinned, HOST_ACCESSIBLE).
  bool host_accessible() const noexcept { return owner_ && owner_->host; }
  /// \brief The DLPack device of the memory; Error(kUnsupported) when none maps it (device.h), looked up again then,
  /// since a mapping may be registered later.
  DLDevice device() const;
  /// \brief Whether device() answers without a lookup (false for memory no DLPack device mapped when the Tensor was
  /// made).
  bool has_device() const noexcept { return owner_ && owner_->device_known; }

 private:
  friend struct detail::TensorOfImport;  // import.cc: the DLPack device is the producer's, known without a lookup
  friend struct detail::TensorOfRun;     // session.cc: an output that keeps what its memory depends on alive
  Tensor(OrtValue* value, ReadOnly read_only, const DLDevice* device);  // device: NULL -> looked up

  struct Owner {
    Owner(OrtValue* v, ReadOnly ro);     // takes `v` only once everything about it was read
    std::shared_ptr<const void> keeper;  // released after `value` (declared first): what its memory depends on
    Owned<OrtValue> value;
    ReadOnly read_only;
    bool host = false;
    bool device_known = false;
    ONNXTensorElementDataType type = ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;
    const int64_t* dims = nullptr;  // ORT's own storage (API >= 24) or `owned_dims`
    size_t ndim = 0;
    size_t count = 0;
    size_t bytes = 0;
    void* data = nullptr;
    const OrtMemoryInfo* memory = nullptr;
    DLDevice device{kDLCPU, 0};
    std::vector<int64_t> owned_dims;  // only on ORT < 1.24, which has no allocation-free accessor
  };
  std::shared_ptr<Owner> owner_;
};

}  // namespace ortdlpack
