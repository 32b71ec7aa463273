// Internal: element types as front ends spell them and hold them, by the core's one dtype table (dtype.cc): by the
// numpy-style names dtype_name() (dtype.h) gives them, for front ends that take a dtype by name (the Python
// extension's torch and JAX ops), and by XLA's numbers, for the extension's XLA FFI handler. No C++ user calls them.
#pragma once

#include <onnxruntime_c_api.h>

namespace ortdlpack {

// Whether numpy has the element type itself (bool, integers, floats): not bfloat16, float8, int4, ... (ml_dtypes').
bool numpy_has(ONNXTensorElementDataType type) noexcept;

// The ONNX element type with that numpy-style name; throws Error(kInvalidArgument) for an unknown name.
ONNXTensorElementDataType dtype_from_name(const char* name);

// The ONNX element type of XLA's PrimitiveType `primitive_type` (xla_data.proto; XLA's FFI numbers its DataType the
// same), UNDEFINED for a type the table does not map (XLA-only float8 variants, tokens, the 4-bit types, whose
// buffers XLA's FFI sizes one element per byte).
ONNXTensorElementDataType dtype_from_xla(int primitive_type);

}  // namespace ortdlpack
