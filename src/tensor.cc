#include "ortdlpack/tensor.h"

#include "ortdlpack/api.h"
#include "ortdlpack/device.h"
#include "ortdlpack/dtype.h"
#include "ortdlpack/error.h"
#include "tensor_meta.h"

namespace ortdlpack {

namespace detail {

TensorMeta::TensorMeta(const OrtValue* value) {
  const OrtApi& api = ort();
#if ORT_API_VERSION >= 24  // built against ORT 1.23 headers: only the slow path exists
  if (ort_api_version() >= 24) {
    check(api.GetTensorElementTypeAndShapeDataReference(value, &type, &shape, &ndim));
    return;
  }
#endif
  OrtTensorTypeAndShapeInfo* info = nullptr;
  check(api.GetTensorTypeAndShape(value, &info));
  OrtStatus* status = api.GetTensorElementType(info, &type);
  if (status == nullptr) status = api.GetDimensionsCount(info, &ndim);
  if (status == nullptr) {
    owned.resize(ndim);
    status = api.GetDimensions(info, owned.data(), ndim);
  }
  api.ReleaseTensorTypeAndShapeInfo(info);
  check(status);
  shape = owned.data();
}

size_t TensorMeta::element_count() const {
  size_t n = 1;
  for (size_t i = 0; i < ndim; ++i) n *= static_cast<size_t>(shape[i]);
  return n;
}

}  // namespace detail

Tensor::Owner::~Owner() { ort().ReleaseValue(value); }

Tensor::Tensor(OrtValue* value, bool read_only) {
  if (value == nullptr) throw Error(ErrorKind::kInvalidArgument, "OrtValue is NULL");
  int is_tensor = 0;
  OrtStatus* status = ort().IsTensor(value, &is_tensor);
  if (status != nullptr || !is_tensor) {
    ort().ReleaseValue(value);
    check(status);
    throw Error(ErrorKind::kInvalidArgument, "OrtValue is not a tensor (sequences, maps and optionals have no DLPack form)");
  }
  try {
    owner_ = std::make_shared<Owner>(value, read_only);
  } catch (...) {
    ort().ReleaseValue(value);
    throw;
  }
}

ONNXTensorElementDataType Tensor::element_type() const { return detail::TensorMeta(ort_value()).type; }

std::vector<int64_t> Tensor::shape() const {
  detail::TensorMeta meta(ort_value());
  return std::vector<int64_t>(meta.shape, meta.shape + meta.ndim);
}

size_t Tensor::element_count() const { return detail::TensorMeta(ort_value()).element_count(); }

size_t Tensor::byte_size() const {
  detail::TensorMeta meta(ort_value());
  return storage_bytes(meta.type, meta.element_count());
}

void* Tensor::data() const {
  void* p = nullptr;
  check(ort().GetTensorMutableData(ort_value(), &p));
  return p;
}

const OrtMemoryInfo* Tensor::memory_info() const {
  const OrtMemoryInfo* info = nullptr;
  check(ort().GetTensorMemoryInfo(ort_value(), &info));
  return info;
}

DLDevice Tensor::device() const { return to_dlpack_device(memory_info()); }

}  // namespace ortdlpack
