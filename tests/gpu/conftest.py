"""CUDA tests (issue 9): run where torch sees a CUDA device and the installed onnxruntime ships the CUDA EP
(onnxruntime-gpu); everywhere else every test here is skipped with the reason. scripts/gpu_check.sh runs them on a
lent GPU machine."""

from __future__ import annotations

import os
import sys

import pytest

try:
    import torch  # before onnxruntime: onnxruntime-gpu then uses the CUDA libraries torch loaded
except ImportError:
    torch = None
import onnxruntime as ort

CUDA_LIB = os.path.join(os.path.dirname(ort.__file__), "capi", "libonnxruntime_providers_cuda.so")
if torch is None:
    SKIP = "the CUDA tests use torch as the CUDA producer (not installed)"
elif not torch.cuda.is_available():
    SKIP = "no CUDA device"
elif not os.path.exists(CUDA_LIB):
    SKIP = f"onnxruntime {ort.__version__} has no CUDA EP (pip install onnxruntime-gpu)"
else:
    SKIP = None
    if hasattr(ort, "preload_dlls"):
        ort.preload_dlls()


_HERE = os.path.dirname(os.path.abspath(__file__))


def pytest_collection_modifyitems(items):
    # This hook sees every item of the session (`pytest tests` collects tests/python too): skip only this folder's.
    if SKIP:
        for item in items:
            if os.path.dirname(os.path.abspath(str(item.fspath))).startswith(_HERE):
                item.add_marker(pytest.mark.skip(reason=SKIP))


sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "scripts"))
from make_models import make_models  # noqa: E402


@pytest.fixture(scope="session")
def models(tmp_path_factory):
    return make_models(str(tmp_path_factory.mktemp("models")), ["add_tiny", "feature", "head"])


def cuda_session(path, tf32: bool = False):
    """An onnxruntime session on the CUDA EP (TF32 off, so results compare with a CPU session)."""
    return ort.InferenceSession(path, providers=[("CUDAExecutionProvider", {"use_tf32": "1" if tf32 else "0"}),
                                                 "CPUExecutionProvider"])


def cpu_session(path):
    return ort.InferenceSession(path, providers=["CPUExecutionProvider"])


def busy(stream, ms: int = 100):
    """Queues `ms` of GPU busy-waiting on `stream`: work a consumer must be ordered after."""
    with torch.cuda.stream(stream):
        torch.cuda._sleep(int(ms * 1_000_000))
