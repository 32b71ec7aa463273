// Internal: element type and shape of an ORT tensor, read in one call.
#pragma once

#include <onnxruntime_c_api.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ortdlpack::detail {

struct TensorMeta {
  ONNXTensorElementDataType type = ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;
  const int64_t* shape = nullptr;  // ORT's own storage (API >= 24) or `owned`
  size_t ndim = 0;
  std::vector<int64_t> owned;  // only filled on ORT < 1.24, which has no allocation-free accessor

  explicit TensorMeta(const OrtValue* value);
  size_t element_count() const;
};

}  // namespace ortdlpack::detail
