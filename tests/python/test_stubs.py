"""The committed python/ortdlpack/_ortdlpack.pyi is what nanobind's stub generator makes of the built extension.

Regenerate after changing a binding:
    python -m nanobind.stubgen -q -m ortdlpack._ortdlpack -p python/stubgen_patterns.txt -o python/ortdlpack/_ortdlpack.pyi
"""

from __future__ import annotations

import difflib
import os
import subprocess
import sys
from pathlib import Path

import pytest

PYTHON = Path(__file__).resolve().parents[2] / "python"
COMMITTED = PYTHON / "ortdlpack" / "_ortdlpack.pyi"


def test_committed_stub_is_the_generated_one(tmp_path):
    pytest.importorskip("nanobind.stubgen", reason="nanobind (pinned in requirements.txt) is not installed")
    out = tmp_path / "_ortdlpack.pyi"
    subprocess.run([sys.executable, "-m", "nanobind.stubgen", "-q", "-m", "ortdlpack._ortdlpack",
                    "-p", str(PYTHON / "stubgen_patterns.txt"), "-o", str(out)],
                   check=True, env=dict(os.environ))
    generated = out.read_text().splitlines(keepends=True)
    committed = COMMITTED.read_text().splitlines(keepends=True)
    diff = "".join(difflib.unified_diff(committed, generated, str(COMMITTED), "generated"))
    assert not diff, "the committed stub is stale; regenerate it (see this file's docstring):\n" + diff
