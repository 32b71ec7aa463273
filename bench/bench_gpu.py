#!/usr/bin/env python3
"""The issue-9 pipeline on CUDA: feature model -> head model, torch tensors in and out, with ordering on.

    python bench/bench_gpu.py [--quick]

Per pipeline iteration (two runs), median microseconds, batch 1 and 64, and the ratio to hand-written IOBinding:
  usual copy path      sess.run(None, {"x": t.cpu().numpy()}) twice, torch.from_numpy(...).cuda()
  ortdlpack.run        ortdlpack.run on two CUDA InferenceSessions, torch tensors fed and taken by DLPack
  ortdlpack.Session    ortdlpack.Session(path, ep="CUDAExecutionProvider").run twice
  hand IOBinding       bind_input/bind_output by pointer on preallocated torch tensors, then synchronize
Prints a note and exits 0 when there is no CUDA device or no CUDA EP (CI).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    try:
        import torch
    except ImportError:
        print("bench_gpu: torch is not installed: nothing to measure")
        return 0
    import numpy as np
    import onnxruntime as ort

    if not torch.cuda.is_available() or "CUDAExecutionProvider" not in ort.get_available_providers():
        print("bench_gpu: no CUDA device or no CUDA execution provider (onnxruntime-gpu): nothing to measure")
        return 0
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    sys.path.insert(0, os.path.join(root, "scripts"))
    from make_models import make_models

    import ortdlpack

    models = make_models(tempfile.mkdtemp(), ["feature", "head"])
    cuda = ["CUDAExecutionProvider"]
    feat_s = ort.InferenceSession(models["feature"], providers=cuda)
    head_s = ort.InferenceSession(models["head"], providers=cuda)
    feat_o = ortdlpack.Session(models["feature"], ep="CUDAExecutionProvider")
    head_o = ortdlpack.Session(models["head"], ep="CUDAExecutionProvider")
    number, repeat = (20, 3) if args.quick else (200, 7)

    def median_us(fn) -> float:
        for _ in range(5):
            fn()
        torch.cuda.synchronize()
        rounds = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            for _ in range(number):
                fn()
            torch.cuda.synchronize()
            rounds.append((time.perf_counter() - t0) / number * 1e6)
        return statistics.median(rounds)

    print("| batch | usual copy path | ortdlpack.run | ortdlpack.Session | hand IOBinding |")
    print("|---|---|---|---|---|")
    for batch in (1, 64):
        x = torch.randn(batch, 3, 64, 64, device="cuda")
        feat = torch.empty(batch, 128, device="cuda")
        logits = torch.empty(batch, 10, device="cuda")

        def usual():
            f = feat_s.run(None, {"x": x.cpu().numpy()})[0]
            return torch.from_numpy(head_s.run(None, {"feat": f})[0]).cuda()

        def with_run():
            (f,) = ortdlpack.run(feat_s, {"x": x})
            (y,) = ortdlpack.run(head_s, {"feat": f})
            return torch.from_dlpack(y)

        def with_session():
            (f,) = feat_o.run({"x": x})
            (y,) = head_o.run({"feat": f})
            return torch.from_dlpack(y)

        b1, b2 = feat_s.io_binding(), head_s.io_binding()

        def hand():
            torch.cuda.current_stream().synchronize()  # the ordering a hand-written pipeline needs
            b1.bind_input("x", "cuda", 0, np.float32, tuple(x.shape), x.data_ptr())
            b1.bind_output("feat", "cuda", 0, np.float32, tuple(feat.shape), feat.data_ptr())
            feat_s.run_with_iobinding(b1)
            b2.bind_input("feat", "cuda", 0, np.float32, tuple(feat.shape), feat.data_ptr())
            b2.bind_output("logits", "cuda", 0, np.float32, tuple(logits.shape), logits.data_ptr())
            head_s.run_with_iobinding(b2)
            return logits

        times = [median_us(f) for f in (usual, with_run, with_session, hand)]
        base = times[3]
        print(f"| {batch} | " + " | ".join(f"{t:.0f} us ({t / base:.2f}x)" for t in times) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
