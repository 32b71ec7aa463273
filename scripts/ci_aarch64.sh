#!/usr/bin/env bash
# CI leg: the aarch64 wheels of scripts/build_wheels.sh (cp311 and abi3, in dist/ or $WHEEL_DIR) on an emulated
# aarch64 Linux.
# This machine is x86_64 and has no binfmt_misc, so every aarch64 program is started through `qemu-aarch64-static
# -L SYSROOT` (Debian's qemu-user-static, installed when missing): the sysroot is Debian 12's arm64 CPython 3.11 and
# the libraries it needs (`apt-get download` through a sources list, package lists and cache of the project's own;
# the system's apt sources stay untouched); onnxruntime, numpy, torch and the test tools are PyPI's aarch64 wheels
# (the pins of requirements.txt), installed for that CPython by pip's --platform/--target. The wheel then runs
# scripts/wheel_smoke.py, `python -m ortdlpack`, and the part of the Python suite that covers import/export with numpy
# and torch, ortdlpack.run, the drop-in on a sample of the ONNX conformance models, sessions on the virtual device
# (the wheel's aarch64 plugin) and the exchange API. A test that starts a Python child gets one through qemu too
# (sys.executable is a wrapper that starts qemu). Where an x86_64 environment with the same pins is at hand (.venv,
# or $ORTDLPACK_X86_PYTHON), the same tests run there against the x86_64 cp311 wheel and both outcomes, test by test,
# must be equal. The abi3 wheel runs the smoke test on Debian 13's arm64 CPython 3.13 (its own sysroot; onnxruntime
# and numpy only). Downloads and the sysroots live in the per-user cache ($ORTDLPACK_DEPS_DIR, else ~/.cache/ortdlpack),
# kept between runs; the wheel's own install and the logs in build/ci/aarch64. Timings under emulation mean nothing
# for performance.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
dist=${WHEEL_DIR:-dist}
work=build/ci/aarch64
cache=$(realpath -m "${ORTDLPACK_DEPS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/ortdlpack}/aarch64")
pin() { grep -E "^$1==" requirements.txt; }
# What the aarch64 CPython gets: the test environment's pins (requirements.txt), their own dependencies as pip resolves
# them. apache-tvm-ffi: the exchange API's C consumer.
pins=("$(pin onnxruntime)" "$(pin numpy)" "$(pin torch)" "$(pin pytest)" "$(pin onnx)" "$(pin ml_dtypes)"
      "$(pin psutil)" "$(pin apache-tvm-ffi)")
pip_pin=pip==26.3
export PIP_DISABLE_PIP_VERSION_CHECK=1

say() { echo "ci_aarch64: $*"; }
ME=ci_aarch64
source scripts/lib/find_python.sh  # (the working directory is the repository root)
source scripts/lib/aarch64_sysroot.sh

wheel=$(ls "$dist"/ortdlpack-*-cp311-cp311-manylinux_2_28_aarch64.whl 2>/dev/null) ||
  { say "FAILED: no cp311 aarch64 wheel in $dist (run scripts/build_wheels.sh)"; exit 1; }
rm -rf "$work"
mkdir -p "$work" "$cache"

aarch64_sysroot "$cache" "$work" bookworm python3.11

# --- the aarch64 wheels of the pins, installed for that CPython ----------------------------------------------------
# pip runs here (x86_64) and installs for the target: --platform lists every manylinux tag up to the sysroot's glibc
# (pip does not expand a given tag to the older ones); --target: a plain directory, put on PYTHONPATH.
tools=$cache/pip-venv
if [[ "$(cat "$tools/.pins" 2>/dev/null)" != "$pip_pin" ]]; then
  rm -rf "$tools"
  "$(find_python 3.11)" -m venv "$tools"
  "$tools/bin/python" -m pip install -q --progress-bar off "$pip_pin"
  echo "$pip_pin" > "$tools/.pins"
fi
# for_target X.Y GLIBC_MINOR: sets target_opts, pip's options for CPython X.Y on aarch64 with glibc 2.GLIBC_MINOR.
for_target() {
  target_opts=(--only-binary=:all: --platform manylinux2014_aarch64 --python-version "$1" --implementation cp
               --abi "cp${1/./}" --abi abi3)
  for minor in $(seq 17 "$2"); do target_opts+=(--platform "manylinux_2_${minor}_aarch64"); done
}
# aarch64_site NAME PINS...: sets site, a directory in the cache holding PINS and their dependencies for the target of
# for_target, made once (downloaded into $cache/wheels, installed from there).
aarch64_site() {
  local name=$1 t0=$SECONDS; shift
  site=$cache/site-$name-$(printf '%s\n' "$@" "${target_opts[@]}" | sha256sum | cut -c1-12)
  [[ -f $site/.complete ]] && return
  say "downloading the aarch64 wheels of $* and their dependencies into $cache/wheels"
  # (--no-cache-dir: the wheels are kept here, not a second time in pip's own cache)
  "$tools/bin/python" -m pip download -q --progress-bar off --no-cache-dir -d "$cache/wheels" "${target_opts[@]}" "$@"
  say "  done in $((SECONDS - t0)) s; installing them into $site"
  t0=$SECONDS
  rm -rf "$cache/site-$name"-*
  "$tools/bin/python" -m pip install -q --progress-bar off --no-index --find-links "$cache/wheels" --target "$site" \
    "${target_opts[@]}" "$@"
  touch "$site/.complete"
  say "  done in $((SECONDS - t0)) s"
}
for_target 3.11 36  # bookworm: glibc 2.36
# ~3 GB the first time: torch's aarch64 wheel is its CUDA build, with NVIDIA's libraries.
aarch64_site cp311 "${pins[@]}"
wheel_site=$work/site-packages  # (wheel_smoke.py checks that ortdlpack comes from a site-packages)
"$tools/bin/python" -m pip install -q --progress-bar off --no-deps --target "$wheel_site" "${target_opts[@]}" "$wheel"
export PYTHONPATH=$PWD/$wheel_site:$site
say "$(basename "$wheel") under" \
    "$("$py" -c 'import platform, sys; print(platform.machine(), "CPython", sys.version.split()[0])')"

# --- the smoke test and python -m ortdlpack ------------------------------------------------------------------------
t0=$SECONDS
(cd "$work" && "$py" "$OLDPWD/scripts/wheel_smoke.py")
"$py" -m ortdlpack > "$work/show_config.txt"
grep -q "^ortdlpack .*, at $PWD/$wheel_site/ortdlpack$" "$work/show_config.txt" ||
  { cat "$work/show_config.txt"; say "FAILED: python -m ortdlpack does not name the wheel"; exit 1; }
say "smoke test and python -m ortdlpack: $((SECONDS - t0)) s"

# --- the Python suite's aarch64 subset -----------------------------------------------------------------------------
# import/export with numpy and torch (protocol, frameworks, dtypes, ortvalue, ownership, errors, hostile producers),
# sessions and ortdlpack.run (session, arguments, ordering), the drop-in (dropin, onnxruntime's own tests ported;
# conformance: every ORTDLPACK_CONFORMANCE_SAMPLE-th ONNX node model), the virtual device (devices, ordering: the
# wheel's aarch64 plugin), the exchange API, the import and `python -m ortdlpack` (import, show_config).
tests=(test_import test_protocol test_frameworks test_dtypes test_ortvalue test_ownership test_errors test_hostile
       test_session test_arguments test_ordering test_dropin test_onnxruntime_suite test_conformance test_devices
       test_exchange_api test_show_config)
tests=("${tests[@]/#/tests/python/}")
tests=("${tests[@]/%/.py}")
# Left out here (they run on x86_64): RSS under qemu-user counts the emulator's own translation cache; a release
# racing a 2048x2048 MatMul sized to last a second natively takes minutes under emulation.
deselect=(--deselect tests/python/test_hostile.py::test_cycles_through_bindings_do_not_grow_rss
          --deselect tests/python/test_hostile.py::test_a_wrapper_released_during_its_run_keeps_the_session_for_that_run)
export ORTDLPACK_CONFORMANCE_SAMPLE=${ORTDLPACK_CONFORMANCE_SAMPLE:-10}
# run_suite NAME PYTHON: the subset under that interpreter, its outcomes into $work/NAME.xml; prints pytest's last line.
run_suite() {
  local log=$work/pytest-$1.log
  if ! "$2" -m pytest "${tests[@]}" "${deselect[@]}" -q -p no:cacheprovider -rfEs --junitxml="$work/$1.xml" \
       > "$log" 2>&1; then
    tail -60 "$log"; say "FAILED: the suite on $1 ($log)"; exit 1
  fi
  tail -1 "$log"
}
t0=$SECONDS
say "pytest on aarch64 (${#tests[@]} files, every ${ORTDLPACK_CONFORMANCE_SAMPLE}th conformance model):" \
    "$(run_suite aarch64 "$py")"
skips=$(sed -nE 's/^SKIPPED \[([0-9]+)\] [^:]+:[0-9]+: (.{1,60}).*/\1\t\2/p' "$work/pytest-aarch64.log" |
  awk -F'\t' '{n[$2] += $1} END {for (r in n) printf "%d: %s; ", n[r], r}')
say "  $((SECONDS - t0)) s; skipped: ${skips%; }"

# --- the same tests against the x86_64 cp311 wheel, where an x86_64 environment with the same pins exists ----------
x86_py=${ORTDLPACK_X86_PYTHON:-.venv/bin/python}
x86_wheel=$(ls "$dist"/ortdlpack-*-cp311-cp311-manylinux_2_28_x86_64.whl 2>/dev/null || true)
if [[ -x $x86_py && -n $x86_wheel ]] &&
   "$x86_py" -c "import sys; sys.exit(sys.version_info[:2] != (3, 11))" 2> /dev/null; then
  PYTHONPATH= "$x86_py" -m pip install -q --progress-bar off --no-deps --target "$work/x86_64/site-packages" \
    "$x86_wheel"
  t0=$SECONDS
  say "pytest on x86_64 ($x86_py, $(basename "$x86_wheel")):" \
      "$(PYTHONPATH=$PWD/$work/x86_64/site-packages run_suite x86_64 "$x86_py")"
  say "  $((SECONDS - t0)) s"
  # Every test that ran on aarch64 (passed, failed, xfailed) has the same outcome on x86_64; what aarch64 skipped for a
  # package its environment lacks (jax, tensorflow, the EP packages of .venv) may run on x86_64.
  PYTHONPATH= python3 - "$work/aarch64.xml" "$work/x86_64.xml" << 'PYEOF'
import sys
import xml.etree.ElementTree as ET

def outcomes(path):
    got = {}
    for case in ET.parse(path).iter("testcase"):
        kinds = [child.tag for child in case if child.tag in ("failure", "error", "skipped")]
        got[f"{case.get('classname')}::{case.get('name')}"] = kinds[0] if kinds else "passed"
    return got

arm, x86 = outcomes(sys.argv[1]), outcomes(sys.argv[2])
ran = {t: o for t, o in arm.items() if o != "skipped"}
differ = sorted(t for t, o in ran.items() if x86.get(t) != o)
only_x86 = sum(1 for t, o in x86.items() if o != "skipped" and arm.get(t) == "skipped")
print(f"ci_aarch64: {len(ran)} tests ran on aarch64, {len(ran) - len(differ)} with the same outcome on x86_64; "
      f"{only_x86} ran on x86_64 only (skipped on aarch64), {len(set(x86) ^ set(arm))} collected on one side only")
for t in differ:
    print(f"ci_aarch64: DIFFERS: {t}: aarch64 {ran[t]}, x86_64 {x86.get(t, 'not collected')}")
sys.exit(1 if differ else 0)
PYEOF
else
  say "no x86_64 CPython 3.11 environment ($x86_py) or no x86_64 cp311 wheel: the comparison with x86_64 is skipped"
fi
# --- the abi3 wheel on Debian 13's arm64 CPython 3.13: the smoke test (no torch there) ------------------------------
t0=$SECONDS
abi3_wheel=$(ls "$dist"/ortdlpack-*-cp312-abi3-manylinux_2_28_aarch64.whl 2>/dev/null) ||
  { say "FAILED: no abi3 aarch64 wheel in $dist (run scripts/build_wheels.sh)"; exit 1; }
aarch64_sysroot "$cache" "$work" trixie python3.13
for_target 3.13 41  # trixie: glibc 2.41
aarch64_site cp313 "$(pin onnxruntime)" "$(pin numpy)"
"$tools/bin/python" -m pip install -q --progress-bar off --no-deps --target "$work/cp313/site-packages" \
  "${target_opts[@]}" "$abi3_wheel"
(cd "$work" && PYTHONPATH=$OLDPWD/$work/cp313/site-packages:$site "$py" "$OLDPWD/scripts/wheel_smoke.py")
say "$(basename "$abi3_wheel") on aarch64 CPython 3.13: smoke test in $((SECONDS - t0)) s"
say "done in $((SECONDS - start)) s"
