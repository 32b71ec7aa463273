"""Helpers for tests of code that uses ortdlpack."""

from __future__ import annotations

import ctypes
import os


def virtual_device_library() -> str:
    """Path of ``libortdlpack_virtual_device.so``, the plugin EP library installed with the package: a fake
    accelerator with host-inaccessible memory, to test device paths on machines without a GPU. Register it with
    :func:`ortdlpack.register_execution_provider_library`. FileNotFoundError if this build did not install it."""
    here = os.path.dirname(os.path.abspath(__file__))
    for name in ("libortdlpack_virtual_device.so", "libortdlpack_virtual_device.dylib", "ortdlpack_virtual_device.dll"):
        path = os.path.join(here, name)
        if os.path.exists(path):
            return path
    raise FileNotFoundError(f"libortdlpack_virtual_device.so is not installed in {here} (built with ORTDLPACK_BUILD_PLUGINS=OFF?)")


# OrtdlpackVdCounters (plugins/virtual_device/include/ortdlpack/virtual_device.h), field for field, in order.
COUNTER_FIELDS = ("allocs", "frees", "live_bytes", "copies", "bytes_h2d", "bytes_d2h", "bytes_d2d", "live_allocs",
                  "host_allocs", "host_frees", "host_live_bytes", "bytes_h2h", "copy_calls", "failed_allocs",
                  "failed_copies", "async_copies", "stream_waits", "host_syncs")
STATE_FIELDS = ("live_bytes", "live_allocs", "host_live_bytes")  # not reset by ortdlpack_vd_reset_counters
STREAM_FIELDS = ("async_copies", "stream_waits", "host_syncs")  # how device work was ordered


class VirtualDeviceCounters(ctypes.Structure):
    _fields_ = [(n, ctypes.c_uint64) for n in COUNTER_FIELDS]


def virtual_device_abi(path: str | None = None) -> ctypes.CDLL:
    """The virtual device library's test ABI (counters, failure injection, streams) through ctypes: the same loaded
    copy ORT registered when `path` is the registered path. Checks that the counter struct mirrored here is the one
    the library writes (a library with more counters than this mirror would write past it)."""
    lib = ctypes.CDLL(path or virtual_device_library())
    lib.ortdlpack_vd_counters_size.restype = ctypes.c_uint64
    if lib.ortdlpack_vd_counters_size() != ctypes.sizeof(VirtualDeviceCounters):
        raise RuntimeError(f"virtual device counters: the library writes {lib.ortdlpack_vd_counters_size()} bytes, "
                           f"ortdlpack.testing mirrors {ctypes.sizeof(VirtualDeviceCounters)}")
    lib.ortdlpack_vd_get_counters.argtypes = [ctypes.POINTER(VirtualDeviceCounters)]
    lib.ortdlpack_vd_is_device_pointer.argtypes = [ctypes.c_void_p, ctypes.c_uint64]
    lib.ortdlpack_vd_is_device_pointer.restype = ctypes.c_int
    lib.ortdlpack_vd_guard_enabled.restype = ctypes.c_int
    lib.ortdlpack_vd_last_ep_device.restype = ctypes.c_int
    return lib
