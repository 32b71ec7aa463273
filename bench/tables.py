#!/usr/bin/env python3
"""Regenerates every table the Python benchmarks put in the docs: runs each benchmark a doc names and puts its report
between the doc's markers.

    python bench/tables.py [--quick] [--dry-run] [--only TEXT] [--json-dir DIR]

A doc (README.md, docs/*.md) names a benchmark with two HTML comments, which do not show when the doc is rendered:

    <!-- bench: python bench/bench_session.py -->
    (the report of the last run: replaced)
    <!-- /bench -->

Each command runs once, with this interpreter, from the repository's root, with --markdown FILE (bench/harness.py);
its report (versions, machine, how it was measured, the tables, the load average over the run) replaces what is
between its markers, after a line with the command. Prose around the markers is left as it is: read it again after
a run. --only TEXT: the commands that contain TEXT. --json-dir DIR: each benchmark's pyperf runs also go to
DIR/<command>.json, for `python -m pyperf compare_to OLD.json NEW.json`. --dry-run: print the reports, write no doc.
--quick: every command with --quick, a smoke run of seconds; implies --dry-run (its numbers are noise). A benchmark
that fails leaves its blocks as they are and the script exits 1.
"""

from __future__ import annotations

import argparse
import glob
import os
import re
import shlex
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BLOCK = re.compile(r"(<!-- bench: (?P<command>[^>]*?) -->\n)(?P<report>.*?)(<!-- /bench -->)", re.S)


def docs() -> list[str]:
    return [os.path.join(ROOT, "README.md"), *sorted(glob.glob(os.path.join(ROOT, "docs", "*.md")))]


def commands(text: str) -> list[str]:
    """The benchmark commands a doc's markers name, in order."""
    return [m["command"] for m in BLOCK.finditer(text)]


def argv(command: str) -> list[str]:
    """The command as this interpreter runs it: `python bench/<name>.py [args]` only (a doc runs nothing else)."""
    words = shlex.split(command)
    if len(words) < 2 or words[0] != "python" or not re.fullmatch(r"bench/bench_\w+\.py", words[1]):
        raise ValueError(f"not a benchmark command: {command!r} (python bench/bench_<name>.py [args])")
    return [sys.executable, *words[1:]]


def splice(text: str, reports: dict[str, str]) -> str:
    """`text` with the report of each command in `reports` between its markers (others left as they are)."""

    def block(m: re.Match) -> str:
        report = reports.get(m["command"])
        if report is None:
            return m[0]
        return f"{m[1]}`{m['command']}`:\n\n{report.rstrip()}\n{m[4]}"

    return BLOCK.sub(block, text)


def run(command: str, quick: bool, json_dir: str | None) -> str | None:
    """The report of one run of `command`, or None when it failed (its output shown)."""
    with tempfile.TemporaryDirectory() as tmp:
        report = os.path.join(tmp, "report.md")
        extra = ["--markdown", report] + (["--quick"] if quick else [])
        if json_dir:
            name = re.sub(r"[^\w.-]+", "_", command[len("python bench/"):])
            extra += ["--json", os.path.join(json_dir, name + ".json")]
        print(f"== {command}", flush=True)
        proc = subprocess.run(argv(command) + extra, cwd=ROOT, capture_output=True, text=True)
        if proc.returncode != 0:
            print(f"{command} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
            return None
        with open(report) as f:
            return f.read()


def main(args=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="every benchmark with --quick; implies --dry-run")
    parser.add_argument("--dry-run", action="store_true", help="print the reports, write no doc")
    parser.add_argument("--only", default="", metavar="TEXT", help="only the commands that contain TEXT")
    parser.add_argument("--json-dir", metavar="DIR", help="keep each benchmark's pyperf runs in DIR")
    args = parser.parse_args(args)
    texts = {}
    for path in docs():
        with open(path) as f:
            texts[path] = f.read()
    wanted = list(dict.fromkeys(c for text in texts.values() for c in commands(text) if args.only in c))
    for command in wanted:
        argv(command)  # every command is a benchmark's, before any runs
    if args.json_dir:
        os.makedirs(args.json_dir, exist_ok=True)
    reports = {}
    for command in wanted:
        report = run(command, args.quick, args.json_dir)
        if report is not None:
            reports[command] = report
            if args.quick or args.dry_run:
                print(report)
    if not (args.quick or args.dry_run):
        for path, text in texts.items():
            new = splice(text, reports)
            if new != text:
                with open(path, "w") as f:
                    f.write(new)
                print(f"updated {os.path.relpath(path, ROOT)}")
    return 0 if len(reports) == len(wanted) else 1


if __name__ == "__main__":
    sys.exit(main())
