#!/usr/bin/env python3
"""A JAX function with an ONNX model inside, under jax.jit and jax.vmap.

    python examples/jax_jit_onnx.py

ortdlpack.jax_function makes the ONNX feature extractor (scripts/make_models.py "feature": [N,3,64,64] -> [N,128])
a function of jax.Arrays: one XLA FFI call to ortdlpack's C++ handler, which runs the session on XLA's own buffers
(no copy, no Python callback, no host round trip). jit compiles the JAX code around it; vmap maps it over a leading
axis (one session run per mapped element).
"""

import os
import sys
import tempfile

os.environ.setdefault("JAX_PLATFORMS", "cpu")  # this example runs on CPU

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import onnxruntime as ort  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "scripts"))
from make_models import make_models  # noqa: E402

import ortdlpack  # noqa: E402


def main() -> int:
    path = make_models(os.path.join(tempfile.gettempdir(), "ortdlpack-models"), ["feature"])["feature"]
    features = ortdlpack.jax_function(path, intra_op_num_threads=2)
    w = jax.random.normal(jax.random.key(0), (128, 10)) * 0.1

    @jax.jit
    def classify(images):
        x = (images.astype(jnp.float32) / 255.0 - 0.5) / 0.25
        return jax.nn.softmax(jnp.maximum(features(x), 0) @ w, axis=-1)

    images = jax.random.randint(jax.random.key(1), (4, 3, 64, 64), 0, 256).astype(jnp.uint8)
    probs = classify(images)
    print("custom call in the compiled module:", "ortdlpack_run" in classify.lower(images).as_text())

    # The same with onnxruntime alone.
    session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])

    def reference(images):
        x = (np.asarray(images).astype(np.float32) / 255.0 - 0.5) / 0.25
        (feat,) = session.run(None, {"x": x})
        return jax.nn.softmax(np.maximum(feat, 0) @ np.asarray(w), axis=-1)

    ok = bool(np.allclose(probs, reference(images), atol=1e-5))
    print(f"jit: {probs.shape}, equal to onnxruntime: {ok}")

    batches = jax.random.randint(jax.random.key(2), (3, 2, 3, 64, 64), 0, 256).astype(jnp.uint8)
    mapped = jax.jit(jax.vmap(classify))(batches)
    same = all(np.allclose(mapped[i], reference(batches[i]), atol=1e-5) for i in range(3))
    print(f"jit(vmap): {mapped.shape}, equal to onnxruntime: {same}")
    ok = ok and same
    print("results equal" if ok else "MISMATCH")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
