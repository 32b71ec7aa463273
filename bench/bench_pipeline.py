#!/usr/bin/env python3
"""The accelerator pipeline: time per iteration and host<->device bytes, usual path vs ortdlpack, as markdown tables
and a chart for the docs, from one run.

    python bench/bench_pipeline.py [--budget SECONDS] [--device auto|cuda|webgpu|virtual] [--chart PNG]
                                   [--quick] [--rounds N] [--min-time S] [--json FILE]

The measurement is examples/accelerator_pipeline.py's (the demo, with a longer timing budget): on CUDA (torch and
onnxruntime-gpu see a GPU) and on the WebGPU EP, the image pipeline at batch 1 and 64 and the two-run memory-bound
chain; on the virtual accelerator plugin EP, its feature -> step -> head pipeline. Every row comes from this run;
speed-ups are against the usual path measured alongside (bench/harness.py: rounds interleaved until the budget is
spent, at least 3). --quick: --budget 0.05 --batches 1,2 and no chart. The chart goes to
docs/pipeline_webgpu.png for --device webgpu, else docs/pipeline.png.
"""

from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path[:0] = [HERE, os.path.join(ROOT, "examples")]
import accelerator_pipeline as pipeline  # noqa: E402
import harness  # noqa: E402
from chart import Group, write_charts  # noqa: E402


def options(parser) -> None:
    harness.add_options(parser)  # --quick: --budget 0.05 --batches 1,2, no chart
    parser.add_argument("--chart", help="PNG to write (default: docs/pipeline_webgpu.png for --device webgpu, else "
                        "docs/pipeline.png; none with --quick)")


def main(argv=None) -> int:
    args = pipeline.arguments(__doc__, argv, budget=25.0, options=options)
    if args.quick:
        args.budget, args.batches = 0.05, (1, 2)
    runner = harness.Runner.from_args(args, rounds=3, budget=args.budget)
    result = pipeline.run_pipeline(args, runner, show_facts=False)
    if result is None:
        return 2
    caption, sections = result
    print()
    runner.header(caption)
    groups = []
    for title, case_title, rows in sections:
        if len(rows[0]) == 5:  # CUDA / WebGPU rows: (case, path, s, base s, (bytes, copies))
            runner.table([case_title, "path", "ms/iter", "vs usual", "host<->device bytes (copies) per iteration"],
                          [(case, way, harness.ms(t), harness.ratio(base / t) if t else "", f"{b:,} ({c})" if t else "")
                           for case, way, t, base, (b, c) in rows], align="llrrr", title=f"{title}:")
            copied = {(f"{case_title} {case}", way): b for case, way, t, _b, (b, _c) in rows if t is not None}
        else:  # virtual accelerator rows: (batch, path, s, base s, pipeline (bytes, copies), inside runs)
            runner.table(["batch", "path", "ms/iter", "vs usual", "pipeline host<->device bytes (copies)",
                           "inside runs bytes (copies)"],
                          [(n, way, harness.ms(t), harness.ratio(base / t), f"{pb:,} ({pc})",
                            f"{inside[0]:,} ({inside[1]})" if inside else "not counted")
                           for n, way, t, base, (pb, pc), inside in rows], align="rlrrrr", title=f"{title}:")
            copied = {(f"{case_title} {r[0]}", r[1]): r[4][0] for r in rows}
        cases = [f"{case_title} {c}" for c in dict.fromkeys(r[0] for r in rows)]
        ways = list(dict.fromkeys(r[1] for r in rows))
        seconds = {(f"{case_title} {r[0]}", r[1]): r[2] for r in rows}
        groups.append(Group(title, cases, ways, seconds, copied, copied_title="host<->device bytes per iteration"))
    where = caption.split(";")[0].split(" (")[0]
    chart_path = args.chart
    if chart_path is None and not args.quick:
        chart_path = os.path.join(ROOT, "docs", "pipeline_webgpu.png" if where.startswith("WebGPU") else "pipeline.png")
    if chart_path:
        path = write_charts(chart_path, f"{where}: usual path vs ortdlpack", f"python bench/bench_pipeline.py "
                            f"--device {args.device}; {caption}; {harness.machine()}", groups)
        print(f"\nchart: {path}")
    return runner.finish()


if __name__ == "__main__":
    sys.exit(main())
