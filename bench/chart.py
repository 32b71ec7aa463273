"""A benchmark's chart (matplotlib PNG): time per iteration and, when measured, bytes copied, per way and case.

Made by the benchmark from its own run, written next to its table in docs/; the caption names the machine and the
versions, so a chart is never shown without what it was measured on.
"""

from __future__ import annotations

import os
import platform

import matplotlib

matplotlib.use("Agg")  # files only: no display needed
import matplotlib.pyplot as plt  # noqa: E402


def machine() -> str:
    """CPU model (Linux /proc/cpuinfo, else platform), core count, OS."""
    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            model = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return f"{model}, {os.cpu_count()} CPUs, {platform.system()} {platform.release()}"


def write_chart(path: str, title: str, caption: str, cases: list, ways: list, seconds: dict,
                copied: dict | None = None, log_time: bool = False,
                copied_title: str = "bytes copied (lower is better)") -> str:
    """Bar charts: one group per case (e.g. batch size), one bar per way.

    seconds / copied: {(case, way): value}; `copied` (bytes per iteration) adds a second panel. Returns `path`."""
    panels = 2 if copied else 1
    fig, axes = plt.subplots(1, panels, figsize=(6.5 * panels + (2.0 if len(ways) > 3 else 0), 4.6), squeeze=False)
    width = 0.8 / len(ways)
    xs = range(len(cases))

    def bars(ax, values, scale, ylabel, fmt):
        for i, way in enumerate(ways):
            ys = [values[(case, way)] * scale for case in cases]
            pos = [x + (i - (len(ways) - 1) / 2) * width for x in xs]
            rects = ax.bar(pos, ys, width, label=way)
            ax.bar_label(rects, labels=[fmt(y) for y in ys], fontsize=7, padding=2,
                         rotation=90 if len(ways) > 3 else 0)  # many narrow bars: vertical labels stay apart
        ax.set_xticks(list(xs), [str(c) for c in cases])
        ax.set_ylabel(ylabel)
        ax.grid(axis="y", alpha=0.3)
        ax.margins(y=0.25)  # room for the labels above the tallest bar

    ax = axes[0][0]
    bars(ax, seconds, 1e6 if log_time else 1e3, "microseconds per run" if log_time else "ms per iteration",
         lambda y: f"{y:,.1f}" if y < 100 else f"{y:,.0f}")
    if log_time:
        ax.set_yscale("log")
    ax.set_title("time (lower is better)", fontsize=10)
    ax.legend(fontsize=7)
    if copied:
        ax = axes[0][1]
        bars(ax, copied, 1.0, "bytes copied per iteration", lambda y: f"{y:,.0f}")
        ax.set_title(copied_title, fontsize=10)
    fig.suptitle(title, fontsize=11)
    fig.text(0.5, 0.01, caption, ha="center", va="bottom", fontsize=7, wrap=True)
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
