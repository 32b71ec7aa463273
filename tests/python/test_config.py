"""ortdlpack.show_config() / python -m ortdlpack: what a bug report needs, as this process sees it."""

import importlib.metadata as metadata
import io
import subprocess
import sys
import types

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
    _, devices = vd
    memories, streams = od._ortdlpack._ep_device_config(devices[1])
    kinds = {kind: (memory, dlpack, why) for kind, memory, dlpack, why in memories}
    assert kinds["default"][1] == "ext_dev:1" and kinds["default"][2] is None
    assert "VirtualDevice" in kinds["default"][0]
    assert streams  # the plugin exports the ortdlpack stream convention
    text = config()
    assert "VirtualDeviceEP" in text and "-> DLPack ext_dev:1" in text
    assert "streams ortdlpack can order: yes" in text


def test_frameworks_are_reported_with_their_exchange_api():
    text = config()
    import numpy as np

    assert f"numpy {np.__version__} (C exchange API: " in text
    for module in ("torch", "cupy", "jax", "tensorflow"):
        assert f"{module}: not installed" in text or f"{module} " in text
    try:
        import torch
    except ImportError:
        return
    has = hasattr(torch.Tensor, "__dlpack_c_exchange_api__")
    assert f"torch {torch.__version__} (C exchange API: {'yes' if has else 'no'})" in text


def test_an_ep_device_the_env_does_not_have_is_a_value_error():
    fake = types.SimpleNamespace(ep_name="NoSuchExecutionProvider",
                                 device=types.SimpleNamespace(type=0, vendor_id=0, device_id=0))
    with pytest.raises(ValueError):
        od._ortdlpack._ep_device_config(fake)


def test_python_dash_m_ortdlpack_prints_it():
    run = subprocess.run([sys.executable, "-m", "ortdlpack"], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith(f"ortdlpack {od.__version__} ")
    assert "EP devices of the environment:" in run.stdout and "Frameworks: numpy" in run.stdout
