#!/usr/bin/env bash
# CI leg: the torch tests (torch_module, the gate of its Inductor lowering, torch import/export and the C exchange API)
# and jax_function against the oldest supported torch (2.10: its DLPack C exchange API hands the operator's kernel
# inputs that require grad, which torch 2.9's __dlpack__ refuses), in a venv of its own that has that torch and sees the
# other packages of .venv behind it (a .pth line: the venv's own torch comes first on sys.path). On it the lowering is
# not used (tested on 2.15 only, _torch_inductor.py): compiled code takes the logged fallback through the dispatcher,
# and the lowering's own tests skip saying so. The extension is the one ci_oldest_ort.sh builds: one build serves every
# torch (it finds torch's exchange API at run time).
#   PyPI has no CPU-only torch for Linux x86_64: its torch links CUDA 12's libraries, whose packages are installed
# (torch itself with --no-deps) as torch's metadata pins them, only those its libraries load at import (no GPU is
# used), and so is the triton it pins, which Inductor imports even on the CPU (.venv's is torch 2.15's). The venv is
# made once (~3.5 GB downloaded, ~2 min) and kept.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/ci_venv.sh
TORCH_VERSION=${TORCH_VERSION:-2.10.0}
start=$SECONDS
venv=build/ci/torch-$TORCH_VERSION
site=build/ci/site
# The CUDA packages (nvidia-X-cu12) whose libraries torch's load at import (readelf -d torch/lib/*.so: libcudart, ...).
cuda='cuda-runtime|cuda-cupti|cublas|cudnn|cufft|curand|cusparse|cusparselt|nccl|nvshmem|nvjitlink|cufile'

# (pytest comes from .venv: a venv whose making stopped before its .pth is made again)
if ! "$venv/bin/python" -c "import torch, pytest, sys; sys.exit(torch.__version__.split('+')[0] != '$TORCH_VERSION')" \
     2>/dev/null; then
  echo "ci_oldest_torch: creating $venv with torch==$TORCH_VERSION"
  ci_venv_new "$venv"
  "$venv/bin/python" -m pip install -q --progress-bar off --no-deps "torch==$TORCH_VERSION"
  pins=$("$venv/bin/python" -c "import importlib.metadata as m; print('\n'.join(m.requires('torch')))" |
         sed -nE "s/^((nvidia-($cuda)-cu12|triton)==[^ ;]+).*/\1/p")
  # shellcheck disable=SC2086  (one pin a word)
  "$venv/bin/python" -m pip install -q --progress-bar off --no-deps $pins
  ci_venv_see_dotvenv "$venv"
fi
ci_install_site "$site"

tested=$(PYTHONPATH="$site" "$venv/bin/python" -c "import torch; print(torch.__version__, 'from', torch.__file__)")
echo "== torch and jax tests against torch $tested"
[[ $tested == "$TORCH_VERSION"* ]] || { echo "ci_oldest_torch: not torch $TORCH_VERSION" >&2; exit 1; }
PYTHONPATH="$site" "$venv/bin/python" -m pytest -q -p no:cacheprovider -rs tests/python/test_torch_module.py \
  tests/python/test_torch_inductor.py tests/python/test_exchange_api.py tests/python/test_frameworks.py \
  tests/python/test_jax_function.py "$@"
echo "ci_oldest_torch: $((SECONDS - start)) s"
