#!/usr/bin/env python3
"""feature -> CuPy step -> head on the GPU: cupy arrays into ONNX Runtime's CUDA EP and back, without a copy.

    python examples/cupy_pipeline.py        # needs cupy, a CUDA GPU and onnxruntime-gpu

Exits 0 after saying why when there is no CUDA (the test skips then).
"""

import os
import sys
import tempfile

import numpy as np
import onnxruntime as ort

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "scripts"))
from make_models import make_models  # noqa: E402

import ortdlpack  # noqa: E402


def no_cuda() -> str | None:
    try:
        import cupy
    except ImportError:
        return "cupy is not installed (pip install cupy-cuda13x)"
    try:
        if cupy.cuda.runtime.getDeviceCount() == 0:
            return "no CUDA device"
    except cupy.cuda.runtime.CUDARuntimeError as e:
        return f"no CUDA device ({e})"
    if "CUDAExecutionProvider" not in ort.get_available_providers():
        return "onnxruntime has no CUDAExecutionProvider (pip install onnxruntime-gpu)"
    return None


def main() -> int:
    reason = no_cuda()
    if reason:
        print(f"skipped: {reason}")
        return 0
    import cupy as cp

    def step(feat):
        z = (feat - feat.mean(axis=1, keepdims=True)) / (feat.std(axis=1, ddof=1, keepdims=True) + 1e-5)
        return cp.maximum(z, 0)

    models = make_models(os.path.join(tempfile.gettempdir(), "ortdlpack-models"), ["feature", "head"])
    providers = [("CUDAExecutionProvider", {"device_id": "0", "use_tf32": "0"})]
    feature = ort.InferenceSession(models["feature"], providers=providers)
    head = ort.InferenceSession(models["head"], providers=providers)
    images = cp.random.default_rng(0).random((8, 3, 64, 64), dtype=cp.float32)
    logits = cp.empty((8, 10), cp.float32)  # ORT writes the result here, in GPU memory

    (feat,) = ortdlpack.run(feature, {"x": images})
    feat_cp = cp.from_dlpack(feat)  # a cupy view of ORT's GPU output
    ortdlpack.run(head, {"feat": step(feat_cp)}, outputs={"logits": logits})

    expected = head.run(None, {"feat": cp.asnumpy(step(cp.asarray(feature.run(None, {"x": images.get()})[0])))})[0]
    np.testing.assert_allclose(logits.get(), expected, rtol=1e-4, atol=1e-5)
    same = feat_cp.data.ptr == feat.data_ptr
    print(f"cupy {cp.__version__}: logits equal to session.run's; cupy view of ORT's GPU output without a copy: {same}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
