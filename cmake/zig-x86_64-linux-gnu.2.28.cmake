# Toolchain: x86_64 Linux, glibc 2.28, Zig (cmake/zig-linux-gnu.cmake). The compiler is the build machine's
# architecture, so this is no cross build (try_run and FindPython work).
set(_zig_target x86_64-linux-gnu.2.28)
include("${CMAKE_CURRENT_LIST_DIR}/zig-linux-gnu.cmake")
