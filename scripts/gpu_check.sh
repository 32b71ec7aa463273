#!/usr/bin/env bash
# The CUDA checks (tests/gpu, bench/bench_gpu.py) on a lent GPU machine that has torch/cupy/jax but no network and
# no onnxruntime-gpu (nor pyperf) (../shared/notes/GPU.md). Two halves:
#   scripts/gpu_check.sh prepare   here: onnxruntime-gpu's wheel from PyPI, its CUDA EP library compressed and split
#                                  into .gpu/ (ignored by git) so that each device call carries < 64 MiB
#   scripts/gpu_check.sh stash N   there, once per chunk (carry .gpu/chunk.N): keeps it in /tmp/up
#   scripts/gpu_check.sh run       there, last (carry .gpu/rest): rebuilds onnxruntime-gpu, builds the extension,
#                                  runs tests/gpu and the benchmark; log in $OUT/gpu.log
set -euo pipefail
cd "$(dirname "$0")/.."
ORT_GPU=${ORT_GPU:-onnxruntime-gpu==1.31.1}
PYVER=${PYVER:-3.12}
lib=onnxruntime/capi/libonnxruntime_providers_cuda.so
case "${1:-}" in
  prepare)
    command -v zstd >/dev/null || { apt-get update -qq && apt-get install -y -qq zstd; }
    grep -qx '/.gpu/' .git/info/exclude 2>/dev/null || echo '/.gpu/' >> .git/info/exclude
    rm -rf .gpu /tmp/ortdlpack_gpu && mkdir -p .gpu /tmp/ortdlpack_gpu/w
    python3 -m pip download -q --no-deps --only-binary=:all: --python-version "$PYVER" \
      --platform manylinux_2_28_x86_64 "$ORT_GPU" -d /tmp/ortdlpack_gpu/w
    (cd /tmp/ortdlpack_gpu && python3 -m zipfile -e w/*.whl og)
    zstd -q -19 --long=27 -T2 /tmp/ortdlpack_gpu/og/$lib -o /tmp/ortdlpack_gpu/cuda.zst
    (cd .gpu && split -b 61M -d -a 1 /tmp/ortdlpack_gpu/cuda.zst chunk.)
    rm /tmp/ortdlpack_gpu/og/$lib
    mkdir -p .gpu/rest/bin .gpu/rest/deps
    tar -C /tmp/ortdlpack_gpu/og -cf - . | zstd -q -19 -T2 -o .gpu/rest/og.tar.zst
    cp "$(command -v zstd)" .gpu/rest/bin/; cp "$(ldconfig -p | awk '/libzstd.so.1 /{print $NF; exit}')" .gpu/rest/bin/
    cp -r "${ORTDLPACK_DEPS_DIR:-$HOME/.cache/ortdlpack}"/. .gpu/rest/deps/ 2>/dev/null || true
    # bench/harness.py's one dependency the GPU machine lacks (pure Python), at the version requirements.txt pins
    python3 -m pip download -q --no-deps --only-binary=:all: -d .gpu/rest/wheels "$(grep -m1 '^pyperf==' requirements.txt)"
    ls -la .gpu .gpu/rest
    echo "next: one device call per chunk: carry ['.gpu/chunk.N'], command 'scripts/gpu_check.sh stash N';"
    echo "      then carry ['.gpu/rest'], command 'scripts/gpu_check.sh run'" ;;
  stash)
    mkdir -p /tmp/up && mv ".gpu/chunk.$2" /tmp/up/ && ls -la /tmp/up ;;
  run)
    out=${OUT:-/tmp}/gpu.log
    {
      export LD_LIBRARY_PATH=$PWD/.gpu/rest/bin
      mkdir -p /tmp/og && .gpu/rest/bin/zstd -dc .gpu/rest/og.tar.zst | tar -C /tmp/og -xf -
      cat /tmp/up/chunk.* | .gpu/rest/bin/zstd -d --long=27 -o /tmp/og/$lib
      unset LD_LIBRARY_PATH
      python3 -m pip install -q --no-build-isolation --no-deps --target /tmp/site \
        -Ccmake.define.ORTDLPACK_DEPS_DIR="$PWD/.gpu/rest/deps" .
      python3 -m pip install -q --no-deps --target /tmp/site .gpu/rest/wheels/*.whl
      export PYTHONPATH=/tmp/og:/tmp/site
      python3 -c "import torch, onnxruntime as o; o.preload_dlls(); print(o.__version__, o.get_available_providers())"
      python3 -m pytest tests/gpu -q -rs -p no:cacheprovider || true
      python3 bench/bench_gpu.py
    } 2>&1 | tee "$out" ;;
  *) echo "usage: $0 prepare | stash N | run" >&2; exit 2 ;;
esac
