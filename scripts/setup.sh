#!/usr/bin/env bash
# Idempotent set-up from the registries alone: Debian build tools, the Vulkan loader and Mesa's software Vulkan driver
# (what the WebGPU EP runs on without a GPU), the pinned Python environment (.venv) with the plugin EP packages that
# install here (requirements-eps.txt), the C++
# build (build/; CMake fetches the pinned ORT SDK and dlpack.h into the per-user cache, see docs/DEPENDENCIES.md) and
# the Python package. Each step says what it does and how long it took; a run with nothing to do prints one line.
set -euo pipefail
cd "$(dirname "$0")/.."

now_ms() { echo $(($(date +%s%N) / 1000000)); }
since() { local d=$(($(now_ms) - $1)); echo "$((d / 1000)).$((d % 1000 / 100))"; }
started=$(now_ms)
did=0
sudo_if_needed() { if [[ $(id -u) -eq 0 ]]; then "$@"; else sudo "$@"; fi; }
step_start() { did=1; step_t0=$(now_ms); echo "setup: $*"; }
step_done() { echo "setup:   done in $(since "$step_t0") s"; }

# --- Debian packages --------------------------------------------------------------------------------------------
missing=()
for pkg in cmake ninja-build g++ libgtest-dev; do
  dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
done
if ((${#missing[@]})); then
  step_start "installing Debian packages: ${missing[*]}"
  sudo_if_needed apt-get update -qq
  sudo_if_needed env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"
  step_done
fi

# --- Vulkan loader + Mesa's lavapipe (a software Vulkan driver): what the WebGPU EP needs without a GPU --------------
# Dawn (the EP's WebGPU) refuses Debian 12's own Mesa 22.3 ("Vulkan shaderUniform*ArrayDynamicIndexing required",
# "No supported adapters") and works with Mesa 25. Debian 12 has Mesa 25 only in bookworm-backports:
# apt reads a sources list of the project's own, with its own package lists and cache under the per-user cache, so
# the system's apt sources and lists are never touched. Mesa's other packages (libgl1-mesa-dri, ...) follow to 25.
# Elsewhere the system's own suites are used (Debian 13 has Mesa 25), whatever version they have.
codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
mesa_min=0
[[ $codename == bookworm ]] && mesa_min=25
installed() { [[ $(dpkg-query -W -f='${Status}' "$1" 2>/dev/null) == "install ok installed" ]]; }
mesa_version() { dpkg-query -W -f='${Version}' mesa-vulkan-drivers 2>/dev/null; }
mesa_ok() { installed libvulkan1 && installed mesa-vulkan-drivers && dpkg --compare-versions "$(mesa_version)" ge "$mesa_min"; }
if ! mesa_ok; then
  if [[ $codename == bookworm ]]; then
    step_start "installing libvulkan1 and mesa-vulkan-drivers >= $mesa_min (lavapipe) from bookworm-backports" \
               "(the system's apt sources stay untouched)"
    aptdir=${ORTDLPACK_DEPS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/ortdlpack}/apt
    mkdir -p "$aptdir/lists/partial" "$aptdir/cache/archives/partial"
    keyring=/usr/share/keyrings/debian-archive-keyring.gpg
    for suite in debian/bookworm debian/bookworm-updates debian-security/bookworm-security debian/bookworm-backports; do
      echo "deb [signed-by=$keyring] http://deb.debian.org/${suite%%/*} ${suite#*/} main"
    done > "$aptdir/sources.list"
    # apt's download user (_apt) cannot enter a home directory: it downloads as root, the files checked against the
    # archive's signatures as always. apt's and dpkg's lines go to $aptdir/install.log (shown whole if it fails).
    apt_own=(-o "Dir::Etc::sourcelist=$aptdir/sources.list" -o Dir::Etc::sourceparts=-
             -o "Dir::State::Lists=$aptdir/lists" -o "Dir::Cache=$aptdir/cache" -o APT::Sandbox::User=root)
    if ! { sudo_if_needed apt-get "${apt_own[@]}" update -qq &&
           sudo_if_needed env DEBIAN_FRONTEND=noninteractive apt-get "${apt_own[@]}" install -y -qq \
             --no-install-recommends -t bookworm-backports libvulkan1 mesa-vulkan-drivers; } > "$aptdir/install.log" 2>&1
    then
      cat "$aptdir/install.log"
      exit 1
    fi
  else
    step_start "installing libvulkan1 and mesa-vulkan-drivers (lavapipe) from the system's apt sources"
    sudo_if_needed apt-get update -qq
    sudo_if_needed env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      libvulkan1 mesa-vulkan-drivers
  fi
  mesa_ok || { echo "setup: mesa-vulkan-drivers $(mesa_version) is older than $mesa_min"; exit 1; }
  echo "setup:   mesa-vulkan-drivers $(mesa_version)"
  step_done
fi

# --- the pinned Python environment (.venv) ----------------------------------------------------------------------
PY=${PYTHON:-python3}
if [[ ! -x .venv/bin/python ]]; then
  step_start "creating the virtual environment .venv ($("$PY" --version))"
  if ! "$PY" -m venv .venv 2>/dev/null; then  # Debian's python3 needs python3-venv for that
    rm -rf .venv
    sudo_if_needed apt-get install -y -qq python3-venv
    "$PY" -m venv .venv
  fi
  step_done
fi
# pip check, except what the EP packages of requirements-eps.txt declare (installed without their dependencies).
eps=$(sed -E 's/[[:space:]]*#.*//; /^$/d; s/==.*//' requirements-eps.txt | paste -sd'|')
pip_check() {
  local report
  report=$(.venv/bin/python -m pip check 2>&1 | grep -viE "^($eps) [^ ]+ (requires|has requirement) " || true)
  if [[ -n $report && $report != "No broken requirements found." ]]; then echo "$report"; return 1; fi
}
stamp=.venv/.requirements.sha256
if ! sha256sum --status -c "$stamp" 2>/dev/null; then
  step_start "installing the pinned Python packages of requirements.txt into .venv (torch, jax and tensorflow" \
             "are large: several GB the first time, each download listed with its size)"
  .venv/bin/python -m pip install -q --upgrade pip
  # pip lists what it downloads and installs; its per-line noise about satisfied requirements is left out.
  .venv/bin/python -m pip install --progress-bar off -r requirements.txt |
    { grep --line-buffered -E "^(Collecting|Downloading|  Downloading|Installing|Successfully)" || true; }
  pip_check || exit 1
  sha256sum requirements.txt > "$stamp"
  step_done
fi
ep_stamp=.venv/.requirements-eps.sha256
if ! sha256sum --status -c "$ep_stamp" 2>/dev/null; then
  step_start "installing the plugin EP packages of requirements-eps.txt where they install (onnxruntime-qnn," \
             "onnxruntime-ggml, onnxruntime-ep-openvino: ~175 MB the first time)"
  while read -r pin; do
    if ! out=$(.venv/bin/python -m pip install -q --progress-bar off --no-deps "$pin" 2>&1); then
      echo "setup:   $pin does not install here, its tests skip: $(echo "$out" | grep -m1 -iE "error|no matching")"
    else
      echo "setup:   $pin"
    fi
  done < <(sed -E 's/[[:space:]]*#.*//; /^$/d' requirements-eps.txt)
  pip_check || exit 1
  sha256sum requirements-eps.txt > "$ep_stamp"
  step_done
fi

# --- the C++ build (build/) -------------------------------------------------------------------------------------
if [[ ! -f build/build.ninja ]]; then
  step_start "configuring the C++ build in build/ (downloads the pinned ONNX Runtime SDK and dlpack.h once," \
             "with progress, into ${ORTDLPACK_DEPS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/ortdlpack})"
  mkdir -p build
  # CMake's own lines go to build/configure.log (shown whole if it fails); the download lines and progress show here.
  if ! cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DORTDLPACK_WERROR=ON < /dev/null 2>&1 |
       tee build/configure.log | { grep --line-buffered -E "ortdlpack:|\[download [0-9]*0% complete" | sed -u 's/^-- /setup:   /' || true; }
  then
    cat build/configure.log
    exit 1
  fi
  step_done
fi
if ! ninja -C build -n 2>/dev/null | grep -q "no work to do"; then
  step_start "building the C++ core, plugin, tests and benchmarks (cmake --build build; [done/total] per file)"
  cmake --build build
  step_done
fi

# --- the Python package (built against the same fetched headers; it uses the onnxruntime wheel's ORT) -----------
# Rebuilt when a file it is built from changed: the hash of those files is kept next to the installed package.
pkg_stamp=.venv/.ortdlpack-sources.sha256
pkg_hash=$(git ls-files -s -- python src include cmake CMakeLists.txt pyproject.toml plugins 2>/dev/null | sha256sum |
           cut -d' ' -f1)$(git diff --no-ext-diff -- python src include cmake CMakeLists.txt pyproject.toml plugins 2>/dev/null |
           sha256sum | cut -d' ' -f1)
if [[ "$(cat "$pkg_stamp" 2>/dev/null)" != "$pkg_hash" ]] || ! .venv/bin/python -c "import ortdlpack" 2>/dev/null; then
  step_start "building and installing the Python package into .venv (pip install .; [done/total] per file)"
  # pip -v shows the build's [done/total] lines; the rest of its output goes to build/python-install.log. The
  # package is built with its test entry points (ortdlpack._ortdlpack._testing), which wheels leave out, and with
  # warnings as errors, as the core is.
  if ! .venv/bin/python -m pip install -v --no-build-isolation --no-deps -Cbuild-dir=build/python \
       -Ccmake.define.ORTDLPACK_PYTHON_TESTING=ON -Ccmake.define.ORTDLPACK_WERROR=ON . 2>&1 |
       tee build/python-install.log | { grep --line-buffered -E "^ *\[[0-9]+/[0-9]+\]|^Successfully" || true; }
  then
    tail -40 build/python-install.log
    exit 1
  fi
  .venv/bin/python -c "import ortdlpack"
  echo "$pkg_hash" > "$pkg_stamp"
  step_done
fi

if ((did)); then
  echo "setup: ready in $(since "$started") s"
else
  echo "setup: nothing to do: .venv, build/ and the ortdlpack package are up to date ($(since "$started") s)"
fi
