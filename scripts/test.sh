#!/usr/bin/env bash
# Runs every test: the C++ suites (CTest: core + virtual device + session + examples + the CUDA paths on the simulated
# CUDA device), the Python suite (pytest), the Python side of the CUDA paths on the simulated CUDA device (tests/cuda_sim,
# a process of its own: the test CUDA runtime must be loaded first) and the CUDA suite (tests/gpu: skipped, with the
# reason, without a CUDA device and onnxruntime-gpu).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
echo "== C++ tests (ctest)"
ctest --test-dir build --output-on-failure -j2
echo "== Python tests (pytest)"
.venv/bin/python -m pytest tests/python -q -p no:cacheprovider "$@"
echo "== CUDA paths on the simulated CUDA device (pytest tests/cuda_sim)"
.venv/bin/python -m pytest tests/cuda_sim -q -rs -p no:cacheprovider
echo "== CUDA tests (pytest tests/gpu)"
.venv/bin/python -m pytest tests/gpu -q -rs -p no:cacheprovider
