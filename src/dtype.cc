#include "ortdlpack/dtype.h"

#include "dtype_names.h"

#include <cstring>
#include <string>

#include "ortdlpack/error.h"

namespace ortdlpack {
namespace {

struct DtypeRow {
  ONNXTensorElementDataType onnx;
  DLDataType dl;
  const char* name;
  const char* onnx_name;  // as ONNX spells it inside "tensor(...)" (what onnxruntime's Python NodeArg.type reports)
  int xla;                // XLA's PrimitiveType (xla_data.proto, the numbers of its FFI's DataType); 0: none
  bool numpy;             // numpy has it itself (not through ml_dtypes)
};

constexpr DLDataType dl(uint8_t code, uint8_t bits) { return DLDataType{code, bits, 1}; }

// The one dtype table. Every ONNX tensor element type DLPack can carry; STRING and UNDEFINED are absent on purpose.
// Not yet here: uint2/int2. ORT's C enum numbers them 24/25 while ONNX numbers them 25/26 (and float8e8m0 26 against
// ONNX's 24), and ORT 1.29 mixes the two for them (a tensor created as C-API UINT2 reports FLOAT8E8M0), so a round
// trip would change the type; DLPack 1.3 has no 2-bit codes either. float8e8m0 is here, under ORT's C number: ORT 1.32
// holds it as asked; ORT 1.29 holds a C-API FLOAT8E8M0 tensor as INT2, which allocate and import refuse
// (detail::check_holds: an ORT that holds a requested type as another is refused wherever ortdlpack creates one).
// XLA's number is 0 for the 4-bit types: XLA's FFI sizes their buffers one element per byte (ffi::ByteWidth), where
// ONNX packs two to a byte.
constexpr DtypeRow kDtypes[] = {
    {ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL, dl(kDLBool, 8), "bool", "bool", 1, true},
    {ONNX_TENSOR_ELEMENT_DATA_TYPE_INT8, dl(kDLInt, 8), "int8", "int8", 2, true},
    {ONNX_TENSOR_ELEMENT_DATA_TYPE_INT16, dl(kDLInt, 16), "int16", "int16", 3, true},
    {ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32, dl(kDLInt, 32), "int32", "int32", 4, true},
    {ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64, dl(kDLInt, 64), "int64", "int64", 5, true},
    {ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT8, dl(kDLUInt, 8), "uint8", "uint8", 6, true},
    {ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT16, dl(kDLUInt, 16), "uint16", "uint16", 7, true},
    {ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT32, dl(kDLUInt, 32), "uint32", "uint32", 8, true},
    {ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT64, dl(kDLUInt, 64), "uint64", "uint64", 9, true},
    {ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16, dl(kDLFloat, 16), "float16", "float16", 10, true},
    {ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, dl(kDLFloat, 32), "float32", "float", 11, true},
    {ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE, dl(kDLFloat, 64), "float64", "double", 12, true},
    {ONNX_TENSOR_ELEMENT_DATA_TYPE_BFLOAT16, dl(kDLBfloat, 16), "bfloat16", "bfloat16", 16, false},
    {ONNX_TENSOR_ELEMENT_DATA_TYPE_COMPLEX64, dl(kDLComplex, 64), "complex64", "complex64", 15, false},
    {ONNX_TENSOR_ELEMENT_DATA_TYPE_COMPLEX128, dl(kDLComplex, 128), "complex128", "complex128", 18, false},
    {ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT8E4M3FN, dl(kDLFloat8_e4m3fn, 8), "float8_e4m3fn", "float8e4m3fn", 20, false},
    {ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT8E4M3FNUZ, dl(kDLFloat8_e4m3fnuz, 8), "float8_e4m3fnuz", "float8e4m3fnuz", 25,
     false},
    {ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT8E5M2, dl(kDLFloat8_e5m2, 8), "float8_e5m2", "float8e5m2", 19, false},
    {ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT8E5M2FNUZ, dl(kDLFloat8_e5m2fnuz, 8), "float8_e5m2fnuz", "float8e5m2fnuz", 24,
     false},
    {ONNX_TENSOR_ELEMENT_DATA_TYPE_INT4, dl(kDLInt, 4), "int4", "int4", 0, false},
    {ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT4, dl(kDLUInt, 4), "uint4", "uint4", 0, false},
#if ORT_API_VERSION >= 24  // float4e2m1 came with ORT 1.24 (headers and runtime)
    {ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT4E2M1, dl(kDLFloat4_e2m1fn, 4), "float4_e2m1fn", "float4e2m1", 0, false},
#endif
#if ORT_API_VERSION >= 29  // float8e8m0: in the pinned 1.29 headers; an older runtime refuses such tensors itself
    {ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT8E8M0, dl(kDLFloat8_e8m0fnu, 8), "float8_e8m0fnu", "float8e8m0", 33, false},
#endif
};

const DtypeRow* find(ONNXTensorElementDataType type) {
  for (const DtypeRow& row : kDtypes) {
    if (row.onnx == type) return &row;
  }
  return nullptr;
}

std::string describe(DLDataType t) {
  return "{code " + std::to_string(t.code) + ", bits " + std::to_string(t.bits) + ", lanes " + std::to_string(t.lanes) +
         "}";
}

}  // namespace

bool has_dlpack_dtype(ONNXTensorElementDataType type) noexcept { return find(type) != nullptr; }

bool numpy_has(ONNXTensorElementDataType type) noexcept {
  const DtypeRow* row = find(type);
  return row != nullptr && row->numpy;
}

DLDataType to_dlpack_dtype(ONNXTensorElementDataType type) {
  if (const DtypeRow* row = find(type)) return row->dl;
  if (type == ONNX_TENSOR_ELEMENT_DATA_TYPE_STRING) {
    throw Error(ErrorKind::kUnsupported, "string tensors cannot be exchanged through DLPack");
  }
  throw Error(ErrorKind::kUnsupported,
              "ONNX element type " + std::to_string(static_cast<int>(type)) + " has no DLPack data type");
}

ONNXTensorElementDataType from_dlpack_dtype(DLDataType dtype, bool uint8_as_bool) {
  if (dtype.lanes != 1) {
    throw Error(ErrorKind::kUnsupported, "dtype " + describe(dtype) + ": vector types (lanes != 1) are not supported");
  }
  if (uint8_as_bool && dtype.code == kDLUInt && dtype.bits == 8) return ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL;
  bool known_code = false;
  for (const DtypeRow& row : kDtypes) {
    if (row.dl.code != dtype.code) continue;
    known_code = true;
    if (row.dl.bits == dtype.bits) return row.onnx;
  }
  throw Error(ErrorKind::kUnsupported,
              "dtype " + describe(dtype) +
                  (known_code ? ": bits do not match any ONNX type of that code" : ": no ONNX element type"));
}

const char* dtype_name(ONNXTensorElementDataType type) {
  if (const DtypeRow* row = find(type)) return row->name;
  return type == ONNX_TENSOR_ELEMENT_DATA_TYPE_STRING ? "string" : "undefined";
}

ONNXTensorElementDataType dtype_from_name(const char* name) {
  if (name != nullptr) {
    for (const DtypeRow& row : kDtypes) {
      if (std::strcmp(row.name, name) == 0) return row.onnx;
    }
  }
  throw Error(ErrorKind::kInvalidArgument, std::string("unknown dtype name '") + (name ? name : "(null)") + "'");
}

ONNXTensorElementDataType dtype_from_onnx_name(const std::string& name) {
  for (const DtypeRow& row : kDtypes) {
    if (name == row.onnx_name) return row.onnx;
  }
  return name == "string" ? ONNX_TENSOR_ELEMENT_DATA_TYPE_STRING : ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;
}

ONNXTensorElementDataType dtype_from_xla(int primitive_type) {
  for (const DtypeRow& row : kDtypes) {
    if (row.xla != 0 && row.xla == primitive_type) return row.onnx;
  }
  return ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;
}

const char* onnx_dtype_name(ONNXTensorElementDataType type) {
  if (const DtypeRow* row = find(type)) return row->onnx_name;
  return type == ONNX_TENSOR_ELEMENT_DATA_TYPE_STRING ? "string" : "undefined";
}

uint32_t dtype_bits(ONNXTensorElementDataType type) { return to_dlpack_dtype(type).bits; }

size_t storage_bytes(ONNXTensorElementDataType type, size_t count) {
  const uint32_t bits = dtype_bits(type);
  return bits >= 8 ? count * (bits / 8) : (count * bits + 7) / 8;
}

void unpack_sub_byte(ONNXTensorElementDataType type, const void* packed, size_t count, uint8_t* out) {
  const DLDataType dt = to_dlpack_dtype(type);
  const uint32_t bits = dt.bits;
  if (bits >= 8)
    throw Error(ErrorKind::kInvalidArgument, std::string("unpack_sub_byte: ") + dtype_name(type) + " is not packed");
  // Element i sits in byte i*bits/8, low bits first (ONNX and DLPack 1.1 alike).
  const auto* src = static_cast<const uint8_t*>(packed);
  const uint8_t mask = static_cast<uint8_t>((1u << bits) - 1u);
  for (size_t i = 0; i < count; ++i) {
    const size_t bit = i * bits;
    uint8_t v = static_cast<uint8_t>((src[bit / 8] >> (bit % 8)) & mask);
    if (dt.code == kDLInt && (v >> (bits - 1))) v = static_cast<uint8_t>(v | static_cast<uint8_t>(~mask));
    out[i] = v;
  }
}

}  // namespace ortdlpack
