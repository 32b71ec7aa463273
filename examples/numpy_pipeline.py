#!/usr/bin/env python3
"""feature -> numpy step -> head with numpy arrays only (no torch): ortdlpack.run takes numpy arrays in place and
its outputs are numpy views of ORT's memory.

    python examples/numpy_pipeline.py
"""

import os
import sys
import tempfile

import numpy as np
import onnxruntime as ort

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "scripts"))
from make_models import make_models  # noqa: E402

import ortdlpack  # noqa: E402


def step(feat: np.ndarray) -> np.ndarray:
    """Per-sample normalisation and ReLU (the demo's torch step, in numpy)."""
    z = (feat - feat.mean(axis=1, keepdims=True)) / (feat.std(axis=1, ddof=1, keepdims=True) + 1e-5)
    return np.maximum(z, 0)


def main() -> int:
    models = make_models(os.path.join(tempfile.gettempdir(), "ortdlpack-models"), ["feature", "head"])
    feature = ort.InferenceSession(models["feature"], providers=["CPUExecutionProvider"])
    head = ort.InferenceSession(models["head"], providers=["CPUExecutionProvider"])
    images = np.random.default_rng(0).random((8, 3, 64, 64), dtype=np.float32)
    logits = np.empty((8, 10), np.float32)  # ORT writes the result here

    (feat,) = ortdlpack.run(feature, {"x": images})
    feat_np = np.from_dlpack(feat)  # a view of ORT's output
    ortdlpack.run(head, {"feat": step(feat_np)}, outputs={"logits": logits})

    expected = head.run(None, {"feat": step(feature.run(None, {"x": images})[0])})[0]
    np.testing.assert_allclose(logits, expected, rtol=1e-5, atol=1e-6)
    print(f"numpy: logits {logits.shape} equal to session.run's; feature output viewed in place: "
          f"{feat_np.ctypes.data == feat.data_ptr}; ORT wrote into the preallocated logits array")
    return 0


if __name__ == "__main__":
    sys.exit(main())
