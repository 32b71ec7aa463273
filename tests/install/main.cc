// Compiles every public header of the installed ortdlpack and uses its dtype table (no ORT library needed).
#include <ortdlpack/ortdlpack.h>
#include <ortdlpack/session.h>

#include <cstring>

int main() {
  const DLDataType bf16 = ortdlpack::to_dlpack_dtype(ONNX_TENSOR_ELEMENT_DATA_TYPE_BFLOAT16);
  return bf16.code == kDLBfloat &&
                 std::strcmp(ortdlpack::dtype_name(ONNX_TENSOR_ELEMENT_DATA_TYPE_BFLOAT16), "bfloat16") == 0
             ? 0
             : 1;
}
