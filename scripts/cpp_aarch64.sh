#!/usr/bin/env bash
# Cross-builds the C++ core, the virtual device plugin and a subset of the C++ tests for Linux aarch64 and runs them
# under qemu-aarch64-static with CTest (by hand; not in CI: ~8 min on 2 cores, CI's time goes to the Python leg,
# scripts/ci_aarch64.sh). Compiler: Zig for aarch64 glibc 2.28 (cmake/zig-aarch64-linux-gnu.2.28.cmake, Zig from
# scripts/build_wheels.sh's tools venv); ORT: the official 1.29.0 Linux arm64 library of npm onnxruntime-node, fetched
# by cmake/Dependencies.cmake when it cross-builds for aarch64; GoogleTest: Debian's googletest sources (installed with
# libgtest-dev by scripts/setup.sh) built for aarch64 once into the per-user cache; the programs run on the sysroot of
# scripts/lib/aarch64_sysroot.sh (CMAKE_CROSSCOMPILING_EMULATOR: gtest_discover_tests and CTest go through qemu).
# Build dir build/aarch64-cpp (kept for fast reruns).
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
deps=$(realpath -m "${ORTDLPACK_DEPS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/ortdlpack}")
cache=$deps/aarch64
build=build/aarch64-cpp
# The tests that run: the core (dtypes, tensors, export, import), sessions, and the plugin device through ORT's C API.
targets=(test_api test_dtype test_tensor test_export test_import test_session test_virtual_device test_plugin_device)
export ZIG_GLOBAL_CACHE_DIR=$deps/zig-0.17.1 ZIG_LOCAL_CACHE_DIR=$deps/zig-0.17.1  # as build_wheels.sh

say() { echo "cpp_aarch64: $*"; }
source scripts/lib/aarch64_sysroot.sh
mkdir -p "$build" "$cache"
aarch64_sysroot "$cache" "$build" bookworm python3.11
export ORTDLPACK_AARCH64_SYSROOT=$sysroot
ORTDLPACK_ZIG=$(build/wheels/tools/bin/python -c "import ziglang, os; print(os.path.dirname(ziglang.__file__))")/zig ||
  { say "FAILED: no Zig in build/wheels/tools (run scripts/build_wheels.sh)"; exit 1; }
export ORTDLPACK_ZIG
toolchain=$PWD/cmake/zig-aarch64-linux-gnu.2.28.cmake
[[ -f /usr/src/googletest/CMakeLists.txt ]] || { say "FAILED: no /usr/src/googletest (scripts/setup.sh)"; exit 1; }

gtest_version=$(dpkg-query -W -f='${Version}' googletest)
gtest=$cache/googletest-$gtest_version
if [[ ! -f $gtest/lib/cmake/GTest/GTestConfig.cmake ]]; then
  t0=$SECONDS
  say "building GoogleTest $gtest_version (Debian's sources) for aarch64 into $gtest"
  rm -rf "$build/googletest" "$gtest"
  { cmake -S /usr/src/googletest -B "$build/googletest" -G Ninja -DCMAKE_TOOLCHAIN_FILE="$toolchain" \
      -DCMAKE_BUILD_TYPE=Release -DBUILD_GMOCK=OFF -DCMAKE_INSTALL_PREFIX="$gtest" &&
    cmake --build "$build/googletest" --target install; } > "$build/googletest.log" 2>&1 ||
    { tail -30 "$build/googletest.log"; exit 1; }
  say "  done in $((SECONDS - t0)) s"
fi

t0=$SECONDS
if [[ ! -f $build/build.ninja ]]; then
  cmake -S . -B "$build" -G Ninja -DCMAKE_TOOLCHAIN_FILE="$toolchain" -DCMAKE_BUILD_TYPE=Release \
    -DORTDLPACK_BUILD_BENCH=OFF -DGTest_DIR="$gtest/lib/cmake/GTest" > "$build/configure.log" 2>&1 ||
    { cat "$build/configure.log"; exit 1; }
  grep -E "^-- ortdlpack:" "$build/configure.log" | sed 's/^-- /cpp_aarch64: /' || true
fi
say "building ${targets[*]} for aarch64"
cmake --build "$build" --target "${targets[@]}" > "$build/build.log" 2>&1 || { tail -40 "$build/build.log"; exit 1; }
say "  built in $((SECONDS - t0)) s: $(file -b "$build/tests/cpp/test_api" | cut -d, -f1-2)"

# Only what was built: the other test programs show up as *_NOT_BUILT; soak, the install test and the libtorch example
# are not built here.
t0=$SECONDS
(cd "$build" && ctest -j2 --output-on-failure --timeout 300 \
  -E '_NOT_BUILT$|^(soak_short|install_and_find_package|libtorch_example)$') | tee "$build/ctest.log" | tail -4
say "ctest under qemu in $((SECONDS - t0)) s; done in $((SECONDS - start)) s"
