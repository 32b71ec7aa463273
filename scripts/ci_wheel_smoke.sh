#!/usr/bin/env bash
# CI leg: ortdlpack installed the way a user installs it. `pip wheel .` in pip's isolated build environment (its
# build requirements and CMake's pinned downloads come from the registries; nothing is written into the source tree),
# then the wheel in a clean venv: without onnxruntime the import says what to install; with only onnxruntime and
# numpy, scripts/wheel_smoke.py runs.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
work=$(mktemp -d "${TMPDIR:-/tmp}/ortdlpack-wheel.XXXXXX")
trap 'rm -rf "$work"' EXIT
pin() { grep -E "^$1==" requirements.txt; }
tree_state() { git status --porcelain --ignored --untracked-files=all | grep -v -E '^!! (build|\.venv)/' || true; }

before=$(tree_state)
echo "ci_wheel_smoke: building the wheel in isolation (pip wheel .)"
python3 -m venv "$work/build-venv"
"$work/build-venv/bin/python" -m pip wheel -q --no-deps --progress-bar off -w "$work/dist" .
wheel=$(ls "$work"/dist/ortdlpack-*.whl)
echo "ci_wheel_smoke: built $(basename "$wheel") ($(du -k "$wheel" | cut -f1) kB) in $((SECONDS - start)) s"
if [[ "$(tree_state)" != "$before" ]]; then
  echo "ci_wheel_smoke: FAILED: the build wrote into the source tree:"; diff <(echo "$before") <(tree_state); exit 1
fi

python3 -m venv "$work/user"
"$work/user/bin/python" -m pip install -q --progress-bar off "$wheel" "$(pin numpy)"
if "$work/user/bin/python" -c "import ortdlpack" 2> "$work/err"; then
  echo "ci_wheel_smoke: FAILED: ortdlpack imported without any onnxruntime"; exit 1
fi
grep -q "ortdlpack\[cpu\]" "$work/err" || { echo "ci_wheel_smoke: FAILED: unclear error without onnxruntime:"; cat "$work/err"; exit 1; }
echo "ci_wheel_smoke: without onnxruntime: $(tail -1 "$work/err" | cut -c1-110)..."

"$work/user/bin/python" -m pip install -q --progress-bar off "$(pin onnxruntime)"
(cd "$work" && "$work/user/bin/python" "$OLDPWD/scripts/wheel_smoke.py")
echo "ci_wheel_smoke: $((SECONDS - start)) s"
