# Sourced by scripts/build_wheels.sh and scripts/ci_wheels.sh: find_python X.Y prints the path of a CPython X.Y,
# pyenv's newest X.Y first, else python X.Y on PATH (a pyenv shim on PATH may not run: each candidate is tried), or
# stops the calling script saying what is missing ($ME names it in the message).
find_python() {
  local v=$1 p
  for p in $(ls -d "${PYENV_ROOT:-$HOME/.pyenv}/versions/$v".*/bin/"python$v" 2>/dev/null | sort -rV) \
           $(command -v "python$v" 2>/dev/null); do
    if "$p" -c "import sys; sys.exit(sys.version_info[:2] != tuple(map(int, '$v'.split('.'))))" 2>/dev/null; then
      echo "$p"; return
    fi
  done
  echo "${ME:-find_python}: no CPython $v (python$v on PATH or ${PYENV_ROOT:-$HOME/.pyenv}/versions/$v.*)" >&2
  exit 1
}
