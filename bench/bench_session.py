#!/usr/bin/env python3
"""Per-run cost of feeding torch tensors to an ONNX Runtime session and getting torch tensors back.

    python bench/bench_session.py [--quick] [--models DIR] [--chart PNG]

Ways compared, each end to end torch -> ORT -> torch (every output is a torch tensor the caller can use), against
the baseline `session.run + numpy`: torch.from_numpy(o) for o in sess.run(None, {"x": t.numpy()}):
  ortdlpack.run                 ortdlpack.run(sess, {"x": t}, output_type="torch")
  ortdlpack.run, Tensor out     ortdlpack.run(sess, {"x": t}): ortdlpack.Tensors, no torch on the way out
  ortdlpack.run, outputs=       the same into preallocated torch tensors (ORT writes into them)
  Session.run                   ortdlpack.Session(path, opts).run({"x": t}, output_type="torch") (C++)
  Session.bind().run()          b = session.bind({"x": t}, output_type="torch") once, then b.run() (no planning)
  session.run, numpy only       session.run on a numpy array (no torch on either side)
  run_with_ort_values           OrtValue.from_dlpack(t) -> sess.run_with_ort_values -> torch.from_dlpack
  IOBinding, raw pointers       bind_input/bind_output(..., ptr) on t and preallocated torch tensors (hand-written)
A second table times the export of one ORT tensor to torch: ortdlpack's Tensor.as_framework("torch") (the C exchange
path torch outputs are built with) against upstream's torch.from_dlpack(onnxruntime.OrtValue). The last table checks issue 19's targets.

Models: add_tiny (Add on float32[1,100]: pure per-call overhead, one output), three_out_tiny (three outputs of
float32[1,100]) and big_identity_ish (x + 1 on float32[16,1024,1024]: 64 MiB in, 64 MiB out). Every row of a table
is measured in the same run, rounds interleaved; median microseconds per run and the ratio to the baseline (lower is
better).
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

BASE = "session.run + numpy"


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


def ways(sess: ort.InferenceSession, native: ortdlpack.Session, x: torch.Tensor) -> list:
    """(label, function) per way; every function returns the outputs as torch tensors (or Tensors: 'Tensor out')."""
    in_name = sess.get_inputs()[0].name
    names = [o.name for o in sess.get_outputs()]
    shape = tuple(x.shape)
    dst = {n: torch.empty_like(x) for n in names}
    xn = x.numpy()
    feeds = {in_name: x}

    def w_ortdlpack():
        return ortdlpack.run(sess, feeds, output_type="torch")

    def w_ortdlpack_tensor():
        return ortdlpack.run(sess, feeds)

    def w_ortdlpack_out():
        ortdlpack.run(sess, feeds, outputs=dst)
        return list(dst.values())

    def w_native():
        return native.run(feeds, output_type="torch")

    binding = native.bind(feeds, output_type="torch")

    def w_bound():
        return binding.run()

    def w_numpy():
        return [torch.from_numpy(o) for o in sess.run(None, {in_name: x.numpy()})]

    def w_numpy_only():
        return sess.run(None, {in_name: xn})

    def w_ort_values():
        values = sess.run_with_ort_values(names, {in_name: ort.OrtValue.from_dlpack(x)})
        return [torch.from_dlpack(v) for v in values]

    io = sess.io_binding()

    def w_iobinding():
        io.bind_input(in_name, "cpu", 0, np.float32, shape, x.data_ptr())
        for n in names:
            io.bind_output(n, "cpu", 0, np.float32, shape, dst[n].data_ptr())
        sess.run_with_iobinding(io)
        return list(dst.values())

    table = [
        ("ortdlpack.run", w_ortdlpack),
        ("ortdlpack.run, Tensor out", w_ortdlpack_tensor),
        ("ortdlpack.run, outputs=", w_ortdlpack_out),
        ("Session.run", w_native),
        ("Session.bind().run()", w_bound),
        (BASE, w_numpy),
        ("session.run, numpy only", w_numpy_only),
        ("run_with_ort_values", w_ort_values),
        ("IOBinding, raw pointers", w_iobinding),
    ]
    expected = [t.clone() for t in w_numpy()]
    for label, fn in table:  # every way computes the same thing
        got = [torch.from_dlpack(o) for o in fn()]
        assert len(got) == len(expected), label
        for g, e in zip(got, expected):
            torch.testing.assert_close(g, e, msg=lambda m, label=label: f"{label}: {m}")
    return table


def export_ways() -> list:
    """One 4 KiB ORT tensor to torch: ortdlpack's export and upstream's."""
    a = np.random.default_rng(0).random(1024, dtype=np.float32)
    t = ortdlpack.from_dlpack(a)
    v = ort.OrtValue.ortvalue_from_numpy(a)
    table = [
        ("ortdlpack: Tensor.as_framework('torch')", lambda: t.as_framework("torch")),
        ("upstream: torch.from_dlpack(OrtValue)", lambda: torch.from_dlpack(v)),
        ("ortdlpack: torch.from_dlpack(Tensor)", lambda: torch.from_dlpack(t)),
    ]
    for label, fn in table:
        torch.testing.assert_close(fn(), torch.from_numpy(a), msg=lambda m, label=label: f"{label}: {m}")
    return table


def print_table(title: str, cases: list, labels: list, results: dict, base: str) -> None:
    if title:
        print(title)
    width = max(len(label) for label in labels)
    print(f"| {'way (torch in, torch out)':<{width}} |" + "".join(f" {c} us | ratio |" for c in cases))
    print("|" + "-" * (width + 2) + "|" + "".join("-" * (len(c) + 5) + "|-------|" for c in cases))
    for label in labels:
        row = f"| {label:<{width}} |"
        for case in cases:
            t = results[(case, label)]
            row += f" {t * 1e6:>{len(case) + 3}.2f} | {t / results[(case, base)]:>5.2f} |"
        print(row)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer iterations (smoke test)")
    parser.add_argument("--models", default=os.path.join(tempfile.gettempdir(), "ortdlpack-models"))
    parser.add_argument("--chart", default=None, help=f"PNG to write (default: {CHART}; none with --quick)")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    paths = make_models(args.models, ["add_tiny", "three_out_tiny", "big_identity_ish"])
    # One intra-op thread (the per-call overhead is what is measured), no spinning: every session configured alike.
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
    tiny = (200, 5) if args.quick else (5000, 9)
    cases = [
        ("add_tiny [1,100]", paths["add_tiny"], (1, 100), tiny),
        ("3 outputs [1,100]", paths["three_out_tiny"], (1, 100), tiny),
        ("64 MiB [16,1024,1024]", paths["big_identity_ish"], (16, 1024, 1024), (2, 3) if args.quick else (5, 15)),
    ]
    results = {}
    labels = []
    for case, path, shape, (number, repeat) in cases:
        sess = ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])
        native = ortdlpack.Session(path, opts, providers=["CPUExecutionProvider"])  # the same options
        x = torch.rand(shape, dtype=torch.float32)
        table = ways(sess, native, x)
        for (label, _), t in zip(table, timeit([fn for _, fn in table], number, repeat)):
            if label not in labels:
                labels.append(label)
            results[(case, label)] = t
        del table, sess, native, x

    export = export_ways()
    export_case = "4 KiB"
    for (label, _), t in zip(export, timeit([fn for _, fn in export], *tiny)):
        results[(export_case, label)] = t

    case_names = [c for c, *_ in cases]
    print(f"onnxruntime {ort.__version__}, torch {torch.__version__}, ortdlpack {ortdlpack.__version__}, "
          f"{os.cpu_count()} CPUs; median per run, ratio to '{BASE}' (lower is better)")
    print_table("", case_names, labels, results, BASE)
    export_base = export[1][0]
    print()
    print_table(f"ORT -> torch, one tensor; ratio to '{export_base}'", [export_case], [e[0] for e in export],
                results, export_base)

    def ratio(case, label, base=BASE):
        return results[(case, label)] / results[(case, base)]

    tiny1, tiny3 = case_names[0], case_names[1]
    targets = [
        (f"ortdlpack.run, {tiny1}", ratio(tiny1, "ortdlpack.run"), 1.0),
        (f"ortdlpack.run, {tiny3}", ratio(tiny3, "ortdlpack.run"), 1.0),
        (f"Session.run, {tiny1}", ratio(tiny1, "Session.run"), 0.6),
        (f"Session.run, {tiny3}", ratio(tiny3, "Session.run"), 0.6),
        (f"Session.bind().run(), {tiny1}", ratio(tiny1, "Session.bind().run()"), 0.4),
        (f"Session.bind().run(), {tiny3}", ratio(tiny3, "Session.bind().run()"), 0.4),
        ("ORT -> torch, one tensor", ratio(export_case, export[0][0], export_base), 0.3),
    ]
    print()
    print("| target (issue 19) | ratio | limit | met |")
    print("|---|---:|---:|---|")
    for name, r, limit in targets:
        print(f"| {name} | {r:.2f}x | {limit:.1f}x | {'yes' if r <= limit else 'no'} |")
    chart_path = args.chart if args.chart is not None else ("" if args.quick else CHART)
    if chart_path:
        print(f"chart: {write_session_chart(chart_path, case_names, labels, results)}")
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
