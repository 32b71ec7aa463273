"""Run a plain ``onnxruntime.InferenceSession`` on DLPack tensors, without copies.

    import ortdlpack, torch
    feat, = ortdlpack.run(feature_session, {"x": torch_images})          # any DLPack producer as a feed
    logits = torch.from_dlpack(ortdlpack.run(head_session, {"feat": feat})[0])   # zero-copy both ways

Feeds may be any DLPack producer (numpy, torch, jax, tensorflow, cupy, ...), an ``onnxruntime.OrtValue`` or an
``ortdlpack.Tensor``; they are imported without a copy whenever ORT can read them as they are (a copy is made only
for layouts ORT cannot hold, e.g. a transposed torch view). ``outputs=`` maps output names to preallocated DLPack
destinations that ORT writes into directly (same memory, never a copy); ``device=`` says where the other outputs
are allocated (default: where the session's execution provider produces them).

Names, element types, ranks and fixed dimensions are checked against the model before ORT runs; errors name the
input or output: ``ValueError`` for names, element types and shapes (as ``ortdlpack.Session`` and the C++ core),
``TypeError`` for objects that are not tensors.
The model's metadata is read once per session (cached in a WeakKeyDictionary) and IOBinding objects are reused.

Only the public API of the ``ortdlpack`` package and of ``onnxruntime`` is used here.
"""

from __future__ import annotations

import sys
import weakref
from collections.abc import Mapping, Sequence

import numpy as _np
import onnxruntime as _ort

__all__ = ["run"]

# ONNX type strings (NodeArg.type, OrtValue.data_type()) -> numpy-style names, for messages only.
_TYPE_NAMES = {
    "tensor(float)": "float32",
    "tensor(double)": "float64",
    "tensor(float16)": "float16",
    "tensor(bfloat16)": "bfloat16",
    "tensor(int8)": "int8",
    "tensor(int16)": "int16",
    "tensor(int32)": "int32",
    "tensor(int64)": "int64",
    "tensor(uint8)": "uint8",
    "tensor(uint16)": "uint16",
    "tensor(uint32)": "uint32",
    "tensor(uint64)": "uint64",
    "tensor(bool)": "bool",
    "tensor(complex64)": "complex64",
    "tensor(complex128)": "complex128",
    "tensor(float8e4m3fn)": "float8_e4m3fn",
    "tensor(float8e4m3fnuz)": "float8_e4m3fnuz",
    "tensor(float8e5m2)": "float8_e5m2",
    "tensor(float8e5m2fnuz)": "float8_e5m2fnuz",
    "tensor(int4)": "int4",
    "tensor(uint4)": "uint4",
    "tensor(float4e2m1)": "float4_e2m1fn",
}
# ortdlpack.Tensor.dtype -> the ONNX type string the model declares.
_ONNX_TYPES = {name: onnx for onnx, name in _TYPE_NAMES.items()}

# Element types onnxruntime's session.run takes as numpy arrays and reads in place (no copy on CPU).
_NUMPY_FEEDABLE = frozenset(
    ["float32", "float64", "float16", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "bool"]
)
_NP_DTYPES = {name: _np.dtype(name) for name in _NUMPY_FEEDABLE}
_KDLCPU = 1
_HOST_DEVICE_TYPES = frozenset([1, 3, 11])  # kDLCPU, kDLCUDAHost, kDLROCMHost

# DLPack device type -> the device names onnxruntime's IOBinding takes.
_ORT_DEVICE_NAMES = {1: "cpu", 2: "cuda", 3: "cpu", 10: "cuda", 11: "cpu"}


def _pkg():
    # The package imports this module; its public names are looked up when first needed (no import cycle).
    return sys.modules[__package__]


def _type_name(onnx_type: str) -> str:
    return _TYPE_NAMES.get(onnx_type, onnx_type)


class _Io:
    __slots__ = ("name", "type", "dims", "is_tensor", "rank", "fixed")

    def __init__(self, arg):
        self.name = arg.name
        self.type = arg.type
        self.is_tensor = arg.type.startswith("tensor(")
        shape = arg.shape
        # A fixed dimension is an int; symbolic / unknown ones are kept as their name (or None) for messages.
        self.dims = tuple(shape) if isinstance(shape, (list, tuple)) else None
        # What check() compares on every run: the rank (None: any shape) and the fixed dimensions as (index, size).
        self.rank = None if self.dims is None else len(self.dims)
        self.fixed = () if self.dims is None else tuple(
            (i, d) for i, d in enumerate(self.dims) if type(d) is int and d >= 0
        )

    def describe(self) -> str:
        if self.dims is None:
            return f"{_type_name(self.type)}[any shape]"
        return _type_name(self.type) + "[" + ",".join("?" if d is None else str(d) for d in self.dims) + "]"

    def check_value(self, value, role: str) -> None:
        """Checks an onnxruntime.OrtValue against the declaration."""
        if not value.is_tensor():
            raise TypeError(f"{role} {self.name!r}: only tensors can be bound, got a non-tensor OrtValue")
        self.check(value.data_type(), value.shape(), role)

    def check(self, vtype: str, shape, role: str) -> None:
        """Checks an element type (ONNX type string) and shape against the declaration; raises ValueError naming the
        input or output."""
        if vtype != self.type:
            self._fail(ValueError, "element type mismatch", vtype, shape, role)
        if self.rank is None:
            return
        if len(shape) != self.rank:
            self._fail(ValueError, "rank mismatch", vtype, shape, role)
        for i, d in self.fixed:
            if shape[i] != d:
                self._fail(ValueError, f"dimension {i} mismatch", vtype, shape, role)

    def _fail(self, kind, what: str, vtype: str, shape, role: str):
        got = f"{_type_name(vtype)}[{','.join(map(str, shape))}]"
        raise kind(f"{role} {self.name!r}: {what}: the model expects {self.describe()}, got {got}")


class _SessionInfo:
    """What run() needs from a session, read once: I/O declarations, output memory, idle IOBindings."""

    def __init__(self, session):
        self.inputs = {a.name: _Io(a) for a in session.get_inputs()}
        self.outputs = {a.name: _Io(a) for a in session.get_outputs()}
        self.output_names = [a.name for a in session.get_outputs()]
        self.input_list = ", ".join(repr(n) for n in self.inputs) or "(none)"
        self.output_list = ", ".join(repr(n) for n in self.outputs) or "(none)"
        # Where the session's EP produces each output; outputs default there (IOBinding's device names).
        self.output_devices = {}
        try:
            infos = session.get_output_memory_infos()
        except Exception:  # older onnxruntime or a session that cannot tell: host memory
            infos = None
        for i, name in enumerate(self.output_names):
            self.output_devices[name] = _device_of_memory_info(infos[i]) if infos else ("cpu", 0)
        self.host_outputs = all(d == ("cpu", 0) for d in self.output_devices.values())
        # Inputs the session reads from host memory: a feed in device memory is staged to the host for those (ORT
        # would hand the device pointer to a CPU kernel).
        try:
            in_infos = session.get_input_memory_infos()
        except Exception:
            in_infos = None
        self.host_inputs = {
            a: (_device_of_memory_info(in_infos[i]) if in_infos else ("cpu", 0)) == ("cpu", 0)
            for i, a in enumerate(self.inputs)
        }
        self.idle = []  # IOBindings, cleared; list.pop/append are atomic under the GIL


def _device_of_memory_info(info):
    # OrtMemoryInfo names its allocator ("Cpu", "Cuda", "CudaPinned", ...): pinned and other host memory is "cpu".
    name = str(getattr(info, "name", "") or "").lower()
    if name.startswith("cuda") and "pinned" not in name:
        return ("cuda", int(getattr(info, "device_id", 0) or 0))
    return ("cpu", 0)


_INFOS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _info(session) -> _SessionInfo:
    try:
        return _INFOS[session]
    except KeyError:
        pass
    except TypeError:  # not weak-referenceable: no cache
        return _SessionInfo(session)
    info = _SessionInfo(session)
    _INFOS[session] = info
    return info


def _reraise(exc: BaseException, context: str):
    """Raises `exc` again with `context` in front of its message, keeping its type when possible."""
    message = f"{context}: {exc}"
    try:
        new = type(exc)(message)
    except Exception:
        new = RuntimeError(message)
    raise new from exc


def _ort_device(device):
    if device is None:
        return None
    if isinstance(device, str):
        kind, _, index = device.partition(":")
        return (kind, int(index) if index else 0)
    if isinstance(device, tuple) and len(device) == 2:
        kind = _ORT_DEVICE_NAMES.get(int(device[0]))
        if kind is None:
            raise ValueError(f"device {device!r}: no onnxruntime device for DLPack device type {int(device[0])}")
        return (kind, int(device[1]))
    raise TypeError(f"device must be None, a string like 'cpu' or 'cuda:0', or a DLPack (type, id) tuple, got {device!r}")


def run(session, feeds: Mapping, output_names: Sequence[str] | None = None, *, outputs: Mapping | None = None,
        device=None, run_options=None) -> list:
    """Runs `session` on `feeds` and returns the outputs as ``ortdlpack.Tensor`` s, in `output_names` order.

    :param session: an ``onnxruntime.InferenceSession``.
    :param feeds: input name -> DLPack producer, ``onnxruntime.OrtValue`` or ``ortdlpack.Tensor``; every model
        input exactly once. Imported without a copy unless ORT cannot hold the layout.
    :param output_names: outputs to return (default: all, in model order).
    :param outputs: output name -> preallocated DLPack destination (e.g. a torch tensor); ORT writes the result
        into it (it must be writable, compact, and match the model's type and shape). The returned Tensor for that
        output shares the destination's memory.
    :param device: where outputs without a destination are allocated: ``'cpu'``, ``'cuda:0'`` or a DLPack
        ``(device_type, device_id)`` tuple. Default: where the session's execution provider produces them.
    :param run_options: an ``onnxruntime.RunOptions``, passed through.
    :raises ValueError: unknown, duplicate or missing names; element type, rank or fixed-dimension mismatch.
    :raises TypeError: a feed that is not a tensor.
    """
    info = _info(session)
    if not isinstance(feeds, Mapping):
        raise TypeError(f"feeds must be a mapping of input names to tensors, got {type(feeds).__name__}")

    # --- inputs: every model input once, as an ortdlpack.Tensor (zero-copy import) or an OrtValue given as is.
    model_inputs = info.inputs
    pkg = _pkg()
    Tensor = pkg.Tensor
    tensors = {}
    numpy_feedable = True  # every feed a host ortdlpack.Tensor of a type numpy has (see the fast path below)
    for name, x in feeds.items():
        io = model_inputs.get(name)
        if io is None:
            raise ValueError(f"unknown input {name!r} (the model's inputs are {info.input_list})")
        if type(x) is not Tensor:
            if isinstance(x, _ort.OrtValue):
                io.check_value(x, "input")
                tensors[name] = x
                numpy_feedable = False
                continue
            if not hasattr(x, "__dlpack__") and not isinstance(x, Tensor):
                raise TypeError(f"input {name!r}: expected a DLPack producer, onnxruntime.OrtValue or "
                                f"ortdlpack.Tensor, got {type(x).__name__}")
            try:
                x = pkg.from_dlpack(x)
            except Exception as e:
                _reraise(e, f"input {name!r}")
        dtype = x.dtype
        io.check(_ONNX_TYPES.get(dtype, dtype), x.shape, "input")
        device_type = x.__dlpack_device__()[0]
        if device_type not in _HOST_DEVICE_TYPES and info.host_inputs[name]:
            x = x.to("cpu")  # the one copy: the session cannot read this device's memory
            device_type = _KDLCPU
        numpy_feedable = numpy_feedable and device_type == _KDLCPU and dtype in _NUMPY_FEEDABLE
        tensors[name] = x
    if len(tensors) != len(model_inputs):
        missing = [f"{n!r} ({io.describe()})" for n, io in model_inputs.items() if n not in tensors]
        raise ValueError("missing input " + ", ".join(missing))

    # --- outputs
    if output_names is None:
        names = info.output_names
    else:
        if isinstance(output_names, str):
            output_names = [output_names]
        names = list(output_names)
        seen = set()
        for name in names:
            if name not in info.outputs:
                raise ValueError(f"unknown output {name!r} (the model's outputs are {info.output_list})")
            if name in seen:
                raise ValueError(f"output {name!r} is requested twice")
            seen.add(name)
    destinations = {}  # output name -> ortdlpack.Tensor or onnxruntime.OrtValue that ORT writes into
    if outputs:
        for name, dest in outputs.items():
            io = info.outputs.get(name)
            if io is None:
                raise ValueError(f"destination for unknown output {name!r} (the model's outputs are {info.output_list})")
            if name not in names:
                raise ValueError(f"destination for output {name!r}, which is not requested")
            if isinstance(dest, _ort.OrtValue):
                io.check_value(dest, "output destination")
            else:
                if getattr(dest, "flags", None) is not None and getattr(dest.flags, "writeable", True) is False:
                    raise ValueError(f"output destination {name!r} is read-only: ORT would write into it")
                if type(dest) is not Tensor:
                    if not hasattr(dest, "__dlpack__"):
                        raise TypeError(f"output destination {name!r}: expected a DLPack producer, "
                                        f"onnxruntime.OrtValue or ortdlpack.Tensor, got {type(dest).__name__}")
                    try:
                        dest = pkg.from_dlpack(dest, copy=False)  # never a copy: ORT must write into its memory
                    except Exception as e:
                        _reraise(e, f"output destination {name!r}")
                if dest.read_only:
                    raise ValueError(f"output destination {name!r} is read-only: ORT would write into it")
                io.check(_ONNX_TYPES.get(dest.dtype, dest.dtype), dest.shape, "output destination")
            destinations[name] = dest
    out_device = _ort_device(device)

    # --- host session, host tensors numpy can describe: session.run itself, the cheapest call onnxruntime's Python
    # has. It reads numpy inputs in place and hands its output buffers to numpy, so no byte is copied either way.
    if numpy_feedable and not destinations and info.host_outputs and out_device in (None, ("cpu", 0)):
        arrays = {name: _np.from_dlpack(t) for name, t in tensors.items()}
        from_dlpack = pkg.from_dlpack
        return [from_dlpack(a) for a in session.run(names, arrays, run_options)]

    # --- run through IOBinding (measured cheaper than run_with_ort_values, whose wrapper costs ~60 us a call in
    # onnxruntime 1.32; see docs/session.md). Host tensors numpy can describe are bound by address (the cheapest
    # binding onnxruntime's Python has); others as OrtValues over their memory. Bindings are reused: one per
    # concurrent caller, kept cleared.
    binding = info.idle.pop() if info.idle else session.io_binding()
    try:
        for name, t in tensors.items():
            if _bind_by_address(t):
                binding.bind_input(name, "cpu", 0, _NP_DTYPES[t.dtype], t.shape, t.data_ptr)
            else:
                binding.bind_ortvalue_input(name, t if isinstance(t, _ort.OrtValue) else t.ortvalue)
        for name in names:
            dest = destinations.get(name)
            if dest is None:
                kind, index = out_device or info.output_devices[name]
                binding.bind_output(name, kind, index)
            elif _bind_by_address(dest):
                binding.bind_output(name, "cpu", 0, _NP_DTYPES[dest.dtype], dest.shape, dest.data_ptr)
            else:
                binding.bind_ortvalue_output(name, dest if isinstance(dest, _ort.OrtValue) else dest.ortvalue)
        pkg._ortdlpack._order_before_run([*tensors.values(), *destinations.values()])  # docs/streams.md
        session.run_with_iobinding(binding, run_options)
        produced = binding.get_outputs() if len(destinations) != len(names) else None
        # Converted before the binding is cleared: in onnxruntime <= 1.29 the values get_outputs() returns do not
        # own their memory, the binding does (clearing it first left the Tensors over freed memory).
        from_dlpack = pkg.from_dlpack
        result = []
        for i, name in enumerate(names):
            dest = destinations.get(name)
            result.append(from_dlpack(produced[i] if dest is None else dest))
    finally:
        binding.clear_binding_inputs()
        binding.clear_binding_outputs()  # drops ORT's and the wrapper's references to the caller's memory
        if len(info.idle) < 4:
            info.idle.append(binding)
    return result


def _bind_by_address(t) -> bool:
    return type(t) is _pkg().Tensor and t.dtype in _NUMPY_FEEDABLE and t.__dlpack_device__()[0] == _KDLCPU
