"""Every example runs as a user runs it (a subprocess with this interpreter) and ends well; each checks its own
results (same answers as onnxruntime alone, same pointers) and exits non-zero otherwise."""

from __future__ import annotations

import pytest
from conftest import needs, run_script


def run_example(name: str, *args: str) -> str:
    return run_script(f"examples/{name}", *args)


def test_numpy_pipeline():
    assert "equal to session.run's" in run_example("numpy_pipeline.py")


def test_jax_pipeline():
    needs("jax")
    out = run_example("jax_pipeline.py")
    assert "without a copy: True" in out


def test_torch_compile_onnx():
    needs("torch")
    out = run_example("torch_compile_onnx.py")
    assert "graph breaks: 0" in out and "graphs compiled for 3 batch sizes: 1" in out and "results equal" in out


def test_jax_jit_onnx():
    needs("jax")
    out = run_example("jax_jit_onnx.py")
    assert "custom call in the compiled module: True" in out and "results equal" in out


def test_tensorflow_pipeline():
    needs("tensorflow")
    out = run_example("tensorflow_pipeline.py")
    assert "images read in TF's own buffer: True" in out


def test_cupy_pipeline():
    needs("cupy")
    out = run_example("cupy_pipeline.py")
    if out.startswith("skipped:"):
        pytest.skip(out.strip())
    assert "without a copy: True" in out


def test_pipeline_demo():
    needs("torch")
    out = run_example("pipeline_demo.py", "--budget", "0.05")
    assert "results equal" in out


@pytest.mark.parametrize("device", ["auto", "virtual"])
def test_accelerator_pipeline(vd, device):
    """The main demo: on the best device here (CUDA, else the WebGPU EP, else the virtual accelerator), and on the
    virtual accelerator. `vd` skips, with the plugin's reason, on an onnxruntime the virtual accelerator cannot run
    on (< 1.29)."""
    needs("torch")
    out = run_example("accelerator_pipeline.py", "--budget", "0.05", "--device", device, "--batches", "1,2")
    assert "results equal" in out and "same pointer True" in out
    assert "same pointer False" not in out and "same handle False" not in out
    if "memory-bound chain" in out:  # CUDA and WebGPU: the chain kept on the device is measured both ways
        assert "Session, on device" in out and "run, on device" in out
