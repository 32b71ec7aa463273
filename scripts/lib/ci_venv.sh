# What the CI legs against an older dependency share (ci_oldest_ort.sh, ci_oldest_torch.sh): a venv of the leg's own
# that sees .venv's packages behind its own, and ortdlpack built from this tree into a site dir the leg puts on
# PYTHONPATH. Source it from the repository's root.

# Makes VENV anew (an empty venv, for the leg to install its pins into).
ci_venv_new() {
  rm -rf "$1"
  python3 -m venv "$1"
}

# Puts .venv's site-packages after VENV's own on its sys.path (a .pth line). Written last: pip in VENV must not see
# .venv's packages while the leg installs its own.
ci_venv_see_dotvenv() {
  local own
  own=$("$1/bin/python" -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
  .venv/bin/python -c "import sysconfig; print(sysconfig.get_paths()['purelib'])" > "$own/ortdlpack_ci_frameworks.pth"
}

# ortdlpack built from this tree into SITE, with the test entry points, in setup.sh's build dir configuration (one
# build serves every onnxruntime and torch: both are found at run time).
ci_install_site() {
  echo "installing ortdlpack into $1 (build dir build/python)"
  rm -rf "$1"
  .venv/bin/python -m pip install -q --no-build-isolation --no-deps --target "$1" -Cbuild-dir=build/python \
    -Ccmake.define.ORTDLPACK_PYTHON_TESTING=ON .
}
