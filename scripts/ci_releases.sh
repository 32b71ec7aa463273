#!/usr/bin/env bash
# CI leg: every run path of ortdlpack (the drop-in with numpy and torch feeds, ortdlpack.run on an onnxruntime
# session, outputs=, bind(), ortdlpack.Session, torch_module, the session borrow) probed on the oldest and the newest
# onnxruntime release on PyPI (scripts/compat_table.py --ci: each release in a venv of its own under build/compat,
# made once and kept, that sees .venv's torch behind its own onnxruntime). A new onnxruntime release is picked up the
# day PyPI has it; a run path that fails on it fails CI, naming it. Arguments go to compat_table.py (--versions
# 1.23.2 onnxruntime-gpu==1.31.1: those instead). The table of every release: docs/compatibility.md.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
# The extension is built from this tree into build/compat/site, in setup.sh's build dir (test.sh built it already).
.venv/bin/python scripts/compat_table.py --ci --build-dir "${COMPAT_BUILD_DIR:-build/python}" "$@"
echo "ci_releases: $((SECONDS - start)) s"
