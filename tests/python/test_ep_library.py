"""EP libraries shipped with the installed onnxruntime (ep_library.h): registered from its own folder only, when a
tensor or session needs one, with errors that say what to install. The CPU wheel has no GPU EP library, so the CUDA
paths are checked through their failures here; tests/gpu runs them for real."""

from __future__ import annotations

import os

import numpy as np
import onnxruntime as ort
import pytest

import ortdlpack
from conftest import EP_NAME

HAS_CUDA_LIB = os.path.exists(os.path.join(os.path.dirname(ort.__file__), "capi", "libonnxruntime_providers_cuda.so"))
cpu_wheel = pytest.mark.skipif(HAS_CUDA_LIB, reason="this onnxruntime ships the CUDA EP library (tests/gpu covers it)")


def test_libraries_are_looked_for_in_the_installed_onnxruntime_only():
    assert os.path.realpath(ortdlpack._ortdlpack._ep_library_dir()) == os.path.realpath(
        os.path.join(os.path.dirname(ort.__file__), "capi"))


@cpu_wheel
@pytest.mark.parametrize("name", ["cuda", "CUDA", "CUDAExecutionProvider"])
def test_session_on_cuda_without_the_library_says_what_to_install(models, name):
    with pytest.raises(BufferError, match=r"libonnxruntime_providers_cuda\.so.*pip install onnxruntime-gpu"):
        ortdlpack.Session(models["add_tiny"], ep=name)


@cpu_wheel
def test_cuda_allocation_without_the_library_says_what_to_install():
    with pytest.raises(BufferError, match=r"serving Cuda:0.*pip install onnxruntime-gpu"):
        ortdlpack.from_dlpack(np.ones(3, np.float32), device="cuda:0")


@cpu_wheel
def test_a_decoy_in_the_working_directory_is_never_loaded(tmp_path, monkeypatch, vd):
    decoy = tmp_path / "libonnxruntime_providers_tensorrt.so"  # a row no other test here tries (tried once a process)
    decoy.write_bytes(open(ortdlpack.testing.virtual_device_library(), "rb").read())
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("LD_LIBRARY_PATH", str(tmp_path))
    with pytest.raises(BufferError, match="has no libonnxruntime_providers_tensorrt.so"):
        ortdlpack.Session(b"", ep="trt")
    assert str(tmp_path) not in open("/proc/self/maps").read()


@pytest.mark.parametrize("make", ["Session", "InferenceSession"])
def test_ep_options_device_id_picks_one_device(vd, models, make):
    # One selection for every session path (the core's select_ep_devices): the EP is created on device_id's device,
    # which the virtual device reports (ortdlpack_vd_last_ep_device).
    lib, _ = vd

    def session(device_id):
        options = {"device_id": device_id} if device_id is not None else {}
        if make == "Session":
            return ortdlpack.Session(models["add_tiny"], ep=EP_NAME, ep_options=options)
        return ortdlpack.InferenceSession(models["add_tiny"], providers=[(EP_NAME, options)])

    for device_id, created_on in (("1", 1), ("0", 0), (None, 0)):
        s = session(device_id)
        assert s.get_inputs()[0].name == "x"
        assert lib.ortdlpack_vd_last_ep_device() == created_on, (make, device_id)
    with pytest.raises(ValueError, match=r"device_id '7'.*devices 0\.\.1"):
        session("7")
