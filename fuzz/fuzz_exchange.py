#!/usr/bin/env python3
"""atheris harness for the DLPack C exchange API (DLPack 1.3), both sides of ortdlpack:

- producer: the five functions of ``ortdlpack.Tensor.__dlpack_c_exchange_api__`` called through ctypes with hostile
  arguments: allocator prototypes (any ndim, shape, dtype, device), managed tensors handed to
  ``managed_tensor_to_py_object_no_sync`` (every DLTensor field, flags, version, deleter), objects of other types,
  any device for ``current_work_stream``;
- consumer: ``from_dlpack``, ``as_ortvalue`` and ``_testing.exchange`` on objects of a type whose exchange table is hostile:
  versions and ``prev_api`` chains (cycles too), missing functions, ``managed_tensor_from_py_object_no_sync`` that
  fails, succeeds without a tensor, or hands over a hostile tensor (NULL deleter, any device), and
  ``managed_tensor_to_py_object_no_sync`` that fails or succeeds without an object.

The contract checked: no crash, no hang; every call either succeeds or fails the way the API says (-1 and one
SetError call or a Python exception of TypeError, ValueError, BufferError, RuntimeError, NotImplementedError; out
set to NULL); every managed tensor handed to ortdlpack has its deleter run exactly once, whatever happens; what
ortdlpack hands out describes what was asked and its deleter runs once; imports hold the producer's values.

Run (scripts/fuzz.sh does this):  .venv/bin/python fuzz/fuzz_exchange.py -max_total_time=600 CORPUS_DIR
"""
import ctypes
import gc
import os
import sys

import atheris
import numpy as np

with atheris.instrument_imports():  # ortdlpack's Python modules; the harness's functions are instrumented below
    import ortdlpack as od

CANARY = os.environ.get("ORTDLPACK_FUZZ_CANARY") is not None  # scripts/fuzz.sh --self-test
ALLOWED = (TypeError, ValueError, BufferError, RuntimeError, NotImplementedError)


# --- dlpack.h 1.3: the tests' ctypes structs (tests/python/conftest.py), and the exchange table's --------------------

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "tests", "python"))
from conftest import VERSIONED_DELETER as DELETER  # noqa: E402
from conftest import DLDataType, DLDevice, DLPackVersion, DLTensor  # noqa: E402
from conftest import DLManagedTensorVersioned as Managed  # noqa: E402


class Header(ctypes.Structure):
    pass


Header._fields_ = [("version", DLPackVersion), ("prev_api", ctypes.POINTER(Header))]
SET_ERROR = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p)
OUT_MANAGED = ctypes.POINTER(ctypes.POINTER(Managed))
# Calling ortdlpack's functions: the py_object ones hold the GIL and raise the Python exception they set.
ALLOCATOR = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.POINTER(DLTensor), OUT_MANAGED, ctypes.c_void_p, SET_ERROR)
FROM_PY = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object, OUT_MANAGED)
TO_PY = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.POINTER(Managed), ctypes.POINTER(ctypes.py_object))
DLTENSOR_FROM_PY = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object, ctypes.POINTER(DLTensor))
STREAM = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_int32, ctypes.c_int32, ctypes.POINTER(ctypes.c_void_p))
# A hostile producer's callbacks (called by ortdlpack with the GIL held).
FROM_PY_CB = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, OUT_MANAGED)
TO_PY_CB = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(Managed), ctypes.POINTER(ctypes.c_void_p))


class API(ctypes.Structure):
    _fields_ = [
        ("header", Header),
        ("managed_tensor_allocator", ctypes.c_void_p),
        ("managed_tensor_from_py_object_no_sync", ctypes.c_void_p),
        ("managed_tensor_to_py_object_no_sync", ctypes.c_void_p),
        ("dltensor_from_py_object_no_sync", ctypes.c_void_p),
        ("current_work_stream", ctypes.c_void_p),
    ]


_capi = ctypes.pythonapi
_capi.PyCapsule_GetPointer.restype = ctypes.c_void_p
_capi.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_capi.PyCapsule_New.restype = ctypes.py_object
_capi.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_capi.Py_IncRef.argtypes = [ctypes.py_object]
_capi.Py_DecRef.argtypes = [ctypes.py_object]

OURS = API.from_address(_capi.PyCapsule_GetPointer(od.Tensor.__dlpack_c_exchange_api__, b"dlpack_exchange_api"))
allocator = ALLOCATOR(OURS.managed_tensor_allocator)
from_py = FROM_PY(OURS.managed_tensor_from_py_object_no_sync)
to_py = TO_PY(OURS.managed_tensor_to_py_object_no_sync)
dltensor_from_py = DLTENSOR_FROM_PY(OURS.dltensor_from_py_object_no_sync)
current_work_stream = STREAM(OURS.current_work_stream)

# --- a hostile producer's managed tensor ------------------------------------------------------------------------

BUFFER = (ctypes.c_uint8 * 16384)(*[(i * 131 + 7) & 0xFF for i in range(16384)])
DTYPES = [(2, 32), (2, 16), (2, 64), (0, 8), (0, 32), (0, 64), (1, 8), (6, 8), (4, 16), (5, 64), (0, 4), (17, 4)]
DEVICES = [1, 1, 1, 1, 2, 3, 12, 13, 15, 7]
_deletes = {}  # id -> deleter calls


@DELETER
def _count_delete(m):
    _deletes[m.contents.manager_ctx] = _deletes.get(m.contents.manager_ctx, 0) + 1


class Hostile:
    """A managed tensor whose every field the input chooses; the data lie inside BUFFER whatever the layout."""

    _next = 1

    def __init__(self, fdp):
        self.id = Hostile._next
        Hostile._next += 1
        # At most 4 dims, or one of the ndims ortdlpack refuses (more dims could address bytes outside BUFFER).
        ndim = fdp.ConsumeIntInRange(0, 4) if fdp.ConsumeIntInRange(0, 15) else [-2, -1, 65, 70][fdp.ConsumeIntInRange(0, 3)]
        dims = max(ndim, 0)
        self.shape = (ctypes.c_int64 * max(dims, 1))(*[fdp.ConsumeIntInRange(-1, 4) for _ in range(dims)])
        self.strides = (ctypes.c_int64 * max(dims, 1))(*[fdp.ConsumeIntInRange(-8, 8) for _ in range(dims)])
        if fdp.ConsumeBool():  # row-major: the zero-copy path
            step = 1
            for i in reversed(range(dims)):
                self.strides[i] = step
                step *= max(self.shape[i], 1)
        m = Managed()
        choice = fdp.ConsumeIntInRange(0, 15)
        m.version = DLPackVersion(1, fdp.ConsumeIntInRange(0, 3)) if choice else DLPackVersion(
            fdp.ConsumeIntInRange(0, 3), fdp.ConsumeIntInRange(0, 2**32 - 1))
        m.manager_ctx = self.id
        self.null_deleter = fdp.ConsumeIntInRange(0, 15) == 0
        if not self.null_deleter:
            m.deleter = _count_delete
        m.flags = fdp.ConsumeIntInRange(0, 7)
        t = m.dl_tensor
        # Every addressed byte inside BUFFER: at most 4 dims of at most 4 elements, strides within +-8, 16-byte
        # elements: the reach is < 4 * 3 * 8 * 16 * 4 bytes either way from the middle.
        t.data = ctypes.addressof(BUFFER) + 8192 + fdp.ConsumeIntInRange(0, 64) if fdp.ConsumeIntInRange(0, 9) else None
        t.device = DLDevice(DEVICES[fdp.ConsumeIntInRange(0, len(DEVICES) - 1)], fdp.ConsumeIntInRange(0, 1))
        t.ndim = ndim
        code, bits = DTYPES[fdp.ConsumeIntInRange(0, len(DTYPES) - 1)]
        t.dtype = DLDataType(code, bits, 1 if fdp.ConsumeIntInRange(0, 15) else fdp.ConsumeIntInRange(0, 4))
        t.shape = ctypes.cast(self.shape, ctypes.POINTER(ctypes.c_int64)) if dims and fdp.ConsumeIntInRange(0, 31) else None
        t.strides = ctypes.cast(self.strides, ctypes.POINTER(ctypes.c_int64)) if fdp.ConsumeIntInRange(0, 3) else None
        t.byte_offset = fdp.ConsumeIntInRange(0, 16)
        self.m = m
        self.readable = ndim <= 4 and (t.data is not None or ndim > 0)

    def clone(self):
        """The same tensor, handed over once more: another managed tensor (its own id) with the same fields."""
        other = Hostile.__new__(Hostile)
        other.id = Hostile._next
        Hostile._next += 1
        other.shape, other.strides = self.shape, self.strides
        other.null_deleter, other.readable = self.null_deleter, self.readable
        other.m = Managed.from_buffer_copy(self.m)
        other.m.manager_ctx = other.id
        return other

    def deletes(self):
        return _deletes.get(self.id, 0)


# --- ortdlpack as the producer ----------------------------------------------------------------------------------


@atheris.instrument_func
def fuzz_allocator(fdp):
    ndim = fdp.ConsumeIntInRange(0, 5) if fdp.ConsumeIntInRange(0, 15) else fdp.ConsumeIntInRange(-3, 100)
    dims = [fdp.ConsumeIntInRange(-2, 6) if fdp.ConsumeIntInRange(0, 15) else 1 << fdp.ConsumeIntInRange(20, 62)
            for _ in range(max(ndim, 0))]
    count = 1
    for d in dims:
        count *= max(d, 0)
    if 1 << 17 < count < 1 << 63:
        return  # would really allocate that much (ORT refuses only what overflows)
    shape = (ctypes.c_int64 * max(len(dims), 1))(*dims)
    proto = DLTensor()
    proto.ndim = ndim
    proto.shape = ctypes.cast(shape, ctypes.POINTER(ctypes.c_int64)) if fdp.ConsumeIntInRange(0, 15) else None
    code, bits = DTYPES[fdp.ConsumeIntInRange(0, len(DTYPES) - 1)]
    proto.dtype = DLDataType(code, bits, 1 if fdp.ConsumeIntInRange(0, 7) else fdp.ConsumeIntInRange(0, 3))
    proto.device = DLDevice(DEVICES[fdp.ConsumeIntInRange(0, len(DEVICES) - 1)], fdp.ConsumeIntInRange(-1, 2))
    out = ctypes.POINTER(Managed)()
    errors = []
    set_error = SET_ERROR(lambda ctx, kind, message: errors.append((kind, message)))
    try:
        rc = allocator(ctypes.byref(proto), ctypes.byref(out), None, set_error)
    except ALLOWED:
        raise AssertionError("the allocator raised instead of calling SetError")
    if rc == 0:
        if errors or not out:
            raise AssertionError(f"allocator: success with errors {errors} or without a tensor")
        t = out.contents.dl_tensor
        if t.ndim != ndim or [t.shape[i] for i in range(ndim)] != dims:
            raise AssertionError("allocator: the tensor's shape is not the prototype's")
        if (t.dtype.code, t.dtype.bits, t.dtype.lanes) != (proto.dtype.code, proto.dtype.bits, proto.dtype.lanes):
            raise AssertionError("allocator: the tensor's dtype is not the prototype's")
        out.contents.deleter(out)
    else:
        if rc != -1 or len(errors) != 1 or out:
            raise AssertionError(f"allocator: failure {rc} with {len(errors)} SetError calls, out {bool(out)}")
        kind = errors[0][0].decode()
        if kind not in {c.__name__ for c in ALLOWED}:
            raise AssertionError(f"allocator: error kind {kind}")


@atheris.instrument_func
def fuzz_to_py(fdp):
    h = Hostile(fdp)
    obj = ctypes.py_object()
    try:
        to_py(ctypes.pointer(h.m), ctypes.byref(obj))
    except ALLOWED:
        if not h.null_deleter and h.deletes() != 1:
            raise AssertionError(f"a failed to_py_object ran the deleter {h.deletes()} times (ownership is given)")
        return
    t = obj.value
    _capi.Py_DecRef(t)  # the reference to_py_object handed over (ctypes never drops what C wrote into `obj`)
    if not isinstance(t, od.Tensor):
        raise AssertionError(f"to_py_object made a {type(t).__name__}")
    if t.shape != tuple(h.shape[i] for i in range(h.m.dl_tensor.ndim)):
        raise AssertionError("to_py_object: shape")
    del t, obj
    if not h.null_deleter and h.deletes() != 1:
        raise AssertionError(f"an imported tensor's deleter ran {h.deletes()} times after its Tensor went")


@atheris.instrument_func
def fuzz_from_py(fdp):
    candidates = [od.from_dlpack(np.arange(6, dtype=np.float32).reshape(2, 3)), np.zeros(2), None, 3, "x", object()]
    x = candidates[fdp.ConsumeIntInRange(0, len(candidates) - 1)]
    which = fdp.ConsumeIntInRange(0, 1)
    try:
        if which == 0:
            out = ctypes.POINTER(Managed)()
            from_py(x, ctypes.byref(out))
            if not out or out.contents.dl_tensor.data != np.from_dlpack(x).ctypes.data:
                raise AssertionError("from_py_object: not the tensor's memory")
            out.contents.deleter(out)
        else:
            d = DLTensor()
            dltensor_from_py(x, ctypes.byref(d))
            if d.ndim != 2 or d.shape[0] != 2 or d.shape[1] != 3:
                raise AssertionError("dltensor_from_py_object: shape")
    except ALLOWED:
        if isinstance(x, od.Tensor):
            raise AssertionError("an ortdlpack.Tensor was refused")


@atheris.instrument_func
def fuzz_stream(fdp):
    s = ctypes.c_void_p(1)
    try:
        current_work_stream(fdp.ConsumeIntInRange(-1, 40), fdp.ConsumeIntInRange(-2, 3), ctypes.byref(s))
    except ALLOWED:
        if s.value is not None:
            raise AssertionError("current_work_stream failed without clearing its output")


# --- ortdlpack as the consumer of a hostile producer's table ----------------------------------------------------


@atheris.instrument_func
def hostile_type(fdp, handed, keep):
    """A class whose __dlpack_c_exchange_api__ is a table the input chose; `handed` collects the tensors it gives,
    `keep` what must outlive the calls (the tables and callbacks the capsule points at)."""
    behaviour = fdp.ConsumeIntInRange(0, 5)
    to_behaviour = fdp.ConsumeIntInRange(0, 3)
    tensor = Hostile(fdp)

    @FROM_PY_CB
    def from_py_cb(obj, out):
        if behaviour == 0:
            return -1  # failure (without an exception: a ctypes callback cannot leave one set)
        if behaviour == 1:
            out[0] = ctypes.POINTER(Managed)()
            return 0  # success without a tensor
        if behaviour == 2:
            return 7  # neither 0 nor -1
        handed.append(tensor.clone())  # a new managed tensor on every call, as a producer makes
        out[0] = ctypes.pointer(handed[-1].m)
        return 0

    @TO_PY_CB
    def to_py_cb(m, out):
        m.contents.deleter(m)  # ownership was given: freed here whatever is returned
        if to_behaviour == 0:
            return -1
        if to_behaviour == 1:
            out[0] = None
            return 0  # success without an object
        obj = np.zeros(1)
        _capi.Py_IncRef(obj)  # a new reference, as the API hands over
        out[0] = id(obj)
        return 0

    api = API()
    api.managed_tensor_from_py_object_no_sync = ctypes.cast(from_py_cb, ctypes.c_void_p)
    api.managed_tensor_to_py_object_no_sync = ctypes.cast(to_py_cb, ctypes.c_void_p)
    if fdp.ConsumeIntInRange(0, 15) == 0:
        api.managed_tensor_from_py_object_no_sync = None
    version = fdp.ConsumeIntInRange(0, 5)
    api.header.version = DLPackVersion({0: 0, 1: 2}.get(version, 1), fdp.ConsumeIntInRange(0, 9))
    older = API()
    older.header.version = DLPackVersion(1, 0)
    older.managed_tensor_from_py_object_no_sync = api.managed_tensor_from_py_object_no_sync
    chain = fdp.ConsumeIntInRange(0, 3)
    if chain == 1:
        api.header.prev_api = ctypes.pointer(older.header)  # a major-1 table behind a newer one
    elif chain == 2:
        api.header.prev_api = ctypes.pointer(api.header)  # a cycle
    capsule = _capi.PyCapsule_New(ctypes.addressof(api), b"dlpack_exchange_api", None)
    cls = type("HostileProducer", (), {"__dlpack_c_exchange_api__": capsule})
    keep += [api, older, from_py_cb, to_py_cb]
    return cls


@atheris.instrument_func
def fuzz_consumer(fdp):
    handed, keep = [], []
    cls = hostile_type(fdp, handed, keep)
    x = cls()
    how = fdp.ConsumeIntInRange(0, 3)
    result = None
    try:
        if how == 0:
            result = od.from_dlpack(x)
        elif how == 1:
            result = od.as_ortvalue(x)
        elif how == 2:
            result = od._ortdlpack._testing.exchange(x, od.Tensor)
        else:
            result = od._ortdlpack._testing.exchange(od.from_dlpack(np.arange(3.0)), cls)
    except ALLOWED:
        pass
    del result
    gc.collect()
    for h in handed:
        if not h.null_deleter and h.deletes() != 1:
            raise AssertionError(f"a tensor a producer handed over was deleted {h.deletes()} times")


TARGETS = [fuzz_allocator, fuzz_to_py, fuzz_from_py, fuzz_stream, fuzz_consumer]


@atheris.instrument_func
def test_one(data):
    if CANARY and data.startswith(b"CANARY"):
        raise AssertionError("the self-test's canary input (a finding on purpose)")
    fdp = atheris.FuzzedDataProvider(data)
    TARGETS[fdp.ConsumeIntInRange(0, len(TARGETS) - 1)](fdp)


def main():
    gc.freeze()
    atheris.Setup(sys.argv, test_one)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
