"""The C++ sources are formatted as .clang-format says, by the clang-format pinned in requirements.txt (other
versions format some constructs differently: the check needs that one)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _pinned_version() -> str:
    with open(os.path.join(ROOT, "requirements.txt")) as f:
        return re.search(r"^clang-format==(\S+)", f.read(), re.M).group(1)


def test_cpp_sources_are_clang_formatted():
    exe = shutil.which("clang-format", path=os.path.dirname(sys.executable))
    if exe is None:
        pytest.skip("clang-format (requirements.txt) is not installed next to this Python")
    version = subprocess.run([exe, "--version"], capture_output=True, text=True).stdout
    if _pinned_version() not in version:
        pytest.skip(f"clang-format {_pinned_version()} is pinned; this one is {version.strip()}")
    if shutil.which("git") is None or not os.path.isdir(os.path.join(ROOT, ".git")):
        pytest.skip("not a git checkout: the sources to check are the ones git tracks")
    files = subprocess.run(["git", "ls-files", "*.cc", "*.h"], cwd=ROOT, capture_output=True, text=True,
                           check=True).stdout.split()
    proc = subprocess.run([exe, "--dry-run", "--Werror", *files], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, "not formatted (run: git ls-files '*.cc' '*.h' | xargs clang-format -i):\n" + \
        proc.stderr[-3000:]
