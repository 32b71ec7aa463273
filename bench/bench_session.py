#!/usr/bin/env python3
"""Per-run cost of feeding torch tensors to an onnxruntime.InferenceSession and getting torch tensors back.

    python bench/bench_session.py [--quick] [--models DIR]

Ways compared, each end to end torch -> ORT -> torch (the output is a torch tensor the caller can use):
  ortdlpack.run                 ortdlpack.run(sess, {"x": t}) + torch.from_dlpack
  ortdlpack.run, outputs=       the same into a preallocated torch tensor (ORT writes into it)
  ortdlpack.Session.run         ortdlpack.Session(path).run({"x": t}) + torch.from_dlpack (session made and run in C++)
  session.run + numpy           torch.from_numpy(sess.run(None, {"x": t.numpy()})[0])
Two rows split the costs (not torch -> torch): "ortdlpack.run, Tensor out" stops at the ortdlpack.Tensor (no
torch.from_dlpack), "session.run, numpy only" is session.run on a numpy array (no torch on either side).
  run_with_ort_values           OrtValue.from_dlpack(t) -> sess.run_with_ort_values -> torch.from_dlpack
  IOBinding, raw pointers       bind_input/bind_output(..., ptr) on t and a preallocated torch tensor (hand-written)

Two models: add_tiny (Add on float32[1,100]: pure per-call overhead) and big_identity_ish (x + 1 on
float32[16,1024,1024]: 64 MiB in, 64 MiB out). Prints one table: median microseconds per run and the ratio to
`session.run + numpy` (lower is better).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time

import numpy as np
import onnxruntime as ort
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
from make_models import make_models  # noqa: E402

import ortdlpack  # noqa: E402


def timeit(fns, number: int, repeat: int) -> list:
    """Median seconds per call of each function over `repeat` rounds; a round times a batch of `number` calls of
    each function in turn, so that load from elsewhere on the machine hits every way alike."""
    for fn in fns:  # warm-up
        for _ in range(max(1, number // 10)):
            fn()
    samples = [[] for _ in fns]
    for _ in range(repeat):
        for fn, out in zip(fns, samples):
            t0 = time.perf_counter()
            for _ in range(number):
                fn()
            out.append((time.perf_counter() - t0) / number)
    return [statistics.median(s) for s in samples]


def ways(sess: ort.InferenceSession, native: ortdlpack.Session, x: torch.Tensor):
    in_name = sess.get_inputs()[0].name
    out_name = sess.get_outputs()[0].name
    shape = tuple(x.shape)
    dst = torch.empty_like(x)
    expected = torch.from_numpy(sess.run(None, {in_name: x.numpy()})[0]).clone()

    def w_ortdlpack():
        return torch.from_dlpack(ortdlpack.run(sess, {in_name: x})[0])

    def w_ortdlpack_out():
        ortdlpack.run(sess, {in_name: x}, outputs={out_name: dst})
        return dst

    def w_native():
        return torch.from_dlpack(native.run({in_name: x})[0])

    def w_numpy():
        return torch.from_numpy(sess.run(None, {in_name: x.numpy()})[0])

    xn = x.numpy()

    def w_ortdlpack_tensor():
        return ortdlpack.run(sess, {in_name: x})[0]

    def w_numpy_only():
        return sess.run(None, {in_name: xn})[0]

    def w_ort_values():
        return torch.from_dlpack(sess.run_with_ort_values([out_name], {in_name: ort.OrtValue.from_dlpack(x)})[0])

    io = sess.io_binding()

    def w_iobinding():
        io.bind_input(in_name, "cpu", 0, np.float32, shape, x.data_ptr())
        io.bind_output(out_name, "cpu", 0, np.float32, shape, dst.data_ptr())
        sess.run_with_iobinding(io)
        return dst

    table = [
        ("ortdlpack.run", w_ortdlpack),
        ("ortdlpack.run, Tensor out", w_ortdlpack_tensor),
        ("ortdlpack.run, outputs=", w_ortdlpack_out),
        ("ortdlpack.Session.run", w_native),
        ("session.run + numpy", w_numpy),
        ("session.run, numpy only", w_numpy_only),
        ("run_with_ort_values", w_ort_values),
        ("IOBinding, raw pointers", w_iobinding),
    ]
    for label, fn in table:  # every way computes the same thing
        torch.testing.assert_close(torch.from_dlpack(fn()), expected, msg=lambda m, label=label: f"{label}: {m}")
    return table


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer iterations (smoke test)")
    parser.add_argument("--models", default=os.path.join(tempfile.gettempdir(), "ortdlpack-models"))
    parser.add_argument("--chart", default=None, help=f"PNG to write (default: {CHART}; none with --quick)")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    paths = make_models(args.models, ["add_tiny", "big_identity_ish"])
    # One intra-op thread (the per-call overhead is what is measured), no spinning: every session configured alike.
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
    cases = [
        ("add_tiny [1,100]", paths["add_tiny"], (1, 100), (200, 5) if args.quick else (5000, 9)),
        ("64 MiB [16,1024,1024]", paths["big_identity_ish"], (16, 1024, 1024), (2, 3) if args.quick else (5, 15)),
    ]
    results = {}
    labels = []
    for case, path, shape, (number, repeat) in cases:
        sess = ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])
        native = ortdlpack.Session(path, intra_op_num_threads=opts.intra_op_num_threads,
                                   config={"session.intra_op.allow_spinning": "0"})
        x = torch.rand(shape, dtype=torch.float32)
        table = ways(sess, native, x)
        for (label, _), t in zip(table, timeit([fn for _, fn in table], number, repeat)):
            if label not in labels:
                labels.append(label)
            results[(case, label)] = t
        del sess, native, x

    base = "session.run + numpy"
    head = f"| {'way (torch in, torch out)':<26} |" + "".join(f" {c} us | ratio |" for c, *_ in cases)
    print(f"onnxruntime {ort.__version__}, torch {torch.__version__}, {os.cpu_count()} CPUs; "
          f"median per run, ratio to '{base}' (lower is better)")
    print(head)
    print("|" + "-" * 28 + "|" + "".join("-" * (len(c) + 5) + "|-------|" for c, *_ in cases))
    for label in labels:
        row = f"| {label:<26} |"
        for case, *_ in cases:
            t = results[(case, label)]
            width = len(case) + 3
            row += f" {t * 1e6:>{width}.1f} | {t / results[(case, base)]:>5.2f} |"
        print(row)
    chart_path = args.chart if args.chart is not None else ("" if args.quick else CHART)
    if chart_path:
        print(f"chart: {write_session_chart(chart_path, [c for c, *_ in cases], labels, results)}")
    return 0


CHART = os.path.join(ROOT, "docs", "session.png")


def write_session_chart(path: str, cases: list, labels: list, results: dict) -> str:
    """The table as a chart (log time axis: the cases differ by 1000x), machine and versions in the caption."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from chart import machine, write_chart

    caption = (f"python bench/bench_session.py; {machine()}; onnxruntime {ort.__version__}, torch {torch.__version__}, "
               f"ortdlpack {ortdlpack.__version__}; median per run, torch in -> ORT -> torch out")
    return write_chart(path, "One session run from torch and back, per way (CPU)", caption, cases, labels, results,
                       log_time=True)


if __name__ == "__main__":
    sys.exit(main())
