# Toolchain: aarch64 Linux, glibc 2.28, Zig (cmake/zig-linux-gnu.cmake), cross-compiled on any build machine.
# A program built with it runs here through qemu-aarch64-static: set ORTDLPACK_AARCH64_SYSROOT to an aarch64 root
# (its /lib/ld-linux-aarch64.so.1 and libraries, as scripts/ci_aarch64.sh unpacks from Debian's arm64 packages) and
# try_run and CTest start their programs with `qemu-aarch64-static -L <that root>`.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(_zig_target aarch64-linux-gnu.2.28)
include("${CMAKE_CURRENT_LIST_DIR}/zig-linux-gnu.cmake")
if(NOT "$ENV{ORTDLPACK_AARCH64_SYSROOT}" STREQUAL "")
  set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64-static -L "$ENV{ORTDLPACK_AARCH64_SYSROOT}")
endif()
