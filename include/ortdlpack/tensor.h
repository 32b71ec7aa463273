// ortdlpack: Tensor, a shared owner of one ORT tensor OrtValue.
//
// ORT's C API has no reference-counted values, so a Tensor adds the count: copies of a Tensor share one OrtValue,
// released when the last copy (or the last DLPack tensor exported from it) goes. It also carries what ORT cannot
// hold: whether the memory is read-only (ORT has no read-only tensors; see import.h).
#pragma once

#include <dlpack/dlpack.h>
#include <onnxruntime_c_api.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace ortdlpack {

class Tensor {
 public:
  Tensor() noexcept = default;

  // Takes ownership of `value`, which must be a tensor (Error(kInvalidArgument) otherwise; `value` is then released).
  explicit Tensor(OrtValue* value, bool read_only = false);

  // Borrowed: valid while this Tensor (or a copy) lives.
  OrtValue* ort_value() const noexcept { return owner_ ? owner_->value : nullptr; }
  explicit operator bool() const noexcept { return owner_ != nullptr; }
  bool read_only() const noexcept { return owner_ && owner_->read_only; }
  // How many Tensors and exported DLPack tensors share the OrtValue.
  long use_count() const noexcept { return owner_.use_count(); }

  ONNXTensorElementDataType element_type() const;
  std::vector<int64_t> shape() const;
  size_t element_count() const;
  size_t byte_size() const;
  void* data() const;  // a device pointer for device memory
  const OrtMemoryInfo* memory_info() const;
  DLDevice device() const;

 private:
  struct Owner {
    Owner(OrtValue* v, bool ro) noexcept : value(v), read_only(ro) {}
    Owner(const Owner&) = delete;
    Owner& operator=(const Owner&) = delete;
    ~Owner();
    OrtValue* value;
    bool read_only;
  };
  std::shared_ptr<Owner> owner_;
};

}  // namespace ortdlpack
