"""The one timing loop of the Python benchmarks and examples, on pyperf's data model, and their markdown report.

Every benchmark compares ways of doing one thing ("ortdlpack.run" against "session.run + numpy", ...), measured in
the same process on the same objects:
  warm-up      each way's loop count is calibrated first: one call, then doubled batches until a batch of calls
               lasts `min_time` (pyperf's calibration; these batches are the run's warm-ups);
  rounds       a round times one batch of every way in turn, the first way of the round rotating, so that load from
               elsewhere on the machine (a shared machine's) and what one way leaves behind hit every way alike: the
               ratios of ways measured together stay fair on a busy machine;
  statistic    the median seconds per call over the rounds (pyperf.Benchmark.median).
Each way's rounds are one pyperf.Run (values: seconds per call of each round; warm-ups; the machine's metadata and
the 1-minute load average when it was measured) of a pyperf.Benchmark named "<group> / <way>". `--json FILE` adds
them all to a pyperf JSON file (pyperf.add_runs: running a benchmark N times into one file gives each benchmark N
runs from N processes), which `python -m pyperf compare_to before.json after.json --table` compares, with
significance, and `python -m pyperf stats FILE` describes.

What a benchmark prints through its Runner (header, tables, notes, the load average) is its report: `--markdown FILE`
writes it, and bench/tables.py puts it in the docs. Why pyperf's primitives and not its Runner (one process per
benchmark) or pytest-benchmark: bench/README.md.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import sys
import time
from typing import Callable, Iterable

import pyperf

ROUNDS, MIN_TIME = 15, 0.02  # a full run: 15 rounds of batches of >= 20 ms per way
QUICK_ROUNDS, QUICK_MIN_TIME = 3, 0.001  # --quick: a smoke run of seconds (its numbers are noise)
QUICK_NOTE = "--quick: the numbers are noise"
MAX_LOOPS = 1 << 24


def add_options(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """The options every benchmark takes: --quick, --rounds, --min-time, --json, --markdown."""
    group = parser.add_argument_group("timing and report (bench/harness.py)")
    group.add_argument("--quick", action="store_true",
                       help=f"{QUICK_ROUNDS} rounds of >= {QUICK_MIN_TIME * 1e3:g} ms batches: a smoke run of seconds")
    group.add_argument("--rounds", type=int, help=f"rounds per way (default {ROUNDS}, --quick {QUICK_ROUNDS})")
    group.add_argument("--min-time", type=float, metavar="SECONDS", help="the least a batch of calls of one way "
                       f"lasts (default {MIN_TIME}, --quick {QUICK_MIN_TIME})")
    group.add_argument("--json", metavar="FILE",
                       help="add every way's runs to this pyperf JSON file (then: python -m pyperf compare_to A B)")
    group.add_argument("--markdown", metavar="FILE", help="write the report (header, tables, load average) to FILE")
    return parser


def machine() -> str:
    """CPU model (Linux /proc/cpuinfo, else platform), core count, OS."""
    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            model = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return f"{model}, {os.cpu_count()} CPUs, {platform.system()} {platform.release()}"


def load_average() -> float:
    return os.getloadavg()[0]


class Runner:
    """A benchmark's run: measures groups of ways (compare), keeps every way's pyperf.Benchmark (--json) and prints
    the report (--markdown).

    rounds: rounds per way (at least that many with a budget); min_time: the least one batch of calls lasts
    (calibrates the loop count; 0: one call per batch); budget: seconds of rounds per group, if given (rounds go on
    until it is spent)."""

    def __init__(self, rounds: int = ROUNDS, min_time: float = MIN_TIME, budget: float | None = None,
                 json_path: str | None = None, markdown_path: str | None = None, quick: bool = False):
        if rounds < 1 or min_time < 0:
            raise ValueError("rounds must be >= 1 and min_time >= 0")
        self.rounds, self.min_time, self.budget, self.quick = rounds, min_time, budget, quick
        self.json_path, self.markdown_path = json_path, markdown_path
        self.benchmarks: list[pyperf.Benchmark] = []
        self.report: list[str] = []
        self._names: set[str] = set()
        self._metadata = pyperf.Run([1.0]).get_metadata()  # the machine's (pyperf's collection), once
        self._load_start = load_average()

    @classmethod
    def from_args(cls, args: argparse.Namespace, rounds: int = ROUNDS, budget: float | None = None) -> "Runner":
        """A Runner for the options add_options added; `rounds`: the default without --quick or --rounds."""
        min_time = QUICK_MIN_TIME if args.quick else MIN_TIME
        return cls(rounds=args.rounds or (QUICK_ROUNDS if args.quick else rounds),
                   min_time=min_time if args.min_time is None else args.min_time, budget=budget, json_path=args.json,
                   markdown_path=args.markdown, quick=args.quick)

    # --- measuring ---

    def compare(self, group: str, ways: Iterable[tuple[str, Callable[[], object]]] | dict, *, rounds: int | None = None,
                min_time: float | None = None, budget: float | None = None) -> dict[str, float]:
        """Median seconds per call of each way ({label: function} or (label, function) pairs), measured together in
        interleaved rounds; the Runner's settings unless given here. Returns {label: seconds}."""
        ways = list(ways.items() if isinstance(ways, dict) else ways)
        rounds = self.rounds if rounds is None else rounds
        min_time = self.min_time if min_time is None else min_time
        budget = self.budget if budget is None else budget
        names = [f"{group} / {label}" for label, _ in ways]
        if len(set(names)) != len(names) or self._names.intersection(names):
            raise ValueError(f"{group}: a way measured twice under one name")
        calibrated = [_calibrate(fn, min_time) for _, fn in ways]
        values: list[list[float]] = [[] for _ in ways]
        start = time.perf_counter()
        r = 0
        while r < rounds or (budget is not None and time.perf_counter() - start < budget):
            for k in range(len(ways)):
                i = (r + k) % len(ways)
                loops = calibrated[i][0]
                values[i].append(_batch(ways[i][1], loops) / loops)
            r += 1
        when = {"load_avg_1min": load_average(), "date": datetime.datetime.now().isoformat(" ", "seconds")}
        medians = {}
        for name, (label, _), (loops, warmups), got in zip(names, ways, calibrated, values):
            run = pyperf.Run([max(v, 1e-12) for v in got], warmups=warmups, collect_metadata=False,
                             metadata={**self._metadata, **when, "name": name, "loops": loops, "unit": "second"})
            bench = pyperf.Benchmark([run])
            self.benchmarks.append(bench)
            self._names.add(name)
            medians[label] = bench.median()
        return medians

    # --- the report ---

    def note(self, text: str = "") -> None:
        """Prints a line of the report."""
        print(text, flush=True)
        self.report.append(text)

    def header(self, *parts: str) -> None:
        """The report's first line: the versions (parts), the machine and how every row is measured."""
        how = (f"{self.budget:g} s of" if self.budget is not None else f"{self.rounds}") + " interleaved rounds of "
        how += f">= {self.min_time * 1e3:g} ms batches per way" if self.min_time else "one call per way"
        self.note(f"{', '.join(parts)}; {machine()}; Python {sys.version.split()[0]}; {how}, median per call"
                  + (f"; {QUICK_NOTE}" if self.quick else ""))

    def table(self, headers: list[str], rows: Iterable[Iterable[object]], align: str | None = None,
              title: str = "") -> None:
        """A markdown table in the report (format_table), after its title if given."""
        if title:
            self.note()
            self.note(title)
        self.note()
        for line in format_table(headers, rows, align):
            self.note(line)

    def targets(self, rows: Iterable[tuple[str, float, float]], first: str = "target",
                ratio_header: str = "ratio") -> list[bool]:
        """The table of targets: (name, ratio, limit) per row, met when ratio <= limit. Returns met per row."""
        rows = list(rows)
        met = [r <= limit for _, r, limit in rows]
        cells = [(name, ratio(r), f"{limit:.1f}x", "yes" if ok else "no") for (name, r, limit), ok in zip(rows, met)]
        self.table([first, ratio_header, "limit", "met"], cells, align="lrrl")
        return met

    def finish(self) -> int:
        """Ends the report with the load average over the run, writes --json and --markdown; returns 0 (the exit
        status)."""
        self.note()
        self.note(f"load average (1 min): {self._load_start:.1f} at the start, {load_average():.1f} at the end")
        if self.json_path and self.benchmarks:
            pyperf.add_runs(self.json_path, pyperf.BenchmarkSuite(self.benchmarks))
            print(f"pyperf runs added to {self.json_path} (python -m pyperf compare_to OLD.json {self.json_path})")
        if self.markdown_path:
            with open(self.markdown_path, "w") as f:
                f.write("\n".join(self.report) + "\n")
        sys.stdout.flush()
        return 0


def _batch(fn: Callable[[], object], loops: int) -> float:
    t0 = time.perf_counter()
    for _ in range(loops):
        fn()
    return time.perf_counter() - t0


def _calibrate(fn: Callable[[], object], min_time: float) -> tuple[int, list]:
    """The loop count whose batch lasts min_time, and the batches run to find it ((loops, seconds per call))."""
    loops, warmups = 1, []
    while True:
        raw = _batch(fn, loops)
        warmups.append((loops, raw / loops))
        if raw >= min_time or loops >= MAX_LOOPS:
            return loops, warmups
        loops *= 2


# --- cells and tables -------------------------------------------------------------------------------------------


def us(seconds: float | None) -> str:
    """Microseconds as the tables show them."""
    if seconds is None:
        return "n/a"
    v = seconds * 1e6
    return f"{v:.2f}" if v < 100 else f"{v:.1f}" if v < 1000 else f"{v:.0f}"


def ms(seconds: float | None) -> str:
    return "n/a" if seconds is None else f"{seconds * 1e3:.3f}"


def ratio(r: float | None) -> str:
    return "" if r is None else f"{r:.2f}x"


def format_table(headers: list[str], rows: Iterable[Iterable[object]], align: str | None = None) -> list[str]:
    """The lines of a markdown table, columns padded to their widest cell. align: 'l' or 'r' per column (default:
    the first column left, the others right)."""
    rows = [[str(c) for c in row] for row in rows]
    align = align or "l" + "r" * (len(headers) - 1)
    widths = [max(3, len(h), *(len(row[i]) for row in rows)) for i, h in enumerate(headers)]

    def line(cells):
        return "| " + " | ".join(c.rjust(w) if a == "r" else c.ljust(w) for c, w, a in zip(cells, widths, align)) + " |"

    rule = "|" + "|".join("-" * (w + 1) + ":" if a == "r" else "-" * (w + 2) for w, a in zip(widths, align)) + "|"
    return [line(headers), rule, *(line(row) for row in rows)]
