#include "ortdlpack/dtype.h"

#include "dtype_names.h"

#include <gtest/gtest.h>

#include "ortdlpack/error.h"
#include "support.h"

namespace ortdlpack {
namespace {

struct Case {
  ONNXTensorElementDataType onnx;
  uint8_t code;
  uint8_t bits;
  const char* name;
  int xla;  // XLA's PrimitiveType (xla_data.proto), 0 where the table maps none
};

// Written out independently of src/dtype.cc's table, so a wrong row there fails here.
const Case kCases[] = {
    {ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL, kDLBool, 8, "bool", 1},
    {ONNX_TENSOR_ELEMENT_DATA_TYPE_INT8, kDLInt, 8, "int8", 2},
    {ONNX_TENSOR_ELEMENT_DATA_TYPE_INT16, kDLInt, 16, "int16", 3},
    {ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32, kDLInt, 32, "int32", 4},
    {ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64, kDLInt, 64, "int64", 5},
    {ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT8, kDLUInt, 8, "uint8", 6},
    {ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT16, kDLUInt, 16, "uint16", 7},
    {ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT32, kDLUInt, 32, "uint32", 8},
    {ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT64, kDLUInt, 64, "uint64", 9},
    {ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16, kDLFloat, 16, "float16", 10},
    {ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, kDLFloat, 32, "float32", 11},
    {ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE, kDLFloat, 64, "float64", 12},
    {ONNX_TENSOR_ELEMENT_DATA_TYPE_BFLOAT16, kDLBfloat, 16, "bfloat16", 16},
    {ONNX_TENSOR_ELEMENT_DATA_TYPE_COMPLEX64, kDLComplex, 64, "complex64", 15},
    {ONNX_TENSOR_ELEMENT_DATA_TYPE_COMPLEX128, kDLComplex, 128, "complex128", 18},
    {ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT8E4M3FN, kDLFloat8_e4m3fn, 8, "float8_e4m3fn", 20},
    {ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT8E4M3FNUZ, kDLFloat8_e4m3fnuz, 8, "float8_e4m3fnuz", 25},
    {ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT8E5M2, kDLFloat8_e5m2, 8, "float8_e5m2", 19},
    {ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT8E5M2FNUZ, kDLFloat8_e5m2fnuz, 8, "float8_e5m2fnuz", 24},
    {ONNX_TENSOR_ELEMENT_DATA_TYPE_INT4, kDLInt, 4, "int4", 0},
    {ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT4, kDLUInt, 4, "uint4", 0},
#if ORT_API_VERSION >= 24  // float4e2m1 came with ORT 1.24
    {ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT4E2M1, kDLFloat4_e2m1fn, 4, "float4_e2m1fn", 0},
#endif
};

TEST(Dtype, EveryRowMapsBothWays) {
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.name);
    const DLDataType dl = to_dlpack_dtype(c.onnx);
    EXPECT_EQ(dl.code, c.code);
    EXPECT_EQ(dl.bits, c.bits);
    EXPECT_EQ(dl.lanes, 1);
    EXPECT_EQ(from_dlpack_dtype(dl), c.onnx);
    EXPECT_STREQ(dtype_name(c.onnx), c.name);
    EXPECT_EQ(dtype_from_name(c.name), c.onnx);
    if (c.xla != 0) {
      EXPECT_EQ(dtype_from_xla(c.xla), c.onnx);
    }
  }
}

TEST(Dtype, XlaTypesTheTableLacksAreUndefined) {
  // 0 INVALID, 17 TOKEN, 23 F8E4M3B11FNUZ, 28 F8E4M3, 29 F8E3M4 (XLA only), 21/22/32 S4/U4/F4E2M1FN (sized one element
  // per byte by XLA's FFI, packed two to a byte by ONNX), 26/27/30/31 S2/U2/S1/U1, and numbers XLA has not given out.
  for (int xla : {0, 17, 21, 22, 23, 26, 27, 28, 29, 30, 31, 32, 34, -1, 255}) {
    EXPECT_EQ(dtype_from_xla(xla), ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED) << xla;
  }
#if ORT_API_VERSION >= 29
  EXPECT_EQ(dtype_from_xla(33), ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT8E8M0);  // F8E8M0FNU: one byte in both
#endif
}

TEST(Dtype, TypesOrtNumbersInconsistentlyAreRefused) {
  // uint2/int2: ORT's C enum and ONNX disagree on their numbers and ORT 1.29 mixes them (see src/dtype.cc).
  EXPECT_THROW(to_dlpack_dtype(ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT2), Error);
  EXPECT_THROW(to_dlpack_dtype(ONNX_TENSOR_ELEMENT_DATA_TYPE_INT2), Error);
  EXPECT_THROW(from_dlpack_dtype(DLDataType{kDLInt, 2, 1}), Error);
  EXPECT_THROW(from_dlpack_dtype(DLDataType{kDLUInt, 2, 1}), Error);
}

TEST(Dtype, Float8E8M0IsCarriedByItsOrtNumber) {
  // float8e8m0 is numbered differently too (ORT's C enum 26, ONNX's 24), but ORT reports it by its own number both
  // ways: the table holds it under that number.
  EXPECT_EQ(to_dlpack_dtype(ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT8E8M0).code, kDLFloat8_e8m0fnu);
  EXPECT_EQ(from_dlpack_dtype(DLDataType{kDLFloat8_e8m0fnu, 8, 1}), ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT8E8M0);
  EXPECT_STREQ(onnx_dtype_name(ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT8E8M0), "float8e8m0");
}

TEST(Dtype, StringAndUndefinedAreUnsupported) {
  try {
    to_dlpack_dtype(ONNX_TENSOR_ELEMENT_DATA_TYPE_STRING);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUnsupported);
    EXPECT_NE(std::string(e.what()).find("string"), std::string::npos);
  }
  EXPECT_THROW(to_dlpack_dtype(ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED), Error);
}

TEST(Dtype, RejectsLanesUnknownCodesAndMismatchedBits) {
  auto expect_unsupported = [](DLDataType t, const char* fragment) {
    try {
      from_dlpack_dtype(t);
      FAIL() << fragment;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kUnsupported);
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    }
  };
  expect_unsupported(DLDataType{kDLFloat, 32, 4}, "lanes");
  expect_unsupported(DLDataType{kDLFloat, 24, 1}, "bits do not match");
  expect_unsupported(DLDataType{kDLBool, 16, 1}, "bits do not match");
  expect_unsupported(DLDataType{kDLComplex, 32, 1}, "bits do not match");
  expect_unsupported(DLDataType{kDLOpaqueHandle, 64, 1}, "no ONNX element type");
  expect_unsupported(DLDataType{kDLFloat6_e2m3fn, 6, 1}, "no ONNX element type");
  expect_unsupported(DLDataType{200, 8, 1}, "no ONNX element type");
}

TEST(Dtype, Uint8AsBoolOnlyWhenAsked) {
  EXPECT_EQ(from_dlpack_dtype(DLDataType{kDLUInt, 8, 1}), ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT8);
  EXPECT_EQ(from_dlpack_dtype(DLDataType{kDLUInt, 8, 1}, true), ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL);
  EXPECT_EQ(from_dlpack_dtype(DLDataType{kDLInt, 8, 1}, true), ONNX_TENSOR_ELEMENT_DATA_TYPE_INT8);
}

TEST(Dtype, StorageBytesPacksSubByteTypes) {
  EXPECT_EQ(storage_bytes(ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, 3), 12u);
  EXPECT_EQ(storage_bytes(ONNX_TENSOR_ELEMENT_DATA_TYPE_INT4, 3), 2u);
#if ORT_API_VERSION >= 24
  EXPECT_EQ(storage_bytes(ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT4E2M1, 4), 2u);
#endif
  EXPECT_EQ(storage_bytes(ONNX_TENSOR_ELEMENT_DATA_TYPE_COMPLEX128, 2), 32u);
}

TEST(Dtype, UnknownNameIsInvalidArgument) {
  try {
    dtype_from_name("float7");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
  }
}

TEST(Dtype, SubByteUnpacking) {
  const uint8_t packed[2] = {0x9F, 0x07};  // int4 elements (low nibble first): -1, -7, 7, 0
  uint8_t out[4] = {};
  unpack_sub_byte(ONNX_TENSOR_ELEMENT_DATA_TYPE_INT4, packed, 4, out);
  EXPECT_EQ(static_cast<int8_t>(out[0]), -1);
  EXPECT_EQ(static_cast<int8_t>(out[1]), -7);
  EXPECT_EQ(out[2], 7);
  EXPECT_EQ(out[3], 0);
  unpack_sub_byte(ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT4, packed, 2, out);
  EXPECT_EQ(out[0], 15);
  EXPECT_EQ(out[1], 9);
  EXPECT_EQ(test::kind_of([&] { unpack_sub_byte(ONNX_TENSOR_ELEMENT_DATA_TYPE_INT8, packed, 2, out); }),
            ErrorKind::kInvalidArgument);
}

}  // namespace
}  // namespace ortdlpack
