#!/usr/bin/env bash
# The main job: a zero-copy round trip in C++, then the two-model pipeline on an accelerator (the GPU when torch
# and onnxruntime-gpu see CUDA, else the virtual accelerator plugin EP): the usual path against ortdlpack, with the
# host<->device bytes and copies each makes.
set -euo pipefail
cd "$(dirname "$0")/.."
echo "== set-up (scripts/setup.sh: installs what is missing, builds; a second run has nothing to do)"
./scripts/setup.sh
echo
echo "== C++: zero-copy round trip through ONNX Runtime"
./build/examples/roundtrip
echo
echo "== Python: two-model pipeline on an accelerator, usual path vs ortdlpack (examples/accelerator_pipeline.py)"
.venv/bin/python examples/accelerator_pipeline.py
