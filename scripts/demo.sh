#!/usr/bin/env bash
# The main job: a zero-copy round trip in C++, then the accelerator pipeline (examples/accelerator_pipeline.py) on the
# best device here: an NVIDIA GPU (torch and onnxruntime-gpu see CUDA), else the WebGPU EP (a hardware adapter where
# there is a GPU, else Mesa's software one: any Linux machine), else the virtual accelerator plugin EP. It prints the
# usual path against ortdlpack: time, host<->device bytes and copies per iteration, from its own run.
set -euo pipefail
cd "$(dirname "$0")/.."
echo "== set-up (scripts/setup.sh: installs what is missing, builds; a second run has nothing to do)"
./scripts/setup.sh
echo
echo "== C++: zero-copy round trip through ONNX Runtime"
./build/examples/roundtrip
echo
echo "== Python: the accelerator pipeline, usual path vs ortdlpack (examples/accelerator_pipeline.py)"
.venv/bin/python examples/accelerator_pipeline.py "$@"
