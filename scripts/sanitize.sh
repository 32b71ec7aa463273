#!/usr/bin/env bash
# Sanitized runs of ortdlpack (docs/reliability.md has the figures):
#   scripts/sanitize.sh            ASan+UBSan+LSan build (preset asan, build-asan/) and the whole C++ suite under it,
#                                  then the Python suite against an ASan build of the extension (when it builds)
#   scripts/sanitize.sh --tsan     ThreadSanitizer build (preset tsan, build-tsan/) and the tests that run threads:
#                                  test_concurrency (every entry point at once), test_stream (host waits,
#                                  exports and queued copies of one device stream from several threads), and the
#                                  ordering on the simulated CUDA device (test_cuda_sim: the test CUDA runtime;
#                                  test_cuda_streams: ortdlpack's CUDA stream backend over it)
#   scripts/sanitize.sh --no-python   skip the Python part
# Zero reports is the pass mark: any sanitizer report fails the run (halt_on_error / abort_on_error).
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
mode=asan
python=1
for arg in "$@"; do
  case "$arg" in
    --tsan) mode=tsan ;;
    --no-python) python=0 ;;
    *) echo "usage: $0 [--tsan] [--no-python]" >&2; exit 2 ;;
  esac
done
jobs="$(nproc)"
SECONDS=0

if [[ "$mode" == tsan ]]; then
  cmake --preset tsan > /dev/null
  tsan_tests=(test_concurrency test_stream test_cuda_sim test_cuda_streams)
  cmake --build --preset tsan --target "${tsan_tests[@]}"
  export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$root/tests/sanitizer/tsan.supp"
  for t in "${tsan_tests[@]}"; do
    echo "== TSan: $t (${SECONDS}s so far)"
    "build-tsan/tests/cpp/$t"
  done
  echo "== TSan: passed, ${SECONDS}s in all"
  exit 0
fi

# --- ASan + UBSan + LSan: the C++ suite -------------------------------------------------------------------------
cmake --preset asan > /dev/null
cmake --build --preset asan
build_s=$SECONDS
# fast_unwind_on_malloc=0: libonnxruntime has no frame pointers, so only the slow unwinder gets past its frames to
# the caller that tests/sanitizer/lsan.supp matches (see the comments there).
export ASAN_OPTIONS="detect_leaks=1:fast_unwind_on_malloc=0:abort_on_error=1:detect_stack_use_after_return=1:strict_string_checks=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
export LSAN_OPTIONS="suppressions=$root/tests/sanitizer/lsan.supp:print_suppressions=0"
logs=build-asan/sanitize-logs
rm -rf "$logs" && mkdir -p "$logs"
# Each test binary runs once with all its tests (one ORT start-up per binary, not per test as ctest does), in
# parallel. The soak runs short: deleter accounting (its RSS limit is meaningless under ASan's quarantine).
run_one() {
  local bin="$1" name
  name="$(basename "$bin")"
  if [[ "$name" == soak ]]; then
    "$bin" 20000 200 1024 > "$logs/$name.log" 2>&1
  else
    "$bin" > "$logs/$name.log" 2>&1
  fi
  echo "$? $name"
}
export -f run_one
export logs
mapfile -t bins < <(find build-asan/tests/cpp -maxdepth 1 -type f -executable \( -name 'test_*' -o -name soak \) | sort)
results="$(printf '%s\n' "${bins[@]}" | xargs -P "$jobs" -I{} bash -c 'run_one {}')"
failed=0
tests=0
while read -r rc name; do
  n="$(grep -oE '^\[==========\] ([0-9]+) tests? from .* ran' "$logs/$name.log" | grep -oE '[0-9]+' | head -1 || true)"
  tests=$((tests + ${n:-0}))
  if [[ "$rc" != 0 ]] || grep -qE 'ERROR: (Address|Leak|Undefined)Sanitizer|runtime error:' "$logs/$name.log"; then
    echo "FAILED: $name (exit $rc); log $logs/$name.log"
    grep -E -A30 'ERROR: |runtime error:|\[  FAILED  \]' "$logs/$name.log" | head -60
    failed=1
  else
    echo "ok: $name (${n:-soak} tests)"
  fi
done <<< "$results"
echo "== ASan/UBSan/LSan C++: $tests gtest tests in ${#bins[@]} binaries, build ${build_s}s, run $((SECONDS - build_s))s"
[[ $failed == 0 ]] || exit 1

# --- Python suite against an ASan build of the extension ---------------------------------------------------------
if [[ $python == 1 ]]; then
  py="${PYTHON:-$root/.venv/bin/python}"
  target="$root/build-asan/python-site"
  start=$SECONDS
  if "$py" -m pip install --no-build-isolation --no-deps --quiet --target "$target" --upgrade \
       -Ccmake.define.ORTDLPACK_SANITIZE=ON -Ccmake.define.ORTDLPACK_PYTHON_TESTING=ON \
       -Cbuild-dir="$root/build-asan/python-build" . ; then
    # CPython, numpy, torch and the wheel's ORT are not instrumented: the ASan runtime must be the first library
    # loaded (LD_PRELOAD). Leak checking is off: CPython and the extension modules keep interned objects and
    # arenas until exit by design, so LSan would report the interpreter, not ortdlpack (the deleter/ownership
    # tests in tests/python check ortdlpack's lifetimes). PYTHONMALLOC=malloc routes Python objects through ASan.
    # The RSS-growth tests are deselected: ASan's quarantine (freed memory kept poisoned) grows RSS by design.
    # The example and Ray Serve tests run other processes (which would inherit LD_PRELOAD): they check the examples,
    # not ortdlpack's memory safety, and run in the plain leg; so do the apps (test_apps.py: OpenCV, scikit-learn)
    # and the tests marked `inductor` (torch.compile's inductor runs a C++ compiler in subprocesses; the operator
    # they compile in is run by the other tests); so do the benchmarks' --quick modes (test_benches.py: timing
    # scripts in subprocesses) and the fuzz script's tests (test_fuzz_script.py: it builds and runs its own ASan
    # fuzzers). ONNX's conformance models run once in the plain leg; here every
    # 20th (ORTDLPACK_CONFORMANCE_SAMPLE).
    # ORTDLPACK_SANITIZER=asan tells the tests they run under this preload: a third-party EP library that aborts
    # under it (onnxruntime-ep-openvino's) is not registered, and its tests skip saying so; QNN's and ggml's run
    # (docs/reliability.md).
    # libstdc++ is preloaded too: python itself does not link it, and ASan's __cxa_throw interceptor must find the
    # real one when the runtime starts ("CHECK failed: ... real___cxa_throw != 0" at the first C++ throw otherwise).
    preload="$(gcc -print-file-name=libasan.so) $(gcc -print-file-name=libstdc++.so.6)"
    echo "== ASan/UBSan Python: LD_PRELOAD=\"$preload\""
    PYTHONPATH="$target" PYTHONMALLOC=malloc LD_PRELOAD="$preload" ORTDLPACK_CONFORMANCE_SAMPLE=20 \
      ORTDLPACK_SANITIZER=asan \
      ASAN_OPTIONS="detect_leaks=0:abort_on_error=1:fast_unwind_on_malloc=1:detect_odr_violation=0" \
      "$py" -m pytest -q -p no:cacheprovider tests/python \
        --ignore=tests/python/test_examples.py --ignore=tests/python/test_serve.py \
        --ignore=tests/python/test_apps.py --ignore=tests/python/test_benches.py \
        --ignore=tests/python/test_fuzz_script.py -k 'not do_not_grow_rss' -m 'not inductor'
    echo "== ASan/UBSan Python: passed in $((SECONDS - start))s"
  else
    echo "== ASan/UBSan Python: skipped: the extension did not build with ORTDLPACK_SANITIZE=ON"
  fi
fi
echo "== sanitize.sh: all passed in ${SECONDS}s"
