#!/usr/bin/env python3
"""Builds the demo/benchmark/test ONNX models into a directory (deterministic weights, opset 18, IR 10).

    python scripts/make_models.py OUT_DIR            # all models
    python scripts/make_models.py OUT_DIR add_tiny   # only some

Models:
  add_tiny.onnx          y = x + b                      x: float32[1,100]
  three_out_tiny.onnx    y = x + b, z = x * b, w = x - b   x: float32[1,100] -> three float32[1,100]
  feature.onnx           conv feature extractor         x: float32[N,3,64,64] -> feat: float32[N,128]
  head.onnx              classifier head                feat: float32[N,128]  -> logits: float32[N,10]
  step.onnx              the demo's torch step in ONNX  feat: float32[N,128]  -> feat: float32[N,128]
                         (per-sample normalisation with the unbiased std, then ReLU: runs where torch cannot)
  big_identity_ish.onnx  y = x + 1                      x: float32[16,1024,1024] (64 MiB in, 64 MiB out)
  elementwise.onnx       y = (x + 1) * 0.5              x: float32[n] (memory-bound: one read, one write)
The image pipeline (examples/accelerator_pipeline.py), every op of it on the WebGPU EP too:
  preprocess.onnx        decoded images -> model input  images: uint8[N,3,480,640] -> x: float32[N,3,224,224]
                         (Cast, bilinear resize, per-channel normalisation)
  backbone.onnx          patchify conv feature extractor  x: float32[N,3,224,224] -> fmap: float32[N,32,28,28]
  pool_head.onnx         pooling classifier head        fmap: float32[N,32,28,28] -> logits: float32[N,10]

A model is rewritten only when missing or when its bytes would differ, so the directory can serve as a cache.
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 18
IR_VERSION = 10  # accepted by onnxruntime >= 1.20
FEATURES = 128
CLASSES = 10
SEED = 20261129


def _model(nodes, inputs, outputs, initializers, name):
    graph = helper.make_graph(nodes, name, inputs, outputs, initializer=initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="ortdlpack")
    model.ir_version = IR_VERSION
    onnx.checker.check_model(model, full_check=True)
    return model


def _f32(rng, shape, scale):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def add_tiny():
    rng = np.random.default_rng(SEED)
    b = numpy_helper.from_array(_f32(rng, (1, 100), 1.0), "b")
    return _model(
        [helper.make_node("Add", ["x", "b"], ["y"])],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 100])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 100])],
        [b],
        "add_tiny",
    )


def three_out_tiny():
    rng = np.random.default_rng(SEED + 5)
    b = numpy_helper.from_array(_f32(rng, (1, 100), 1.0), "b")
    return _model(
        [helper.make_node("Add", ["x", "b"], ["y"]), helper.make_node("Mul", ["x", "b"], ["z"]),
         helper.make_node("Sub", ["x", "b"], ["w"])],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 100])],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, [1, 100]) for n in ("y", "z", "w")],
        [b],
        "three_out_tiny",
    )


def feature():
    rng = np.random.default_rng(SEED + 1)
    inits = [
        numpy_helper.from_array(_f32(rng, (16, 3, 3, 3), (2.0 / 27) ** 0.5), "w1"),
        numpy_helper.from_array(_f32(rng, (16,), 0.1), "b1"),
        numpy_helper.from_array(_f32(rng, (32, 16, 3, 3), (2.0 / 144) ** 0.5), "w2"),
        numpy_helper.from_array(_f32(rng, (32,), 0.1), "b2"),
        numpy_helper.from_array(_f32(rng, (32, FEATURES), (2.0 / 32) ** 0.5), "w3"),
        numpy_helper.from_array(_f32(rng, (FEATURES,), 0.1), "b3"),
    ]
    conv = dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], **conv),  # [N,16,32,32]
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], **conv),  # [N,32,16,16]
        helper.make_node("Relu", ["c2"], ["r2"]),
        helper.make_node("GlobalAveragePool", ["r2"], ["p"]),  # [N,32,1,1]
        helper.make_node("Flatten", ["p"], ["f"], axis=1),  # [N,32]
        helper.make_node("Gemm", ["f", "w3", "b3"], ["feat"]),  # [N,128]
    ]
    return _model(
        nodes,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, 64, 64])],
        [helper.make_tensor_value_info("feat", TensorProto.FLOAT, ["N", FEATURES])],
        inits,
        "feature",
    )


def head():
    rng = np.random.default_rng(SEED + 2)
    inits = [
        numpy_helper.from_array(_f32(rng, (FEATURES, 64), (2.0 / FEATURES) ** 0.5), "w1"),
        numpy_helper.from_array(_f32(rng, (64,), 0.1), "b1"),
        numpy_helper.from_array(_f32(rng, (64, CLASSES), (2.0 / 64) ** 0.5), "w2"),
        numpy_helper.from_array(_f32(rng, (CLASSES,), 0.1), "b2"),
    ]
    nodes = [
        helper.make_node("Gemm", ["feat", "w1", "b1"], ["h"]),
        helper.make_node("Relu", ["h"], ["r"]),
        helper.make_node("Gemm", ["r", "w2", "b2"], ["logits"]),
    ]
    return _model(
        nodes,
        [helper.make_tensor_value_info("feat", TensorProto.FLOAT, ["N", FEATURES])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["N", CLASSES])],
        inits,
        "head",
    )


def step():
    """relu((x - mean) / (std + 1e-5)) over dim 1, std unbiased: torch_step of the demos, for devices torch cannot
    read (the virtual accelerator)."""
    consts = [
        numpy_helper.from_array(np.array([1], dtype=np.int64), "axes"),
        numpy_helper.from_array(np.array(FEATURES - 1, dtype=np.float32), "dof"),
        numpy_helper.from_array(np.array(1e-5, dtype=np.float32), "eps"),
    ]
    nodes = [
        helper.make_node("ReduceMean", ["feat", "axes"], ["mean"], keepdims=1),
        helper.make_node("Sub", ["feat", "mean"], ["d"]),
        helper.make_node("Mul", ["d", "d"], ["d2"]),
        helper.make_node("ReduceSum", ["d2", "axes"], ["ss"], keepdims=1),
        helper.make_node("Div", ["ss", "dof"], ["var"]),
        helper.make_node("Sqrt", ["var"], ["std"]),
        helper.make_node("Add", ["std", "eps"], ["den"]),
        helper.make_node("Div", ["d", "den"], ["z"]),
        helper.make_node("Relu", ["z"], ["out"]),
    ]
    return _model(
        nodes,
        [helper.make_tensor_value_info("feat", TensorProto.FLOAT, ["N", FEATURES])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, ["N", FEATURES])],
        consts,
        "step",
    )


def big_identity_ish():
    one = numpy_helper.from_array(np.array(1.0, dtype=np.float32), "one")
    shape = [16, 1024, 1024]
    return _model(
        [helper.make_node("Add", ["x", "one"], ["y"])],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)],
        [one],
        "big_identity_ish",
    )


def elementwise():
    consts = [numpy_helper.from_array(np.array(1.0, dtype=np.float32), "one"),
              numpy_helper.from_array(np.array(0.5, dtype=np.float32), "half")]
    return _model(
        [helper.make_node("Add", ["x", "one"], ["s"]), helper.make_node("Mul", ["s", "half"], ["y"])],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n"])],
        consts,
        "elementwise",
    )


# The image pipeline: a camera/decoder frame size in, a classifier's input size out.
IMAGE_HW = (480, 640)
INPUT_HW = 224
FMAP_CHANNELS = 32
FMAP_HW = INPUT_HW // 8


def preprocess():
    """Decoded uint8 images in the layout image decoders such as torchvision.io.decode_image give (channels first)
    -> normalised float at the model's input size. (Channels last would cost a transpose that is slow on a software
    WebGPU adapter, and a linear resize over H, W of NHWC gives wrong values on the WebGPU EP 0.4.)"""
    mean = np.array([0.485, 0.456, 0.406], dtype=np.float32).reshape(1, 3, 1, 1) * 255
    std = np.array([0.229, 0.224, 0.225], dtype=np.float32).reshape(1, 3, 1, 1) * 255
    consts = [
        numpy_helper.from_array(np.array([INPUT_HW, INPUT_HW], dtype=np.int64), "sizes"),
        numpy_helper.from_array(mean, "mean"),
        numpy_helper.from_array((1 / std).astype(np.float32), "inv_std"),
    ]
    nodes = [
        helper.make_node("Cast", ["images"], ["f"], to=TensorProto.FLOAT),
        helper.make_node("Resize", ["f", "", "", "sizes"], ["r"], mode="linear", axes=[2, 3]),
        helper.make_node("Sub", ["r", "mean"], ["d"]),
        helper.make_node("Mul", ["d", "inv_std"], ["x"]),
    ]
    return _model(
        nodes,
        [helper.make_tensor_value_info("images", TensorProto.UINT8, ["N", 3, *IMAGE_HW])],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, INPUT_HW, INPUT_HW])],
        consts,
        "preprocess",
    )


def backbone():
    rng = np.random.default_rng(SEED + 3)
    c1 = FMAP_CHANNELS // 2
    inits = [
        numpy_helper.from_array(_f32(rng, (c1, 3, 4, 4), (2.0 / 48) ** 0.5), "w1"),
        numpy_helper.from_array(_f32(rng, (c1,), 0.1), "b1"),
        numpy_helper.from_array(_f32(rng, (FMAP_CHANNELS, c1, 2, 2), (2.0 / (4 * c1)) ** 0.5), "w2"),
        numpy_helper.from_array(_f32(rng, (FMAP_CHANNELS,), 0.1), "b2"),
    ]
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], kernel_shape=[4, 4], strides=[4, 4]),  # [N,16,56,56]
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], kernel_shape=[2, 2], strides=[2, 2]),  # [N,32,28,28]
        helper.make_node("Relu", ["c2"], ["fmap"]),
    ]
    return _model(
        nodes,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, INPUT_HW, INPUT_HW])],
        [helper.make_tensor_value_info("fmap", TensorProto.FLOAT, ["N", FMAP_CHANNELS, FMAP_HW, FMAP_HW])],
        inits,
        "backbone",
    )


def pool_head():
    rng = np.random.default_rng(SEED + 4)
    inits = [
        numpy_helper.from_array(_f32(rng, (FMAP_CHANNELS, CLASSES), (2.0 / FMAP_CHANNELS) ** 0.5), "w"),
        numpy_helper.from_array(_f32(rng, (CLASSES,), 0.1), "b"),
    ]
    nodes = [
        helper.make_node("GlobalAveragePool", ["fmap"], ["p"]),  # [N,32,1,1]
        helper.make_node("Flatten", ["p"], ["f"], axis=1),
        helper.make_node("Gemm", ["f", "w", "b"], ["logits"]),
    ]
    return _model(
        nodes,
        [helper.make_tensor_value_info("fmap", TensorProto.FLOAT, ["N", FMAP_CHANNELS, FMAP_HW, FMAP_HW])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["N", CLASSES])],
        inits,
        "pool_head",
    )


MODELS = {"add_tiny": add_tiny, "three_out_tiny": three_out_tiny, "feature": feature, "head": head, "step": step, "big_identity_ish": big_identity_ish,
          "elementwise": elementwise, "preprocess": preprocess, "backbone": backbone, "pool_head": pool_head}


def make_models(out_dir: str, names=None) -> dict:
    """Writes the models (all, or `names`) into out_dir; returns {name: path}."""
    os.makedirs(out_dir, exist_ok=True)
    paths = {}
    for name in names or MODELS:
        if name not in MODELS:
            raise ValueError(f"unknown model {name!r} (known: {', '.join(MODELS)})")
        data = MODELS[name]().SerializeToString(deterministic=True)
        path = os.path.join(out_dir, name + ".onnx")
        try:
            with open(path, "rb") as f:
                same = f.read() == data
        except OSError:
            same = False
        if not same:
            tmp = f"{path}.{os.getpid()}.tmp"
            with open(tmp, "wb") as f:
                f.write(data)
            os.replace(tmp, path)  # atomic: concurrent builders never see a half-written model
        paths[name] = path
    return paths


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out_dir")
    parser.add_argument("models", nargs="*", help="subset of: " + ", ".join(MODELS))
    args = parser.parse_args(argv)
    for name, path in make_models(args.out_dir, args.models or None).items():
        print(f"{name}: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
