"""A benchmark's chart (matplotlib PNG): time per iteration and, when measured, bytes copied, per way and case.

Made by the benchmark from its own run, written next to its table in docs/; the caption names the machine and the
versions, so a chart is never shown without what it was measured on.
"""

from __future__ import annotations

import os

import matplotlib

matplotlib.use("Agg")  # files only: no display needed
import matplotlib.pyplot as plt  # noqa: E402


def write_chart(path: str, title: str, caption: str, cases: list, ways: list, seconds: dict,
                copied: dict | None = None, log_time: bool = False,
                copied_title: str = "bytes copied (lower is better)") -> str:
    """Bar charts: one group per case (e.g. batch size), one bar per way.

    seconds / copied: {(case, way): value}; `copied` (bytes per iteration) adds a second panel. Returns `path`."""
    return write_charts(path, title, caption, [Group("", cases, ways, seconds, copied, log_time, copied_title)])


class Group:
    """One row of a chart: time per case and way and, when given, bytes copied (a second panel)."""

    def __init__(self, subtitle: str, cases: list, ways: list, seconds: dict, copied: dict | None = None,
                 log_time: bool = False, copied_title: str = "bytes copied (lower is better)"):
        self.subtitle, self.cases, self.ways, self.seconds, self.copied = subtitle, cases, ways, seconds, copied
        self.log_time, self.copied_title = log_time, copied_title


def write_charts(path: str, title: str, caption: str, groups: list) -> str:
    """One row of panels per Group (e.g. two workloads of one run), one PNG. A way with no value in a case (not
    measured there) gets no bar. Returns `path`."""
    panels = 2 if any(g.copied for g in groups) else 1
    many = max(len(g.ways) for g in groups) > 3
    fig, axes = plt.subplots(len(groups), panels, figsize=(6.5 * panels + (2.0 if many else 0), 4.6 * len(groups)),
                             squeeze=False)

    def bars(ax, group, values, scale, ylabel, fmt):
        width = 0.8 / len(group.ways)
        xs = range(len(group.cases))
        for i, way in enumerate(group.ways):
            pos = [x + (i - (len(group.ways) - 1) / 2) * width for x in xs]
            got = [(p, values[(case, way)] * scale) for p, case in zip(pos, group.cases)
                   if values.get((case, way)) is not None]
            rects = ax.bar([p for p, _ in got], [y for _, y in got], width, label=way, color=f"C{i}")
            ax.bar_label(rects, labels=[fmt(y) for _, y in got], fontsize=7, padding=2,
                         rotation=90 if many else 0)  # many narrow bars: vertical labels stay apart
        ax.set_xticks(list(xs), [str(c) for c in group.cases])
        ax.set_ylabel(ylabel)
        ax.grid(axis="y", alpha=0.3)
        ax.margins(y=0.25)  # room for the labels above the tallest bar

    for row, group in zip(axes, groups):
        prefix = f"{group.subtitle}: " if group.subtitle else ""
        ax = row[0]
        bars(ax, group, group.seconds, 1e6 if group.log_time else 1e3,
             "microseconds per run" if group.log_time else "ms per iteration",
             lambda y: f"{y:,.1f}" if y < 100 else f"{y:,.0f}")
        if group.log_time:
            ax.set_yscale("log")
        ax.set_title(prefix + "time (lower is better)", fontsize=10)
        ax.legend(fontsize=7)
        if group.copied:
            ax = row[1]
            bars(ax, group, group.copied, 1.0, "bytes copied per iteration", lambda y: f"{y:,.0f}")
            ax.set_title(prefix + group.copied_title, fontsize=10)
    fig.suptitle(title, fontsize=11)
    fig.text(0.5, 0.01, caption, ha="center", va="bottom", fontsize=7, wrap=True)
    fig.tight_layout(rect=(0, 0.07 / len(groups), 1, 1))
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
