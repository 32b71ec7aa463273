#!/usr/bin/env bash
# Builds the C++ core and runs its tests against ONNX Runtime 1.23.2, the oldest supported SDK (by hand; not in CI:
# ~5 min on 2 cores). The SDK is assembled from the registries, outside the source tree, under build/ort-1.23.2-sdk:
#   headers: Debian sid's libonnxruntime-dev 1.23.2 (apt-get download with a private sources list: the system's
#            apt configuration is not touched); library: the official Linux x64 build in npm onnxruntime-node@1.23.2
#            (sid's own library needs a newer glibc than Debian 12's).
# The virtual device plugin implements the EP API of ORT 1.29 and is not built; the rest of the suite runs.
set -euo pipefail
cd "$(dirname "$0")/.."
sdk=$PWD/build/ort-1.23.2-sdk
work=$PWD/build/ort-1.23.2-download
npm_url=https://registry.npmjs.org/onnxruntime-node/-/onnxruntime-node-1.23.2.tgz
npm_sha256=fe70e8de46560c57c2dfb7170770da32dbb21684504a5c904346c44a56e154f2
deb_version=1.23.2+dfsg-6.1

if [[ ! -f $sdk/lib/libonnxruntime.so.1 || ! -f $sdk/include/onnxruntime_c_api.h ]]; then
  rm -rf "$work" && mkdir -p "$work/lists/partial" "$work/cache/archives/partial" "$sdk/lib"
  echo "deb http://deb.debian.org/debian sid main" > "$work/sources.list"
  apt_opts=(-o Dir::Etc::sourcelist="$work/sources.list" -o Dir::Etc::sourceparts=- -o Dir::State::Lists="$work/lists"
            -o Dir::Cache="$work/cache")
  echo "cpp_oldest_ort: headers from Debian sid libonnxruntime-dev=$deb_version"
  apt-get "${apt_opts[@]}" update -qq
  (cd "$work" && apt-get "${apt_opts[@]}" download "libonnxruntime-dev=$deb_version")
  dpkg -x "$work"/libonnxruntime-dev_*.deb "$work/dev"
  cp -r "$work/dev/usr/include/onnxruntime" "$sdk/include"
  echo "cpp_oldest_ort: library from npm onnxruntime-node@1.23.2 (97 MB)"
  curl -fL --progress-bar -o "$work/node.tgz" "$npm_url"
  echo "$npm_sha256  $work/node.tgz" | sha256sum -c --quiet
  tar xzf "$work/node.tgz" -C "$work" --wildcards 'package/bin/napi-v*/linux/x64/libonnxruntime.so.1'
  cp "$work"/package/bin/napi-v*/linux/x64/libonnxruntime.so.1 "$sdk/lib/"
  ln -sfn libonnxruntime.so.1 "$sdk/lib/libonnxruntime.so"
  rm -rf "$work"
fi
cmake -S . -B build/ort-1.23.2 -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DORTDLPACK_WERROR=ON \
  -Donnxruntime_ROOT="$sdk" > /dev/null
cmake --build build/ort-1.23.2
ctest --test-dir build/ort-1.23.2 --output-on-failure -j2
