#!/usr/bin/env bash
# CI leg: the wheels and the sdist of scripts/build_wheels.sh (in dist/, or $WHEEL_DIR) installed the way a user
# installs them. Each wheel goes into a clean venv of each CPython it targets, next to nothing but numpy and
# onnxruntime from the registry: without onnxruntime the import says what to install; with it scripts/wheel_smoke.py
# runs, then the host-only part of the Python suite (pytest and onnx added, test-only: onnx builds the test models;
# what needs a framework, ml_dtypes, psutil, tvm_ffi or the C++ build is skipped, with the reason). The oldest
# supported onnxruntime and the newest pinned one each get two of the venvs. Then the sdist builds in pip's isolated
# build environment (the machine's compiler) and runs the smoke test. Venvs live in build/ci/wheels, downloads in
# pip's cache.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
dist=${WHEEL_DIR:-dist}
work=build/ci/wheels
pin() { grep -E "^$1==" requirements.txt; }
oldest_ort=onnxruntime==1.23.2  # the oldest supported onnxruntime (scripts/ci_oldest_ort.sh, docs/compatibility.md)
newest_ort=$(pin onnxruntime)
export PIP_DISABLE_PIP_VERSION_CHECK=1
# CPython, the wheel it takes, the onnxruntime beside it (no onnxruntime after 1.23 has a CPython 3.10 wheel).
matrix=("3.10 cp310-cp310 $oldest_ort" "3.11 cp311-cp311 $newest_ort" "3.12 cp312-abi3 $oldest_ort"
        "3.13 cp312-abi3 $newest_ort")

say() { echo "ci_wheels: $*"; }
ME=ci_wheels
source scripts/lib/find_python.sh  # (the working directory is the repository root)
numpy_for() { if [[ $1 == 3.10 ]]; then echo numpy==2.2.6; else pin numpy; fi; }  # numpy 2.3+ needs CPython 3.11
install() { "$1/bin/python" -m pip install -q --progress-bar off "${@:2}"; }
fresh_venv() { rm -rf "$1"; "$2" -m venv "$1"; install "$1" pip==26.3; }

rm -rf "$work"
mkdir -p "$work"
for entry in "${matrix[@]}"; do
  read -r v tag ort <<< "$entry"
  t0=$SECONDS
  wheel=$(ls "$dist"/ortdlpack-*-"$tag"-manylinux_2_28_x86_64.whl 2>/dev/null) ||
    { say "FAILED: no $tag wheel in $dist (run scripts/build_wheels.sh)"; exit 1; }
  py=$(find_python "$v")
  venv=$work/py$v
  fresh_venv "$venv" "$py"
  install "$venv" "$wheel" "$(numpy_for "$v")"
  if "$venv/bin/python" -c "import ortdlpack" 2> "$work/err"; then
    say "FAILED: ortdlpack imported without any onnxruntime"; exit 1
  fi
  grep -q "ortdlpack\[cpu\]" "$work/err" || { say "FAILED: unclear error without onnxruntime:"; cat "$work/err"; exit 1; }
  install "$venv" "$ort"
  (cd "$work" && "$OLDPWD/$venv/bin/python" "$OLDPWD/scripts/wheel_smoke.py")
  install "$venv" "$(pin pytest)" "$(pin onnx)"
  # From the source tree's tests; `import ortdlpack` is the installed wheel (the smoke test checked the path).
  log=$work/pytest-$v.log
  if ! "$venv/bin/python" -m pytest tests/python -q -p no:cacheprovider -rs > "$log" 2>&1; then
    tail -40 "$log"; say "FAILED: the suite against $tag on CPython $v ($log)"; exit 1
  fi
  say "pytest, $tag on CPython $v with $ort: $(tail -1 "$log")"
  say "$(basename "$wheel") on CPython $v with $ort: $((SECONDS - t0)) s"
done

t0=$SECONDS
sdist=$(ls "$dist"/ortdlpack-*.tar.gz)
venv=$work/sdist
fresh_venv "$venv" "$(find_python 3.11)"
say "pip install $(basename "$sdist") (isolated build: its build requirements from the registry)"
install "$venv" "$sdist" "$(pin numpy)" "$newest_ort"
(cd "$work" && "$OLDPWD/$venv/bin/python" "$OLDPWD/scripts/wheel_smoke.py")
say "sdist: $((SECONDS - t0)) s"
say "$((SECONDS - start)) s"
