// Which plans onnxruntime's run carries out (onnxruntime_sessions.h).
#include "onnxruntime_sessions.h"

#include "binding_adapter.h"

namespace ortdlpack::py {

bool numpy_has(ONNXTensorElementDataType type) {
  switch (type) {
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL:
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT8:
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT16:
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32:
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64:
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT8:
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT16:
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT32:
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT64:
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16:
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT:
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE:
      return true;
    default:
      return false;
  }
}

bool host_outputs(const SessionInfo& info) {
  for (const IoInfo& io : info.outputs()) {
    if (!io.has_dlpack_form()) continue;
    if ((io.memory != nullptr && !detail::is_cpu_memory(io.memory)) || !numpy_has(io.element_type)) return false;
  }
  return true;
}

}  // namespace ortdlpack::py
