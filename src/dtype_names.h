// Internal: element types by the numpy-style names dtype_name() (dtype.h) gives them, for bindings that take a
// dtype by name (the Python binding's torch and JAX ops). No C++ user calls it.
#pragma once

#include <onnxruntime_c_api.h>

namespace ortdlpack {

// The ONNX element type with that numpy-style name; throws Error(kInvalidArgument) for an unknown name.
ONNXTensorElementDataType dtype_from_name(const char* name);

}  // namespace ortdlpack
