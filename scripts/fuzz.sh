#!/usr/bin/env bash
# Runs ortdlpack's fuzzers (docs/reliability.md, "Fuzzing"), each for the same time:
#   C++, libFuzzer (clang; harness and core built with ASan + UBSan, the core coverage-instrumented):
#     import    fuzz/fuzz_import.cc     from_dlpack: every DLPack field under every CopyMode and target, re-exports
#     export    fuzz/fuzz_export.cc     to_dlpack_*, legacy_view, place, to, copy: tensors of every ONNX type,
#                                       shape, read-only kind and memory (CPU, the virtual device's two memories)
#     run       fuzz/fuzz_run.cc        Session::run and bind: hostile feeds, names, destinations, output memory
#   Python, atheris (the ortdlpack package installed in .venv, uninstrumented):
#     protocol  fuzz/fuzz_protocol.py   from_dlpack, __dlpack__, __dlpack_device__: every keyword combination
#     session   fuzz/fuzz_session.py    ortdlpack.run, Session.run (both orders), bind: hostile feeds and outputs
#     exchange  fuzz/fuzz_exchange.py   the DLPack C exchange API: ortdlpack's table, and a hostile producer's
#
#   scripts/fuzz.sh [MINUTES | --seconds N] [--self-test] [TARGET | cpp | python | all]...   (default: 10 all)
#
# Corpora grow across runs in ${ORTDLPACK_FUZZ_CORPUS:-${XDG_CACHE_HOME:-~/.cache}/ortdlpack/fuzz-corpus}/TARGET;
# the seeds in fuzz/corpus/TARGET are read, never written. Findings (crash-*, leak-*, timeout-*, oom-*) land in
# build-fuzz/artifacts/TARGET/, each fuzzer's whole output in build-fuzz/TARGET.log.
# --self-test first runs each selected fuzzer on a canary input its harness reports as a finding on purpose
# (ORTDLPACK_FUZZ_CANARY=1), and fails unless that finding fails the run: the exit path, proven with the real fuzzers.
# Set-up, when missing: clang-19, libclang-rt-19-dev (libFuzzer) and llvm-19 (llvm-symbolizer: reports with names,
# which the leak suppressions match) from Debian (bookworm has 19.1.7, the version of the pinned clang-format); the
# Python half runs scripts/setup.sh (atheris is pinned in requirements.txt).
# CLANG=clang++-XX and PYTHON=... override the compiler and the interpreter; FUZZ_BUILD the build directory.
# Exit status: 0 when no fuzzer found anything; 1 on a finding or a failed self-test; 2 on a usage error; the failing
# command's status when the set-up or the build fails.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
source scripts/lib/fuzz_runner.sh

usage() {
  echo "usage: $0 [MINUTES | --seconds N] [--self-test] [import|export|run|protocol|session|exchange|cpp|python|all]..." >&2
  exit 2
}
cpp_all=(import export run)
python_all=(protocol session exchange)
seconds=600
self_test=0
cpp=()
python=()
while (($#)); do
  case "$1" in
    --seconds) [[ ${2:-} =~ ^[0-9]+$ ]] || usage; seconds=$2; shift ;;
    --self-test) self_test=1 ;;
    [0-9]*) [[ $1 =~ ^[0-9]+$ ]] || usage; seconds=$(($1 * 60)) ;;
    cpp) cpp+=("${cpp_all[@]}") ;;
    python) python+=("${python_all[@]}") ;;
    all) cpp+=("${cpp_all[@]}"); python+=("${python_all[@]}") ;;
    import | export | run) cpp+=("$1") ;;
    protocol | session | exchange) python+=("$1") ;;
    *) usage ;;
  esac
  shift
done
if ((${#cpp[@]} + ${#python[@]} == 0)); then cpp=("${cpp_all[@]}"); python=("${python_all[@]}"); fi
build="${FUZZ_BUILD:-$root/build-fuzz}"
corpus="${ORTDLPACK_FUZZ_CORPUS:-${XDG_CACHE_HOME:-$HOME/.cache}/ortdlpack/fuzz-corpus}"
mkdir -p "$build" "$corpus"

export ASAN_OPTIONS="detect_leaks=1:fast_unwind_on_malloc=0:abort_on_error=1:${ASAN_OPTIONS:-}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:${UBSAN_OPTIONS:-}"
export LSAN_OPTIONS="suppressions=$root/tests/sanitizer/lsan.supp:print_suppressions=0:${LSAN_OPTIONS:-}"
# Reports with function names (the symbolizer of the clang that built the harnesses): tests/sanitizer/lsan.supp
# matches frames by name.
if [[ -z ${ASAN_SYMBOLIZER_PATH:-} && -x /usr/lib/llvm-19/bin/llvm-symbolizer ]]; then
  export ASAN_SYMBOLIZER_PATH=/usr/lib/llvm-19/bin/llvm-symbolizer
fi

# --- set-up and build ---------------------------------------------------------------------------------------------
if ((${#cpp[@]})); then
  cxx="${CLANG:-}"
  if [[ -z "$cxx" ]]; then
    if ! command -v clang++-19 > /dev/null || [[ ! -d /usr/lib/llvm-19/lib/clang/19/lib/linux ]] ||
       [[ ! -x /usr/lib/llvm-19/bin/llvm-symbolizer ]]; then
      echo "fuzz.sh: installing clang-19, libFuzzer (libclang-rt-19-dev) and llvm-symbolizer (llvm-19) from Debian"
      sudo_if_needed() { if [[ $(id -u) -eq 0 ]]; then "$@"; else sudo "$@"; fi; }
      sudo_if_needed apt-get update -qq
      sudo_if_needed env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
        clang-19 libclang-rt-19-dev llvm-19 > /dev/null
    fi
    cxx=clang++-19
  fi
  cc="${cxx/clang++/clang}"
  t0=$SECONDS
  cmake -S fuzz -B "$build" -G Ninja -DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_COMPILER="$cxx" > "$build/configure.log" 2>&1 ||
    { tail -n 30 "$build/configure.log"; exit 1; }
  nice cmake --build "$build" --target "${cpp[@]/#/fuzz_}" > "$build/build.log" 2>&1 ||
    { tail -n 40 "$build/build.log"; echo "fuzz.sh: the build failed (whole log: $build/build.log)"; exit 1; }
  echo "== fuzz: C++ harnesses built in $((SECONDS - t0)) s ($("$cxx" --version | head -n 1))"
fi
if ((${#python[@]})); then
  py="${PYTHON:-$root/.venv/bin/python}"
  [[ -n ${PYTHON:-} ]] || ./scripts/setup.sh
  "$py" -c "import atheris, ortdlpack" || { echo "fuzz.sh: $py lacks atheris or ortdlpack"; exit 1; }
fi

# The command of one target, into the array `command`: set_command TARGET SECONDS ARTIFACTS CORPUS-DIR...
set_command() {
  local target=$1 time=$2 artifacts=$3
  shift 3
  local options=(-max_total_time="$time" -timeout=20 -rss_limit_mb=4096 -print_final_stats=1
                 -artifact_prefix="$artifacts/")
  if [[ " ${cpp_all[*]} " == *" $target "* ]]; then
    command=(nice "$build/fuzz_$target" "${options[@]}" "$@")
  else
    # ASan is not preloaded: the wheel's ORT and CPython are uninstrumented (docs/reliability.md). atheris reports
    # uncaught exceptions, failed assertions and crashes.
    command=(nice env ASAN_OPTIONS= LSAN_OPTIONS= "$py" "fuzz/fuzz_$target.py" "${options[@]}" "$@")
  fi
}

status=0
# --- self-test: a canary finding must fail the run ------------------------------------------------------------------
if ((self_test)); then
  for target in "${cpp[@]}" "${python[@]}"; do
    canary="$build/canary/$target"
    rm -rf "$canary" && mkdir -p "$canary/corpus" && printf 'CANARY' > "$canary/corpus/canary"
    set_command "$target" 60 "$canary/artifacts" "$canary/corpus"
    if (export ORTDLPACK_FUZZ_CANARY=1
        run_fuzzer "$target (self-test)" "$canary/artifacts" "$canary/log" "${command[@]}" > "$canary/output"); then
      echo "== fuzz $target: SELF-TEST FAILED: the canary finding did not fail the run (see $canary/output)"
      status=1
    else
      echo "== fuzz $target: self-test passed (the canary finding fails the run)"
    fi
  done
  ((status == 0)) || exit "$status"
fi

# --- the campaign -----------------------------------------------------------------------------------------------------
for target in "${cpp[@]}" "${python[@]}"; do
  mkdir -p "$corpus/$target" "$build/artifacts/$target"
  echo "== fuzz $target: $seconds s, corpus $(ls "$corpus/$target" | wc -l) files + seeds fuzz/corpus/$target"
  set_command "$target" "$seconds" "$build/artifacts/$target" "$corpus/$target" "$root/fuzz/corpus/$target"
  run_fuzzer "$target" "$build/artifacts/$target" "$build/$target.log" "${command[@]}" || status=1
  grep -hE "^#[0-9]+[[:space:]]+DONE|stat::(number_of_executed_units|average_exec_per_sec|peak_rss_mb)" "$build/$target.log" |
    tr -s ' ' | paste -sd ' ' | sed "s|^|   $target: |" || true
  echo "   $target: corpus now $(ls "$corpus/$target" | wc -l) files, $(du -sb "$corpus/$target" | cut -f1) bytes"
done
exit $status
