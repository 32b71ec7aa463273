"""scripts/check_prose.py: the prose names code the tree has (issue 42).

On a small tree written here, each kind of reference comes twice, one good and one stale, and the check must flag
exactly the stale ones; then on this repository itself.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "scripts", "check_prose.py")

# path -> content. The stale references are named stale_*/gone_*/missing*/old_*/IOBinding/CreateIoBinding, so that
# the expected findings can be listed by what they name.
TREE = {
    "src/util.h": """\
        // Internal: helpers. util::used_helper is what main.cc calls; util::gone_helper was renamed away.
        #pragma once

        namespace util {
        int used_helper(int x);
        int unused_helper(int x);
        struct Plan {
          int steps;
        };
        }  // namespace util
        """,
    "src/util.cc": """\
        // The helpers of util.h (docs/guide.md says why); util::Plan::steps and util::Plan::gone_steps.
        #include "util.h"

        namespace util {
        int used_helper(int x) { return x + 1; }
        int unused_helper(int x) { return x - 1; }
        }  // namespace util
        """,
    "src/main.cc": """\
        // Creates the env (CreateEnv) and binds with CreateIoBinding; Python runs it through onnxruntime.IOBinding.
        #include "util.h"

        int main() { return api->CreateEnv(util::used_helper(1)); }
        """,
    "python/pkg/__init__.py": """\
        \"\"\"pkg: ``pkg.run`` wraps onnxruntime.InferenceSession; ``pkg.gone_run`` was removed.\"\"\"

        import onnxruntime


        def run(model):
            # the C++ side is src/util.cc; src/missing.cc went away
            return onnxruntime.InferenceSession(model)
        """,
    "docs/guide.md": """\
        # Guide

        `util::used_helper()` and `used_helper` are there, `stale_name` is not; `CreateIoBinding` and `OrtSession`
        are ORT's. See [the helpers](../src/util.cc) and [the old ones](../src/nothere.cc), and `src/util.h`.

        ```python
        pkg.run("model.onnx")
        pkg.old_api()
        ```
        """,
}
# (path, the symbol flagged on one of its lines)
STALE_QUALIFIED = {
    ("src/util.h", "util::gone_helper"),
    ("src/util.cc", "util::Plan::gone_steps"),
    ("python/pkg/__init__.py", "pkg.gone_run"),
    ("python/pkg/__init__.py", "src/missing.cc"),
    ("docs/guide.md", "../src/nothere.cc"),
    ("docs/guide.md", "pkg.old_api"),
    ("src/util.h", "unused_helper"),  # declared, defined, never called: dead code
}
STALE_NAMES = {  # checked only when the third-party headers are known
    ("docs/guide.md", "stale_name"),
    ("src/main.cc", "onnxruntime.IOBinding"),  # ORT's names the tree's code never uses
    ("src/main.cc", "CreateIoBinding"),
}
ORT_HEADER = """\
ORT_API2_STATUS(CreateEnv, OrtLoggingLevel log_severity_level, _In_ const char* logid, _Outptr_ OrtEnv** out);
ORT_API2_STATUS(CreateIoBinding, _Inout_ OrtSession* session, _Outptr_ OrtIoBinding** out);
"""


def write_tree(root) -> None:
    for rel, text in TREE.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


def run_check(root, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, SCRIPT, "--root", str(root), *args], capture_output=True, text=True,
                          timeout=120)


def findings(out: str) -> set[tuple[str, str]]:
    """{(path, symbol)} of the check's `path:line: symbol: why` lines, each checked to be on the line it names."""
    found = set()
    for line in out.splitlines():
        m = re.match(r"([^:]+):(\d+): (.+?): ", line)
        assert m, line
        path, number, symbol = m.group(1), int(m.group(2)), m.group(3)
        text = textwrap.dedent(TREE[path]).splitlines()[number - 1]
        assert symbol in text, f"{line}: the line says {text!r}"
        found.add((path, symbol))
    return found


@pytest.fixture
def tree(tmp_path):
    write_tree(tmp_path / "tree")
    deps = tmp_path / "deps" / "include"
    deps.mkdir(parents=True)
    (deps / "onnxruntime_c_api.h").write_text(ORT_HEADER)
    return tmp_path


def test_flags_exactly_the_stale_references(tree):
    proc = run_check(tree / "tree", "--deps", str(tree / "deps"))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert findings(proc.stdout) == STALE_QUALIFIED | STALE_NAMES, proc.stdout


def test_without_the_third_party_headers_bare_names_are_not_checked(tree):
    (tree / "empty").mkdir()
    proc = run_check(tree / "tree", "--deps", str(tree / "empty"))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert findings(proc.stdout) == STALE_QUALIFIED, proc.stdout
    assert "bare names not checked" in proc.stderr


def test_passes_once_the_prose_is_fixed(tree):
    root = tree / "tree"
    for rel, _ in STALE_QUALIFIED | STALE_NAMES:
        path = root / rel
        text = path.read_text()
        for old, new in [("; util::gone_helper was renamed away", ""), (" and util::Plan::gone_steps", ""),
                         ("; ``pkg.gone_run`` was removed", ""), ("; src/missing.cc went away", ""),
                         (" and [the old ones](../src/nothere.cc)", ""), ("pkg.old_api()\n", ""),
                         (", `stale_name` is not", ""), (" and binds with CreateIoBinding", ""),
                         ("; Python runs it through onnxruntime.IOBinding", ""),
                         ("int unused_helper(int x);\n", ""), ("int unused_helper(int x) { return x - 1; }\n", "")]:
            text = text.replace(old, new)
        path.write_text(text)
    proc = run_check(root, "--deps", str(tree / "deps"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout == ""


def test_list_shows_every_reference(tree):
    proc = run_check(tree / "tree", "--deps", str(tree / "deps"), "--list")
    ok = [line for line in proc.stdout.splitlines() if line.startswith("ok ")]
    for symbol in ("util::used_helper", "src/util.cc", "used_helper", "CreateEnv", "onnxruntime.InferenceSession",
                   "pkg.run"):
        assert any(f": {symbol}: " in line for line in ok), (symbol, proc.stdout)


def test_this_tree_names_what_it_has():
    proc = run_check(ROOT)
    assert proc.returncode == 0, "stale references in comments and docs (scripts/check_prose.py):\n" + proc.stdout
