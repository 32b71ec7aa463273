#!/usr/bin/env bash
# CI leg: the tests whose outcome depends on the CPU's vendor, on the vendor this machine does not have. The EP table
# distinguishes two kinds of x86_64 CPU: onnxruntime-ep-openvino lists devices on Intel CPUs only (its factory matches
# CPU vendor 0x8086), so on an AMD machine its rows skip, and on an Intel one the test of a package that lists no
# device skips. Here python runs under qemu-x86_64-static (Debian's qemu-user-static) emulating the other vendor's CPU
# (Intel Haswell on AMD, AMD EPYC on Intel): ORT reads the emulated CPUID, OpenVINO's factory sees that vendor, and the
# tests read the vendor from ORT (test_host_eps.py's _cpu_vendor). The rows run against the newest pinned onnxruntime
# (.venv) and the oldest supported one (scripts/ci_oldest_ort.sh's venv, made first if missing). Emulation is slow:
# only these tests and the quick run of bench_host_eps.py (whose OpenVINO rows need an Intel CPU) run here; the plain
# legs run everything else natively.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
say() { echo "ci_other_cpu: $*"; }
source scripts/lib/qemu_user.sh
mkdir -p build/ci
ensure_qemu_user build/ci/qemu.log
vendor=$(.venv/bin/python -c "import onnxruntime as o; print(next(d.device.vendor for d in o.get_ep_devices()
                                                                 if d.ep_name == 'CPUExecutionProvider'))")
case "$vendor" in
  Intel) cpu=EPYC-v1 other=AMD ;;
  *) cpu=Haswell-v1 other=Intel ;;
esac
emulated() { qemu-x86_64-static -cpu "$cpu" "$@" 2> >(grep -v "TCG doesn't support requested feature" >&2); }
seen=$(emulated .venv/bin/python -c "import onnxruntime as o; print(next(d.device.vendor for d in o.get_ep_devices()
                                                                        if d.ep_name == 'CPUExecutionProvider'))")
[[ $seen == "$other" ]] || { say "FAILED: ORT under qemu -cpu $cpu sees a CPU of '$seen', not $other"; exit 1; }
say "this CPU is $vendor's; the vendor-dependent tests on an emulated $other CPU (qemu -cpu $cpu)"

tests=(tests/python/test_host_eps.py -k "openvino or lists_no_device")
oldest=build/ci/ort-${ORT_VERSION:-1.23.2}
[[ -x $oldest/bin/python && -d build/ci/site ]] || ./scripts/ci_oldest_ort.sh --co -q > /dev/null
for leg in newest oldest; do
  t0=$SECONDS
  if [[ $leg == newest ]]; then
    py=.venv/bin/python site=
  else
    py=$oldest/bin/python site=$PWD/build/ci/site
  fi
  ver=$(PYTHONPATH=$site "$py" -c "import onnxruntime; print(onnxruntime.__version__)")
  say "onnxruntime $ver, $other CPU:"
  PYTHONPATH=$site emulated "$py" -m pytest "${tests[@]}" -q -rs -p no:cacheprovider
  say "onnxruntime $ver: $((SECONDS - t0)) s"
done
if [[ $other == Intel ]]; then
  # The benchmark's OpenVINO rows (each way's results are checked equal before timing; emulated times mean nothing).
  t0=$SECONDS
  emulated .venv/bin/python bench/bench_host_eps.py --quick > build/ci/bench_host_eps_other_cpu.md
  grep -q "^| OpenVINO" build/ci/bench_host_eps_other_cpu.md || { say "FAILED: no OpenVINO row on the $other CPU"; exit 1; }
  say "bench_host_eps --quick, $other CPU: OpenVINO rows ran ($((SECONDS - t0)) s)"
fi
say "$((SECONDS - start)) s"
