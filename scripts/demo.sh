#!/usr/bin/env bash
# The main job: a zero-copy round trip in C++, then the two-model pipeline demo in Python (copy path vs ortdlpack).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh >/dev/null
echo "== C++: zero-copy round trip through ONNX Runtime"
./build/examples/roundtrip
if [[ -f examples/pipeline_demo.py ]]; then
  echo
  echo "== Python: two-model pipeline, .numpy() copies vs ortdlpack"
  .venv/bin/python examples/pipeline_demo.py
fi
