"""Helpers for tests of code that uses ortdlpack."""

from __future__ import annotations

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
