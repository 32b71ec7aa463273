"""What is specific to the real WebGPU EP (onnxruntime-ep-webgpu): found through its installed package by every name
a user writes, registered once, its memory kDLWebGPU, no streams, the onnxruntime versions it works with, the
software-adapter variable left to the user, and what a missing EP package's error says. The device tests it shares
with the virtual device are test_devices.py's `accel` tests."""

from __future__ import annotations

import gc
import importlib.metadata
import os
import subprocess
import sys

import numpy as np
import onnxruntime as ort
import pytest

import ortdlpack as od
from conftest import KDLWEBGPU, ORT_RELEASE, WEBGPU_EP, WEBGPU_MIN_ORT, WEBGPU_PACKAGE, webgpu_or_reason
from conftest import ep_device_library, library_is_loaded
from conftest import helper, TensorProto  # optional: tests using one skip without it


def _add_model() -> bytes:
    vi = lambda n: helper.make_tensor_value_info(n, TensorProto.FLOAT, ["n"])  # noqa: E731
    m = helper.make_model(helper.make_graph([helper.make_node("Add", ["A", "B"], ["C"])], "add",
                                            [vi("A"), vi("B")], [vi("C")]),
                          opset_imports=[helper.make_opsetid("", 18)])
    m.ir_version = 9
    return m.SerializeToString()


def _installed() -> bool:
    try:
        importlib.metadata.distribution(WEBGPU_PACKAGE)
        return True
    except importlib.metadata.PackageNotFoundError:
        return False


def _mesa_version() -> str:
    proc = subprocess.run(["dpkg-query", "-W", "-f=${Version}", "mesa-vulkan-drivers"], capture_output=True, text=True)
    return proc.stdout if proc.returncode == 0 else ""


def test_runs_where_setup_installed_it():
    """Where scripts/setup.sh installed the EP package, Vulkan and Mesa 25's lavapipe, and the onnxruntime is one the
    EP works with, the WebGPU tests run: CI cannot pass with them skipped."""
    mesa = _mesa_version() if os.path.exists("/usr/bin/dpkg-query") else ""
    if not (mesa and _installed() and ORT_RELEASE >= WEBGPU_MIN_ORT and int(mesa.split(".")[0].split(":")[-1]) >= 25):
        pytest.skip(f"not a machine scripts/setup.sh set up for the WebGPU EP (mesa-vulkan-drivers {mesa or 'absent'}, "
                    f"{WEBGPU_PACKAGE} {'installed' if _installed() else 'absent'}, onnxruntime {ort.__version__})")
    found = webgpu_or_reason()
    if ORT_RELEASE[:2] == (1, 26):  # the EP's OrtEp is refused for every session: not registered, and said so
        assert isinstance(found, str) and f"{WEBGPU_PACKAGE} 0.4" in found and f"ONNX Runtime {ort.__version__}" in found
        assert "invalid ort_version_supported" in found and "not registered" in found, found
        assert not [d for d in ort.get_ep_devices() if d.ep_name == WEBGPU_EP]
        return
    assert not isinstance(found, str), found


def test_found_by_every_name_and_registered_once_from_its_package(webgpu):
    for name in ("webgpu", "WebGPU", WEBGPU_EP):
        s = od.Session(_add_model(), ep=name)
        (c,) = s.run({"A": np.ones(3, np.float32), "B": np.ones(3, np.float32)})
        assert c.device == webgpu.device and np.array_equal(c.numpy(), [2, 2, 2])
    # One registration, of the installed package's own library file (the distribution's RECORD names it).
    dist = importlib.metadata.distribution(WEBGPU_PACKAGE)
    library = next(os.path.realpath(dist.locate_file(f)) for f in dist.files
                   if f.name.endswith((".so", ".dll", ".dylib")))
    mine = [d for d in ort.get_ep_devices() if d.ep_name == WEBGPU_EP]
    assert len(mine) == 1 and library_is_loaded(library)
    # Where onnxruntime names the library of its EP devices (ep_device_library), the one device is that file's.
    assert ep_device_library(mine[0]) in (library, None)


def test_memory_is_kdlwebgpu(webgpu):
    info = webgpu.ep_device.memory_info(ort.OrtDeviceMemoryType.DEFAULT)
    assert (info.name, info.device_vendor_id) == ("WebGPU_Buf", 0)
    assert info.device_mem_type == ort.OrtDeviceMemoryType.DEFAULT
    assert webgpu.ep_device.memory_info(ort.OrtDeviceMemoryType.HOST_ACCESSIBLE) is None  # no pinned memory
    assert webgpu.device == od.Device("webgpu:0") == od.Device((KDLWEBGPU, 0))
    assert (webgpu.device.type, webgpu.device.kind) == (KDLWEBGPU, "webgpu")
    t = od.from_dlpack(np.arange(4, dtype=np.float32), device="webgpu:0")
    assert t.__dlpack_device__() == (KDLWEBGPU, 0)
    assert t.data_ptr != 0  # a WGPUBuffer handle, not an address: only a WebGPU consumer can use it


def test_no_streams_copies_are_synchronous(webgpu):
    with pytest.raises(RuntimeError, match="does not support streams"):
        webgpu.ep_device.create_sync_stream()
    x = np.arange(1 << 16, dtype=np.float32)
    t = od.from_dlpack(x, device=webgpu.device)
    with pytest.raises(ValueError, match="stream must be None or -1"):  # DLPack's stream means nothing here
        t.__dlpack__(stream=1)
    assert np.array_equal(np.from_dlpack(od.from_dlpack(t.__dlpack__(stream=-1, dl_device=(1, 0), copy=True))), x)


def test_the_library_never_sets_the_software_adapter_variable(tmp_path):
    """ORT_WEBGPU_EP_ALLOW_SOFTWARE_ADAPTER lets the EP run on a CPU (Mesa's lavapipe) where there is no GPU: the
    user's choice. Without it, on a machine without a GPU, the error says what the EP needs; with or without a GPU,
    ortdlpack leaves the variable unset."""
    if not _installed() or ORT_RELEASE < WEBGPU_MIN_ORT:
        pytest.skip(f"{WEBGPU_PACKAGE} cannot register with onnxruntime {ort.__version__} (or is not installed)")
    script = (
        "import ctypes, numpy as np, ortdlpack\n"
        "try:\n"
        "    ortdlpack.from_dlpack(np.ones(2, np.float32), device='webgpu:0'); print('hardware adapter')\n"
        "except BufferError as e:\n"
        "    print(e)\n"
        "libc = ctypes.CDLL(None); libc.getenv.restype = ctypes.c_char_p\n"
        "print('variable:', libc.getenv(b'ORT_WEBGPU_EP_ALLOW_SOFTWARE_ADAPTER'))\n")
    env = {k: v for k, v in os.environ.items() if k != "ORT_WEBGPU_EP_ALLOW_SOFTWARE_ADAPTER"}
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, env=env,
                          cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    first, last = proc.stdout.strip().splitlines()
    assert first == "hardware adapter" or (
        "no 'WebGpuExecutionProvider' device" in first and "ORT_WEBGPU_EP_ALLOW_SOFTWARE_ADAPTER=1" in first), first
    assert last == "variable: None"


@pytest.mark.skipif(ORT_RELEASE >= WEBGPU_MIN_ORT, reason=f"onnxruntime {ort.__version__} is one the WebGPU EP takes")
def test_an_onnxruntime_too_old_for_the_ep_is_a_clear_error():
    # The oldest-onnxruntime CI leg (1.23.2) sees the package through its .pth: the EP refuses to register there.
    if not _installed():
        pytest.skip(f"{WEBGPU_PACKAGE} is not installed")
    for attempt in (lambda: od.from_dlpack(np.ones(2, np.float32), device="webgpu:0"),
                    lambda: od.Session(_add_model(), ep="webgpu")):
        with pytest.raises(BufferError, match=r"1\.24\.4"):
            attempt()


def test_run_binds_webgpu_memory_into_an_inference_session_on_every_onnxruntime_the_ep_takes(webgpu):
    # Before 1.30 onnxruntime's Python names raw-bound WebGPU memory "Cuda" and the EP refuses it; ortdlpack.run binds
    # through ORT's C API on the session's own OrtSession (the core's executor), which names it as the EP does.
    s = webgpu.inference_session(_add_model())
    a = od.from_dlpack(np.arange(3, dtype=np.float32), device=webgpu.device)
    (c,) = od.run(s, {"A": a, "B": a}, device=webgpu.device)
    assert c.device == webgpu.device and c.numpy().tolist() == [0.0, 2.0, 4.0]


# --- EP packages that are not installed ---------------------------------------------------------------------------


@pytest.mark.parametrize("name, package", [("mlx", "onnxruntime-ep-mlx"),
                                           ("tensorrt_rtx", "onnxruntime-ep-nv-tensorrt-rtx-cu13")])
def test_a_missing_ep_package_says_what_to_pip_install(name, package):
    try:
        importlib.metadata.distribution(package)
        pytest.skip(f"{package} is installed")
    except importlib.metadata.PackageNotFoundError:
        pass
    with pytest.raises(BufferError, match=rf"no installed {package}.*pip install {package}"):
        od.Session(_add_model(), ep=name)


def test_memory_of_a_missing_ep_package_says_what_to_pip_install():
    # Metal memory (kDLMetal) is the MLX EP's: allocating it names the package that brings it.
    with pytest.raises(BufferError, match=r"Metal:0.*pip install onnxruntime-ep-mlx"):
        od.from_dlpack(np.ones(2, np.float32), device=(8, 0))


def test_an_unknown_ep_name_says_which_package_was_looked_for():
    with pytest.raises(ValueError, match=r"no installed package onnxruntime-ep-nosuchep.*'webgpu'"):
        od.Session(_add_model(), ep="nosuchep")


def test_a_session_that_captures_graphs_runs_one_binding_per_graph(webgpu):
    # A replay of a captured graph reads and writes the buffers of the run that captured it, whatever a later run binds:
    # a plain run, or a second Binding on the same graph, would silently get another run's results. onnxruntime's
    # Python checks its own run and run_with_iobinding; the core's executor, which ortdlpack.run and bind() use on the
    # session's own OrtSession, refuses the same (session.h).
    if not hasattr(ort.InferenceSession, "run_with_iobinding") or ORT_RELEASE < (1, 32):
        pytest.skip("WebGPU graph capture through a plugin EP needs onnxruntime >= 1.32")
    vi = lambda n: helper.make_tensor_value_info(n, TensorProto.FLOAT, [8])  # noqa: E731  (capture: static shapes)
    m = helper.make_model(helper.make_graph([helper.make_node("Add", ["A", "B"], ["C"])], "add", [vi("A"), vi("B")],
                                            [vi("C")]), opset_imports=[helper.make_opsetid("", 18)])
    m.ir_version = 9
    so = ort.SessionOptions()
    so.enable_mem_pattern = False
    so.add_provider_for_devices([webgpu.ep_device], {"enableGraphCapture": "1"})
    session = od.InferenceSession(m.SerializeToString(), so)
    a = od.from_dlpack(np.arange(8, dtype=np.float32), device=webgpu.device)
    with pytest.raises(ValueError, match="replays captured device graphs.*bind\\(\\) once"):
        od.run(session, {"A": a, "B": a})
    skip = ort.RunOptions()
    skip.add_run_config_entry("gpu_graph_id", "-1")
    assert np.array_equal(od.run(session, {"A": a, "B": a}, run_options=skip)[0].numpy(), 2 * np.arange(8))
    first = session.bind({"A": a, "B": a})
    for _ in range(4):  # warm-up runs, the capture, replays
        assert np.array_equal(first.run()[0].numpy(), 2 * np.arange(8))
    second = session.bind({"A": a, "B": a})
    with pytest.raises(ValueError, match="graph 0 of the session was captured by another Binding"):
        second.run()
    other = ort.RunOptions()
    other.add_run_config_entry("gpu_graph_id", "1")
    for _ in range(4):
        assert np.array_equal(second.run(other)[0].numpy(), 2 * np.arange(8))
    del first
    gc.collect()
    with pytest.raises(ValueError, match="released since"):  # graph 0 stays captured on the released tensors
        second.run()
