# Sourced by scripts/fuzz.sh (and tests/python/test_fuzz_script.py, which checks it on stand-in commands).
#
# run_fuzzer NAME ARTIFACTS LOG COMMAND...: runs one fuzzer (libFuzzer or atheris) and decides whether it found
# something. A finding is either of:
#   - the fuzzer's non-zero exit status (both exit non-zero on a crash, a sanitizer report, a leak, a timeout, an
#     out-of-memory, an uncaught exception or a violated invariant; death by a signal counts too), or
#   - a new crash-*, leak-*, timeout-* or oom-* file in ARTIFACTS (what a fuzzer leaves for each finding, also
#     when it was told to go on after one).
# The fuzzer's progress lines show while it runs; everything goes to LOG. On a finding the new files and the end of
# the log (the invariant or sanitizer report, and libFuzzer's Base64 of the input) are printed.
# Returns 0 when the run was clean, 1 on a finding: the caller's exit status follows it.
run_fuzzer() {
  local name=$1 artifacts=$2 log=$3
  shift 3
  mkdir -p "$artifacts"
  local before after rc_file="$log.status" start=$SECONDS
  before=$(cd "$artifacts" && ls -1)
  # The status is written from inside the pipeline's first element: $PIPESTATUS would be gone by the time a guard
  # around the pipeline (|| true, if ...) has run, and that is how this script once reported success for a crash.
  {
    local status=0
    "$@" 2>&1 || status=$?
    echo "$status" > "$rc_file"
  } | tee "$log" | grep --line-buffered -E "^#[0-9]+[[:space:]]+(INITED|DONE|pulse)|ERROR|invariant|Uncaught|stat::" || true
  local rc
  rc=$(cat "$rc_file" 2> /dev/null || echo 127)
  after=$(cd "$artifacts" && ls -1)
  local new
  new=$(comm -13 <(echo "$before" | sort) <(echo "$after" | sort) | grep -E "^(crash|leak|timeout|oom)-" || true)
  if [[ $rc == 0 && -z $new ]]; then
    echo "== fuzz $name: clean after $((SECONDS - start)) s"
    return 0
  fi
  echo "== fuzz $name: FINDING after $((SECONDS - start)) s (exit status $rc)"
  local f
  for f in $new; do
    echo "   $artifacts/$f ($(wc -c < "$artifacts/$f") bytes): $(head -c 64 "$artifacts/$f" | od -An -tx1 | tr -s ' \n' ' ' | sed 's/^ //; s/ $//')"
  done
  echo "---- end of $log"
  tail -n 40 "$log"
  echo "----"
  return 1
}
