#!/usr/bin/env bash
# Runs every test: the C++ suites (CTest: core + virtual device + session) and the Python suite (pytest).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
echo "== C++ tests (ctest)"
ctest --test-dir build --output-on-failure -j2
echo "== Python tests (pytest)"
.venv/bin/python -m pytest tests/python -q -p no:cacheprovider "$@"
