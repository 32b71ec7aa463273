"""ortdlpack: the full DLPack protocol for ONNX Runtime tensors, over the stock ``onnxruntime`` wheel.

One ORT per process: the extension links no ONNX Runtime of its own. At import it is handed the C API of the ORT
inside the installed ``onnxruntime`` wheel (through ``SessionOptions.register_custom_ops_library``), so tensors,
sessions, the environment and plugin execution providers are shared with ``onnxruntime``.
"""

from __future__ import annotations

import os as _os

# Any ONNX Runtime distribution will do: onnxruntime, onnxruntime-gpu, -openvino, -directml, -qnn, ... all install
# the same `onnxruntime` module, so the module is what is checked, never a distribution's name (depending on the
# CPU `onnxruntime` would install it over an onnxruntime-gpu). The extras ortdlpack[cpu] / ortdlpack[gpu] pick one.
try:
    import onnxruntime as _ort
except ImportError as _e:
    raise ImportError(
        "ortdlpack needs ONNX Runtime >= 1.23, and no onnxruntime module could be imported "
        f"({_e}). Install one distribution of it: pip install 'ortdlpack[cpu]' (onnxruntime) or "
        "'ortdlpack[gpu]' (onnxruntime-gpu), or any other onnxruntime build (onnxruntime-openvino, "
        "onnxruntime-directml, onnxruntime-qnn, ...)"
    ) from _e

from . import _ortdlpack  # noqa: E402


def _hand_over() -> None:
    # The wheel's ORT dlopen()s the already loaded extension (same handle) and calls its RegisterCustomOps with
    # the wheel's OrtApiBase, which initialises the C++ core. Registering no custom op, it leaves nothing behind.
    if _ortdlpack._initialized():
        return
    try:
        _ort.SessionOptions().register_custom_ops_library(_ortdlpack.__file__)
    except Exception as e:  # ORT wraps the status RegisterCustomOps returned
        detail = _ortdlpack._init_error() or str(e)
        raise ImportError(f"ortdlpack could not use onnxruntime {_ort.__version__}: {detail}") from e
    if not _ortdlpack._initialized():
        raise ImportError(
            f"ortdlpack could not use onnxruntime {_ort.__version__}: {_ortdlpack._init_error() or 'no API hand-over'}"
        )


_hand_over()

from ._ortdlpack import (  # noqa: E402
    DLPACK_VERSION,
    Binding,
    CopyRequiredError,
    Device,
    ModelMetadata,
    NodeArg,
    Session,
    Tensor,
    __version__,
    as_ortvalue,
    from_dlpack,
    register_device,
    run,
    unregister_device,
)


def register_execution_provider_library(name: str, path: str) -> int:
    """Registers a plugin EP library with onnxruntime (``onnxruntime.register_execution_provider_library``), then
    maps the DLPack device type its EP devices advertise (metadata key ``dlpack.device_type``), so tensors in their
    memory can be exported. Returns how many device mappings were added."""
    if not isinstance(name, str):
        raise TypeError(f"register_execution_provider_library: name must be a str, not {type(name).__name__}")
    if not isinstance(path, (str, _os.PathLike)):
        raise TypeError(f"register_execution_provider_library: path must be a str or os.PathLike, not {type(path).__name__}")
    _ort.register_execution_provider_library(name, _os.fspath(path))
    return _ortdlpack._register_ep_devices()


from . import errors  # noqa: E402
from ._config import show_config  # noqa: E402
from ._inference_session import InferenceSession  # noqa: E402
from ._jax_op import jax_function  # noqa: E402
from ._torch_module import torch_module  # noqa: E402

__all__ = [
    "DLPACK_VERSION",
    "Binding",
    "CopyRequiredError",
    "Device",
    "InferenceSession",
    "ModelMetadata",
    "NodeArg",
    "Session",
    "errors",
    "Tensor",
    "__version__",
    "as_ortvalue",
    "from_dlpack",
    "jax_function",
    "register_device",
    "register_execution_provider_library",
    "run",
    "show_config",
    "torch_module",
    "unregister_device",
]
