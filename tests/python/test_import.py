"""Importing ortdlpack as a user does (python/ortdlpack/__init__.py, src/api.cc): silent, whichever onnxruntime
distribution is installed, and a clear ImportError naming what to install when none is."""

from __future__ import annotations

import os
import subprocess
import sys

import onnxruntime as ort

import ortdlpack


def _python(code: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)


def test_import_prints_nothing():
    # The C API version is asked of the runtime (GetVersionString), not probed downwards: ORT prints an error for
    # each version it does not know, which every import on onnxruntime 1.23-1.28 used to show.
    r = _python("import ortdlpack")
    assert r.returncode == 0, r.stderr
    assert (r.stdout, r.stderr) == ("", "")


def test_api_version_is_the_runtimes_own():
    minor = int(ort.__version__.split(".")[1])
    # capped at the C API of the headers it was built with (ORT 1.29, cmake/Dependencies.cmake)
    assert ortdlpack._ortdlpack._ort_api_version() == min(minor, 29)


def test_without_onnxruntime_the_error_says_what_to_install():
    r = _python("import sys; sys.modules['onnxruntime'] = None; import ortdlpack")  # as if none were installed
    assert r.returncode == 1
    last = r.stderr.strip().splitlines()[-1]
    assert last.startswith("ImportError: ortdlpack needs ONNX Runtime >= 1.23"), r.stderr
    for what in ("ortdlpack[cpu]", "ortdlpack[gpu]", "onnxruntime-gpu", "onnxruntime-openvino"):
        assert what in last
