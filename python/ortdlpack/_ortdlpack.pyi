import numpy
import onnxruntime


DLPACK_VERSION: tuple = (1, 3)

class CopyRequiredError(ValueError, BufferError):
    """
    The exchange needs a copy and copy=False forbids it. Both ValueError (Array API, numpy's __array__) and BufferError (DLPack).
    """

class Device:
    """
    A device: 'cpu', 'cuda:0', a (dl_device_type, id) tuple, or an onnxruntime.OrtEpDevice.
    """

    def __init__(self, spec: Device | str | tuple[int, int] | onnxruntime.OrtEpDevice) -> None: ...

    @property
    def type(self) -> int:
        """The DLPack device type (DLDeviceType value, e.g. 1 for kDLCPU)."""

    @property
    def id(self) -> int:
        """The device index."""

    @property
    def kind(self) -> str | None:
        """
        The device type's name ('cpu', 'cuda', ...), None for a type DLPack does not name.
        """

    @property
    def onnxruntime_name(self) -> str | None:
        """
        The device name onnxruntime's Python API uses for this memory ('cpu', 'cuda'), None when it has none.
        """

    def __dlpack_device__(self) -> tuple[int, int]:
        """(dl_device_type, device_id), as Tensor.__dlpack_device__() returns."""

    def __eq__(self, other: object) -> bool: ...

    def __hash__(self) -> int: ...

    def __str__(self) -> str: ...

    def __repr__(self) -> str: ...

class Tensor:
    """
    An ONNX Runtime tensor (a shared OrtValue) that speaks DLPack. Made by from_dlpack().
    """

    def __dlpack__(self, *, stream: int | None = None, max_version: tuple[int, int] | None = None, dl_device: tuple[int, int] | None = None, copy: bool | None = None) -> CapsuleType:
        """
        A DLPack capsule of the tensor (Array API standard 2024.12): 'dltensor_versioned' when max_version >= (1, 0), else legacy 'dltensor'.
        """

    def __dlpack_device__(self) -> tuple[int, int]:
        """(dl_device_type, device_id) of the tensor's memory."""

    def __array__(self, dtype: object | None = None, *, copy: bool | None = None) -> numpy.ndarray:
        """
        A numpy array sharing the tensor's host memory (copied to the host first for device memory). copy=False: CopyRequiredError (a ValueError) when that, or the dtype, needs a copy.
        """

    def numpy(self) -> numpy.ndarray:
        """
        Same as numpy.asarray(tensor): bfloat16/float8/int4 come as ml_dtypes dtypes.
        """

    def to(self, device: Device | str | tuple[int, int] | onnxruntime.OrtEpDevice) -> Tensor:
        """This tensor on `device` (itself when already there, else a copy)."""

    @property
    def shape(self) -> tuple[int, ...]: ...

    @property
    def ndim(self) -> int: ...

    @property
    def size(self) -> int: ...

    @property
    def nbytes(self) -> int: ...

    @property
    def dtype(self) -> str:
        """
        numpy-style name of the element type ('float32', 'bool', 'bfloat16', 'float8_e4m3fn', 'int4', ...).
        """

    @property
    def device(self) -> Device: ...

    @property
    def data_ptr(self) -> int:
        """
        Address of the first element (a device address for device memory), as an int.
        """

    @property
    def read_only(self) -> bool:
        """True when the producer's memory is read-only (DLPack READ_ONLY flag)."""

    @property
    def ortvalue(self) -> onnxruntime.OrtValue:
        """
        An onnxruntime.OrtValue sharing this tensor's memory (and keeping it alive). CPU, CUDA and ROCm memory.
        """

    def __repr__(self) -> str: ...

    __dlpack_c_exchange_api__: CapsuleType

def from_dlpack(x: object, /, *, device: Device | str | tuple[int, int] | onnxruntime.OrtEpDevice | None = None, copy: bool | None = None) -> Tensor:
    """
    An ortdlpack.Tensor over `x`'s memory: any object with __dlpack__ (numpy, torch, jax, tensorflow, onnxruntime.OrtValue, ortdlpack.Tensor) or a DLPack capsule. copy: None (copy only if needed), True (always), False (never: CopyRequiredError, both ValueError and BufferError, if a copy is needed). device: move the result there (see Device).
    """

def as_ortvalue(x: object) -> onnxruntime.OrtValue:
    """
    An onnxruntime.OrtValue over x's memory (anything from_dlpack takes), without a copy when x's layout allows one; x lives as long as the OrtValue. An OrtValue is returned as is.
    """

class Session:
    """
    An ONNX Runtime session created and run in C++: feeds and outputs are DLPack tensors, bound without copies (see ortdlpack::Session).
    """

    def __init__(self, model: object, *, intra_op_num_threads: object | None = None, inter_op_num_threads: object | None = None, ep: object | None = None, ep_options: object | None = None, config: object | None = None, stream: object | None = None) -> None:
        """
        model: a path or the model's bytes. ep: None (CPU) or an EP's name ('cuda', 'CUDAExecutionProvider', a registered plugin EP), its EP devices appended with ep_options (dict[str, str]). config: session config entries (dict[str, str]). stream: a native stream handle of the EP's device (e.g. torch.cuda.current_stream().cuda_stream) every run is ordered with; CUDA and TensorRT compute on it (docs/streams.md).
        """

    @property
    def input_names(self) -> object: ...

    @property
    def output_names(self) -> object: ...

    def run(self, feeds: object, output_names: object | None = None, *, outputs: object | None = None, device: object | None = None) -> object:
        """
        Runs on feeds {name: DLPack producer} and returns the outputs named in output_names (None: all) as Tensors. outputs: {name: preallocated destination} written in place. device: where other outputs go.
        """

def register_device(name: str, ort_device_type: str | int, vendor_id: int, memory_type: str | int, dl_device_type: str | int) -> None:
    """
    Maps ORT memory (device type 'cpu'/'gpu'/'fpga'/'npu', PCI vendor id, memory type 'default'/'host_accessible') to a DLPack device type (int or name like 'ext_dev'); `name` is the OrtMemoryInfo name used when ortdlpack creates memory on it. ValueError when it conflicts with a built-in or earlier mapping.
    """

def unregister_device(ort_device_type: str | int, vendor_id: int, memory_type: str | int, name: str = '') -> bool:
    """
    Removes a mapping added by register_device(); returns whether one was removed. `name` identifies memory of vendor id 0, as registration does.
    """
