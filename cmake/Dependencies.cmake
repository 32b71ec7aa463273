# Locates the two third-party parts the C++ core compiles against: the ONNX Runtime C API (headers, and the
# library for the C++ tests/demo) and the official dlpack.h (>= 1.3). A user's own ORT wins:
#   -Donnxruntime_ROOT=<release tarball dir>  or  an onnxruntime CMake package (find_package(onnxruntime)).
# Otherwise pinned registry packages are downloaded once, by CMake itself (no pip, no npm: pip's isolated build
# environment has neither), checked by SHA-256, into a per-user cache outside the source tree (docs/DEPENDENCIES.md).
include_guard(GLOBAL)

# The cache: -DORTDLPACK_DEPS_DIR, else $ORTDLPACK_DEPS_DIR, else $XDG_CACHE_HOME/ortdlpack, else ~/.cache/ortdlpack.
if(DEFINED ENV{ORTDLPACK_DEPS_DIR} AND NOT "$ENV{ORTDLPACK_DEPS_DIR}" STREQUAL "")
  set(_deps_default "$ENV{ORTDLPACK_DEPS_DIR}")
elseif(DEFINED ENV{XDG_CACHE_HOME} AND NOT "$ENV{XDG_CACHE_HOME}" STREQUAL "")
  set(_deps_default "$ENV{XDG_CACHE_HOME}/ortdlpack")
elseif(DEFINED ENV{HOME} AND NOT "$ENV{HOME}" STREQUAL "")
  set(_deps_default "$ENV{HOME}/.cache/ortdlpack")
else()
  set(_deps_default "${CMAKE_BINARY_DIR}/_ortdlpack_deps")  # no home: the build dir, never the source tree
endif()
set(ORTDLPACK_DEPS_DIR "${_deps_default}" CACHE PATH "Where fetched dependencies are kept (a cache shared by builds)")

# Pinned registry packages. The Unity package on npm carries the official ORT 1.29.0 C/C++ headers and Linux x64
# build (the only registry package with an ORT >= 1.29 library); only those are kept, the 150 MB tarball is deleted.
# It serves the C++ tests, benchmarks and examples, which link ORT.
set(_ort_pkg "com.github.asus4.onnxruntime-0.4.9.tgz")
set(_ort_url "https://registry.npmjs.org/com.github.asus4.onnxruntime/-/${_ort_pkg}")
set(_ort_sha256 "e59788788818fdde1b2e522e766a21ba0f7d8391de55737abf81e32cc801785d")
set(_ort_headers "package/Plugins/iOS~/onnxruntime.xcframework/ios-arm64_x86_64-simulator/onnxruntime.framework/Headers")
# A build that needs only the C API headers (the Python extension and the plugin: they link no ORT) takes them from
# the Go module github.com/yalue/onnxruntime_go v1.36.0 (30 MB zip, the smallest registry package found that carries
# them): its onnxruntime_c_api.h, onnxruntime_ep_c_api.h and onnxruntime_error_code.h are byte for byte the official
# ORT 1.29.0 headers (ORT_API_VERSION 29) the npm package has, so either set builds the same code.
set(_ort_hdr_url "https://proxy.golang.org/github.com/yalue/onnxruntime_go/@v/v1.36.0.zip")
set(_ort_hdr_sha256 "809a70921ef6b398498636b0935e797f5f3e5646d3e2d6bee5a51b584745b667")
set(_ort_hdr_dir "github.com/yalue/onnxruntime_go@v1.36.0")
# apache-tvm-ffi 0.1.15.post2 ships the official dlpack.h v1.3; the header is the same in every wheel of a release,
# so one exact wheel (3 MB) serves every platform.
set(_dlpack_url "https://files.pythonhosted.org/packages/fd/52/37ef76046c70d77e7fe0f65f7e4a5e73a6142ae2339d43de7232b626b1c2/apache_tvm_ffi-0.1.15.post2-cp312-cp312-win_amd64.whl")
set(_dlpack_sha256 "e72a88480195fb686bb0fed989145a77a6289e1814b18908462c3f7ce2e9270a")

# The XLA FFI headers (xla/ffi/api/{c_api,api,ffi}.h: header-only C++ over XLA's stable C ABI) the Python extension's
# JAX handler is built with (python/src/xla_ffi.cc). They ship only inside the jaxlib wheels (60-85 MB). A wheel is a
# zip file: one HTTP range request fetches only its tail from the first header's entry on (the three entries, the
# entries after them, the central directory: 0.6 MB), which CMake's zip reader extracts; each header is checked by
# its own SHA-256 (the range is not the whole wheel, so the wheel's hash cannot be). A server that ignores the range
# sends the whole wheel, which extracts and checks the same. They are the same in every jaxlib 0.10.2 wheel.
set(_xla_ffi_url "https://files.pythonhosted.org/packages/b2/2c/7038fc73154307389631b5b2dbe5ac529e1918eecc19a27e6644ad114bbf/jaxlib-0.10.2-cp311-cp311-macosx_11_0_arm64.whl")
set(_xla_ffi_offset 60825722)  # the local entry of jaxlib/include/xla/ffi/api/api.h, the first of the three
set(_xla_ffi_sha256_api.h "7f76572a80ed2097e5924e6d02d84891c725300172280bd009c0a7c9ac7961eb")
set(_xla_ffi_sha256_c_api.h "85fc385c2d3a6b539a05b9cf4c3535aa24b4b41040f9e111c1f2c11b0e2fa539")
set(_xla_ffi_sha256_ffi.h "4e4a1d8f9825e88e15a2bcbb7c08eb6233f020b952cab5bbbb8510e3017515c5")

# Downloads url to file (checked by SHA-256) with progress, or stops the configure with what went wrong.
function(_ortdlpack_download url sha256 file what)
  message(STATUS "ortdlpack: downloading ${what} into ${ORTDLPACK_DEPS_DIR}")
  string(TIMESTAMP t0 "%s")
  file(DOWNLOAD "${url}" "${file}.part" EXPECTED_HASH SHA256=${sha256} SHOW_PROGRESS STATUS st)
  list(GET st 0 code)
  if(NOT code EQUAL 0)
    file(REMOVE "${file}.part")
    message(FATAL_ERROR "ortdlpack: download of ${url} failed: ${st}\n"
                        "Without network access, pass -Donnxruntime_ROOT=<ORT SDK> and -DDLPACK_INCLUDE_DIR=<dir>.")
  endif()
  file(RENAME "${file}.part" "${file}")
  string(TIMESTAMP t1 "%s")
  math(EXPR dt "${t1} - ${t0}")
  message(STATUS "ortdlpack: downloaded ${what} in ${dt} s")
endfunction()

# Runs the function `fill` unless `marker` exists, once for all configures sharing the cache (parallel builds, pip):
# under an exclusive lock on ${ORTDLPACK_DEPS_DIR}/name.lock, `marker` checked again once the lock is held, so one
# configure fetches and the others wait for it and find the result. `fill` creates `marker` last.
function(_ortdlpack_fetch_once name marker timeout fill)
  if(NOT EXISTS "${marker}")
    file(MAKE_DIRECTORY "${ORTDLPACK_DEPS_DIR}")
    file(LOCK "${ORTDLPACK_DEPS_DIR}/${name}.lock" GUARD FUNCTION TIMEOUT ${timeout})
    if(NOT EXISTS "${marker}")
      cmake_language(CALL ${fill})
    endif()
  endif()
endfunction()

set(_ort_root "${ORTDLPACK_DEPS_DIR}/onnxruntime-1.29.0")
function(_ortdlpack_fill_ort)
  set(tgz "${ORTDLPACK_DEPS_DIR}/${_ort_pkg}")
  _ortdlpack_download("${_ort_url}" "${_ort_sha256}" "${tgz}" "the ONNX Runtime 1.29.0 SDK (npm, 150 MB)")
  set(tmp "${ORTDLPACK_DEPS_DIR}/_ort_extract")
  file(REMOVE_RECURSE "${tmp}" "${_ort_root}")
  file(ARCHIVE_EXTRACT INPUT "${tgz}" DESTINATION "${tmp}"
       PATTERNS "${_ort_headers}/*.h" "package/Plugins/Linux/x64/libonnxruntime.so")
  file(MAKE_DIRECTORY "${_ort_root}/include" "${_ort_root}/lib")
  file(GLOB hdrs "${tmp}/${_ort_headers}/*.h")
  file(COPY ${hdrs} DESTINATION "${_ort_root}/include")
  # The library's SONAME is libonnxruntime.so.1: keep that name, plus the link name -lonnxruntime needs (the marker).
  file(COPY_FILE "${tmp}/package/Plugins/Linux/x64/libonnxruntime.so" "${_ort_root}/lib/libonnxruntime.so.1")
  file(CREATE_LINK "libonnxruntime.so.1" "${_ort_root}/lib/libonnxruntime.so" SYMBOLIC)
  file(REMOVE_RECURSE "${tmp}" "${tgz}")
endfunction()

# Linux aarch64 (a cross build: cmake/zig-aarch64-linux-gnu.2.28.cmake): the Unity package has no Linux arm64
# library; npm onnxruntime-node@1.29.0 carries the official ORT 1.29.0 Linux arm64 build
# (package/bin/napi-v6/linux/arm64/libonnxruntime.so.1, SONAME libonnxruntime.so.1, needs glibc 2.28), next to the
# headers of the Go module below (the same 1.29.0 headers).
set(_ort_arm64_url "https://registry.npmjs.org/onnxruntime-node/-/onnxruntime-node-1.29.0.tgz")
set(_ort_arm64_sha256 "cfdfb45ec4044b1fdca43e5d2e180fb6817e649ff8ad1e0dfc90e18e51b67037")
set(_ort_arm64_lib "package/bin/napi-v6/linux/arm64/libonnxruntime.so.1")
set(_ort_arm64_root "${ORTDLPACK_DEPS_DIR}/onnxruntime-1.29.0-linux-aarch64")
function(_ortdlpack_fill_ort_arm64)
  _ortdlpack_fetch_once(onnxruntime-headers "${_ort_headers_root}/include/onnxruntime_c_api.h" 600
                        _ortdlpack_fill_ort_headers)
  set(tgz "${ORTDLPACK_DEPS_DIR}/onnxruntime-node-1.29.0.tgz")
  _ortdlpack_download("${_ort_arm64_url}" "${_ort_arm64_sha256}" "${tgz}"
                      "the ONNX Runtime 1.29.0 Linux arm64 library (npm onnxruntime-node, 112 MB)")
  set(tmp "${ORTDLPACK_DEPS_DIR}/_ort_arm64_extract")
  file(REMOVE_RECURSE "${tmp}" "${_ort_arm64_root}")
  file(ARCHIVE_EXTRACT INPUT "${tgz}" DESTINATION "${tmp}" PATTERNS "${_ort_arm64_lib}")
  file(COPY "${_ort_headers_root}/include" DESTINATION "${_ort_arm64_root}")
  file(MAKE_DIRECTORY "${_ort_arm64_root}/lib")
  file(COPY_FILE "${tmp}/${_ort_arm64_lib}" "${_ort_arm64_root}/lib/libonnxruntime.so.1")
  file(CREATE_LINK "libonnxruntime.so.1" "${_ort_arm64_root}/lib/libonnxruntime.so" SYMBOLIC)  # the marker
  file(REMOVE_RECURSE "${tmp}" "${tgz}")
endfunction()

# The ORT 1.29.0 C API headers alone, from the small package above.
set(_ort_headers_root "${ORTDLPACK_DEPS_DIR}/onnxruntime-headers-1.29.0")
function(_ortdlpack_fill_ort_headers)
  set(zip "${ORTDLPACK_DEPS_DIR}/onnxruntime_go-v1.36.0.zip")
  _ortdlpack_download("${_ort_hdr_url}" "${_ort_hdr_sha256}" "${zip}"
                      "the ONNX Runtime 1.29.0 C API headers (Go module onnxruntime_go, 30 MB)")
  set(tmp "${ORTDLPACK_DEPS_DIR}/_ort_headers_extract")
  file(REMOVE_RECURSE "${tmp}" "${_ort_headers_root}")
  file(ARCHIVE_EXTRACT INPUT "${zip}" DESTINATION "${tmp}" PATTERNS "${_ort_hdr_dir}/onnxruntime_*.h")
  file(MAKE_DIRECTORY "${_ort_headers_root}/include")
  foreach(h onnxruntime_ep_c_api.h onnxruntime_error_code.h onnxruntime_c_api.h)  # the marker last
    file(COPY_FILE "${tmp}/${_ort_hdr_dir}/${h}" "${_ort_headers_root}/include/${h}")
  endforeach()
  file(REMOVE_RECURSE "${tmp}" "${zip}")
endfunction()

set(_dlpack_root "${ORTDLPACK_DEPS_DIR}/dlpack-1.3/include")
function(_ortdlpack_fill_dlpack)
  set(whl "${ORTDLPACK_DEPS_DIR}/apache_tvm_ffi-0.1.15.post2.whl")
  _ortdlpack_download("${_dlpack_url}" "${_dlpack_sha256}" "${whl}" "dlpack.h 1.3 (PyPI apache-tvm-ffi, 3 MB)")
  set(tmp "${ORTDLPACK_DEPS_DIR}/_dlpack_extract")
  file(REMOVE_RECURSE "${tmp}")
  file(ARCHIVE_EXTRACT INPUT "${whl}" DESTINATION "${tmp}" PATTERNS "tvm_ffi/include/dlpack/dlpack.h")
  file(MAKE_DIRECTORY "${_dlpack_root}/dlpack")
  file(COPY_FILE "${tmp}/tvm_ffi/include/dlpack/dlpack.h" "${_dlpack_root}/dlpack/dlpack.h")
  file(REMOVE_RECURSE "${tmp}" "${whl}")
endfunction()

# --- ONNX Runtime -------------------------------------------------------------------------------------------
# Defines onnxruntime::headers (include dirs only: what the core and the Python extension need) and, when a
# library is available, onnxruntime::onnxruntime (for the C++ tests, the demo and users who link ORT).
if(NOT TARGET onnxruntime::headers)
  if(NOT onnxruntime_ROOT AND NOT DEFINED ENV{onnxruntime_ROOT})
    find_package(onnxruntime CONFIG QUIET)
  endif()
  if(TARGET onnxruntime::onnxruntime)
    get_target_property(_ort_inc onnxruntime::onnxruntime INTERFACE_INCLUDE_DIRECTORIES)
  else()
    if(NOT onnxruntime_ROOT AND NOT DEFINED ENV{onnxruntime_ROOT})
      # The C++ tests, benchmarks and examples link ORT (examples are built unless this is the Python build).
      if(ORTDLPACK_BUILD_TESTS OR ORTDLPACK_BUILD_BENCH OR NOT ORTDLPACK_BUILD_PYTHON)
        if(CMAKE_SYSTEM_NAME STREQUAL "Linux" AND CMAKE_SYSTEM_PROCESSOR MATCHES "^(aarch64|arm64)$")
          _ortdlpack_fetch_once(onnxruntime-arm64 "${_ort_arm64_root}/lib/libonnxruntime.so" 1800
                                _ortdlpack_fill_ort_arm64)
          set(onnxruntime_ROOT "${_ort_arm64_root}")
        else()
          _ortdlpack_fetch_once(onnxruntime "${_ort_root}/lib/libonnxruntime.so" 1800 _ortdlpack_fill_ort)
          set(onnxruntime_ROOT "${_ort_root}")
        endif()
      else()
        _ortdlpack_fetch_once(onnxruntime-headers "${_ort_headers_root}/include/onnxruntime_c_api.h" 600
                              _ortdlpack_fill_ort_headers)
        set(onnxruntime_ROOT "${_ort_headers_root}")
      endif()
    endif()
    find_path(_ort_inc onnxruntime_c_api.h
              HINTS "${onnxruntime_ROOT}" ENV onnxruntime_ROOT
              PATH_SUFFIXES include include/onnxruntime include/onnxruntime/core/session NO_DEFAULT_PATH)
    find_library(_ort_lib NAMES onnxruntime HINTS "${onnxruntime_ROOT}" ENV onnxruntime_ROOT
                 PATH_SUFFIXES lib lib64 NO_DEFAULT_PATH)
    if(NOT _ort_inc)
      message(FATAL_ERROR "ortdlpack: onnxruntime_c_api.h not found under onnxruntime_ROOT='${onnxruntime_ROOT}'")
    endif()
    if(_ort_lib)
      add_library(onnxruntime::onnxruntime SHARED IMPORTED)
      set_target_properties(onnxruntime::onnxruntime PROPERTIES IMPORTED_LOCATION "${_ort_lib}"
                            INTERFACE_INCLUDE_DIRECTORIES "${_ort_inc}")
    endif()
  endif()
  # The C API version of these headers (ORT 1.N has N): what can be built (the plugin needs 29).
  foreach(_dir IN LISTS _ort_inc)
    if(EXISTS "${_dir}/onnxruntime_c_api.h")
      file(STRINGS "${_dir}/onnxruntime_c_api.h" _ort_api REGEX "^#define ORT_API_VERSION [0-9]+")
      string(REGEX MATCH "[0-9]+$" ORTDLPACK_ORT_API_VERSION "${_ort_api}")
    endif()
  endforeach()
  add_library(onnxruntime::headers INTERFACE IMPORTED)
  set_target_properties(onnxruntime::headers PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${_ort_inc}")
endif()

# --- dlpack.h -----------------------------------------------------------------------------------------------
if(NOT TARGET dlpack::dlpack)
  find_path(DLPACK_INCLUDE_DIR dlpack/dlpack.h)
  if(DLPACK_INCLUDE_DIR)
    file(STRINGS "${DLPACK_INCLUDE_DIR}/dlpack/dlpack.h" _minor REGEX "#define DLPACK_MINOR_VERSION")
    string(REGEX MATCH "[0-9]+" _minor "${_minor}")
    file(STRINGS "${DLPACK_INCLUDE_DIR}/dlpack/dlpack.h" _major REGEX "#define DLPACK_MAJOR_VERSION")
    string(REGEX MATCH "[0-9]+" _major "${_major}")
    if(_major LESS 1 OR (_major EQUAL 1 AND _minor LESS 3))
      message(STATUS "ortdlpack: ${DLPACK_INCLUDE_DIR}/dlpack/dlpack.h is ${_major}.${_minor} (< 1.3): fetching 1.3")
      unset(DLPACK_INCLUDE_DIR CACHE)
    endif()
  endif()
  if(NOT DLPACK_INCLUDE_DIR)
    _ortdlpack_fetch_once(dlpack "${_dlpack_root}/dlpack/dlpack.h" 600 _ortdlpack_fill_dlpack)
    set(DLPACK_INCLUDE_DIR "${_dlpack_root}" CACHE PATH "Directory holding dlpack/dlpack.h (>= 1.3)" FORCE)
  endif()
  add_library(dlpack::dlpack INTERFACE IMPORTED)
  set_target_properties(dlpack::dlpack PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${DLPACK_INCLUDE_DIR}")
endif()

# --- XLA FFI headers (the Python extension's JAX handler) -------------------------------------------------------
# Defines xla_ffi::headers. -DXLA_FFI_INCLUDE_DIR=<dir holding xla/ffi/api/ffi.h> (e.g. jax.ffi.include_dir())
# uses those instead of fetching.
set(_xla_ffi_root "${ORTDLPACK_DEPS_DIR}/xla-ffi-jaxlib-0.10.2/include")
function(_ortdlpack_fill_xla_ffi)
  set(part "${ORTDLPACK_DEPS_DIR}/jaxlib-0.10.2-tail.zip")
  message(STATUS "ortdlpack: downloading the XLA FFI headers (the tail of the jaxlib 0.10.2 wheel, 0.6 MB) "
                 "into ${ORTDLPACK_DEPS_DIR}")
  file(DOWNLOAD "${_xla_ffi_url}" "${part}" RANGE_START ${_xla_ffi_offset} STATUS st)
  list(GET st 0 code)
  if(NOT code EQUAL 0)
    file(REMOVE "${part}")
    message(FATAL_ERROR "ortdlpack: download of ${_xla_ffi_url} failed: ${st}\nWithout network access, pass "
                        "-DXLA_FFI_INCLUDE_DIR=<dir> (python -c 'import jax.ffi; print(jax.ffi.include_dir())').")
  endif()
  set(tmp "${ORTDLPACK_DEPS_DIR}/_xla_ffi_extract")
  file(REMOVE_RECURSE "${tmp}")
  file(ARCHIVE_EXTRACT INPUT "${part}" DESTINATION "${tmp}" PATTERNS "jaxlib/include/xla/ffi/api/*.h")
  foreach(h api.h c_api.h ffi.h)
    file(SHA256 "${tmp}/jaxlib/include/xla/ffi/api/${h}" got)
    if(NOT got STREQUAL "${_xla_ffi_sha256_${h}}")
      file(REMOVE_RECURSE "${tmp}" "${part}")
      message(FATAL_ERROR "ortdlpack: xla/ffi/api/${h} from ${_xla_ffi_url} has SHA-256 ${got}, "
                          "expected ${_xla_ffi_sha256_${h}}")
    endif()
  endforeach()
  file(MAKE_DIRECTORY "${_xla_ffi_root}/xla/ffi")
  file(RENAME "${tmp}/jaxlib/include/xla/ffi/api" "${_xla_ffi_root}/xla/ffi/api")  # the marker, whole at once
  file(REMOVE_RECURSE "${tmp}" "${part}")
endfunction()

if(ORTDLPACK_BUILD_PYTHON AND NOT TARGET xla_ffi::headers)
  if(NOT XLA_FFI_INCLUDE_DIR)
    _ortdlpack_fetch_once(xla-ffi "${_xla_ffi_root}/xla/ffi/api/ffi.h" 600 _ortdlpack_fill_xla_ffi)
    set(XLA_FFI_INCLUDE_DIR "${_xla_ffi_root}" CACHE PATH "Directory holding xla/ffi/api/ffi.h" FORCE)
  elseif(NOT EXISTS "${XLA_FFI_INCLUDE_DIR}/xla/ffi/api/ffi.h")
    message(FATAL_ERROR "ortdlpack: XLA_FFI_INCLUDE_DIR='${XLA_FFI_INCLUDE_DIR}' holds no xla/ffi/api/ffi.h")
  endif()
  add_library(xla_ffi::headers INTERFACE IMPORTED)
  set_target_properties(xla_ffi::headers PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${XLA_FFI_INCLUDE_DIR}")
endif()
