"""The Ray Serve example (examples/serve/): a local Ray instance on loopback, both designs (whole-pipeline replicas and
the composed one-deployment-per-step design) with 1 and 2 replicas, a bounded number of requests, every answer
checked against the direct pipeline, Ray shut down. Runs as a subprocess (as a user runs the client) so that Ray's
processes and state never mix with the test process."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.mark.skipif(importlib.util.find_spec("ray") is None, reason="ray[serve] is not installed")
def test_serve_both_designs_one_and_two_replicas():
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))  # the ortdlpack under test
    proc = subprocess.run(
        [sys.executable, os.path.join(ROOT, "examples", "serve", "client.py"),
         "--requests", "24", "--replicas", "1", "2"],
        capture_output=True, text=True, timeout=240, env=env, cwd=ROOT)
    assert proc.returncode == 0, f"client failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr[-4000:]}"
    assert "on node 127.0.0.1;" in proc.stdout, proc.stdout  # Ray's servers listened on loopback only
    rows = [line.split("|") for line in proc.stdout.splitlines()
            if line.rstrip().endswith("equal to the direct pipeline |")]
    assert [(r[1].strip(), r[2].strip()) for r in rows] == [
        ("replica", "1"), ("replica", "2"), ("composed", "1"), ("composed", "2")], proc.stdout
    assert "the composed design's req/s" in proc.stdout, proc.stdout  # the comparison, from the same run
