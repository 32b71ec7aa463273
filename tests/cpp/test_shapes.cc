// ShapeRules: output shapes from input shapes, over declarations as ORT reports them (IoInfo); the Python tests run
// the same rules on real models (tests/python/test_torch_module.py, test_jax_function.py).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ortdlpack/error.h"
#include "ortdlpack/shapes.h"

namespace ortdlpack {
namespace {

constexpr ONNXTensorElementDataType kF32 = ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT;

IoInfo tensor(const char* name, std::vector<int64_t> shape, std::vector<std::string> names = {}) {
  IoInfo io;
  io.name = name;
  io.is_tensor = true;
  io.onnx_type = "tensor(float)";
  io.element_type = kF32;
  io.dim_names = names.empty() ? std::vector<std::string>(shape.size()) : names;
  io.shape = std::move(shape);
  io.has_shape = true;
  return io;
}

// x: [N,4], z: [N,M]  ->  y: [N,3], u: [?,4] (unnamed), v: [K] (named by no input)
const std::vector<IoInfo> kInputs = {tensor("x", {-1, 4}, {"N", ""}), tensor("z", {-1, -1}, {"N", "M"})};
const std::vector<IoInfo> kOutputs = {tensor("y", {-1, 3}, {"N", ""}), tensor("u", {-1, 4}), tensor("v", {-1}, {"K"})};

TEST(ShapeRules, GivenSizesGiveEveryOutputDimension) {
  const ShapeRules rules(kInputs, kOutputs, "test", true);
  const DerivedShapes d = rules.derive({{kF32, {8, 4}}, {kF32, {8, 5}}});
  EXPECT_TRUE(d.pending.empty());
  ASSERT_EQ(d.outputs.size(), 3u);
  EXPECT_EQ(d.outputs[0][0].value, 8);
  EXPECT_EQ(d.outputs[0][1].value, 3);
  EXPECT_TRUE(d.outputs[1][0].undetermined());
  EXPECT_EQ(d.outputs[1][1].value, 4);
  EXPECT_TRUE(d.outputs[2][0].undetermined());
}

TEST(ShapeRules, SymbolicSizesStayReferencesAndTheirChecksPend) {
  const ShapeRules rules(kInputs, kOutputs, "test", true);
  const DerivedShapes d = rules.derive({{kF32, {-1, -1}}, {kF32, {-1, 5}}});
  EXPECT_EQ(d.outputs[0][0].input, 0);  // y's N is x's dimension 0
  EXPECT_EQ(d.outputs[0][0].axis, 0);
  ASSERT_EQ(d.pending.size(), 2u);
  EXPECT_EQ(d.pending[0].input, 0);  // x's dimension 1 must be 4
  EXPECT_EQ(d.pending[0].expected.value, 4);
  EXPECT_EQ(d.pending[1].input, 1);  // z's N must be x's N
  EXPECT_EQ(d.pending[1].expected.input, 0);
  EXPECT_NE(d.pending[1].message.find("input 'z'"), std::string::npos);
}

TEST(ShapeRules, ViolationsNameTheInput) {
  const ShapeRules rules(kInputs, kOutputs, "test", true);
  const auto message = [&](std::vector<TensorSpec> given) {
    try {
      rules.derive(given);
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message({{kF32, {8, 4}}}).find("input 'z' is missing"), std::string::npos);
  EXPECT_NE(message({{ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64, {8, 4}}, {kF32, {8, 5}}}).find("element type"),
            std::string::npos);
  EXPECT_NE(message({{kF32, {8, 4, 1}}, {kF32, {8, 5}}}).find("rank mismatch"), std::string::npos);
  EXPECT_NE(message({{kF32, {8, 3}}, {kF32, {8, 5}}}).find("dimension 1 mismatch"), std::string::npos);
  EXPECT_NE(message({{kF32, {8, 4}}, {kF32, {7, 5}}}).find("N = 8 (from input 'x')"), std::string::npos);
}

TEST(ShapeRules, WhatNoTracerCanDescribeIsRefusedAtWrapTime) {
  IoInfo seq = tensor("s", {});
  seq.is_tensor = false;
  seq.onnx_type = "seq(tensor(float))";
  IoInfo no_rank = tensor("r", {});
  no_rank.has_shape = false;
  const auto message = [](const std::vector<IoInfo>& outputs, bool undetermined_allowed) {
    try {
      ShapeRules(kInputs, outputs, "jax_function", undetermined_allowed);
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message({seq}, true).find("output 's'"), std::string::npos);
  EXPECT_NE(message({seq}, true).find("not a tensor"), std::string::npos);
  EXPECT_NE(message({no_rank}, true).find("no rank"), std::string::npos);
  EXPECT_NE(message({kOutputs[1]}, false).find("jax_function: output 'u'"), std::string::npos);
  EXPECT_NE(message({kOutputs[2]}, false).find("('K') is named by no input"), std::string::npos);
  EXPECT_EQ(message({kOutputs[0]}, false), "no error");
}

}  // namespace
}  // namespace ortdlpack
