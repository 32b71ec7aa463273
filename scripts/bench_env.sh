#!/usr/bin/env bash
# Makes .venv-bench, the environment of the benchmarks that compare against onnxruntime-genai (bench/bench_decode.py,
# scripts/make_decoders.py): a venv with requirements-bench.txt's pins (installed without dependencies, from PyPI
# alone) that sees .venv's packages behind its own (a .pth line, scripts/lib/ci_venv.sh), so onnxruntime, torch,
# numpy, onnx and ortdlpack are .venv's. .venv itself is not changed: onnxruntime-genai never becomes a dependency
# of ortdlpack. Idempotent: a run with nothing to do prints one line. Needs .venv (scripts/setup.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
venv=.venv-bench
stamp=$venv/.requirements-bench.sha256
[[ -x .venv/bin/python ]] || { echo "bench_env: no .venv here: run scripts/setup.sh first" >&2; exit 1; }
if [[ -f $stamp ]] && sha256sum -c --status "$stamp" 2>/dev/null &&
   "$venv/bin/python" -c "import onnxruntime_genai, transformers, onnx_ir, tokenizers, onnxruntime" 2>/dev/null; then
  echo "bench_env: $venv is up to date"
  exit 0
fi
start=$SECONDS
base=$(.venv/bin/python -c "import sys; print(sys._base_executable)")  # the CPython .venv was made with
if [[ ! -x $venv/bin/python ]]; then
  echo "bench_env: creating $venv ($base -m venv)"
  "$base" -m venv "$venv"
fi
own=$("$venv/bin/python" -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
rm -f "$own/ortdlpack_dotvenv.pth"  # pip must neither see nor touch .venv's packages
echo "bench_env: installing requirements-bench.txt into $venv (--no-deps: what they need beyond .venv is pinned there)"
"$venv/bin/python" -m pip install -q --progress-bar off --no-deps -r requirements-bench.txt
# .venv's site-packages after the venv's own (a .pth line), written after the install.
.venv/bin/python -c "import sysconfig; print(sysconfig.get_paths()['purelib'])" > "$own/ortdlpack_dotvenv.pth"
# What the four need, satisfied in the two venvs together (pip check also reports .venv's own packages: only the
# lines about the bench's packages count here).
names=$(sed -E 's/[[:space:]]*#.*//; /^$/d; s/==.*//' requirements-bench.txt | paste -sd'|')
report=$("$venv/bin/python" -m pip check 2>&1 | grep -iE "^($names) " || true)
if [[ -n $report ]]; then echo "$report" >&2; echo "bench_env: requirements-bench.txt is incomplete" >&2; exit 1; fi
"$venv/bin/python" -c "
import onnxruntime, onnxruntime_genai, transformers, torch
print(f'bench_env: onnxruntime-genai {onnxruntime_genai.__version__}, transformers {transformers.__version__}; '
      f'from .venv: onnxruntime {onnxruntime.__version__}, torch {torch.__version__}')"
sha256sum requirements-bench.txt > "$stamp"
echo "bench_env: ready in $((SECONDS - start)) s"
