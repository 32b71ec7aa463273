#!/usr/bin/env python3
"""feature -> jax step -> head: jax arrays into ONNX Runtime and ORT's outputs into jax, through DLPack.

    python examples/jax_pipeline.py

JAX's arrays are immutable, so ORT writes no output into one (no outputs=); inputs are read where they are and
outputs become jax arrays over ORT's memory (jax.dlpack.from_dlpack takes the legacy capsule ortdlpack offers).
"""

import os
import sys
import tempfile

os.environ.setdefault("JAX_PLATFORMS", "cpu")  # this example runs on CPU; a GPU jax works the same with a CUDA EP

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import onnxruntime as ort  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "scripts"))
from make_models import make_models  # noqa: E402

import ortdlpack  # noqa: E402


@jax.jit
def step(feat):
    """Per-sample normalisation and ReLU (the demo's torch step, in jax)."""
    z = (feat - feat.mean(axis=1, keepdims=True)) / (feat.std(axis=1, ddof=1, keepdims=True) + 1e-5)
    return jnp.maximum(z, 0)


def main() -> int:
    models = make_models(os.path.join(tempfile.gettempdir(), "ortdlpack-models"), ["feature", "head"])
    feature = ort.InferenceSession(models["feature"], providers=["CPUExecutionProvider"])
    head = ort.InferenceSession(models["head"], providers=["CPUExecutionProvider"])
    images = jax.random.uniform(jax.random.key(0), (8, 3, 64, 64), jnp.float32)

    (feat,) = ortdlpack.run(feature, {"x": images})  # the jax array is read in place
    feat_j = jax.dlpack.from_dlpack(feat)  # a jax array over ORT's output
    (logits,) = ortdlpack.run(head, {"feat": step(feat_j)})
    logits_j = jax.dlpack.from_dlpack(logits)

    host = np.asarray(images)
    expected = head.run(None, {"feat": np.asarray(step(feature.run(None, {"x": host})[0]))})[0]
    np.testing.assert_allclose(np.asarray(logits_j), expected, rtol=1e-5, atol=1e-6)
    same = feat_j.unsafe_buffer_pointer() == feat.data_ptr
    print(f"jax {jax.__version__}: logits {logits_j.shape} equal to session.run's; jax array over ORT's feature "
          f"output without a copy: {same}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
