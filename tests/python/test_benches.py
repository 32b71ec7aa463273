"""The benchmarks (bench/*.py) and their harness (bench/harness.py).

Every benchmark's --quick mode runs as a user runs it and prints its tables; each benchmark checks that its ways give
the same results before it times them, and exits non-zero otherwise. No timing is asserted (times are the machine's,
and --quick's are noise): only that the harness measured and reported what it was given.
"""

from __future__ import annotations

import os
import re
import sys
import types

import pytest
from conftest import ROOT, entry_points, needs, run_script

pytest.importorskip("pyperf", reason="the benchmarks' harness needs pyperf (requirements.txt; scripts/setup.sh)")
sys.path.insert(0, os.path.join(ROOT, "bench"))
import harness  # noqa: E402
import tables as doc_tables  # noqa: E402


def run_bench(name: str, *args: str) -> str:
    out = run_script(f"bench/{name}", "--quick", *args, timeout=600)
    assert "--quick: the numbers are noise" in out or "nothing to measure" in out, out
    return out


def tables(out: str) -> int:
    """How many markdown tables `out` holds."""
    return sum(1 for line in out.splitlines() if line.startswith("|-"))


# --- the harness ------------------------------------------------------------------------------------------------


def test_compare_times_every_way_in_interleaved_rounds():
    calls = []
    runner = harness.Runner(rounds=4, min_time=0)
    times = runner.compare("group", [("a", lambda: calls.append("a")), ("b", lambda: calls.append("b"))])
    assert list(times) == ["a", "b"] and all(t > 0 for t in times.values())
    # min_time 0: one calibration call each, then one call per way and round, the first way rotating
    assert calls == ["a", "b", "a", "b", "b", "a", "a", "b", "b", "a"]
    assert [b.get_name() for b in runner.benchmarks] == ["group / a", "group / b"]
    assert [b.get_nvalue() for b in runner.benchmarks] == [4, 4]
    assert times["a"] == runner.benchmarks[0].median()


def test_calibration_reaches_min_time_and_budget_adds_rounds(monkeypatch):
    # The harness's clock is one that each call of the way advances by 100 us: the test does not depend on how
    # busy the machine is.
    now = [0.0]

    def call():
        now[0] += 1e-4

    monkeypatch.setattr(harness, "time", types.SimpleNamespace(perf_counter=lambda: now[0]))
    runner = harness.Runner(rounds=1, min_time=0.002, budget=0.05)
    runner.compare("g", {"call": call})
    (bench,) = runner.benchmarks
    run = bench.get_runs()[0]
    loops = bench.get_loops()
    assert loops == 32 and bench.median() == pytest.approx(1e-4)  # the first power of 2 whose batch lasts 2 ms
    assert [w[0] for w in run.warmups][-1] == loops  # the calibration batches are the warm-ups
    assert bench.get_nvalue() > 1  # the budget kept the rounds going
    assert run.get_metadata()["load_avg_1min"] >= 0


def test_a_way_measured_twice_under_one_name_is_refused():
    runner = harness.Runner(rounds=1, min_time=0)
    runner.compare("g", {"a": lambda: None})
    with pytest.raises(ValueError, match="measured twice"):
        runner.compare("g", {"a": lambda: None})
    with pytest.raises(ValueError, match="measured twice"):
        runner.compare("h", [("a", lambda: None), ("a", lambda: None)])
    with pytest.raises(ValueError):
        harness.Runner(rounds=0)


def test_json_adds_runs_that_pyperf_reads(tmp_path):
    import pyperf

    path = str(tmp_path / "bench.json")
    for _ in range(2):  # two processes' worth: each adds its runs
        runner = harness.Runner(rounds=3, min_time=0, json_path=path)
        runner.compare("g", {"a": lambda: None, "b": lambda: None})
        assert runner.finish() == 0
    suite = pyperf.BenchmarkSuite.load(path)
    assert suite.get_benchmark_names() == ["g / a", "g / b"]
    assert [b.get_nrun() for b in suite] == [2, 2] and [b.get_nvalue() for b in suite] == [6, 6]


def test_the_report_is_markdown(tmp_path, capsys):
    """What the Runner prints is its report, and --markdown writes exactly that."""
    path = tmp_path / "report.md"
    runner = harness.Runner(rounds=1, min_time=0, markdown_path=str(path))
    runner.header("versions")
    runner.table(["name", "us"], [("a", harness.us(1.5e-6)), ("long name", harness.us(2e-3))], title="title:")
    met = runner.targets([("x", 0.5, 1.0), ("y", 1.5, 1.0)])
    runner.note("a note")
    runner.finish()
    out = capsys.readouterr().out
    lines = out.split("\n")
    assert lines[0].startswith("versions; ") and "15 interleaved" not in lines[0] and "1 interleaved rounds" in lines[0]
    assert lines[1:7] == ["", "title:", "", "| name      |   us |", "|-----------|-----:|", "| a         | 1.50 |"]
    assert "| long name | 2000 |" in lines
    assert "| x      | 0.50x |  1.0x | yes |" in lines and "| y      | 1.50x |  1.0x | no  |" in lines
    assert met == [True, False]
    assert lines[-2].startswith("load average (1 min): ") and "a note" in lines
    assert path.read_text() == out


# --- bench/tables.py: the reports in the docs ------------------------------------------------------------------


def test_tables_puts_each_report_between_its_markers():
    text = ("a\n<!-- bench: python bench/bench_x.py --k -->\nold\n<!-- /bench -->\nb\n"
            "<!-- bench: python bench/bench_y.py -->\nkept\n<!-- /bench -->\n")
    assert doc_tables.commands(text) == ["python bench/bench_x.py --k", "python bench/bench_y.py"]
    assert doc_tables.splice(text, {"python bench/bench_x.py --k": "report\n\n"}) == (
        "a\n<!-- bench: python bench/bench_x.py --k -->\n`python bench/bench_x.py --k`:\n\nreport\n<!-- /bench -->\nb\n"
        "<!-- bench: python bench/bench_y.py -->\nkept\n<!-- /bench -->\n")


def test_tables_runs_only_benchmarks():
    assert doc_tables.argv("python bench/bench_x.py --device 'a b'") == [sys.executable, "bench/bench_x.py", "--device",
                                                                       "a b"]
    for command in ("python scripts/setup.sh", "sh bench/bench_x.py", "python bench/../x.py", "python"):
        with pytest.raises(ValueError, match="not a benchmark command"):
            doc_tables.argv(command)


def test_the_docs_name_every_benchmark_with_a_table():
    named = {doc_tables.argv(c)[1] for path in doc_tables.docs() for c in doc_tables.commands(open(path).read())}
    benches = {f"bench/{f}" for f in os.listdir(os.path.join(ROOT, "bench")) if re.fullmatch(r"bench_\w+\.py", f)}
    assert named == benches - {"bench/bench_gpu.py"}  # bench_gpu: no GPU here to fill a table (scripts/gpu_check.sh)


# --- every benchmark's --quick mode -----------------------------------------------------------------------------


def needs_onnxruntime_dlpack():
    """bench_python and bench_session measure against onnxruntime's own DLPack (OrtValue.from_dlpack, __dlpack__)."""
    import onnxruntime as ort

    if not hasattr(ort.OrtValue, "from_dlpack"):
        pytest.skip(f"onnxruntime {ort.__version__} has no OrtValue.from_dlpack / __dlpack__, the baselines this "
                    "benchmark measures against")


def test_bench_python():
    needs("torch", "jax")
    entry_points()  # it times _testing.exchange
    needs_onnxruntime_dlpack()
    out = run_bench("bench_python.py")
    assert tables(out) == 2 and re.search(r"^\| 64 MiB +\| jax -> ORT ", out, re.M)


def test_bench_session(tmp_path):
    """Also --json: every way of every table in the pyperf file, under the names the tables show."""
    needs("torch", "onnx")
    needs_onnxruntime_dlpack()
    import pyperf

    out = run_bench("bench_session.py", "--json", str(tmp_path / "s.json"))
    assert tables(out) == 3 and "ortdlpack.run, add_tiny [1,100]" in out
    names = pyperf.BenchmarkSuite.load(str(tmp_path / "s.json")).get_benchmark_names()
    assert len(names) == 3 * 13 + 3 and "add_tiny [1,100] / bind().run(feeds=), new object" in names


def test_bench_dropin():
    needs("torch", "onnx")
    out = run_bench("bench_dropin.py")
    assert tables(out) == 3 and "conformance models, median per-model ratio" in out


def test_bench_frameworks():
    needs("torch", "jax", "onnx")
    out = run_bench("bench_frameworks.py")
    assert tables(out) == 2 and "identical" in out


def test_bench_host_eps():
    needs("torch", "onnx")
    out = run_bench("bench_host_eps.py")
    assert tables(out) == 1 and "| CPU EP" in out


def test_bench_decode():
    """Where onnxruntime-genai is not installed (here or in .venv-bench: scripts/bench_env.sh), says there is nothing
    to measure; --quick never installs it."""
    needs("torch")
    import bench_decode

    out = run_bench("bench_decode.py")
    assert "nothing to measure" in out or (tables(out) == 3 and "| onnxruntime-genai " in out and
                                           ("C++ loop on the core" in out) == os.access(bench_decode.CORE_LOOP, os.X_OK))


def test_bench_gpu():
    """Measures on a CUDA device with onnxruntime-gpu; elsewhere says there is nothing to measure."""
    needs("onnx")
    out = run_bench("bench_gpu.py")
    assert "nothing to measure" in out or tables(out) == 1


@pytest.mark.parametrize("device", ["auto", "virtual"])
def test_bench_pipeline(vd, device):
    needs("torch")
    out = run_bench("bench_pipeline.py", "--device", device)
    assert tables(out) == (1 if "feature -> step -> head" in out else 2) and "chart:" not in out
