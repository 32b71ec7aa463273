"""scripts/fuzz.sh fails on a finding and on a failed build (issue 28: it read $PIPESTATUS after the guard around the
fuzzer's pipeline, so a crash after 2 seconds ended in "exit 0").

The decision is scripts/lib/fuzz_runner.sh's run_fuzzer, checked here on stand-in fuzzers; then the script itself on
a build that cannot work, and end to end with the real atheris harness on a seed that violates its invariant on
purpose (ORTDLPACK_FUZZ_CANARY). The C++ harnesses' canaries run in CI (`scripts/fuzz.sh --self-test`, .ci/run),
where clang is installed."""

import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


def run_fuzzer(tmp_path, *command):
    """run_fuzzer stand-in ARTIFACTS LOG COMMAND... -> (exit status, output)."""
    script = f'source "{ROOT}/scripts/lib/fuzz_runner.sh"; run_fuzzer stand-in "$1" "$2" "${{@:3}}"'
    r = subprocess.run(["bash", "-c", script, "bash", str(tmp_path / "artifacts"), str(tmp_path / "log"), *command],
                       capture_output=True, text=True, timeout=60)
    return r.returncode, r.stdout + r.stderr


@pytest.mark.parametrize("command", [
    ["true"],
    ["sh", "-c", "printf '#2\\tINITED cov: 1\\n#9\\tDONE   cov: 1\\n'"],
])
def test_a_clean_run_passes(tmp_path, command):
    status, out = run_fuzzer(tmp_path, *command)
    assert status == 0 and "clean" in out, out


@pytest.mark.parametrize("command", [
    ["false"],
    ["sh", "-c", "echo 'nothing the progress filter shows'; exit 77"],  # the old bug: grep's status was read
    ["sh", "-c", "printf '#2\\tINITED cov: 1\\n'; kill -ABRT $$"],       # death by a signal
])
def test_a_failing_fuzzer_fails_the_run(tmp_path, command):
    status, out = run_fuzzer(tmp_path, *command)
    assert status == 1 and "FINDING" in out, out


def test_a_finding_left_behind_fails_the_run_even_when_the_fuzzer_exits_0(tmp_path):
    # e.g. libFuzzer with -fork=N -ignore_crashes=1: crash files, exit status 0.
    artifacts = tmp_path / "artifacts"
    status, out = run_fuzzer(tmp_path, "sh", "-c", f"printf 'CANARY' > '{artifacts}/crash-1'")
    assert status == 1 and "crash-1 (6 bytes): 43 41 4e 41 52 59" in out, out


def test_findings_of_earlier_runs_do_not_count(tmp_path):
    (tmp_path / "artifacts").mkdir()
    (tmp_path / "artifacts" / "crash-old").write_bytes(b"x")
    status, out = run_fuzzer(tmp_path, "true")
    assert status == 0, out


def _fuzz_sh(tmp_path, *args, **env):
    environment = dict(os.environ, FUZZ_BUILD=str(tmp_path / "build"), ORTDLPACK_FUZZ_CORPUS=str(tmp_path / "corpus"),
                       PYTHON=sys.executable, **env)
    return subprocess.run([str(ROOT / "scripts" / "fuzz.sh"), *args], capture_output=True, text=True,
                          env=environment, timeout=300)


def test_a_failed_build_fails_the_script(tmp_path):
    r = _fuzz_sh(tmp_path, "--seconds", "1", "import", CLANG=str(tmp_path / "no-such-clang++"))
    assert r.returncode != 0, r.stdout + r.stderr


def test_a_usage_error_is_status_2(tmp_path):
    assert _fuzz_sh(tmp_path, "no-such-target").returncode == 2


def test_a_python_finding_fails_the_script(tmp_path):
    # The real script, atheris and harness (fuzz/fuzz_protocol.py) on a corpus holding the canary.
    pytest.importorskip("atheris")
    corpus = tmp_path / "corpus" / "protocol"
    corpus.mkdir(parents=True)
    (corpus / "canary").write_bytes(b"CANARY")
    r = _fuzz_sh(tmp_path, "--seconds", "60", "protocol", ORTDLPACK_FUZZ_CANARY="1")
    out = r.stdout + r.stderr
    assert r.returncode == 1, out
    assert "== fuzz protocol: FINDING" in out and "canary input (a finding on purpose)" in out, out
    assert list((tmp_path / "build" / "artifacts" / "protocol").glob("crash-*")), out


def test_the_self_test_proves_the_exit_path_and_a_clean_campaign_passes(tmp_path):
    pytest.importorskip("atheris")
    r = _fuzz_sh(tmp_path, "--self-test", "--seconds", "3", "protocol")
    out = r.stdout + r.stderr
    assert r.returncode == 0, out
    assert "protocol: self-test passed" in out and "== fuzz protocol: clean" in out, out
