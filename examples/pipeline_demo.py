#!/usr/bin/env python3
"""Two ONNX models with a torch step in between, run the usual way and with ortdlpack.

    python examples/pipeline_demo.py [--budget SECONDS]

    images --[feature.onnx]--> features --[torch: normalise + ReLU]--> features' --[head.onnx]--> logits

usual path         session.run with numpy in and out: x.numpy(), torch.from_numpy(...), f.numpy()
ortdlpack.run      the same InferenceSessions with torch tensors in, torch.from_dlpack(...) out, logits written into
                   a preallocated torch tensor
ortdlpack.Session  the same, with sessions created and run by the C++ core

Both paths must give the same logits (checked). For a small (N=1) and a large (N=64) batch it prints the time per
iteration, the bytes copied per iteration by the conversions between frameworks (measured, by comparing the data
pointers before and after each conversion), and the speed-up. The models are built by scripts/make_models.py into a
cache directory. Runs in well under a minute on 2 cores.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile

import numpy as np
import onnxruntime as ort
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [os.path.join(ROOT, "scripts"), os.path.join(ROOT, "bench")]
import harness  # noqa: E402  (the benchmarks' timing: paths alternating, median per iteration)
from make_models import make_models  # noqa: E402

import ortdlpack  # noqa: E402


class CopyMeter:
    """Counts the bytes a framework conversion copied: 0 when the result shares the source's memory."""

    def __init__(self):
        self.bytes = 0

    def same(self, src_ptr: int, dst_ptr: int, nbytes: int) -> None:
        if src_ptr != dst_ptr:
            self.bytes += nbytes

    def ort_output(self, arr: np.ndarray) -> np.ndarray:
        # onnxruntime hands numpy its own output buffer (no owndata) or a fresh copy (owndata).
        if arr.flags.owndata:
            self.bytes += arr.nbytes
        return arr


def torch_step(feat: torch.Tensor) -> torch.Tensor:
    """What runs between the models: per-sample normalisation and a ReLU."""
    mean = feat.mean(dim=1, keepdim=True)
    std = feat.std(dim=1, keepdim=True)
    return torch.relu((feat - mean) / (std + 1e-5))


def usual_path(feature, head, x: torch.Tensor, meter: CopyMeter) -> torch.Tensor:
    x_np = x.numpy()  # .numpy(): a view for contiguous CPU tensors, a copy otherwise (and .cpu() first on GPUs)
    meter.same(x.data_ptr(), x_np.ctypes.data, x_np.nbytes)
    feat_np = meter.ort_output(feature.run(None, {"x": x_np})[0])
    feat = torch.from_numpy(feat_np)
    meter.same(feat_np.ctypes.data, feat.data_ptr(), feat_np.nbytes)
    f = torch_step(feat)
    f_np = f.numpy()
    meter.same(f.data_ptr(), f_np.ctypes.data, f_np.nbytes)
    logits_np = meter.ort_output(head.run(None, {"feat": f_np})[0])
    logits = torch.from_numpy(logits_np)
    meter.same(logits_np.ctypes.data, logits.data_ptr(), logits_np.nbytes)
    return logits


def ortdlpack_path(feature, head, x: torch.Tensor, logits: torch.Tensor, meter: CopyMeter) -> torch.Tensor:
    (feat_t,) = ortdlpack.run(feature, {"x": x})  # x is read where it is
    feat = torch.from_dlpack(feat_t)  # a view of ORT's output
    meter.same(np.from_dlpack(feat_t).ctypes.data, feat.data_ptr(), feat.nbytes)
    f = torch_step(feat)
    (out,) = ortdlpack.run(head, {"feat": f}, outputs={"logits": logits})  # ORT writes into `logits`
    meter.same(np.from_dlpack(out).ctypes.data, logits.data_ptr(), logits.nbytes)
    return logits


def native_path(feature, head, x: torch.Tensor, logits: torch.Tensor, meter: CopyMeter) -> torch.Tensor:
    """The same with ortdlpack.Session: the sessions are created and run by the C++ core (no onnxruntime Python
    layer per call)."""
    (feat_t,) = feature.run({"x": x})
    feat = torch.from_dlpack(feat_t)
    meter.same(np.from_dlpack(feat_t).ctypes.data, feat.data_ptr(), feat.nbytes)
    f = torch_step(feat)
    (out,) = head.run({"feat": f}, outputs={"logits": logits})
    meter.same(np.from_dlpack(out).ctypes.data, logits.data_ptr(), logits.nbytes)
    return logits


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--budget", type=float, default=4.0, help="seconds of timing per path and batch size")
    parser.add_argument("--models", default=os.path.join(tempfile.gettempdir(), "ortdlpack-models"))
    args = parser.parse_args(argv)

    paths = make_models(args.models, ["feature", "head"])
    threads = min(2, os.cpu_count() or 1)
    # All sessions alike, without spinning threads: they share the cores, and a pool spinning after one session's
    # run would slow the next session's.
    config = {"session.intra_op.allow_spinning": "0"}
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    for key, value in config.items():
        opts.add_session_config_entry(key, value)
    feature = ort.InferenceSession(paths["feature"], opts, providers=["CPUExecutionProvider"])
    head = ort.InferenceSession(paths["head"], opts, providers=["CPUExecutionProvider"])
    feature_n = ortdlpack.Session(paths["feature"], intra_op_num_threads=threads, config=config)
    head_n = ortdlpack.Session(paths["head"], intra_op_num_threads=threads, config=config)
    torch.set_num_threads(1)
    print(f"onnxruntime {ort.__version__}, torch {torch.__version__}, ortdlpack {ortdlpack.__version__}; "
          f"models in {args.models}")
    print("usual: InferenceSession.run with .numpy()/torch.from_numpy; ortdlpack.run: the same InferenceSessions fed "
          "torch tensors; ortdlpack.Session: sessions run by the C++ core")
    print(f"{'batch':>5} | {'path':<17} | {'ms/iter':>8} | {'speed-up':>8} | {'bytes copied/iter':>17} | rounds")
    print("-" * 77)
    timer = harness.Runner(rounds=5, budget=2 * args.budget)
    for n in (1, 64):
        x = torch.rand(n, 3, 64, 64, generator=torch.Generator().manual_seed(n))
        logits_buf = torch.empty(n, 10)
        paths_run = {
            "usual": lambda meter: usual_path(feature, head, x, meter),
            "ortdlpack.run": lambda meter: ortdlpack_path(feature, head, x, logits_buf, meter),
            "ortdlpack.Session": lambda meter: native_path(feature_n, head_n, x, logits_buf, meter),
        }
        # Same logits every way, and the bytes each way copies between frameworks.
        copied = {}
        ref = None
        for name, fn in paths_run.items():
            meter = CopyMeter()
            got = fn(meter).clone()
            copied[name] = meter.bytes
            if ref is None:
                ref = got
            np.testing.assert_allclose(got.numpy(), ref.numpy(), rtol=1e-5, atol=1e-6)
        times = timer.compare(f"batch {n}", {name: lambda fn=fn: fn(CopyMeter()) for name, fn in paths_run.items()})
        rounds = timer.benchmarks[-1].get_nvalue()
        for name, t in times.items():
            speedup = times["usual"] / t
            print(f"{n:>5} | {name:<17} | {t * 1e3:>8.3f} | {speedup:>7.2f}x | {copied[name]:>17,} | {rounds}")
    print("results equal every way (assert_allclose). CPU tensors: torch .numpy()/from_numpy are views, so the usual "
          "path copies nothing here either; on a GPU it needs .cpu() and .to(device) around every session.run.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
