"""``ortdlpack.show_config()`` and ``python -m ortdlpack``: what a bug report needs, as this process sees it.

The versions and the installed distributions come from the packages' metadata (``importlib.metadata``): nothing
here imports a framework, so asking for a bug report never changes the process it reports on (tensorflow's LLVM
symbols, once loaded, crash Mesa's software Vulkan: docs/devices.md). The installed EP packages and what the env's
EP devices are to ortdlpack (their memory, the DLPack device each is exported as, whether ortdlpack orders work there
with a stream) come from the C++ core (``_ortdlpack._ep_packages``, ``_ortdlpack._ep_device_report``).
"""

from __future__ import annotations

import importlib.metadata as metadata
import os
import sys

import onnxruntime as _ort

from . import _ortdlpack

# The array type of each framework whose version and DLPack C exchange API (__dlpack_c_exchange_api__) are reported.
_FRAMEWORKS = (("numpy", "ndarray"), ("torch", "Tensor"), ("cupy", "ndarray"), ("jax", "Array"),
               ("tensorflow", "Tensor"))


def _onnxruntime_lines(distributions: dict[str, list[str]]) -> list[str]:
    dists = distributions.get("onnxruntime", [])
    provided = ", ".join(f"{d} {metadata.version(d)}" for d in dict.fromkeys(dists)) or "no distribution found"
    lines = [f"onnxruntime {_ort.__version__} (C API version in use {_ortdlpack._ort_api_version()}), "
             f"from {provided}, at {os.path.dirname(_ort.__file__)}"]
    if len(set(dists)) > 1:
        lines.append("  several distributions write the onnxruntime module: keep one (pip uninstall the others)")
    folder = _ortdlpack._ep_library_dir()
    libraries = sorted(f for f in (os.listdir(folder) if os.path.isdir(folder) else [])
                       if f.startswith(("libonnxruntime_providers_", "onnxruntime_providers_")))
    lines.append(f"EP libraries shipped with it ({folder}): {', '.join(libraries) or 'none'}")
    packages = _ortdlpack._ep_packages()
    lines.append("EP packages:" + ("" if packages else " none"))
    lines += [f"  {dist} {version}: {', '.join(names)} ({library})" for dist, version, library, names in packages]
    return lines


def _framework_lines(distributions: dict[str, list[str]]) -> list[str]:
    found = []
    for module, array in _FRAMEWORKS:
        dists = list(dict.fromkeys(distributions.get(module, [])))
        if not dists:
            found.append(f"{module}: not installed")
            continue
        dist = dists[0]
        try:
            version = metadata.version(dist)
        except metadata.PackageNotFoundError:  # metadata that disappeared since the scan
            found.append(f"{module}: not installed")
            continue
        loaded = sys.modules.get(module)  # asked only where the caller imported it already
        exchange = ("not checked, not imported" if loaded is None else
                    "yes" if hasattr(getattr(loaded, array, None), "__dlpack_c_exchange_api__") else "no")
        source = "" if dist.replace("_", "-").lower() == module else f" from {dist}"
        found.append(f"{module} {version}{source} (C exchange API: {exchange})")
    return ["Frameworks: " + "; ".join(found)]


def _borrow_lines() -> list[str]:
    """Whether ortdlpack reaches the ORT session behind an onnxruntime.InferenceSession of this onnxruntime (what
    its run, bind() and ortdlpack.run execute on; without it host feeds run through onnxruntime's own run)."""
    try:
        session = _ort.InferenceSession(_ortdlpack._borrow_probe_model(), providers=["CPUExecutionProvider"])
        status = _ortdlpack._borrow_status(session)
    except Exception as e:  # a session this onnxruntime would not make: say so, report the rest
        status = f"not checked ({type(e).__name__}: {e})"
    return [f"InferenceSession borrow: {status}"]


def _packages_distributions() -> dict[str, list[str]]:
    """Top-level module -> the distributions that provide it. CPython 3.10's ``packages_distributions`` reads only
    ``top_level.txt``, which wheels built by meson-python (numpy 2) and others lack; 3.11 infers those from the
    distribution's files, as this does on 3.10."""
    distributions = metadata.packages_distributions()
    if sys.version_info >= (3, 11):
        return distributions
    for dist in metadata.distributions():
        if dist.read_text("top_level.txt") is not None:
            continue
        tops = {f.parts[0] if len(f.parts) > 1 else f.stem for f in dist.files or () if f.suffix == ".py"}
        for top in tops - {".."}:
            distributions.setdefault(top, []).append(dist.metadata["Name"])
    return distributions


def show_config(file=None) -> None:
    """Prints what a bug report about ortdlpack needs: the versions of ortdlpack, DLPack, onnxruntime (and the C API
    version in use), which onnxruntime distribution is installed, the EP libraries shipped with it and the installed
    EP packages, whether ortdlpack reaches the ORT session behind an InferenceSession, the environment's EP devices (their memory, the DLPack device each maps to, whether ortdlpack has
    streams there) and the frameworks installed (version from their metadata, and the DLPack C exchange API of those
    already imported: it imports none). ``python -m ortdlpack`` prints it."""
    major, minor = _ortdlpack.DLPACK_VERSION
    lines = [f"ortdlpack {_ortdlpack.__version__} (DLPack {major}.{minor}), at {os.path.dirname(__file__)}",
             f"Python {sys.version.split()[0]} ({sys.executable})"]
    distributions = _packages_distributions()
    lines += (_onnxruntime_lines(distributions) + _borrow_lines() + _ortdlpack._ep_device_report() +
              _framework_lines(distributions))
    print("\n".join(lines), file=file if file is not None else sys.stdout)
