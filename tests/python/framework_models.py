"""Models for the tests of torch_module and jax_function (test_torch_module.py, test_jax_function.py), built with
onnx in the test process."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort

from conftest import helper, onnx

# The MatMul weight of the "mlp" model.
W = (np.arange(12, dtype=np.float32).reshape(4, 3) - 5) / 10


def _model(nodes, inputs, outputs, initializers=()) -> bytes:
    g = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(initializers))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)])
    m.ir_version = 9
    return m.SerializeToString()


def _vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def build_models() -> dict:
    import onnx.numpy_helper

    F, I64 = onnx.TensorProto.FLOAT, onnx.TensorProto.INT64
    w = onnx.numpy_helper.from_array(W, "w")
    return {
        # y = relu(x @ w), s = x + b: x [N,4], b [4] -> y [N,3] (declared without a shape: ORT infers it), s [N,4]
        "mlp": _model([helper.make_node("MatMul", ["x", "w"], ["m"]), helper.make_node("Relu", ["m"], ["y"]),
                       helper.make_node("Add", ["x", "b"], ["s"])],
                      [_vi("x", F, ["N", 4]), _vi("b", F, [4])], [_vi("y", F, None), _vi("s", F, ["N", 4])], [w]),
        # the indices of x's non-zero elements: [1, ?], a size only the run tells
        "nonzero": _model([helper.make_node("NonZero", ["x"], ["y"])], [_vi("x", F, ["N"])], [_vi("y", I64, None)]),
        "sequence": _model([helper.make_node("SequenceConstruct", ["x"], ["y"])], [_vi("x", F, ["N"])],
                           [helper.make_tensor_sequence_value_info("y", F, None)]),
        "add": _model([helper.make_node("Add", ["x", "x"], ["y"])], [_vi("x", F, ["N", 4])], [_vi("y", F, ["N", 4])]),
        # y = x + z, declared [N, 4]: a run with z of other than 1 or 4 columns fails in ORT's kernel (ORT_FAIL)
        "add_broadcast": _model([helper.make_node("Add", ["x", "z"], ["y"])],
                                [_vi("x", F, ["N", 4]), _vi("z", F, ["N", "M"])], [_vi("y", F, ["N", 4])]),
        # y = concat(x, z) on axis 1, declared [N, 4]: a model whose declared size is wrong whenever z has columns
        "concat_declared_wrong": _model([helper.make_node("Concat", ["x", "z"], ["y"], axis=1)],
                                        [_vi("x", F, ["N", 4]), _vi("z", F, ["N", "M"])], [_vi("y", F, ["N", 4])]),
    }


def reference(model: bytes, **feeds) -> list:
    """What onnxruntime alone computes."""
    return ort.InferenceSession(model, providers=["CPUExecutionProvider"]).run(None, feeds)


