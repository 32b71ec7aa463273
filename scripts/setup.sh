#!/usr/bin/env bash
# Idempotent set-up from the registries alone: Debian build tools, the pinned Python environment (.venv), the C++
# build (build/, which fetches the pinned ORT SDK and dlpack.h into .deps/) and the Python package.
# Re-running it only does what is missing or out of date.
set -euo pipefail
cd "$(dirname "$0")/.."

sudo_if_needed() { if [[ $(id -u) -eq 0 ]]; then "$@"; else sudo "$@"; fi; }

missing=()
for pkg in cmake ninja-build g++ libgtest-dev; do
  dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo_if_needed apt-get update -qq
  sudo_if_needed env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"
fi

PY=${PYTHON:-python3}
if [[ ! -x .venv/bin/python ]]; then
  if ! "$PY" -m venv .venv 2>/dev/null; then  # Debian's python3 needs python3-venv for that
    rm -rf .venv
    sudo_if_needed apt-get install -y -qq python3-venv
    "$PY" -m venv .venv
  fi
fi
stamp=.venv/.requirements.sha256
if ! sha256sum --status -c "$stamp" 2>/dev/null; then
  echo "setup: installing pinned Python packages (requirements.txt)"
  .venv/bin/python -m pip install -q --upgrade pip
  .venv/bin/python -m pip install -q -r requirements.txt
  sha256sum requirements.txt > "$stamp"
fi

# The venv's Python (first on PATH) also serves CMake for fetching dlpack.h (pip download).
PATH="$PWD/.venv/bin:$PATH" cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DORTDLPACK_WERROR=ON \
  >/dev/null
cmake --build build

# The Python package, built against the same fetched headers (no ORT library: it uses the onnxruntime wheel's).
.venv/bin/python -m pip install -q --no-build-isolation --no-deps -Cbuild-dir=build/python \
  -Ccmake.define.ORTDLPACK_DEPS_DIR="$PWD/.deps" .
