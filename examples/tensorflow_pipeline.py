#!/usr/bin/env python3
"""feature -> TensorFlow step -> head: tf tensors into ONNX Runtime and back through DLPack.

    python examples/tensorflow_pipeline.py

TensorFlow exchanges legacy DLPack capsules: tf.experimental.dlpack.to_dlpack(t) goes into ortdlpack, and
tf.experimental.dlpack.from_dlpack(tensor.__dlpack__()) brings ORT's output into TensorFlow without a copy.
"""

import os
import sys
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")  # no start-up banner

import numpy as np  # noqa: E402
import onnxruntime as ort  # noqa: E402
import tensorflow as tf  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "scripts"))
from make_models import make_models  # noqa: E402

import ortdlpack  # noqa: E402


def step(feat):
    """Per-sample normalisation and ReLU (the demo's torch step, in TensorFlow)."""
    mean = tf.reduce_mean(feat, axis=1, keepdims=True)
    var = tf.reduce_sum(tf.square(feat - mean), axis=1, keepdims=True) / (feat.shape[1] - 1)
    return tf.nn.relu((feat - mean) / (tf.sqrt(var) + 1e-5))


def main() -> int:
    models = make_models(os.path.join(tempfile.gettempdir(), "ortdlpack-models"), ["feature", "head"])
    feature = ort.InferenceSession(models["feature"], providers=["CPUExecutionProvider"])
    head = ort.InferenceSession(models["head"], providers=["CPUExecutionProvider"])
    images = tf.random.stateless_uniform((8, 3, 64, 64), seed=(0, 1), dtype=tf.float32)

    x = ortdlpack.from_dlpack(tf.experimental.dlpack.to_dlpack(images))  # TF's memory, as an ORT tensor
    (feat,) = ortdlpack.run(feature, {"x": x})
    feat_tf = tf.experimental.dlpack.from_dlpack(feat.__dlpack__())  # a tf tensor over ORT's output
    f = ortdlpack.from_dlpack(tf.experimental.dlpack.to_dlpack(step(feat_tf)))
    (logits,) = ortdlpack.run(head, {"feat": f})
    logits_tf = tf.experimental.dlpack.from_dlpack(logits.__dlpack__())

    expected = head.run(None, {"feat": step(feature.run(None, {"x": images.numpy()})[0]).numpy()})[0]
    np.testing.assert_allclose(logits_tf.numpy(), expected, rtol=1e-5, atol=1e-6)
    # Importing the same TF tensor again gives the same address: ORT reads TF's buffer, no copy was made.
    same = ortdlpack.from_dlpack(tf.experimental.dlpack.to_dlpack(images)).data_ptr == x.data_ptr
    print(f"tensorflow {tf.__version__}: logits {tuple(logits_tf.shape)} equal to session.run's; "
          f"images read in TF's own buffer: {same}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
