#!/usr/bin/env bash
# Runs ortdlpack's fuzzers for N minutes each (default 10): the libFuzzer harness of the C++ import path
# (fuzz/fuzz_import.cc, clang + ASan + UBSan) and, when the Python package and atheris are installed, the atheris
# harness of the Python protocol (fuzz/fuzz_python.py).
#
#   scripts/fuzz.sh [minutes] [cpp|python|all]        (default: 10 all)
#
# Needs clang with libFuzzer (Debian: apt-get install clang-16 libclang-rt-16-dev); CLANG=clang++-XX overrides.
# Findings (crash-*, leak-*, timeout-* files) land in build-fuzz/artifacts/; the grown corpus in
# build-fuzz/corpus/import (seeded from fuzz/corpus/import, which scripts/../fuzz/make_corpus.py writes).
# Exit status: non-zero when a fuzzer found something.
set -euo pipefail
cd "$(dirname "$0")/.."
minutes="${1:-10}"
which="${2:-all}"
seconds=$((minutes * 60))
root="$PWD"
build="$root/build-fuzz"

export ASAN_OPTIONS="detect_leaks=1:fast_unwind_on_malloc=0:abort_on_error=1:${ASAN_OPTIONS:-}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:${UBSAN_OPTIONS:-}"
export LSAN_OPTIONS="suppressions=$root/tests/sanitizer/lsan.supp:print_suppressions=0:${LSAN_OPTIONS:-}"

status=0
if [[ "$which" == cpp || "$which" == all ]]; then
  cxx="${CLANG:-}"
  if [[ -z "$cxx" ]]; then
    for c in clang++ clang++-19 clang++-18 clang++-17 clang++-16 clang++-15 clang++-14; do
      if command -v "$c" > /dev/null; then cxx="$c"; break; fi
    done
  fi
  if [[ -z "$cxx" ]]; then  # from Debian, as scripts/setup.sh does for the build tools
    echo "fuzz.sh: installing clang-16 and libFuzzer (libclang-rt-16-dev)"
    if [[ $(id -u) -eq 0 ]]; then apt-get install -y -qq clang-16 libclang-rt-16-dev; else
      sudo apt-get install -y -qq clang-16 libclang-rt-16-dev; fi
    cxx=clang++-16
  fi
  cc="${cxx/clang++/clang}"
  cmake -S fuzz -B "$build" -G Ninja -DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_COMPILER="$cxx" > /dev/null
  cmake --build "$build" --target fuzz_import
  mkdir -p "$build/corpus/import" "$build/artifacts"
  cp -n fuzz/corpus/import/* "$build/corpus/import/" 2> /dev/null || true
  echo "== fuzz_import: ${minutes} min (corpus $(ls "$build/corpus/import" | wc -l) files)"
  start=$(date +%s)
  if ! "$build/fuzz_import" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=4096 -print_final_stats=1 \
      -artifact_prefix="$build/artifacts/" "$build/corpus/import" 2>&1 | tee "$build/fuzz_import.log" | \
      grep -E "^#[0-9]+ +(pulse|DONE|INITED)|ERROR|runtime error|invariant|stat::|Done"; then
    :
  fi
  rc=${PIPESTATUS[0]}
  echo "== fuzz_import: exit $rc after $(( $(date +%s) - start )) s; corpus now $(ls "$build/corpus/import" | wc -l) files," \
       "$(du -sb "$build/corpus/import" | cut -f1) bytes"
  [[ $rc -eq 0 ]] || status=1
fi

if [[ "$which" == python || "$which" == all ]]; then
  py="${PYTHON:-$root/.venv/bin/python}"
  "$py" -c "import atheris" 2> /dev/null || "$py" -m pip install -q atheris==3.0.0
  if "$py" -c "import atheris, ortdlpack" 2> /dev/null; then
    echo "== fuzz_python: ${minutes} min"
    mkdir -p "$build/corpus/python" "$build/artifacts"
    # ASan is not preloaded here: the wheel's ORT and CPython are uninstrumented (see docs/reliability.md);
    # atheris reports uncaught exceptions and crashes.
    if ! ASAN_OPTIONS= LSAN_OPTIONS= "$py" fuzz/fuzz_python.py -max_total_time="$seconds" -timeout=10 \
        -artifact_prefix="$build/artifacts/" "$build/corpus/python" 2>&1 | tee "$build/fuzz_python.log" | \
        grep -E "^#[0-9]+ +(pulse|DONE|INITED)|ERROR|Uncaught|Done"; then
      :
    fi
    rc=${PIPESTATUS[0]}
    echo "== fuzz_python: exit $rc"
    [[ $rc -eq 0 ]] || status=1
  else
    echo "== fuzz_python: skipped (needs the ortdlpack package and atheris in $py)"
  fi
fi
exit $status
