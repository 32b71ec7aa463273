"""Session.bind() on the CUDA EP with enable_cuda_graph (issue 19): ORT captures the run as a CUDA graph and replays
it, which is right only while every input and output stays at the address it was captured with. A Binding keeps
them there: its feeds are the caller's tensors and its outputs are allocated once, by the first run.

Skipped without torch with CUDA, a CUDA device, or an onnxruntime that carries the CUDA EP (tests/gpu/conftest.py).
"""

from __future__ import annotations

import contextlib

import numpy as np
import pytest

torch = pytest.importorskip("torch")
ort = pytest.importorskip("onnxruntime")

import ortdlpack  # noqa: E402

RUNS = 6  # ORT captures after a warm-up run or two, then replays


def bias(path):
    """add_tiny is y = x + b: b, from a CPU run on zeros."""
    cpu = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    return torch.from_numpy(cpu.run(None, {"x": np.zeros((1, 100), np.float32)})[0])


@pytest.mark.parametrize("caller_stream", [False, True], ids=["host-ordered", "stream="])
def test_bound_runs_replay_a_cuda_graph_at_fixed_addresses(models, caller_stream):
    path = models["add_tiny"]
    b = bias(path)
    stream = torch.cuda.Stream() if caller_stream else None
    session = ortdlpack.Session(path, providers=[("CUDAExecutionProvider", {"enable_cuda_graph": "1"})],
                                stream=stream.cuda_stream if stream is not None else None)
    x = torch.zeros(1, 100, device="cuda")
    binding = session.bind({"x": x}, output_type="torch")
    x_address, y_address = x.data_ptr(), None
    for run in range(RUNS):
        with torch.cuda.stream(stream) if stream is not None else contextlib.nullcontext():
            x.copy_(torch.full((1, 100), float(run), device="cuda"))  # new contents, same memory
            if stream is None:
                torch.cuda.current_stream().synchronize()  # without stream=, the caller orders its writes (rule 6)
            (y,) = binding.run()
            if y_address is None:
                y_address = y.data_ptr()
            assert y.is_cuda and y.data_ptr() == y_address, "the output moved"
            assert x.data_ptr() == x_address
            got = y.cpu()  # on the current stream: after the run
        torch.testing.assert_close(got, b + float(run), msg=f"run {run}")


def test_a_run_that_would_replay_another_runs_graph_is_refused(models):
    # A replay reads and writes the tensors of the run that captured the graph: a plain run (a pooled IoBinding, this
    # run's tensors) or a second Binding on the same graph would silently get another run's results (session.h).
    session = ortdlpack.Session(models["add_tiny"], providers=[("CUDAExecutionProvider", {"enable_cuda_graph": "1"})])
    x = torch.zeros(1, 100, device="cuda")
    with pytest.raises(ValueError, match="replays captured device graphs"):
        session.run({"x": x})
    first = session.bind({"x": x}, output_type="torch")
    for _ in range(RUNS):
        first.run()
    with pytest.raises(ValueError, match="captured by another Binding"):
        session.bind({"x": x}, output_type="torch").run()
