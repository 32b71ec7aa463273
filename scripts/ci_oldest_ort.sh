#!/usr/bin/env bash
# CI leg: the Python suite against the oldest supported onnxruntime (1.23.x), in a venv of its own that has that
# onnxruntime and sees the frameworks (torch, jax, tensorflow, ...) of .venv behind it (a .pth line: the venv's own
# onnxruntime comes first on sys.path), so the framework tests run too. The extension is the one setup.sh builds: one
# build serves every onnxruntime >= 1.23 (it asks the runtime for its C API version at import).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/ci_venv.sh
ORT_VERSION=${ORT_VERSION:-1.23.2}
start=$SECONDS
venv=build/ci/ort-$ORT_VERSION
site=build/ci/site
pin() { grep -E "^$1==" requirements.txt; }  # the versions requirements.txt pins, for everything but onnxruntime

if [[ ! -x $venv/bin/python ]] || ! "$venv/bin/python" -c "import onnxruntime" 2>/dev/null; then
  echo "ci_oldest_ort: creating $venv with onnxruntime==$ORT_VERSION"
  ci_venv_new "$venv"
  "$venv/bin/python" -m pip install -q --progress-bar off "onnxruntime==$ORT_VERSION" "$(pin numpy)" "$(pin pytest)" \
    "$(pin ml_dtypes)" "$(pin onnx)" "$(pin psutil)" "$(pin apache-tvm-ffi)"
  ci_venv_see_dotvenv "$venv"
fi
ci_install_site "$site"

echo "== Python tests against onnxruntime $("$venv/bin/python" -c 'import onnxruntime; print(onnxruntime.__version__)')"
PYTHONPATH="$site" "$venv/bin/python" -m pytest tests/python -q -p no:cacheprovider -rs "$@"
echo "ci_oldest_ort: $((SECONDS - start)) s"
