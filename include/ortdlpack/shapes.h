// ortdlpack: the shapes of a session's outputs from the shapes of its inputs, before anything runs — what a
// framework's tracer needs for an ONNX model inside compiled code (torch.compile's fake tensors, jax.jit's abstract
// values).
//
// ORT's C API has no shape inference for given input shapes. What it has is every input's and output's type as ORT
// resolved it when it loaded the model (its own shape inference merged into the declarations; Session::inputs() and
// outputs()): fixed dimensions, named ("symbolic") dimensions and unknown ones. ONNX's dimension variables denote one
// value across a graph's inputs and outputs, so an output dimension named like an input dimension has that input
// dimension's value. An output dimension neither fixed nor named by an input is not determined by the inputs' shapes:
// data-dependent (NonZero), or computed from several dimensions (a Concat's sum), which ORT's inference leaves
// unnamed. Only the run tells its value.
//
//   ortdlpack::ShapeRules rules(session.inputs(), session.outputs(), "torch_module", true);
//   ortdlpack::DerivedShapes d = rules.derive({{ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, {8, 4}}});
//   // d.outputs[0] == {Dim{8}, Dim{3}}: every dimension's value given, every check made
//   d = rules.derive({{ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, {-1, 4}}});  // dimension 0 symbolic at trace time
//   // d.outputs[0][0] is Dim{-1, 0, 0}: "the size of input 0's dimension 0", for the tracer to fill in
#pragma once

#include <onnxruntime_c_api.h>

#include <cstdint>
#include <string>
#include <vector>

#include "ortdlpack/session.h"

namespace ortdlpack {

// One dimension as derived: a size, the size of an input's dimension, or undetermined.
struct Dim {
  int64_t value = -1;  // >= 0: the size
  int input = -1;      // value < 0, input >= 0: the size of dimension `axis` of input `input` (not given to derive())
  int axis = -1;
  /// \brief Whether the size is known (value >= 0).
  bool known() const noexcept { return value >= 0; }
  /// \brief Whether nothing determines the size (neither a value nor an input's dimension).
  bool undetermined() const noexcept { return value < 0 && input < 0; }
};

// An input as a tracer sees it: its element type and shape, -1 for a dimension whose size the tracer does not know
// (a symbolic one).
struct TensorSpec {
  ONNXTensorElementDataType type = ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;
  std::vector<int64_t> shape;
};

// A check of the model's declarations that needs a size the tracer did not give: dimension `axis` of input `input`
// must equal `expected` (a size, or another input's dimension). The tracer asserts it its own way (torch._check);
// `message` says what failed.
struct PendingCheck {
  int input = -1;
  int axis = -1;
  Dim expected;
  std::string message;
};

struct DerivedShapes {
  std::vector<std::vector<Dim>> outputs;  // in the model's output order
  std::vector<PendingCheck> pending;      // empty when every size was given
  // The input whose device the outputs are on: a compiled call's outputs are allocated on its first input's device
  // (-1: no input, CPU memory). compiled_outputs_target (frontend.h) places them so.
  int device_input = -1;
};

// The rules of one session, made once when a model is wrapped for a framework.
class ShapeRules {
 public:
  /// \brief Error(kInvalidArgument), naming the input or output and why, for what no tracer can describe: an input or
  /// output that is not a tensor (sequence, map, optional), an output without a declared rank; and, unless
  /// `undetermined_allowed` (the framework takes sizes only a run tells: torch's unbacked symbols), an output
  /// dimension the inputs' shapes do not determine. `framework` names the caller in those messages.
  ShapeRules(const std::vector<IoInfo>& inputs, const std::vector<IoInfo>& outputs, const std::string& framework,
             bool undetermined_allowed);

  /// \brief Checks `inputs` (the model's inputs in model order; optional ones may be left out at the end) against the
  /// model's declarations — element type, rank and fixed dimensions as ORT checks them (a declared scalar takes any
  /// shape), named dimensions that must agree for the outputs' to be known — and derives the outputs' dimensions.
  /// Error(kInvalidArgument) naming the input for a violation among the given sizes; checks that need a size not given
  /// come back pending.
  DerivedShapes derive(const std::vector<TensorSpec>& inputs) const;

 private:
  std::vector<IoInfo> inputs_;
  std::vector<std::vector<Dim>> inputs_named_;  // per input axis: the first input dimension of the same name
  std::vector<std::vector<Dim>> outputs_;
};

}  // namespace ortdlpack
