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
        Address of the first element (a device address for device memory): an int that can also be called, so t.data_ptr and t.data_ptr() (torch's and onnxruntime OrtValue's spelling) both give it.
        """

    def as_framework(self, output_type: str) -> object:
        """
        This tensor as a 'torch', 'numpy', 'cupy' or 'jax' array over the same memory, made as run()'s output_type makes outputs (torch through its C exchange API; ordered for torch's current stream).
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

class NodeArg:
    """
    An input or output of a session, as onnxruntime's NodeArg describes it.
    """

    @property
    def name(self) -> str: ...

    @property
    def type(self) -> str:
        """The ONNX type: 'tensor(float)', 'seq(tensor(int64))', ..."""

    @property
    def shape(self) -> list:
        """
        Dimensions: ints, the names of symbolic dimensions, None for unknown ones ([]: no shape).
        """

    def __repr__(self) -> str: ...

class ModelMetadata:
    """What a model says about itself (onnxruntime's ModelMetadata)."""

    @property
    def producer_name(self) -> str: ...

    @property
    def graph_name(self) -> str: ...

    @property
    def domain(self) -> str: ...

    @property
    def description(self) -> str: ...

    @property
    def graph_description(self) -> str: ...

    @property
    def version(self) -> int: ...

    @property
    def custom_metadata_map(self) -> dict: ...

class Binding:
    """
    A run planned and bound once (Session.bind, InferenceSession.bind): every run() reruns the session on the same feed tensors into the same outputs (ortdlpack::Binding).
    """

    @property
    def output_names(self) -> list[str]: ...

    def run(self, run_options: object | None = None, *, feeds: object | None = None) -> list:
        """
        Runs the session and returns the outputs: the same objects every run, written in place. feeds: input name -> a new tensor for that input (bound from now on; a new shape allowed: the outputs ORT allocated are allocated again). run_options: an onnxruntime.RunOptions for this run.
        """

class Session:
    """
    An ONNX Runtime session created and run in C++, with onnxruntime.InferenceSession's interface: feeds and outputs are DLPack tensors, bound without copies (see ortdlpack::Session). ortdlpack.InferenceSession is onnxruntime's own session, subclassed.
    """

    def __init__(self, path_or_bytes: object, sess_options: object | None = None, providers: object | None = None, provider_options: object | None = None, *, intra_op_num_threads: int | None = None, inter_op_num_threads: int | None = None, ep: str | None = None, ep_options: dict | None = None, config: dict | None = None, stream: int | None = None, output_type: str | None = None) -> None:
        """
        path_or_bytes: a path or the model's bytes. sess_options: an onnxruntime.SessionOptions, everything set on it kept. providers: onnxruntime's list of names or (name, options) pairs, provider_options one dict per provider; or ep, ep_options: one EP. intra_op_num_threads, inter_op_num_threads, config (session config entries) apply on top of sess_options. stream: a native stream handle of the EP's device every run is ordered with (docs/streams.md). output_type: the default of run() and bind().
        """

    @property
    def input_names(self) -> object: ...

    @property
    def output_names(self) -> object: ...

    def get_inputs(self) -> list: ...

    def get_outputs(self) -> list: ...

    def get_providers(self) -> list[str]: ...

    def get_modelmeta(self) -> ModelMetadata: ...

    def end_profiling(self) -> str:
        """
        Ends profiling (sess_options.enable_profiling) and returns the profile's file name.
        """

    def get_profiling_start_time_ns(self) -> int: ...

    def run(self, *args: object, input_feed: object | None = None, output_names: object | None = None, outputs: object | None = None, in_place: dict | None = None, device: object | None = None, output_type: str | None = None, run_options: object | None = None) -> list:
        """
        run(feeds, output_names=None, *, outputs=None, in_place=None, device=None, output_type=None, run_options=None), feeds {name: DLPack producer}, returns ortdlpack.Tensors; or onnxruntime's run(output_names, input_feed, run_options=None), returns outputs like the feeds. outputs: {name: preallocated destination} written in place. in_place: {output: input}, the output written into that feed. device: where other outputs go. output_type: 'ortdlpack', 'torch', 'numpy', 'cupy', 'jax' or 'like_feeds'.
        """

    def bind(self, feeds: object, output_names: object | None = None, *, outputs: object | None = None, in_place: dict | None = None, device: object | None = None, output_type: str | None = None) -> Binding:
        """
        Plans and binds a run once: the Binding's run() reruns it on the same tensors (contents may change; run(feeds=...) rebinds the inputs it names), into the same outputs.
        """

def run(session: onnxruntime.InferenceSession, feeds: object, output_names: object | None = None, *, outputs: object | None = None, in_place: dict | None = None, device: object | None = None, run_options: object | None = None, output_type: str | None = None) -> list:
    """
    Runs `session` (an onnxruntime.InferenceSession) on `feeds` and returns the outputs (ortdlpack.Tensors by default), in `output_names` order.

    feeds: input name -> DLPack producer (torch, numpy, jax, ..., ortdlpack.Tensor, onnxruntime.OrtValue), or any value onnxruntime's run takes (a list, a dict, a numpy array of strings, None for an optional input). Tensors are read where they are.
    output_names: outputs to return (default: all, in model order).
    outputs: output name -> preallocated DLPack destination ORT writes into (writable, compact, in memory the session writes, of the output's type and shape).
    in_place: output name -> input name: the output is written into the tensor fed as that input (an operator written to do so: GroupQueryAttention's share-buffer mode).
    device: where outputs without a destination are allocated (anything ortdlpack.Device takes).
    run_options: an onnxruntime.RunOptions.
    output_type: 'ortdlpack' (the default), 'torch', 'numpy', 'cupy', 'jax' or 'like_feeds'.
    Raises what onnxruntime's run raises for the same feeds (its classes and messages); ortdlpack's own refusals (destinations, overlaps, devices) are ValueError or BufferError.
    """

def register_device(name: str, ort_device_type: str | int, vendor_id: int, memory_type: str | int, dl_device_type: str | int) -> None:
    """
    Maps ORT memory (device type 'cpu'/'gpu'/'fpga'/'npu', PCI vendor id, memory type 'default'/'host_accessible') to a DLPack device type (int or name like 'ext_dev'); `name` is the OrtMemoryInfo name used when ortdlpack creates memory on it. ValueError when it conflicts with a built-in or earlier mapping.
    """

def unregister_device(ort_device_type: str | int, vendor_id: int, memory_type: str | int, name: str = '') -> bool:
    """
    Removes a mapping added by register_device(); returns whether one was removed. `name` identifies memory of vendor id 0, as registration does.
    """
