#!/usr/bin/env python3
"""The two-model pipeline on an accelerator: time per iteration and host<->device bytes copied, usual path vs
ortdlpack, batch 1 and 64, as a table and a chart (docs/pipeline.png).

    python bench/bench_pipeline.py [--budget SECONDS] [--device auto|cuda|virtual] [--chart PNG]

The measurement is examples/accelerator_pipeline.py's (the demo run with a longer timing budget): on the GPU when
torch and onnxruntime-gpu see CUDA, else on the virtual accelerator plugin EP. Every row comes from this run;
speed-ups are against the usual path measured alongside (alternating iterations).
"""

from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path[:0] = [HERE, os.path.join(ROOT, "examples")]
import accelerator_pipeline as pipeline  # noqa: E402
from chart import machine, write_chart  # noqa: E402

CHART = os.path.join(ROOT, "docs", "pipeline.png")


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    chart_path = CHART
    if "--chart" in argv:
        i = argv.index("--chart")
        chart_path = argv[i + 1]
        del argv[i : i + 2]
    result = pipeline.run_pipeline(pipeline.arguments(__doc__, argv, budget=10.0), show_facts=False)
    if result is None:
        return 2
    caption, rows = result
    batches = sorted({r[0] for r in rows})
    ways = list(dict.fromkeys(r[1] for r in rows))
    seconds = {(f"batch {n}", way): t for n, way, t, *_ in rows}
    copied = {(f"batch {n}", way): pipe[0] for n, way, _t, _b, pipe, _in in rows}
    print("\n| batch | path | ms/iter | vs usual | pipeline host<->device bytes (copies) | "
          "inside runs bytes (copies) |")
    print("|---|---|---|---|---|---|")
    for n, way, t, base, (pb, pc), inside in rows:
        ins = f"{inside[0]:,} ({inside[1]})" if inside else "not counted"
        print(f"| {n} | {way} | {t * 1e3:.3f} | {base / t:.2f}x | {pb:,} ({pc}) | {ins} |")
    where = "GPU" if caption.startswith("GPU") else "virtual accelerator"
    path = write_chart(chart_path, f"feature -> step -> head on the {where}: usual path vs ortdlpack",
                       f"python bench/bench_pipeline.py; {caption}; {machine()}", [f"batch {n}" for n in batches],
                       ways, seconds, copied, copied_title="host<->device bytes copied between session runs")
    print(f"chart: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
