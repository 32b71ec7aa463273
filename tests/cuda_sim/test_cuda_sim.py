"""ortdlpack's CUDA paths through its Python API, on the simulated CUDA device (conftest.py): NVIDIA memory of a plugin
EP is kDLCUDA / kDLCUDAHost, allocated and copied through the env; __dlpack__(stream=) follows DLPack's CUDA stream
values ("stream" in the Array API's __dlpack__ and DLPack's python_spec: None and 1 the legacy default stream, 2 the
per-thread default stream, an int > 2 a cudaStream_t, 0 disallowed "due to its ambiguity", -1 "must not perform any
synchronization"); from_dlpack hands the producer its stream and sees the producer's pending work; a wait on another
device than the current one sets it and restores it; failed runtime calls fall back to the host or say so. The test
CUDA runtime follows the CUDA Runtime API reference (tests/cpp/test_cuda_sim.cc quotes it)."""

from __future__ import annotations

import ctypes
import gc
import io
import threading

import numpy as np
import onnxruntime as ort
import pytest

import ortdlpack as od
from conftest import EP_NAME, calls, current_device, read_on, vd

KDLCUDA, KDLCUDAHOST = 2, 3


def pending(device: int, start: float = 0.0, n: int = 64) -> tuple[od.Tensor, np.ndarray]:
    """A device tensor whose contents ortdlpack's copy to the device is still writing (queued on its stream)."""
    x = (np.arange(n, dtype=np.float32) + start).reshape(8, n // 8)
    return od.from_dlpack(x, device=f"cuda:{device}"), x


def test_the_cuda_plugin_ep_is_found_by_every_name(cuda):
    for name in ("cuda", "CUDA", EP_NAME):
        assert od._ortdlpack._testing.resolve_provider(name) == EP_NAME
    assert od.Device("cuda:1").__dlpack_device__() == (KDLCUDA, 1)
    text = io.StringIO()
    od.show_config(file=text)
    assert "-> DLPack cuda:1" in text.getvalue() and "-> DLPack cuda_host:0" in text.getvalue()


def test_cuda_and_pinned_memory_are_exported_as_such_without_a_copy(runtime):
    t, x = pending(1, 3.0)
    assert t.__dlpack_device__() == (KDLCUDA, 1)
    back = od.from_dlpack(t)  # ortdlpack's own tensor as a DLPack producer: the same memory
    assert back.data_ptr == t.data_ptr and back.__dlpack_device__() == (KDLCUDA, 1)
    assert np.array_equal(back.numpy(), x)
    pinned = od.from_dlpack(x, device="cuda_host:0")  # the EP's pinned memory, allocated through the env
    assert pinned.__dlpack_device__() == (KDLCUDAHOST, 0)
    assert np.from_dlpack(pinned).ctypes.data == pinned.data_ptr  # host-accessible: numpy reads it in place


def runtime_devices():
    return [d for d in ort.get_ep_devices() if d.ep_name == EP_NAME]


@pytest.mark.parametrize("stream", [1, 2])
def test_legacy_and_per_thread_default_streams_wait_on_the_device(runtime, stream):
    t, x = pending(0, 1.0)
    capsule = t.__dlpack__(stream=stream)
    assert calls(runtime, "cudaStreamSynchronize") == 0, "the host waited"
    assert calls(runtime, "cudaStreamWaitEvent") == 1
    assert np.array_equal(read_on(runtime, stream, t), x)
    del capsule


def test_a_stream_pointer_waits_on_the_device(runtime):
    s = ctypes.c_void_p()
    assert runtime.cudaStreamCreate(ctypes.byref(s)) == 0
    t, x = pending(0, 2.0)
    t.__dlpack__(stream=s.value)
    assert calls(runtime, "cudaStreamSynchronize") == 0
    assert np.array_equal(read_on(runtime, s.value, t), x)
    assert runtime.cudaStreamDestroy(s) == 0


def test_stream_zero_is_refused_minus_one_orders_nothing_none_waits_on_the_host(runtime):
    t, x = pending(1, 4.0)
    with pytest.raises(ValueError, match="> 0 on CUDA"):
        t.__dlpack__(stream=0)
    t.__dlpack__(stream=-1)
    assert calls(runtime, "cudaStreamWaitEvent") + calls(runtime, "cudaStreamSynchronize") == 0
    t.__dlpack__()  # None: the consumer's stream is unknown, so the host waits
    assert calls(runtime, "cudaStreamSynchronize") == 1
    assert np.array_equal(t.numpy(), x)


def test_a_wait_on_another_device_sets_and_restores_the_current_device(runtime):
    t, x = pending(1, 5.0)
    before = calls(runtime, "cudaSetDevice")
    t.__dlpack__(stream=1)  # device 1's legacy default stream, asked from device 0
    assert current_device(runtime) == 0
    assert calls(runtime, "cudaSetDevice") - before == 2
    assert calls(runtime, "cudaStreamSynchronize") == 0, "the event was recorded on another device's stream"
    assert np.array_equal(read_on(runtime, 1, t), x)
    seen = []
    worker = threading.Thread(target=lambda: (t.__dlpack__(stream=2), seen.append(current_device(runtime))))
    worker.start()
    worker.join()
    assert seen == [0]  # another thread: its own current device, restored too


class Producer:
    """A DLPack producer with its own CUDA stream and a write still queued there (held back by a gate), ordering it
    before the consumer's stream as __dlpack__(stream=) requires (an event, as torch does)."""

    def __init__(self, sim, device: int, values: np.ndarray):
        self.sim, self.values, self.calls = sim, values, []
        assert sim.cudaSetDevice(device) == 0
        self.stream, self.event = ctypes.c_void_p(), ctypes.c_void_p()
        assert sim.cudaStreamCreate(ctypes.byref(self.stream)) == 0
        assert sim.cudaEventCreate(ctypes.byref(self.event)) == 0
        self.tensor = od.from_dlpack(np.zeros_like(values), device=f"cuda:{device}")
        self.tensor.numpy()  # the zeros are on the device
        assert vd.ortdlpack_vd_stream_pause(self.stream) == 0  # the write lands only when the gate opens
        assert sim.cudaMemcpyAsync(self.tensor.data_ptr, values.ctypes.data, values.nbytes, 1, self.stream) == 0
        assert sim.cudaSetDevice(0) == 0

    def release(self):
        vd.ortdlpack_vd_stream_resume(self.stream)

    def __dlpack_device__(self):
        return self.tensor.__dlpack_device__()

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        self.calls.append(stream)
        if stream is not None and stream != -1:
            assert self.sim.cudaEventRecord(self.event, self.stream) == 0
            assert self.sim.cudaStreamWaitEvent(stream, self.event, 0) == 0
        threading.Timer(0.2, self.release).start()  # the device catches up later, as a GPU does
        return self.tensor.__dlpack__(stream=-1, max_version=max_version)


def test_import_hands_the_producer_ortdlpacks_stream_and_sees_its_pending_write(runtime):
    values = np.arange(64, dtype=np.float32).reshape(8, 8) + 9
    producer = Producer(runtime, 1, values)
    t = od.from_dlpack(producer)
    (stream,) = producer.calls
    assert stream not in (None, -1, 0, 1, 2) and vd.ortdlpack_vd_stream_device(stream) == 1  # ortdlpack's own
    assert t.data_ptr == producer.tensor.data_ptr  # no copy
    assert np.array_equal(t.numpy(), values)  # read after the producer's write, though it was queued
    assert runtime.cudaEventDestroy(producer.event) == 0 and runtime.cudaStreamDestroy(producer.stream) == 0


def test_failed_runtime_calls_fall_back_to_the_host_or_say_so(runtime):
    t, x = pending(1, 6.0)
    runtime.ortdlpack_cuda_sim_fail(b"cudaStreamWaitEvent", 700, 1)
    t.__dlpack__(stream=1)  # the device-side wait failed: the host waited instead
    assert calls(runtime, "cudaStreamSynchronize") == 1
    assert np.array_equal(read_on(runtime, 1, t), x)
    t, _ = pending(1, 6.0)
    runtime.ortdlpack_cuda_sim_fail(b"cudaStreamSynchronize", 700, 1)
    with pytest.raises(RuntimeError, match=r"CUDAExecutionProvider device 1 failed \(error 700\)"):
        t.__dlpack__()


def identity_model() -> bytes:
    from onnx import TensorProto, helper

    vi = lambda n: helper.make_tensor_value_info(n, TensorProto.FLOAT, [8, 8])  # noqa: E731
    m = helper.make_model(helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "m", [vi("x")], [vi("y")]),
                          opset_imports=[helper.make_opsetid("", 18)])
    m.ir_version = 9
    return m.SerializeToString()


@pytest.mark.parametrize("way", ["Session", "run"])
def test_sessions_on_the_cuda_plugin_ep_read_and_write_cuda_memory(runtime, way):
    pytest.importorskip("onnx")
    model = identity_model()
    if way == "Session":
        s = od.Session(model, ep="cuda", ep_options={"device_id": "1"})
        run = s.run
    else:
        so = ort.SessionOptions()
        so.add_provider_for_devices([runtime_devices()[1]], {})
        s = ort.InferenceSession(model, so)
        run = lambda feeds, **kw: od.run(s, feeds, **kw)  # noqa: E731
    assert s.get_providers()[0] == EP_NAME
    t, x = pending(1, 7.0)
    (y,) = run({"x": t}, device="cuda:1")
    assert y.__dlpack_device__() == (KDLCUDA, 1) and y.data_ptr != t.data_ptr
    assert np.array_equal(y.numpy(), x)
    dest = od.from_dlpack(np.zeros_like(x), device="cuda:1")
    (z,) = run({"x": y}, outputs={"y": dest})
    assert z.data_ptr == dest.data_ptr and np.array_equal(dest.numpy(), x)
    del s, run
    gc.collect()
    assert np.array_equal(z.numpy(), x)  # outputs outlive their session


@pytest.mark.parametrize("make", ["Session", "InferenceSession"])
def test_device_id_selects_the_cuda_plugin_ep_s_device_on_every_path(runtime, make):
    # The core's one selection (select_ep_devices) for ortdlpack.Session and for the providers ortdlpack's drop-in
    # hands onnxruntime: the CUDA plugin EP is created on device_id's device (the CUDA flavor reports it).
    pytest.importorskip("onnx")
    vd.ortdlpack_vd_last_ep_device.restype = ctypes.c_int
    for device_id in ("1", "0"):
        if make == "Session":
            od.Session(identity_model(), ep="cuda", ep_options={"device_id": device_id})
        else:
            od.InferenceSession(identity_model(), providers=[("cuda", {"device_id": device_id})])
        assert vd.ortdlpack_vd_last_ep_device() == int(device_id), (make, device_id)
