// ortdlpack: the one table between ONNX tensor element types and DLPack data types.
#pragma once

#include <dlpack/dlpack.h>
#include <onnxruntime_c_api.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace ortdlpack {

/// \brief ONNX element type -> DLPack data type (lanes 1). Throws Error(kUnsupported) naming the type for strings and
/// every type DLPack cannot carry.
DLDataType to_dlpack_dtype(ONNXTensorElementDataType type);

/// \brief DLPack data type -> ONNX element type. `uint8_as_bool` accepts the pre-1.0 convention of bool carried as
/// kDLUInt/8 (what older exporters produce). Throws Error(kUnsupported) for unknown codes, lanes != 1 and bit widths
/// that do not match the code.
ONNXTensorElementDataType from_dlpack_dtype(DLDataType dtype, bool uint8_as_bool = false);

/// \brief Whether the element type has a DLPack data type (a row of the table: not strings, nor the types the table
/// lacks).
bool has_dlpack_dtype(ONNXTensorElementDataType type) noexcept;

/// \brief numpy-style name ("float32", "bfloat16", "float8_e4m3fn", "int4", ...) or "undefined".
const char* dtype_name(ONNXTensorElementDataType type);

/// \brief The ONNX element type ONNX spells `name` ("float", "double", "float8e4m3fn", "string", ...: the X of
/// "tensor(X)"), or UNDEFINED for a name the table does not hold.
ONNXTensorElementDataType dtype_from_onnx_name(const std::string& name);

/// \brief The reverse: how ONNX spells `type` ("float", "double", "string", ...), or "undefined" for a type the table
/// does not hold.
const char* onnx_dtype_name(ONNXTensorElementDataType type);

/// \brief Bits of one element: 4 for int4/uint4/float4e2m1, which ONNX and DLPack 1.1 both pack two to a byte, first
/// element in the low nibble.
uint32_t dtype_bits(ONNXTensorElementDataType type);

/// \brief Bytes of `count` elements, rounded up for packed sub-byte types.
size_t storage_bytes(ONNXTensorElementDataType type, size_t count);

/// \brief Unpacks `count` elements of a packed sub-byte type (dtype_bits < 8) into one byte each, as ml_dtypes holds
/// them: signed types sign-extended. Error(kInvalidArgument) for whole-byte types.
void unpack_sub_byte(ONNXTensorElementDataType type, const void* packed, size_t count, uint8_t* out);

}  // namespace ortdlpack
