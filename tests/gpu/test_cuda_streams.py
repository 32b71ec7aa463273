"""Stream ordering on CUDA with the producer's work queued on a side stream while the consumer stays on torch's
default stream (test_cuda_ordering.py has the issue's repro, consumer inside the producer's stream context).

Skipped without torch with CUDA, a CUDA device, or an onnxruntime that carries the CUDA EP. CI has no GPU: these run
on a lent GPU machine (docs/streams.md says what they check). Run: python -m pytest tests/gpu -q
"""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)
ort = pytest.importorskip("onnxruntime")
if "CUDAExecutionProvider" not in ort.get_available_providers():
    pytest.skip("this onnxruntime has no CUDA execution provider (install onnxruntime-gpu)", allow_module_level=True)

import ortdlpack  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "scripts"))
from make_models import make_models  # noqa: E402

TRIES = 5


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    return make_models(str(tmp_path_factory.mktemp("models")), ["add_tiny"])


@pytest.fixture(scope="module")
def cuda_session(models):
    return ort.InferenceSession(models["add_tiny"], providers=["CUDAExecutionProvider"])


def queued_copy(src: torch.Tensor) -> torch.Tensor:
    """x gets src's values on a side stream, behind a long sleep: still queued when this returns (issue 9, item 1)."""
    x = torch.zeros_like(src)
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        torch.cuda._sleep(100_000_000)
        x.copy_(src)
    return x


def test_import_then_numpy_is_ordered_after_the_producer():
    src = torch.arange(100, dtype=torch.float32, device="cuda").reshape(1, 100)
    for _ in range(TRIES):
        t = ortdlpack.from_dlpack(queued_copy(src))
        np.testing.assert_array_equal(t.numpy(), src.cpu().numpy())


def test_run_on_a_cuda_session_is_ordered_after_the_producer(cuda_session):
    src = torch.arange(100, dtype=torch.float32, device="cuda").reshape(1, 100)
    expected = cuda_session.run(None, {"x": src.cpu().numpy()})[0]
    for _ in range(TRIES):
        (y,) = ortdlpack.run(cuda_session, {"x": queued_copy(src)})
        np.testing.assert_allclose(np.asarray(y.to("cpu")), expected, rtol=1e-6)


def test_export_to_a_torch_consumer_on_another_stream():
    host = np.arange(1 << 20, dtype=np.float32)
    for _ in range(TRIES):
        t = ortdlpack.from_dlpack(host).to("cuda:0")  # queued on ortdlpack's CUDA stream
        s = torch.cuda.Stream()
        with torch.cuda.stream(s):
            y = torch.from_dlpack(t)  # torch names s: s waits for ortdlpack's copy
            total = y.sum()
        s.synchronize()
        assert float(total) == float(host.sum(dtype=np.float64))


def test_session_on_the_callers_stream_needs_no_host_wait(models):
    # ortdlpack.Session(stream=) puts ORT on torch's stream (the CUDA EP's user_compute_stream): the run is queued
    # behind the producer's work on the same stream, and torch reads the output on that stream, with no wait anywhere.
    src = torch.arange(100, dtype=torch.float32, device="cuda").reshape(1, 100)
    expected = ort.InferenceSession(models["add_tiny"], providers=["CUDAExecutionProvider"]).run(
        None, {"x": src.cpu().numpy()})[0]
    s = torch.cuda.Stream()
    sess = ortdlpack.Session(models["add_tiny"], ep="cuda", ep_options={"device_id": "0"}, stream=s.cuda_stream)
    for _ in range(TRIES):
        x = torch.zeros_like(src)
        with torch.cuda.stream(s):
            torch.cuda._sleep(100_000_000)
            x.copy_(src)
            (y,) = sess.run({"x": x})
            out = torch.from_dlpack(y) * 1  # on s, after ORT's kernels
        s.synchronize()
        np.testing.assert_allclose(out.cpu().numpy(), expected, rtol=1e-6)


def test_session_on_the_default_stream_waits_for_it(models):
    # torch's default stream is handle 0, which ORT cannot compute on: the run waits for it on the host instead.
    src = torch.arange(100, dtype=torch.float32, device="cuda").reshape(1, 100)
    sess = ortdlpack.Session(models["add_tiny"], ep="cuda", ep_options={"device_id": "0"},
                             stream=torch.cuda.default_stream().cuda_stream)
    expected = sess.run({"x": src})[0].numpy()
    for _ in range(TRIES):
        x = torch.zeros_like(src)
        torch.cuda._sleep(100_000_000)  # on the default stream
        x.copy_(src)
        np.testing.assert_allclose(sess.run({"x": x})[0].numpy(), expected, rtol=1e-6)


def test_session_stream_and_the_eps_own_stream_option_conflict(models):
    s = torch.cuda.Stream()
    with pytest.raises(ValueError, match="user_compute_stream"):
        ortdlpack.Session(models["add_tiny"], ep="cuda",
                          ep_options={"device_id": "0", "user_compute_stream": str(s.cuda_stream)}, stream=s.cuda_stream)


def test_a_queued_copy_keeps_a_released_torch_tensor_until_it_ran():
    # torch's caching allocator hands a block to the next tensor of its stream as soon as the DLPack deleter ran.
    # ortdlpack's copy is queued behind 100 ms of a producer's work (the import of `behind`), so a source released at
    # once would be overwritten (the fill on torch's stream s) before the copy reads it (issue 17.1).
    src = torch.arange(1 << 20, dtype=torch.float32, device="cuda")
    torch.cuda.synchronize()
    busy, s = torch.cuda.Stream(), torch.cuda.Stream()
    for _ in range(TRIES):
        with torch.cuda.stream(busy):
            torch.cuda._sleep(100_000_000)
            behind = ortdlpack.from_dlpack(torch.zeros(1, device="cuda"))  # ortdlpack's stream waits for the sleep
        with torch.cuda.stream(s):
            c = ortdlpack.from_dlpack(ortdlpack.from_dlpack(src.clone()), copy=True)  # the only reference: the capsule
            reused = torch.full((1 << 20,), -1.0, device="cuda")  # takes the released block at once, on s
        np.testing.assert_array_equal(c.numpy(), src.cpu().numpy())
        del behind, reused


@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs two CUDA devices")
def test_a_tensor_on_the_second_gpu_is_ordered_on_the_device_while_gpu_0_is_current():
    # CUDA records an event only on a stream of the event's device: ortdlpack makes the tensor's device current for
    # its event (issue 17). A failed device-side wait would fall back to a host wait: the host would then not return
    # before the producer's 100 ms of work, which is what s.query() tells.
    src = torch.arange(1 << 20, dtype=torch.float32, device="cuda:1")
    for _ in range(TRIES):
        torch.cuda.set_device(0)
        s = torch.cuda.Stream(device=1)
        x = torch.zeros_like(src)
        with torch.cuda.device(1), torch.cuda.stream(s):
            torch.cuda._sleep(100_000_000)
            x.copy_(src)
            t = ortdlpack.from_dlpack(x)  # torch orders its current stream (s) before ortdlpack's stream on cuda:1
        assert torch.cuda.current_device() == 0
        consumer = torch.cuda.Stream(device=1)
        capsule = t.__dlpack__(stream=consumer.cuda_stream)  # device 0 current: the event is made on cuda:1
        assert not s.query(), "the export waited on the host: the device-side wait on cuda:1 failed"
        assert torch.cuda.current_device() == 0, "ortdlpack left another device current"
        with torch.cuda.device(1), torch.cuda.stream(consumer):
            total = torch.from_dlpack(capsule).sum()
        consumer.synchronize()
        assert float(total) == float(src.sum())
        copied = ortdlpack.from_dlpack(t, copy=True)  # a device copy on cuda:1, queued on ortdlpack's stream
        np.testing.assert_array_equal(copied.numpy(), src.cpu().numpy())
