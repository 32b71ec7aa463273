"""Stream ordering on CUDA (issue 9 item 1): a producer with work still queued on its own stream hands a tensor to
ortdlpack at once; every path must read the new contents. Without ordering each of these read the old ones (5 of 5
tries on an H200)."""

from __future__ import annotations

import numpy as np
import pytest

import ortdlpack
from conftest import busy, cpu_session, cuda_session, torch

TRIES = 3


def _pending(shape):
    """A CUDA tensor whose final contents are still queued behind 100 ms of work on a side stream."""
    src = torch.rand(*shape, device="cuda")
    x = torch.zeros(*shape, device="cuda")
    torch.cuda.synchronize()
    s = torch.cuda.Stream()
    busy(s)
    with torch.cuda.stream(s):
        x.copy_(src)
    return s, x, src


@pytest.mark.parametrize("runner", ["run", "Session.run"])
def test_run_reads_what_the_producer_queued(models, runner):
    ref = cpu_session(models["add_tiny"])
    session = cuda_session(models["add_tiny"]) if runner == "run" else ortdlpack.Session(
        models["add_tiny"], ep="cuda", ep_options={"use_tf32": "0"})
    for _ in range(TRIES):
        s, x, src = _pending((1, 100))
        with torch.cuda.stream(s):
            (y,) = ortdlpack.run(session, {"x": x}) if runner == "run" else session.run({"x": x})
            out = torch.from_dlpack(y).cpu().numpy()
        np.testing.assert_allclose(out, ref.run(None, {"x": src.cpu().numpy()})[0], rtol=1e-6)


def test_outputs_destination_written_after_the_producer(models):
    ref = cpu_session(models["add_tiny"])
    session = cuda_session(models["add_tiny"])
    for _ in range(TRIES):
        s, x, src = _pending((1, 100))
        dest = torch.empty(1, 100, device="cuda")
        with torch.cuda.stream(s):
            ortdlpack.run(session, {"x": x}, outputs={"y": dest})
            out = dest.cpu().numpy()
        np.testing.assert_allclose(out, ref.run(None, {"x": src.cpu().numpy()})[0], rtol=1e-6)


def test_import_then_copy_reads_what_the_producer_queued():
    for _ in range(TRIES):
        s, x, src = _pending((256, 256))
        with torch.cuda.stream(s):
            t = ortdlpack.from_dlpack(x)
        np.testing.assert_array_equal(t.numpy(), src.cpu().numpy())
        s, x, src = _pending((256, 256))
        with torch.cuda.stream(s):
            c = ortdlpack.from_dlpack(x, copy=True)
        assert torch.equal(torch.from_dlpack(c), src)


def test_export_is_complete_on_the_consumers_stream(models):
    session = cuda_session(models["add_tiny"])
    x = torch.rand(1, 100, device="cuda")
    (y,) = ortdlpack.run(session, {"x": x})
    other = torch.cuda.Stream()
    busy(other, 10)
    with torch.cuda.stream(other):
        out = torch.from_dlpack(y).clone()
    other.synchronize()
    np.testing.assert_allclose(out.cpu().numpy(), cpu_session(models["add_tiny"]).run(None, {"x": x.cpu().numpy()})[0],
                               rtol=1e-6)
