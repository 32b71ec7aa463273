#!/usr/bin/env python3
"""The accelerator pipeline: time per iteration and host<->device bytes, usual path vs ortdlpack, as markdown tables
and a chart for the docs, from one run.

    python bench/bench_pipeline.py [--budget SECONDS] [--device auto|cuda|webgpu|virtual] [--chart PNG]

The measurement is examples/accelerator_pipeline.py's (the demo, with a longer timing budget): on CUDA (torch and
onnxruntime-gpu see a GPU) and on the WebGPU EP, the image pipeline at batch 1 and 64 and the two-run memory-bound
chain; on the virtual accelerator plugin EP, its feature -> step -> head pipeline. Every row comes from this run;
speed-ups are against the usual path measured alongside (alternating iterations). The chart goes to
docs/pipeline_webgpu.png for --device webgpu, else docs/pipeline.png.
"""

from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path[:0] = [HERE, os.path.join(ROOT, "examples")]
import accelerator_pipeline as pipeline  # noqa: E402
from chart import Group, machine, write_charts  # noqa: E402


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    chart_path = None
    if "--chart" in argv:
        i = argv.index("--chart")
        chart_path = argv[i + 1]
        del argv[i : i + 2]
    args = pipeline.arguments(__doc__, argv, budget=25.0)
    result = pipeline.run_pipeline(args, show_facts=False)
    if result is None:
        return 2
    caption, sections = result
    groups = []
    for title, case_title, rows in sections:
        print(f"\n{title}:\n")
        if len(rows[0]) == 5:  # CUDA / WebGPU rows: (case, path, s, base s, (bytes, copies))
            print(f"| {case_title} | path | ms/iter | vs usual | host<->device bytes (copies) per iteration |")
            print("|---|---|---|---|---|")
            for case, way, t, base, (nbytes, copies) in rows:
                if t is None:
                    print(f"| {case} | {way} | n/a | | |")
                else:
                    print(f"| {case} | {way} | {t * 1e3:.3f} | {base / t:.2f}x | {nbytes:,} ({copies}) |")
            copied = {(f"{case_title} {case}", way): b for case, way, t, _b, (b, _c) in rows if t is not None}
        else:  # virtual accelerator rows: (batch, path, s, base s, pipeline (bytes, copies), inside runs)
            print("| batch | path | ms/iter | vs usual | pipeline host<->device bytes (copies) | "
                  "inside runs bytes (copies) |")
            print("|---|---|---|---|---|---|")
            for n, way, t, base, (pb, pc), inside in rows:
                ins = f"{inside[0]:,} ({inside[1]})" if inside else "not counted"
                print(f"| {n} | {way} | {t * 1e3:.3f} | {base / t:.2f}x | {pb:,} ({pc}) | {ins} |")
            copied = {(f"{case_title} {r[0]}", r[1]): r[4][0] for r in rows}
        cases = [f"{case_title} {c}" for c in dict.fromkeys(r[0] for r in rows)]
        ways = list(dict.fromkeys(r[1] for r in rows))
        seconds = {(f"{case_title} {r[0]}", r[1]): r[2] for r in rows}
        groups.append(Group(title, cases, ways, seconds, copied, copied_title="host<->device bytes per iteration"))
    where = caption.split(";")[0].split(" (")[0]
    if chart_path is None:
        chart_path = os.path.join(ROOT, "docs", "pipeline_webgpu.png" if where.startswith("WebGPU") else "pipeline.png")
    path = write_charts(chart_path, f"{where}: usual path vs ortdlpack", f"python bench/bench_pipeline.py "
                        f"--device {args.device}; {caption}; {machine()}", groups)
    print(f"\nchart: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
