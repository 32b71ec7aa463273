"""Installed EP packages (``onnxruntime-ep-<name>``, and those the EP table names: ``onnxruntime-qnn``,
``onnxruntime-ggml``, ...), read the way their installer wrote them.

The core (``src/ep_library.cc``) asks for them when an entry point needs an EP the environment lacks (an
``ortdlpack.Session(model, ep="qnn")``, a provider name, a tensor on that EP's device); which EP, which package and
what to check are the core's decisions. This module only reads installed distributions: a package is found through its
distribution's own file list (``importlib.metadata``), and its module is loaded from that file, never by importing
whatever module of that name ``sys.path`` offers first (interactive Python puts the working directory there).
"""

from __future__ import annotations

import importlib.metadata as metadata
import importlib.util
import os
import re
import sys

_PREFIX = "onnxruntime-ep-"


def _normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _module_file(dist: metadata.Distribution) -> tuple[str, str] | None:
    """(module name, path of its __init__.py) of the distribution's top-level package, from its own file list."""
    for entry in dist.files or ():
        parts = entry.parts
        if len(parts) == 2 and parts[1] == "__init__.py" and not parts[0].endswith((".dist-info", ".data")):
            return parts[0], os.path.realpath(str(dist.locate_file(entry)))
    return None


def _load(name: str, init: str):
    """The module `name` executed from `init`: the one sys.modules holds when it came from that very file."""
    loaded = sys.modules.get(name)
    if loaded is not None:
        if os.path.realpath(getattr(loaded, "__file__", "") or "") != init:
            return None  # another file under the package's name: not the installed package
        return loaded
    spec = importlib.util.spec_from_file_location(name, init, submodule_search_locations=[os.path.dirname(init)])
    if spec is None or spec.loader is None:
        return None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module


def _package(dist: metadata.Distribution) -> tuple[str, str, str, str, list[str]] | None:
    found = _module_file(dist)
    if found is None:
        return None
    name, init = found
    module = _load(name, init)
    if module is None:
        return None
    # The convention (get_library_path, get_ep_names / get_ep_name; onnxruntime-qnn too) and the older one
    # onnxruntime-ep-mlx and onnxruntime-ggml keep (library_path, ep_name / EP_NAME).
    library_path = getattr(module, "get_library_path", None) or getattr(module, "library_path", None)
    if library_path is None:
        return None
    if hasattr(module, "get_ep_names"):
        ep_names = [str(n) for n in module.get_ep_names()]
    elif hasattr(module, "get_ep_name") or hasattr(module, "ep_name"):
        ep_names = [str((getattr(module, "get_ep_name", None) or module.ep_name)())]
    elif hasattr(module, "EP_NAME"):
        ep_names = [str(module.EP_NAME)]
    else:
        return None
    library = os.path.realpath(str(library_path()))
    return dist.metadata["Name"], dist.version, os.path.dirname(init), library, ep_names


def find(distribution: str) -> list[tuple[str, str, str, str, list[str]]]:
    """(distribution, version, folder, library, EP names) of the installed EP package `distribution`, or of every
    installed ``onnxruntime-ep-*`` package when `distribution` is empty. An unreadable package is left out."""
    if distribution:
        try:
            dists = [metadata.distribution(distribution)]
        except metadata.PackageNotFoundError:
            return []
    else:
        dists = [d for d in metadata.distributions() if _normalized(d.metadata["Name"] or "").startswith(_PREFIX)]
    packages = []
    for dist in dists:
        try:
            package = _package(dist)
        except Exception:  # a broken package: the core says it found none
            continue
        if package is not None:
            packages.append(package)
    return packages
