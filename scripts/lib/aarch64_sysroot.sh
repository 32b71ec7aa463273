# Sourced by scripts/ci_aarch64.sh and scripts/cpp_aarch64.sh (which define say). aarch64_sysroot CACHE LOGDIR SUITE
# PYTHON installs Debian's qemu-user-static when missing and makes (once; then kept) an aarch64 root in CACHE: Debian
# SUITE's arm64 PYTHON (python3.11: bookworm, python3.13: trixie) and the libraries it and the aarch64 wheels load,
# from Debian's arm64 packages through a sources list, lists and cache of its own (`apt-get download`, `dpkg-deb -x`;
# the system's apt sources stay untouched). It sets `sysroot` (aarch64 programs run as `qemu-aarch64-static -L
# "$sysroot" PROGRAM`: no binfmt_misc here) and `py`, the command that starts that CPython.
# Left out of the closure: what only dpkg and package scripts use (perl, dpkg, tar, ...).
not_needed='^(perl.*|libperl.*|dpkg|tar|install-info|mailcap|mime-support|libgdbm-compat4)$'
source scripts/lib/qemu_user.sh

aarch64_sysroot() {
  local cache=$1 work=$2 suite=$3 python=$4 t0 aptdir keyring s d deb cpu stamp apt_own debs
  # The CPython and what its binary and the wheels' libraries load; apt resolves the rest.
  local roots=("$python" libstdc++6 libgomp1)
  ensure_qemu_user "$work/qemu.log"
  say "$(qemu-aarch64-static --version | head -1)"

  # Made once per package set (the stamp: roots and suite), then kept. A merged-/usr suite (trixie) gets the /lib and
  # /bin links its base-files would make (the dynamic loader is /lib/ld-linux-aarch64.so.1). /proc/cpuinfo and the MIDR_EL1 register files
  # are the host's x86_64 ones under qemu-user, which onnxruntime's and torch's CPU probes cannot read (onnxruntime
  # crashes): qemu reads these paths from the sysroot first, so it gets those of a 2-core Neoverse-N1.
  sysroot=$cache/sysroot-$suite
  stamp="$suite ${roots[*]} $not_needed"
  if [[ "$(cat "$sysroot/.stamp" 2>/dev/null)" != "$stamp" ]]; then
    t0=$SECONDS
    say "making the aarch64 sysroot $sysroot (Debian $suite arm64: ${roots[*]} and what they depend on)"
    aptdir=$cache/apt
    rm -rf "$aptdir" "$sysroot"
    mkdir -p "$aptdir/lists/partial" "$aptdir/cache/archives/partial" "$aptdir/debs" "$sysroot"
    keyring=/usr/share/keyrings/debian-archive-keyring.gpg
    for s in debian/$suite debian/$suite-updates debian-security/$suite-security; do
      echo "deb [arch=arm64 signed-by=$keyring] http://deb.debian.org/${s%%/*} ${s#*/} main"
    done > "$aptdir/sources.list"
    # No system state: the lists and the cache are these, the architecture arm64, nothing counts as installed.
    apt_own=(-o "Dir::Etc::sourcelist=$aptdir/sources.list" -o Dir::Etc::sourceparts=-
             -o "Dir::State::Lists=$aptdir/lists" -o "Dir::Cache=$aptdir/cache" -o Dir::State::status=/dev/null -o APT::Architecture=arm64
             -o APT::Architectures::=arm64 -o APT::Sandbox::User=root)
    apt-get "${apt_own[@]}" update -qq > "$aptdir/update.log" 2>&1 || { cat "$aptdir/update.log"; exit 1; }
    mapfile -t debs < <(apt-cache "${apt_own[@]}" depends --recurse --no-recommends --no-suggests --no-conflicts \
      --no-breaks --no-replaces --no-enhances "${roots[@]}" | grep -v '^[ <]' | sort -u | grep -vE "$not_needed")
    (cd "$aptdir/debs" && apt-get "${apt_own[@]}" download "${debs[@]}") > "$aptdir/download.log" 2>&1 ||
      { cat "$aptdir/download.log"; exit 1; }
    for deb in "$aptdir"/debs/*.deb; do dpkg-deb -x "$deb" "$sysroot"; done
    for d in lib bin sbin; do [[ -e $sysroot/$d || ! -d $sysroot/usr/$d ]] || ln -s "usr/$d" "$sysroot/$d"; done
    mkdir -p "$sysroot/proc"
    for cpu in 0 1; do
      printf 'processor\t: %d\nBogoMIPS\t: 50.00\nFeatures\t: %s\nCPU implementer\t: 0x41\nCPU architecture: 8\n' \
        "$cpu" "fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm lrcpc dcpop asimddp"
      printf 'CPU variant\t: 0x3\nCPU part\t: 0xd0c\nCPU revision\t: 1\n\n'
      mkdir -p "$sysroot/sys/devices/system/cpu/cpu$cpu/regs/identification"
      echo 0x00000000413fd0c1 > "$sysroot/sys/devices/system/cpu/cpu$cpu/regs/identification/midr_el1"
    done > "$sysroot/proc/cpuinfo"
    ls "$aptdir"/debs > "$sysroot/.packages"
    rm -rf "$aptdir"
    echo "$stamp" > "$sysroot/.stamp"
    say "  ${#debs[@]} packages ($(du -sh "$sysroot" | cut -f1)) in $((SECONDS - t0)) s"
  fi
  say "sysroot: $(grep -E "^$python-minimal_" "$sysroot/.packages")"
  # sys.executable: a host script that starts the aarch64 CPython through qemu (-0: the CPython sees the script as
  # its argv[0], so a child it starts from sys.executable goes through qemu too). Next to the real binary: CPython
  # finds its standard library from there.
  py=$sysroot/usr/bin/$python-qemu
  printf '#!/bin/sh\nexec qemu-aarch64-static -L "%s" -0 "$0" "%s/usr/bin/%s" "$@"\n' "$sysroot" "$sysroot" "$python" \
    > "$py"
  chmod +x "$py"
}
