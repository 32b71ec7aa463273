#!/usr/bin/env python3
"""Per-run cost of feeding torch tensors to an ONNX Runtime session and getting torch tensors back.

    python bench/bench_session.py [--quick] [--rounds N] [--min-time S] [--json FILE] [--models DIR] [--chart PNG]

Ways compared, each end to end torch -> ORT -> torch (every output is a torch tensor the caller can use), against
the baseline `session.run + numpy`: torch.from_numpy(o) for o in sess.run(None, {"x": t.numpy()}):
  ortdlpack.run                 ortdlpack.run(sess, {"x": t}, output_type="torch")
  ortdlpack.run, Tensor out     ortdlpack.run(sess, {"x": t}): ortdlpack.Tensors, no torch on the way out
  ortdlpack.run, outputs=       the same into preallocated torch tensors (ORT writes into them)
  Session.run                   ortdlpack.Session(path, opts).run({"x": t}, output_type="torch") (C++)
  Session.bind().run()          b = session.bind({"x": t}, output_type="torch") once, then b.run() (no planning)
  bind().run(feeds=), same object   b.run(feeds={"x": t}): the bound feed given again (no change: nothing imported)
  bind().run(feeds=), new object    b.run(feeds={"x": v}), v one of two views of t made beforehand, in turn: an
                                    object other than the one bound each run (imported, rebound)
  InferenceSession.run          ortdlpack.InferenceSession (onnxruntime's, subclassed): run(None, {"x": t})
  InferenceSession.bind().run() the same session's bind({"x": t}) once, then run(): the core's Binding on the
                                OrtSession onnxruntime created
  session.run, numpy only       session.run on a numpy array (no torch on either side)
  run_with_ort_values           OrtValue.from_dlpack(t) -> sess.run_with_ort_values -> torch.from_dlpack
  IOBinding, raw pointers       bind_input/bind_output(..., ptr) on t and preallocated torch tensors (hand-written)
A second table times the export of one ORT tensor to torch: ortdlpack's Tensor.as_framework("torch") (the C exchange
path torch outputs are built with) against upstream's torch.from_dlpack(onnxruntime.OrtValue). The last table checks
the targets.

Models: add_tiny (Add on float32[1,100]: pure per-call overhead, one output), three_out_tiny (three outputs of
float32[1,100]) and big_identity_ish (x + 1 on float32[16,1024,1024]: 64 MiB in, 64 MiB out). Every row of a table
is measured in the same run, rounds interleaved (bench/harness.py); median microseconds per run and the ratio to
the baseline (lower is better).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile

import numpy as np
import onnxruntime as ort
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path[:0] = [HERE, os.path.join(ROOT, "scripts")]
import harness  # noqa: E402
from make_models import make_models  # noqa: E402

import ortdlpack  # noqa: E402

BASE = "session.run + numpy"


def ways(sess: ort.InferenceSession, native: ortdlpack.Session, dropin: ortdlpack.InferenceSession,
         x: torch.Tensor) -> list:
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

    def w_rebound_same():  # the feed given again, the same object: no change (no import, no rebinding)
        return binding.run(feeds=feeds)

    # Two other objects over the same memory, given in turn: every run is given an object other than the one bound,
    # which is imported and bound again (made beforehand: torch's cost of making a view is not the rebinding's).
    others = [{in_name: x.view(shape)}, {in_name: x.view(shape)}]
    turn = [0]

    def w_rebound_new():
        turn[0] ^= 1
        return binding.run(feeds=others[turn[0]])

    def w_dropin():
        return dropin.run(None, feeds)

    dropin_binding = dropin.bind(feeds)

    def w_dropin_bound():
        return dropin_binding.run()

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
        ("bind().run(feeds=), same object", w_rebound_same),
        ("bind().run(feeds=), new object", w_rebound_new),
        ("InferenceSession.run", w_dropin),
        ("InferenceSession.bind().run()", w_dropin_bound),
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


def ratio_table(runner: harness.Runner, title: str, first: str, cases: list, labels: list, results: dict,
                base: str) -> None:
    """One row per way: median us per run and the ratio to `base` in each case."""
    header = [first] + [h for c in cases for h in (f"{c} us", "ratio")]
    rows = [[label] + [cell for c in cases for cell in (harness.us(results[(c, label)]),
                                                       harness.ratio(results[(c, label)] / results[(c, base)]))]
            for label in labels]
    runner.table(header, rows, title=title)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    harness.add_options(parser)
    parser.add_argument("--models", default=os.path.join(tempfile.gettempdir(), "ortdlpack-models"))
    parser.add_argument("--chart", default=None, help=f"PNG to write (default: {CHART}; none with --quick)")
    args = parser.parse_args(argv)
    runner = harness.Runner.from_args(args)
    torch.set_num_threads(1)
    paths = make_models(args.models, ["add_tiny", "three_out_tiny", "big_identity_ish"])
    # One intra-op thread (the per-call overhead is what is measured), no spinning: every session configured alike.
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
    cases = [
        ("add_tiny [1,100]", paths["add_tiny"], (1, 100)),
        ("3 outputs [1,100]", paths["three_out_tiny"], (1, 100)),
        ("64 MiB [16,1024,1024]", paths["big_identity_ish"], (16, 1024, 1024)),
    ]
    runner.header(f"onnxruntime {ort.__version__}", f"torch {torch.__version__}", f"ortdlpack {ortdlpack.__version__}")
    results = {}
    labels = []
    for case, path, shape in cases:
        sess = ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])
        native = ortdlpack.Session(path, opts, providers=["CPUExecutionProvider"])  # the same options
        dropin = ortdlpack.InferenceSession(path, opts, providers=["CPUExecutionProvider"])
        table = ways(sess, native, dropin, torch.rand(shape, dtype=torch.float32))
        for label, t in runner.compare(case, table).items():
            if label not in labels:
                labels.append(label)
            results[(case, label)] = t
        del table, sess, native, dropin

    export = export_ways()
    export_case = "4 KiB"
    for label, t in runner.compare("ORT -> torch, one tensor", export).items():
        results[(export_case, label)] = t

    case_names = [c for c, *_ in cases]
    ratio_table(runner, f"Median per run, ratio to '{BASE}' (lower is better):", "way (torch in, torch out)",
                case_names, labels, results, BASE)
    export_base = export[1][0]
    ratio_table(runner, f"ORT -> torch, one tensor; ratio to '{export_base}':", "ORT -> torch, one tensor",
                [export_case], [e[0] for e in export], results, export_base)

    def ratio(case, label, base=BASE):
        return results[(case, label)] / results[(case, base)]

    tiny1, tiny3 = case_names[0], case_names[1]
    runner.targets([
        (f"ortdlpack.run, {tiny1}", ratio(tiny1, "ortdlpack.run"), 0.9),
        (f"ortdlpack.run, {tiny3}", ratio(tiny3, "ortdlpack.run"), 0.9),
        (f"Session.run, {tiny1}", ratio(tiny1, "Session.run"), 0.6),
        (f"Session.run, {tiny3}", ratio(tiny3, "Session.run"), 0.6),
        (f"Session.bind().run(), {tiny1}", ratio(tiny1, "Session.bind().run()"), 0.4),
        (f"Session.bind().run(), {tiny3}", ratio(tiny3, "Session.bind().run()"), 0.4),
        (f"InferenceSession.bind().run(), {tiny1}", ratio(tiny1, "InferenceSession.bind().run()"), 0.3),
        (f"InferenceSession.bind().run() / Session.bind().run(), {tiny1}",
         ratio(tiny1, "InferenceSession.bind().run()", "Session.bind().run()"), 1.1),
        (f"bind().run(feeds=), new object / Session.bind().run(), {tiny1}",
         ratio(tiny1, "bind().run(feeds=), new object", "Session.bind().run()"), 1.2),
        ("ORT -> torch, one tensor", ratio(export_case, export[0][0], export_base), 0.3),
    ])
    chart_path = args.chart if args.chart is not None else ("" if args.quick else CHART)
    if chart_path:
        print(f"\nchart: {write_session_chart(chart_path, case_names, labels, results)}")
    return runner.finish()


CHART = os.path.join(ROOT, "docs", "session.png")


def write_session_chart(path: str, cases: list, labels: list, results: dict) -> str:
    """The table as a chart (log time axis: the cases differ by 1000x), machine and versions in the caption."""
    from chart import write_chart  # (matplotlib: only when a chart is written)

    caption = (f"python bench/bench_session.py; {harness.machine()}; onnxruntime {ort.__version__}, "
               f"torch {torch.__version__}, ortdlpack {ortdlpack.__version__}; median per run, "
               "torch in -> ORT -> torch out")
    return write_chart(path, "One session run from torch and back, per way (CPU)", caption, cases, labels, results,
                       log_time=True)


if __name__ == "__main__":
    sys.exit(main())
