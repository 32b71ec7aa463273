"""The Python side of ortdlpack's CUDA paths on the simulated CUDA device (tests/cpp/cuda_sim, docs/devices.md).

This suite runs in a process of its own (scripts/test.sh), because the test CUDA runtime has to be the process's
``libcudart.so.13`` before anything looks for one: it is loaded here, by its absolute path in the build tree, before
ortdlpack is imported, and the virtual device's CUDA flavor is registered as the plugin EP "CUDAExecutionProvider".
No framework with a CUDA runtime of its own may be imported here (torch would bind its CUDA runtime calls to the
simulation): the tests use ortdlpack's own tensors and a ctypes DLPack producer. A stand-in, not proof: tests/gpu on
a real GPU stays the judge."""

from __future__ import annotations

import ctypes
import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("ORTDLPACK_BUILD_DIR", os.path.join(ROOT, "build"))
SIM_PATH = os.path.join(BUILD, "tests", "cpp", "cuda_sim", "libcudart.so.13")
VD_CUDA_PATH = os.path.join(BUILD, "plugins", "virtual_device", "libortdlpack_virtual_cuda.so")
RTLD_NOLOAD = 4

_missing = [p for p in (SIM_PATH, VD_CUDA_PATH) if not os.path.exists(p)]
_frameworks = sorted(m for m in ("torch", "cupy", "jax", "tensorflow") if m in sys.modules)
if _missing:
    SKIP = f"the simulated CUDA device is not built ({', '.join(_missing)}: scripts/setup.sh builds build/)"
elif _frameworks:
    SKIP = f"{', '.join(_frameworks)} imported before the test CUDA runtime: run tests/cuda_sim in a process of its own"
else:
    SKIP = None
    sim = ctypes.CDLL(SIM_PATH)  # before ortdlpack: the runtime ortdlpack finds already loaded, as for a real GPU
    vd = ctypes.CDLL(VD_CUDA_PATH)  # the copy the runtime links (and ORT registers below)
    # The process's libcudart.so.13 must be this one: a real runtime loaded earlier would be found first.
    if ctypes.CDLL("libcudart.so.13", mode=RTLD_NOLOAD)._handle != sim._handle:
        SKIP = "another libcudart.so.13 was loaded before the test CUDA runtime"

import numpy as np  # noqa: E402
import onnxruntime as ort  # noqa: E402

import ortdlpack as od  # noqa: E402

EP_NAME = "CUDAExecutionProvider"


def pytest_collection_modifyitems(config, items):
    if SKIP:
        for item in items:
            item.add_marker(pytest.mark.skip(reason=SKIP))


@pytest.fixture(scope="session")
def cuda():
    """The test CUDA runtime (ctypes), the CUDA flavor registered as the plugin EP, and its two EP devices."""
    for name in ("cudaGetDevice", "cudaSetDevice", "cudaStreamCreate", "cudaStreamDestroy", "cudaStreamSynchronize",
                 "cudaStreamWaitEvent", "cudaEventCreate", "cudaEventRecord", "cudaEventDestroy", "cudaMemcpyAsync"):
        getattr(sim, name).restype = ctypes.c_int
    sim.cudaMemcpyAsync.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_void_p]
    sim.cudaStreamWaitEvent.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint]
    sim.cudaEventRecord.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
    sim.cudaStreamSynchronize.argtypes = [ctypes.c_void_p]
    sim.cudaStreamDestroy.argtypes = [ctypes.c_void_p]
    sim.cudaEventDestroy.argtypes = [ctypes.c_void_p]
    sim.ortdlpack_cuda_sim_calls.restype = ctypes.c_uint64
    sim.ortdlpack_cuda_sim_calls.argtypes = [ctypes.c_char_p]
    sim.ortdlpack_cuda_sim_fail.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_uint64]
    sim.ortdlpack_cuda_sim_calls_from_host_functions.restype = ctypes.c_uint64
    sim.ortdlpack_cuda_sim_stream.restype = ctypes.c_void_p
    sim.ortdlpack_cuda_sim_stream.argtypes = [ctypes.c_void_p]
    vd.ortdlpack_vd_stream_pause.argtypes = [ctypes.c_void_p]
    vd.ortdlpack_vd_stream_resume.argtypes = [ctypes.c_void_p]
    vd.ortdlpack_vd_set_stream_delay_us.argtypes = [ctypes.c_uint64]
    vd.ortdlpack_vd_stream_delay_us.restype = ctypes.c_uint64
    vd.ortdlpack_vd_stream_device.argtypes = [ctypes.c_void_p]
    od.register_execution_provider_library(EP_NAME, VD_CUDA_PATH)  # under the EP's own name, as a CUDA plugin is
    devices = [d for d in ort.get_ep_devices() if d.ep_name == EP_NAME]
    assert len(devices) == 2
    return sim, devices


@pytest.fixture
def runtime(cuda):
    """The runtime with counters reset, current device 0, 20 ms per queued copy; checks after the test that no host
    function called the runtime."""
    sim, _ = cuda
    delay = vd.ortdlpack_vd_stream_delay_us()
    vd.ortdlpack_vd_set_stream_delay_us(20000)
    sim.ortdlpack_cuda_sim_reset()
    assert sim.cudaSetDevice(0) == 0
    yield sim
    vd.ortdlpack_vd_set_stream_delay_us(delay)
    sim.cudaSetDevice(0)
    assert sim.ortdlpack_cuda_sim_calls_from_host_functions() == 0


def calls(sim, name: str) -> int:
    return sim.ortdlpack_cuda_sim_calls(name.encode())


def current_device(sim) -> int:
    d = ctypes.c_int(-1)
    assert sim.cudaGetDevice(ctypes.byref(d)) == 0
    return d.value


def read_on(sim, stream: int, t: od.Tensor) -> np.ndarray:
    """Reads a float32 device tensor with a copy queued on CUDA stream `stream` of its device, as a consumer does."""
    previous = current_device(sim)
    assert sim.cudaSetDevice(t.device.id) == 0
    out = np.full(t.shape, -1.0, np.float32)
    assert sim.cudaMemcpyAsync(out.ctypes.data, t.data_ptr, out.nbytes, 2, stream) == 0
    assert sim.cudaStreamSynchronize(stream) == 0
    assert sim.cudaSetDevice(previous) == 0
    return out
