"""Test support: a DLPack producer with its own stream on the asynchronous virtual device (plugins/virtual_device),
behaving like torch on CUDA, for the ordering tests (test_ordering.py); tests/cpp/async_producer.h is its C++ twin."""

from __future__ import annotations

import ctypes
import threading

from conftest import (LEGACY_DELETER, DLManagedTensor, _capi, _legacy_capsule_destructor)
from ortdlpack.testing import virtual_device_library

_capi.PyCapsule_SetName.restype = ctypes.c_int
_capi.PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_char_p]


class AsyncProducer:
    """A DLPack producer with its own stream on the asynchronous virtual device, behaving like torch on CUDA: it
    writes device tensors on its stream (each write lands after the device's delay, ``set_delay_us``), and its
    tensors' ``__dlpack__(stream=S)`` honours DLPack's stream argument: a stream handle -> that stream waits for the
    producer's pending work (on the device; the host does not block); ``None`` and ``-1`` -> nothing is ordered
    (the virtual device has no legacy default stream to order before; like the C exchange API's ``no_sync`` path
    and torch releases that synchronize nothing for ``None``, so a consumer that names no stream reads early).
    The virtual device must be registered (same library path).

        p = AsyncProducer(ep_device)
        x = p.empty((8,))               # zeros, on the virtual device
        p.write(x, numpy.arange(8.0))   # queued on p's stream
        t = ortdlpack.from_dlpack(x)    # ortdlpack names its stream; p orders the write before it
    """

    def __init__(self, device, *, library: str | None = None):
        lib = ctypes.CDLL(library or virtual_device_library())
        for name in ("create", "destroy", "write", "read", "wait", "synchronize", "pause", "resume"):
            getattr(lib, f"ortdlpack_vd_stream_{name}").restype = (
                ctypes.c_void_p if name == "create" else ctypes.c_int)
        lib.ortdlpack_vd_stream_create.argtypes = [ctypes.c_uint32]
        for name in ("destroy", "synchronize", "pause", "resume"):
            getattr(lib, f"ortdlpack_vd_stream_{name}").argtypes = [ctypes.c_void_p]
        for name in ("write", "read"):
            getattr(lib, f"ortdlpack_vd_stream_{name}").argtypes = [ctypes.c_void_p] * 3 + [ctypes.c_uint64]
        lib.ortdlpack_vd_stream_wait.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
        lib.ortdlpack_vd_set_stream_delay_us.argtypes = [ctypes.c_uint64]
        lib.ortdlpack_vd_stream_delay_us.restype = ctypes.c_uint64
        self._lib = lib
        self.releases = 0  # tensors of empty(reuse=...) whose DLPack deleter ran
        self.last_consumer_stream = None  # the `stream` its tensors' __dlpack__ was last called with
        self.device = device
        device_id = device if isinstance(device, int) else device.device.device_id
        self.stream = lib.ortdlpack_vd_stream_create(device_id)
        if not self.stream:
            raise ValueError(f"no virtual device stream for device {device!r}")

    def set_delay_us(self, microseconds: int) -> int:
        """Sets how long each copy queued on any virtual-device stream takes; returns the previous value."""
        old = self._lib.ortdlpack_vd_stream_delay_us()
        self._lib.ortdlpack_vd_set_stream_delay_us(microseconds)
        return old

    def empty(self, shape, dtype="float32", *, reuse=None) -> AsyncTensor:
        """A new zero-filled tensor on the producer's device (ordered before the producer's stream).

        With `reuse` (values, as for write): reuse on release, like a caching allocator (torch's). The tensor is a
        producer of the 2022 protocol (``__dlpack__(stream=None)``, legacy capsules; so an importer that copies
        does the copy itself), and once a consumer runs the capsule's deleter the producer hands the memory to new
        work at once: a write of `reuse` queued on its stream (ordered after nothing the consumer still has queued
        on another stream), counted in ``releases``."""
        import numpy as np

        import ortdlpack

        t = ortdlpack.from_dlpack(np.zeros(shape, dtype), device=self.device)
        # The zero fill is queued on ortdlpack's stream: the producer's stream waits for it (DLPack does it).
        t = ortdlpack.from_dlpack(t.__dlpack__(stream=self.stream, max_version=(1, 0)))
        return AsyncTensor(self, t) if reuse is None else ReusingTensor(self, t, reuse)

    def ortdlpack_stream(self) -> int:
        """The handle of ortdlpack's stream on the producer's device (what ortdlpack names to producers)."""
        import ortdlpack

        probe = self.empty((1,))
        ortdlpack.from_dlpack(probe)
        return self.last_consumer_stream

    def pause(self, stream=None) -> None:
        """Closes a gate on `stream` (default: the producer's own): work queued behind it waits for resume()."""
        if self._lib.ortdlpack_vd_stream_pause(stream or self.stream):
            raise RuntimeError("ortdlpack_vd_stream_pause failed")

    def resume(self, stream=None) -> None:
        """Opens the oldest closed gate of `stream` (default: the producer's own); False when none was closed."""
        return self._lib.ortdlpack_vd_stream_resume(stream or self.stream) == 0

    def gate(self, stream=None, timeout: float = 10.0) -> Gate:
        """pause(stream) with a watchdog: see :class:`Gate`."""
        return Gate(self, stream or self.stream, timeout)

    def write(self, x: AsyncTensor, values) -> None:
        """Queues a write of `values` (anything numpy takes, same size and dtype) into `x` on the stream."""
        import numpy as np

        data = np.ascontiguousarray(values, dtype=x.tensor.dtype)
        if data.nbytes != x.tensor.nbytes:
            raise ValueError(f"{data.nbytes} bytes for a tensor of {x.tensor.nbytes}")
        if self._lib.ortdlpack_vd_stream_write(self.stream, x.tensor.data_ptr, data.ctypes.data, data.nbytes):
            raise RuntimeError("ortdlpack_vd_stream_write failed")

    def read(self, t):
        """Reads any virtual-device tensor (an ortdlpack.Tensor) into a new numpy array on this stream (as a
        consumer would), then waits for the stream."""
        out = self.read_async(t)
        self.synchronize()
        return out

    def read_async(self, t):
        """Queues that read on this stream and returns the array it writes (complete after synchronize())."""
        import numpy as np

        out = np.empty(t.shape, t.dtype)
        if self._lib.ortdlpack_vd_stream_read(self.stream, out.ctypes.data, t.data_ptr, out.nbytes):
            raise RuntimeError("ortdlpack_vd_stream_read failed")
        return out

    def wait_before(self, stream) -> None:
        """Orders the producer's pending work before DLPack stream value `stream` (see the class doc)."""
        if stream is not None and stream != -1:
            if self._lib.ortdlpack_vd_stream_wait(stream, self.stream):
                raise ValueError(f"stream {stream!r} is not a virtual device stream")

    def synchronize(self) -> None:
        if self._lib.ortdlpack_vd_stream_synchronize(self.stream):
            raise RuntimeError("a copy on the producer's stream failed")

    def close(self) -> None:
        if self.stream:
            self._lib.ortdlpack_vd_stream_destroy(self.stream)
            self.stream = None

    def __del__(self):
        self.close()


class AsyncTensor:
    """A tensor of an :class:`AsyncProducer`: DLPack producer that honours `stream`."""

    def __init__(self, producer: AsyncProducer, tensor):
        self.producer = producer
        self.tensor = tensor  # an ortdlpack.Tensor over the device memory

    def __dlpack_device__(self):
        return self.tensor.__dlpack_device__()

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        self.producer.wait_before(stream)
        self.producer.last_consumer_stream = stream
        return self.tensor.__dlpack__(stream=-1, max_version=max_version, dl_device=dl_device, copy=copy)


_REUSING: dict[int, tuple] = {}  # released-on-delete exports, by manager_ctx, until their deleter runs
_next_reusing = 1


@LEGACY_DELETER
def _reusing_deleter(m):
    _outer, inner, x = _REUSING.pop(m.contents.manager_ctx)
    x.producer.write(x, x.reuse)  # the memory's next tensor, written on the producer's stream
    x.producer.releases += 1
    inner.contents.deleter(inner)


class ReusingTensor(AsyncTensor):
    """A tensor of :meth:`AsyncProducer.empty` with `reuse`: a 2022-protocol producer that reuses its memory on
    release."""

    def __init__(self, producer: AsyncProducer, tensor, reuse):
        import numpy as np

        super().__init__(producer, tensor)
        self.reuse = np.ascontiguousarray(reuse, dtype=tensor.dtype)

    def __dlpack__(self, stream=None):
        global _next_reusing
        self.producer.wait_before(stream)
        self.producer.last_consumer_stream = stream
        capsule = self.tensor.__dlpack__(stream=-1)
        inner = ctypes.cast(_capi.PyCapsule_GetPointer(capsule, b"dltensor"), ctypes.POINTER(DLManagedTensor))
        _capi.PyCapsule_SetName(capsule, b"used_dltensor")  # the inner tensor is ours to release now
        outer = DLManagedTensor()
        outer.dl_tensor = inner.contents.dl_tensor
        outer.deleter = _reusing_deleter
        outer.manager_ctx = key = _next_reusing
        _next_reusing += 1
        _REUSING[key] = (outer, inner, self)
        return _capi.PyCapsule_New(ctypes.addressof(outer), b"dltensor",
                                   ctypes.cast(_legacy_capsule_destructor, ctypes.c_void_p))


class Gate:
    """A closed gate on a virtual-device stream (AsyncProducer.pause): work queued behind it waits until open().
    A watchdog opens it after `timeout` seconds if the test did not: code that waits on the host behind the gate (a
    regression) fails the test (``timed_out``) instead of hanging it."""

    def __init__(self, producer: AsyncProducer, stream, timeout: float):
        self._producer, self._stream = producer, stream
        self._lock = threading.Lock()
        self._open = False
        self.timed_out = False
        producer.pause(stream)
        self._timer = threading.Timer(timeout, self._expire)
        self._timer.daemon = True
        self._timer.start()

    def _expire(self):
        with self._lock:
            if not self._open:
                self.timed_out = True
                self._open = True
                self._producer.resume(self._stream)

    def open(self) -> None:
        with self._lock:
            if not self._open:
                self._open = True
                self._producer.resume(self._stream)
        self._timer.cancel()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.open()
