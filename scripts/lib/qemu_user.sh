# Sourced (from the repository root) by the legs that run programs under qemu-user: scripts/ci_other_cpu.sh and
# scripts/lib/aarch64_sysroot.sh; the sourcing script defines say. ensure_qemu_user LOG installs Debian's
# qemu-user-static (qemu-x86_64-static, qemu-aarch64-static, ...) when missing, apt's output in LOG, shown on failure.
sudo_if_needed() { if [[ $(id -u) -eq 0 ]]; then "$@"; else sudo "$@"; fi; }

ensure_qemu_user() {
  command -v qemu-aarch64-static > /dev/null && command -v qemu-x86_64-static > /dev/null && return 0
  local t0=$SECONDS
  say "installing Debian's qemu-user-static"
  { sudo_if_needed apt-get update -qq &&
    sudo_if_needed env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq qemu-user-static; } > "$1" 2>&1 ||
    { cat "$1"; exit 1; }
  say "  done in $((SECONDS - t0)) s"
}
