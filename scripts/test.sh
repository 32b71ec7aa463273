#!/usr/bin/env bash
# Runs every test: the C++ suites (CTest: core + virtual device + session + examples), the Python suite (pytest) and
# the CUDA suite (tests/gpu: skipped, with the reason, without a CUDA device and onnxruntime-gpu).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
echo "== C++ tests (ctest)"
ctest --test-dir build --output-on-failure -j2
echo "== Python tests (pytest)"
.venv/bin/python -m pytest tests/python -q -p no:cacheprovider "$@"
echo "== CUDA tests (pytest tests/gpu)"
.venv/bin/python -m pytest tests/gpu -q -rs -p no:cacheprovider
