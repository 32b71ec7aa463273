"""Shared helpers: a DLPack producer built with ctypes (any field, counting deleter), capsule readers, the virtual
device plugin EP registered once per session with its counters, and the `accel` fixture: every device test that
makes sense on any plugin EP's device runs on the virtual device and on the real WebGPU EP."""

from __future__ import annotations

import ctypes
import functools
import dataclasses
import gc
import importlib.metadata
import importlib.util
import os
import re
import subprocess
import sys
from collections.abc import Callable

# The WebGPU EP offers a device on a machine without a GPU only on a software adapter (Mesa's lavapipe), and only
# when told so before its library is registered: the test process says so (ortdlpack itself never does).
os.environ.setdefault("ORT_WEBGPU_EP_ALLOW_SOFTWARE_ADAPTER", "1")
os.environ.setdefault("ORT_GGML_LOG", "warn")  # the ggml EP's INFO lines, quiet

import numpy as np  # noqa: E402
import onnxruntime as ort  # noqa: E402
import pytest  # noqa: E402

import ortdlpack  # noqa: E402  (initialises the ORT hand-over before any test)
import ortdlpack.testing  # noqa: E402

# --- the installed onnxruntime: what it lacks is skipped, with the reason -------------------------------------

ORT_VERSION = tuple(int(v) for v in re.findall(r"\d+", ort.__version__)[:2])
ORT_RELEASE = tuple(int(v) for v in re.findall(r"\d+", ort.__version__)[:3])


def skip_if_ort_lacks_dtype(name: str) -> None:
    """Skips a test of an element type the installed onnxruntime cannot hold in a tensor."""
    if name == "float4_e2m1fn" and ORT_VERSION < (1, 24):
        pytest.skip(f"onnxruntime {ort.__version__} has no float4e2m1 tensors (added in 1.24)")
    if name == "float8_e8m0fnu" and not _ort_holds_e8m0():
        pytest.skip(f"onnxruntime {ort.__version__} has no float8e8m0 tensors (its NotImplemented for type 26)")


@functools.cache
def _ort_holds_e8m0() -> bool:
    # Asked of the runtime itself: 1.23 refuses such tensors ("tensor type 26 is not supported": from_dlpack's
    # BufferError, as for any tensor the runtime cannot hold), 1.32 holds them.
    import ml_dtypes

    try:
        ortdlpack.from_dlpack(np.zeros(1, ml_dtypes.float8_e8m0fnu))
        return True
    except BufferError as e:
        if "type 26 is not supported" not in str(e):
            raise
        return False


def ep_device_library(ep_device: ort.OrtEpDevice) -> str | None:
    """The real path of the library an EP device came from (its ep_metadata's library_path), or None where the
    onnxruntime does not say: 1.23 leaves the key out of a plugin EP library's devices (onnxruntime-ep-openvino's,
    the one host EP package 1.23 hosts); newer runtimes set it for them (the virtual device, QNN, ggml, WebGPU)."""
    path = ep_device.ep_metadata.get("library_path")
    return os.path.realpath(path) if path else None


def library_is_loaded(path: str) -> bool:
    """Whether the library file at `path` is mapped into this process, as a registered EP library is for as long as
    it is registered: what a test can check of a registration where the EP devices do not name their library."""
    real = os.path.realpath(path)
    with open("/proc/self/maps") as f:
        return any(line.split(maxsplit=5)[5:] == [real] for line in f.read().splitlines())


# --- the sanitizer leg: what cannot run with the ASan runtime preloaded -----------------------------------------

# scripts/sanitize.sh's Python leg sets ORTDLPACK_SANITIZER=asan (it preloads libasan into an uninstrumented python):
# said explicitly, not guessed from LD_PRELOAD. Tests that load a third-party library which cannot run under that
# preload skip there, saying so (docs/reliability.md, section 1); the plain legs run them.
SANITIZER = os.environ.get("ORTDLPACK_SANITIZER", "")


# --- the extension's test entry points ------------------------------------------------------------------------


def entry_points():
    """ortdlpack._ortdlpack._testing (python/src/testing.cc): the extension's entry points for tests, in the build
    scripts/setup.sh makes (ORTDLPACK_PYTHON_TESTING=ON). A wheel has none: a test that calls this skips."""
    module = getattr(ortdlpack._ortdlpack, "_testing", None)
    if module is None:
        pytest.skip("this ortdlpack was built without its test entry points (ORTDLPACK_PYTHON_TESTING=OFF: a wheel)")
    return module


# --- optional frameworks --------------------------------------------------------------------------------------


class OptionalModule:
    """An optional package (torch, jax, tensorflow, onnx, ...) imported at its first use: a test that touches it is
    skipped (pytest.importorskip) when it is not installed, instead of its whole file erroring at collection."""

    def __init__(self, module: str, attr: str | None = None, setup=None):
        self._lazy_module, self._lazy_attr, self._lazy_setup, self._lazy_obj = module, attr, setup, None

    def __getattr__(self, name):
        if name.startswith("_") and self._lazy_obj is None:
            raise AttributeError(name)  # pytest's collection probes (__wrapped__, _pytestfixturefunction, ...)
        if self._lazy_obj is None:
            obj = pytest.importorskip(self._lazy_module)
            if self._lazy_setup is not None:
                self._lazy_setup()
            self._lazy_obj = getattr(obj, self._lazy_attr) if self._lazy_attr else obj
        return getattr(self._lazy_obj, name)


def _jax_setup():
    # jax puts new arrays on its default device, a GPU where jaxlib has CUDA: the tests' jax arrays are host arrays
    # unless a test says otherwise, whatever the machine. 64-bit types on, for the every-dtype round trips.
    import jax

    jax.config.update("jax_enable_x64", True)
    jax.config.update("jax_default_device", jax.devices("cpu")[0])


torch = OptionalModule("torch")
jax = OptionalModule("jax", setup=_jax_setup)
jnp = OptionalModule("jax.numpy", setup=_jax_setup)
tf = OptionalModule("tensorflow")
ml_dtypes = OptionalModule("ml_dtypes")
onnx = OptionalModule("onnx")
helper = OptionalModule("onnx.helper")
TensorProto = OptionalModule("onnx", "TensorProto")

# --- DLPack structs (dlpack.h 1.3) -----------------------------------------------------------------------------


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


class DLManagedTensor(ctypes.Structure):
    pass


LEGACY_DELETER = ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensor))
DLManagedTensor._fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", LEGACY_DELETER)]


class DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class DLManagedTensorVersioned(ctypes.Structure):
    pass


VERSIONED_DELETER = ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensorVersioned))
DLManagedTensorVersioned._fields_ = [
    ("version", DLPackVersion),
    ("manager_ctx", ctypes.c_void_p),
    ("deleter", VERSIONED_DELETER),
    ("flags", ctypes.c_uint64),
    ("dl_tensor", DLTensor),
]

READ_ONLY = 1
IS_COPIED = 2

_capi = ctypes.pythonapi
_capi.PyCapsule_New.restype = ctypes.py_object
_capi.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_capi.PyCapsule_GetPointer.restype = ctypes.c_void_p
_capi.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_capi.PyCapsule_GetName.restype = ctypes.c_char_p
_capi.PyCapsule_GetName.argtypes = [ctypes.py_object]
_capi.PyCapsule_IsValid.restype = ctypes.c_int
_capi.PyCapsule_IsValid.argtypes = [ctypes.py_object, ctypes.c_char_p]
# Destructors get the dying capsule as a raw pointer: a py_object argument would revive it.
_CAPSULE_DESTRUCTOR = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
_raw_is_valid = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p)(("PyCapsule_IsValid", _capi))
_raw_get_pointer = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p)(("PyCapsule_GetPointer", _capi))


def capsule_name(capsule) -> str:
    return _capi.PyCapsule_GetName(capsule).decode()


def read_versioned(capsule) -> DLManagedTensorVersioned:
    """The DLManagedTensorVersioned inside an unconsumed 'dltensor_versioned' capsule (borrowed)."""
    ptr = _capi.PyCapsule_GetPointer(capsule, b"dltensor_versioned")
    return ctypes.cast(ptr, ctypes.POINTER(DLManagedTensorVersioned)).contents


def read_legacy(capsule) -> DLManagedTensor:
    ptr = _capi.PyCapsule_GetPointer(capsule, b"dltensor")
    return ctypes.cast(ptr, ctypes.POINTER(DLManagedTensor)).contents


# Capsule destructors of the fake producer: call the deleter while the capsule is unconsumed.
@_CAPSULE_DESTRUCTOR
def _versioned_capsule_destructor(capsule):
    if _raw_is_valid(capsule, b"dltensor_versioned"):
        m = ctypes.cast(_raw_get_pointer(capsule, b"dltensor_versioned"), ctypes.POINTER(DLManagedTensorVersioned))
        m.contents.deleter(m)


@_CAPSULE_DESTRUCTOR
def _legacy_capsule_destructor(capsule):
    if _raw_is_valid(capsule, b"dltensor"):
        m = ctypes.cast(_raw_get_pointer(capsule, b"dltensor"), ctypes.POINTER(DLManagedTensor))
        m.contents.deleter(m)


_LIVE: dict[int, "FakeProducer"] = {}  # producers whose tensor is out, kept alive until their deleter runs


@VERSIONED_DELETER
def _versioned_deleter(m):
    _LIVE.pop(m.contents.manager_ctx).deleted += 1


@LEGACY_DELETER
def _legacy_deleter(m):
    _LIVE.pop(m.contents.manager_ctx).deleted += 1


class FakeProducer:
    """A DLPack producer whose every field is chosen by the test and whose deleter counts its calls.

    By default it describes `array` (a numpy array) faithfully; keyword arguments override fields."""

    _next_id = 1

    def __init__(self, array=None, *, versioned=True, data=..., device=(1, 0), ndim=None, code=None, bits=None,
                 lanes=1, shape=..., strides=..., byte_offset=0, flags=0, version=(1, 3), old_protocol=False):
        self.array = array
        self.versioned = versioned
        self.old_protocol = old_protocol
        self.deleted = 0
        self.calls = []
        if array is not None:
            kind = {"b": 6, "i": 0, "u": 1, "f": 2, "c": 5}[array.dtype.kind]
            code = kind if code is None else code
            bits = array.dtype.itemsize * 8 if bits is None else bits
            ndim = array.ndim if ndim is None else ndim
            if shape is ...:
                shape = array.shape
            if strides is ...:
                strides = tuple(s // array.itemsize for s in array.strides)
            if data is ...:
                data = array.ctypes.data
        self.fields = dict(data=data if data is not ... else None, device=device, ndim=ndim or 0, code=code or 0,
                           bits=bits or 8, lanes=lanes, shape=None if shape is ... else shape,
                           strides=None if strides is ... else strides, byte_offset=byte_offset, flags=flags,
                           version=version)

    def _build(self):
        f = self.fields
        self._shape = None if f["shape"] is None else (ctypes.c_int64 * max(1, len(f["shape"])))(*f["shape"])
        self._strides = None if f["strides"] is None else (ctypes.c_int64 * max(1, len(f["strides"])))(*f["strides"])
        t = DLTensor()
        t.data = f["data"]
        t.device = DLDevice(*f["device"])
        t.ndim = f["ndim"]
        t.dtype = DLDataType(f["code"], f["bits"], f["lanes"])
        t.shape = ctypes.cast(self._shape, ctypes.POINTER(ctypes.c_int64)) if self._shape is not None else None
        t.strides = ctypes.cast(self._strides, ctypes.POINTER(ctypes.c_int64)) if self._strides is not None else None
        t.byte_offset = f["byte_offset"]
        ident = FakeProducer._next_id
        FakeProducer._next_id += 1
        if self.versioned:
            m = DLManagedTensorVersioned()
            m.version = DLPackVersion(*f["version"])
            m.flags = f["flags"]
            m.deleter = _versioned_deleter
        else:
            m = DLManagedTensor()
            m.deleter = _legacy_deleter
        m.manager_ctx = ident
        m.dl_tensor = t
        self._managed = m  # the struct lives in this object; the producer lives in _LIVE until its deleter runs
        _LIVE[ident] = self
        return m

    def capsule(self):
        m = self._build()
        if self.versioned:
            return _capi.PyCapsule_New(ctypes.addressof(m), b"dltensor_versioned",
                                       ctypes.cast(_versioned_capsule_destructor, ctypes.c_void_p))
        return _capi.PyCapsule_New(ctypes.addressof(m), b"dltensor", ctypes.cast(_legacy_capsule_destructor, ctypes.c_void_p))

    def __dlpack__(self, *args, **kwargs):
        if self.old_protocol and kwargs:
            raise TypeError("__dlpack__() got an unexpected keyword argument")
        self.calls.append(kwargs)
        return self.capsule()

    def __dlpack_device__(self):
        return tuple(self.fields["device"])


@pytest.fixture
def collect():
    """Runs the garbage collector (for tests that count deleter calls)."""

    def run():
        for _ in range(3):
            gc.collect()

    return run


ALL_DTYPES = [
    # (name, DLPack code, bits)
    ("bool", 6, 8), ("int8", 0, 8), ("int16", 0, 16), ("int32", 0, 32), ("int64", 0, 64),
    ("uint8", 1, 8), ("uint16", 1, 16), ("uint32", 1, 32), ("uint64", 1, 64),
    ("float16", 2, 16), ("float32", 2, 32), ("float64", 2, 64), ("bfloat16", 4, 16),
    ("float8_e4m3fn", 10, 8), ("float8_e4m3fnuz", 11, 8), ("float8_e5m2", 12, 8), ("float8_e5m2fnuz", 13, 8),
    ("float8_e8m0fnu", 14, 8), ("int4", 0, 4), ("uint4", 1, 4), ("float4_e2m1fn", 17, 4),
]
# DLPack types ONNX Runtime cannot hold (BufferError): complex (ORT creates no complex tensors through its C API),
# and types the core does not map (int2/uint2: ORT's C enum and ONNX number them differently; docs/python.md).
UNSUPPORTED_DTYPES = [("complex64", 5, 64), ("complex128", 5, 128), ("int2", 0, 2),
                      ("uint2", 1, 2), ("float8_e3m4", 7, 8), ("float6_e2m3fn", 15, 6)]


def raw_producer(code: int, bits: int, count: int = 8, **kw) -> FakeProducer:
    """A producer of `count` elements of any dtype over a byte buffer filled with 0, 1, 2, ..."""
    nbytes = (count * bits + 7) // 8
    buf = (np.arange(nbytes) % 256).astype(np.uint8)
    p = FakeProducer(buf, code=code, bits=bits, shape=(count,), strides=(1,), **kw)
    p.buffer = buf
    return p


# --- the virtual device plugin EP (plugins/virtual_device): registered once per test session -------------------

EP_NAME = "VirtualDeviceEP"

# The counter struct and its field groups, mirrored once in the package (ortdlpack.testing).
from ortdlpack.testing import COUNTER_FIELDS, STATE_FIELDS, STREAM_FIELDS  # noqa: E402
from ortdlpack.testing import VirtualDeviceCounters as Counters  # noqa: E402



# --- the plugin: registered once per process (another module may have done it already) --------------------------


_REGISTERED_NAME = "ortdlpack_virtual_device"
_OrtNotImplemented = ort.capi.onnxruntime_pybind11_state.NotImplemented


@pytest.fixture(scope="session")
def vd():
    """(ctypes CDLL of the plugin, [EP device 0, EP device 1])."""
    try:
        path = ortdlpack.testing.virtual_device_library()
    except FileNotFoundError as e:
        pytest.skip(str(e))

    def ours():
        # A device of the plugin's EP name from this library file; where onnxruntime names no library in the devices
        # (ep_device_library), one of that name while this library is loaded.
        found = {}
        for d in ort.get_ep_devices():
            if d.ep_name != EP_NAME:
                continue
            library = ep_device_library(d)
            if library == os.path.realpath(path) or (library is None and library_is_loaded(path)):
                found.setdefault(d.device.device_id, d)
        return [found[i] for i in sorted(found)]

    registered_here = not ours()
    if registered_here:
        try:
            ortdlpack.register_execution_provider_library(_REGISTERED_NAME, path)
        except _OrtNotImplemented as e:  # the plugin refuses an ORT older than its EP API (1.29) and says why
            pytest.skip(f"virtual device plugin EP unavailable: {e}")
    devices = ours()
    assert len(devices) == 2, "the virtual device plugin must expose two devices"
    lib = ortdlpack.testing.virtual_device_abi(path)  # the registered path: the same loaded copy, the same counters
    yield lib, devices
    if registered_here:  # leave the process as found
        del devices
        gc.collect()
        ort.unregister_execution_provider_library(_REGISTERED_NAME)


# onnxruntime 1.29-1.31 leak one 32-byte device allocation in OrtValue.__dlpack__ of a plugin-device value (fixed
# in 1.32): tests that export such a value carry @pytest.mark.ort_dlpack_leak and are allowed exactly that.
_ORT_DLPACK_LEAK = 32 if (1, 29) <= ORT_VERSION < (1, 32) else 0


@pytest.fixture
def counters(vd, request):
    """Resets the plugin's counters; `counters()` returns the events since then (state fields as they are now).
    After the test every device allocation it made must be freed again."""
    lib, _ = vd
    leak = _ORT_DLPACK_LEAK if request.node.get_closest_marker("ort_dlpack_leak") else 0

    def read():
        c = Counters()
        lib.ortdlpack_vd_get_counters(ctypes.byref(c))
        return {n: getattr(c, n) for n in COUNTER_FIELDS}

    gc.collect()
    lib.ortdlpack_vd_fail_alloc_at(ctypes.c_uint64(0))
    lib.ortdlpack_vd_fail_copy_at(ctypes.c_uint64(0))
    lib.ortdlpack_vd_reset_counters()
    base = read()
    yield read
    gc.collect()
    end = read()
    allowed = {"live_bytes": leak, "live_allocs": 1 if leak else 0}
    for n in STATE_FIELDS:
        if end[n] - base[n] == allowed.get(n, 0) != 0:
            continue  # onnxruntime's own leak, not ortdlpack's
        assert end[n] == base[n], f"{n}: {base[n]} before the test, {end[n]} after (leak)"
    assert end["allocs"] - end["frees"] == allowed["live_allocs"] and end["host_allocs"] == end["host_frees"]


def assert_runs_do_not_grow_rss(run_once, runs: int = 10_000, warmup: int = 1_000, limit: int = 8 << 20) -> None:
    """Calls run_once(i) `runs` times after a warm-up (allocator pools, caches) and asserts RSS grew less than
    `limit` bytes: nothing leaks per run. Where one window grew more (an allocator's arenas grow once under a loaded
    machine: the oldest-ORT leg saw 15 MB once, alone it grows none), a second window of as many runs decides: a leak
    grows in every window."""
    psutil = pytest.importorskip("psutil")
    proc = psutil.Process()
    for i in range(warmup):
        run_once(i)
    for _ in range(2):
        gc.collect()
        before = proc.memory_info().rss
        for i in range(runs):
            run_once(i)
        gc.collect()
        grown = proc.memory_info().rss - before
        if grown < limit:
            return
    assert grown < limit, f"RSS grew by {grown / 1e6:.1f} MB over {runs:,} runs, in each of two windows"


# --- models for the session tests (scripts/make_models.py), built once per test session -------------------------

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts"))


@pytest.fixture(scope="session")
def models(tmp_path_factory):
    pytest.importorskip("onnx")  # make_models builds the models with it
    from make_models import make_models

    return make_models(str(tmp_path_factory.mktemp("models")), ["add_tiny", "feature", "head"])


def cpu_session(path) -> ort.InferenceSession:
    """A plain onnxruntime session on the CPU EP with one intra-op thread."""
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    return ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])


def tiny_input() -> np.ndarray:
    """The add_tiny model's input, float32[1,100]."""
    return np.arange(100, dtype=np.float32).reshape(1, 100) / 7


def data_ptr(t) -> int:
    """Host data pointer of any DLPack producer, as numpy sees it."""
    return np.from_dlpack(t).ctypes.data


# --- the repository's scripts (examples, benchmarks), run as a user runs them ----------------------------------


def run_script(path: str, *args: str, timeout: float = 240) -> str:
    """Runs the script at `path` (from the repository's root) with this interpreter in a subprocess, with the
    ortdlpack under test; returns its stdout. A non-zero exit fails the test, with both outputs."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    proc = subprocess.run([sys.executable, os.path.join(ROOT, path), *args], capture_output=True, text=True,
                          timeout=timeout, env=env, cwd=ROOT)
    assert proc.returncode == 0, f"{path} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


def needs(*modules: str) -> None:
    """Skips the test when one of `modules` is not installed."""
    for module in modules:
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"{module} is not installed")


# --- every plugin EP device the tests can have: the virtual device and the real WebGPU EP -----------------------

WEBGPU_EP = "WebGpuExecutionProvider"
WEBGPU_PACKAGE = "onnxruntime-ep-webgpu"
WEBGPU_MIN_ORT = (1, 24, 4)  # onnxruntime-ep-webgpu 0.4 refuses older runtimes at registration
KDLWEBGPU = 15


@dataclasses.dataclass
class Accelerator:
    """A plugin EP's device the device tests run on (the `accel` fixture).

    Each EP differs in what it computes: the virtual device computes nothing (ORT runs every node on the CPU EP and
    moves a device session's inputs and outputs through the EP's transfer; its counters see every copy), the WebGPU
    EP runs its kernels on the adapter and some element types fall back to the CPU EP."""

    name: str
    ep_name: str  # the EP's name in ORT
    ep: str  # the name a user gives ortdlpack.Session(ep=...)
    ep_device: ort.OrtEpDevice
    device: ortdlpack.Device
    computes: bool  # whether the EP runs kernels itself
    compute_dtypes: tuple  # element types whose Add the EP runs (the others fall back to the CPU EP)
    counters: Callable[[], dict] | None  # the virtual device's copy counters since the test began; None elsewhere

    def inference_session(self, model, **config) -> ort.InferenceSession:
        """The user's own onnxruntime session on this EP's device (add_provider_for_devices)."""
        so = ort.SessionOptions()
        so.intra_op_num_threads = 1
        for k, v in config.items():
            so.add_session_config_entry(k, v)
        so.add_provider_for_devices([self.ep_device], {})
        return ort.InferenceSession(model, so)

    def session(self, model, **kwargs) -> ortdlpack.Session:
        return ortdlpack.Session(model, ep=self.ep, intra_op_num_threads=1, **kwargs)

    def ran_on_the_ep(self, session: ort.InferenceSession) -> set | None:
        """Op types of the nodes the EP was assigned in `session` (made with
        session.record_ep_graph_assignment_info=1); None where onnxruntime does not report them (before 1.31)."""
        assigned = session.get_provider_graph_assignment_info() if ORT_VERSION >= (1, 31) else []
        if not assigned:
            return None
        return {n.op_type for g in assigned if g.ep_name == self.ep_name for n in g.get_nodes()}


def _webgpu_device() -> ort.OrtEpDevice | None:
    return next((d for d in ort.get_ep_devices() if d.ep_name == WEBGPU_EP), None)


_WEBGPU: list = []  # [Accelerator or the reason it is unusable], decided once per process


def webgpu_or_reason():
    """The WebGPU EP as an Accelerator, or why it cannot run here. Usable means a tensor allocated on its device and
    read back: Dawn lists a device even where it finds no adapter (Debian 12's own Mesa 22), so a listed OrtEpDevice
    proves nothing. Registration happens here, once, the way every user gets it: ortdlpack finds the installed
    package. The library stays registered for the process (unregistering with live tensors crashes the EP)."""
    if _WEBGPU:
        return _WEBGPU[0]
    reason = None
    try:
        importlib.metadata.distribution(WEBGPU_PACKAGE)
    except importlib.metadata.PackageNotFoundError:
        reason = f"{WEBGPU_PACKAGE} is not installed (pip install {WEBGPU_PACKAGE}; scripts/setup.sh does)"
    if reason is None and "tensorflow" in sys.modules:
        reason = ("tensorflow is imported in this process: its global LLVM symbols replace the ones Mesa's lavapipe "
                  "compiles shaders with (a segfault); the WebGPU tests run before any test imports it")
    if reason is None and ORT_RELEASE < WEBGPU_MIN_ORT:
        reason = (f"onnxruntime {ort.__version__} is older than {'.'.join(map(str, WEBGPU_MIN_ORT))}, the oldest "
                  f"runtime {WEBGPU_PACKAGE} 0.4 registers with")
    if reason is None:
        try:
            x = np.arange(5, dtype=np.float32)
            if not np.array_equal(ortdlpack.from_dlpack(x, device="webgpu:0").numpy(), x):
                reason = "the WebGPU EP read back other values than it was given"
        except Exception as e:
            reason = f"the WebGPU EP cannot allocate here ({type(e).__name__}: {e})"
            if not any(os.path.exists(os.path.join(d, "libvulkan.so.1")) for d in
                       ("/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/lib")):
                reason += "; there is no Vulkan loader (scripts/setup.sh installs libvulkan1 and Mesa's lavapipe)"
    if reason is not None:
        _WEBGPU.append(reason)
        return reason
    ep_device = _webgpu_device()
    _WEBGPU.append(Accelerator(
        name="webgpu", ep_name=WEBGPU_EP, ep="webgpu", ep_device=ep_device, device=ortdlpack.Device(ep_device),
        computes=True, compute_dtypes=("float32", "float16", "int32", "uint32"), counters=None))
    return _WEBGPU[0]


def _uses_webgpu(item) -> bool:
    callspec = getattr(item, "callspec", None)
    return ((callspec is not None and callspec.params.get("accel") == "webgpu")
            or "webgpu" in getattr(item, "fixturenames", ()) or item.module.__name__ == "test_webgpu")


def _uses_tensorflow(item) -> bool:
    return "tensorflow" in item.nodeid


def pytest_collection_modifyitems(config, items):
    """The tests on the WebGPU EP run first, before any test imports tensorflow (see webgpu_or_reason), and the tests
    that import tensorflow run last: its LLVM, loaded first, makes the LLVM inside torch's triton abort the process
    when it loads ("CommandLine Error: Option ... registered more than once"), which torch_module's first call does
    (torch's custom-op dispatch imports torch._dynamo, which imports triton). The order is otherwise kept."""
    first = [i for i in items if _uses_webgpu(i)]
    last = [i for i in items if not _uses_webgpu(i) and _uses_tensorflow(i)]
    items[:] = first + [i for i in items if not _uses_webgpu(i) and not _uses_tensorflow(i)] + last


@pytest.fixture(scope="session")
def webgpu() -> Accelerator:
    """The real WebGPU EP (onnxruntime-ep-webgpu over Vulkan), or a skip that says why it cannot run here."""
    found = webgpu_or_reason()
    if isinstance(found, str):
        pytest.skip(found)
    return found


@pytest.fixture(params=["virtual", "webgpu"])
def accel(request) -> Accelerator:
    """Each plugin EP device the tests can have; the virtual device's tests end with its leak check."""
    if request.param == "webgpu":
        return request.getfixturevalue("webgpu")
    _, devices = request.getfixturevalue("vd")
    return Accelerator(name="virtual device", ep_name=EP_NAME, ep=EP_NAME, ep_device=devices[0],
                       device=ortdlpack.Device(devices[0]), computes=False,
                       compute_dtypes=("float32", "float16", "int32", "uint32"),
                       counters=request.getfixturevalue("counters"))
