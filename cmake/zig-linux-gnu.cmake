# Toolchain for wheels a package index takes (manylinux_2_28): Zig's clang (PyPI `ziglang`, pinned in
# scripts/build_wheels.sh) compiles for Linux against glibc 2.28's symbol versions, whatever glibc the build machine
# has, and links Zig's LLVM libc++ statically (no libstdc++, so no GLIBCXX_* symbol version is needed).
# Why Zig and not an older Debian sysroot: docs/DEPENDENCIES.md. Not used directly: the toolchain files
# zig-<arch>-linux-gnu.2.28.cmake set _zig_target (Zig's target triple) and include this one. Usage:
#   ORTDLPACK_ZIG=<path of the zig executable> cmake -DCMAKE_TOOLCHAIN_FILE=cmake/zig-x86_64-linux-gnu.2.28.cmake ...
include_guard(GLOBAL)

set(_zig "$ENV{ORTDLPACK_ZIG}")
if(NOT _zig OR NOT EXISTS "${_zig}")
  message(FATAL_ERROR "zig toolchain: set ORTDLPACK_ZIG to the zig executable "
                      "(PyPI ziglang: <site-packages>/ziglang/zig)")
endif()

# CMake wants one executable per tool: small wrappers `zig cc|c++|ar|ranlib` in the build dir. try_compile re-reads
# this file with its own binary dir and writes its own copies.
set(_bin "${CMAKE_BINARY_DIR}/zig-${_zig_target}")
foreach(_tool cc c++ ar ranlib)
  set(_args "${_tool}")
  if(_tool STREQUAL "cc" OR _tool STREQUAL "c++")
    string(APPEND _args " -target ${_zig_target}")
  endif()
  file(WRITE "${_bin}/${_tool}.tmp" "#!/bin/sh\nexec '${_zig}' ${_args} \"$@\"\n")
  file(CHMOD "${_bin}/${_tool}.tmp" PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE
       WORLD_READ WORLD_EXECUTE)
  file(RENAME "${_bin}/${_tool}.tmp" "${_bin}/${_tool}")
endforeach()

set(CMAKE_C_COMPILER "${_bin}/cc")
set(CMAKE_CXX_COMPILER "${_bin}/c++")
set(CMAKE_AR "${_bin}/ar" CACHE FILEPATH "zig ar" FORCE)
set(CMAKE_RANLIB "${_bin}/ranlib" CACHE FILEPATH "zig ranlib" FORCE)
