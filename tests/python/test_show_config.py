"""ortdlpack.show_config() / python -m ortdlpack: what a bug report needs, as this process sees it."""

import importlib.metadata as metadata
import io
import subprocess
import sys

import onnxruntime as ort
import pytest

import ortdlpack as od


def config() -> str:
    out = io.StringIO()
    od.show_config(file=out)
    return out.getvalue()


def test_versions_and_the_onnxruntime_distribution():
    text = config()
    major, minor = od.DLPACK_VERSION
    assert f"ortdlpack {od.__version__} (DLPack {major}.{minor})" in text
    assert f"onnxruntime {ort.__version__} (C API version in use {od._ortdlpack._ort_api_version()})" in text
    for dist in metadata.packages_distributions()["onnxruntime"]:  # onnxruntime, onnxruntime-gpu, ...
        assert f"from {dist} {metadata.version(dist)}" in text
    assert f"EP libraries shipped with it ({od._ortdlpack._ep_library_dir()})" in text
    assert "EP packages:" in text


def test_every_ep_device_of_the_env_is_listed_with_its_memory():
    text = config()
    devices = ort.get_ep_devices()
    assert f"EP devices of the environment: {len(devices)}" in text
    cpu = next(d for d in devices if d.ep_name == "CPUExecutionProvider")
    assert f"  CPUExecutionProvider ({cpu.ep_vendor}) on CPU" in text
    assert "memory: host memory (DLPack cpu)" in text  # the CPU EP declares no memory of its own


def test_a_plugin_device_maps_to_its_dlpack_device_and_has_streams(vd):
    text = config()
    assert "VirtualDeviceEP" in text and "-> DLPack ext_dev:1" in text
    line = next(x for x in text.splitlines() if "default memory:" in x and "ext_dev:1" in x)
    assert "VirtualDevice" in line  # the memory as the core describes it
    assert "streams ortdlpack can order: yes" in text  # the plugin exports the ortdlpack stream convention


def test_frameworks_are_reported_from_their_metadata():
    """Versions from the installed distributions' metadata; the C exchange API of those the process imported."""
    import numpy as np

    text = config()
    distributions = metadata.packages_distributions()
    assert f"numpy {metadata.version('numpy')} (C exchange API: " in text
    for module in ("torch", "cupy", "jax", "tensorflow"):
        if module not in distributions:
            assert f"{module}: not installed" in text
            continue
        dist = distributions[module][0]
        assert f"{module} {metadata.version(dist)}" in text
    assert np.__version__ == metadata.version("numpy")
    try:
        import torch
    except ImportError:
        return
    has = hasattr(torch.Tensor, "__dlpack_c_exchange_api__")
    assert f"torch {metadata.version('torch')} (C exchange API: {'yes' if has else 'no'})" in config()


_NO_FRAMEWORK = r"""
import io, runpy, sys
import onnxruntime, ortdlpack
ortdlpack.show_config(file=io.StringIO())
runpy.run_module("ortdlpack", run_name="__main__")
print("registered:", sorted({d.ep_name for d in onnxruntime.get_ep_devices()}))
print("imported:", sorted(m for m in ("torch", "tensorflow", "jax", "cupy") if m in sys.modules))
"""


def test_show_config_and_python_dash_m_import_no_framework_and_register_nothing():
    """Asking for a bug report changes nothing in the process it reports on: tensorflow, once imported, makes Mesa's
    lavapipe crash at its next shader compile (the WebGPU EP's kernels: docs/devices.md); the EP packages it lists are
    read, not registered."""
    run = subprocess.run([sys.executable, "-c", _NO_FRAMEWORK], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert "registered: ['CPUExecutionProvider']\nimported: []" in run.stdout


_SHOW_CONFIG_THEN_WEBGPU = r"""
import sys
import numpy as np, ortdlpack
ortdlpack.show_config()
s = ortdlpack.Session(sys.argv[1], ep="webgpu")
(y,) = s.run({"x": np.arange(8, dtype=np.float32)})
print("ran:", ortdlpack.from_dlpack(y, device="cpu").numpy().tolist())
"""


def test_show_config_then_a_webgpu_run_does_not_crash(webgpu, tmp_path):
    """The issue's repro: show_config() imported tensorflow to report its version, and the next WebGPU kernel
    compiled on lavapipe segfaulted."""
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper

    vi = lambda n: helper.make_tensor_value_info(n, TensorProto.FLOAT, [8])  # noqa: E731
    model = helper.make_model(helper.make_graph([helper.make_node("Add", ["x", "x"], ["y"])], "m", [vi("x")],
                                                [vi("y")]), opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 9
    onnx.save(model, str(tmp_path / "add.onnx"))
    run = subprocess.run([sys.executable, "-c", _SHOW_CONFIG_THEN_WEBGPU, str(tmp_path / "add.onnx")],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert "ran: [0.0, 2.0, 4.0, 6.0, 8.0, 10.0, 12.0, 14.0]" in run.stdout


def test_python_dash_m_ortdlpack_prints_it():
    run = subprocess.run([sys.executable, "-m", "ortdlpack"], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith(f"ortdlpack {od.__version__} ")
    assert "EP devices of the environment:" in run.stdout and "Frameworks: numpy" in run.stdout
