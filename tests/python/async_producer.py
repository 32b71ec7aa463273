"""Test support: a DLPack producer with its own stream on the asynchronous virtual device (plugins/virtual_device),
behaving like torch on CUDA, for the ordering tests (test_ordering.py); tests/cpp/async_producer.h is its C++ twin."""

from __future__ import annotations

from ortdlpack.testing import virtual_device_library


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
        import ctypes

        self._ct = ctypes
        lib = ctypes.CDLL(library or virtual_device_library())
        for name in ("create", "destroy", "write", "read", "wait", "synchronize"):
            getattr(lib, f"ortdlpack_vd_stream_{name}").restype = (
                ctypes.c_void_p if name == "create" else ctypes.c_int)
        lib.ortdlpack_vd_stream_create.argtypes = [ctypes.c_uint32]
        for name in ("destroy", "synchronize"):
            getattr(lib, f"ortdlpack_vd_stream_{name}").argtypes = [ctypes.c_void_p]
        for name in ("write", "read"):
            getattr(lib, f"ortdlpack_vd_stream_{name}").argtypes = [ctypes.c_void_p] * 3 + [ctypes.c_uint64]
        lib.ortdlpack_vd_stream_wait.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
        lib.ortdlpack_vd_set_stream_delay_us.argtypes = [ctypes.c_uint64]
        lib.ortdlpack_vd_stream_delay_us.restype = ctypes.c_uint64
        self._lib = lib
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

    def empty(self, shape, dtype="float32") -> AsyncTensor:
        """A new zero-filled tensor on the producer's device (ordered before the producer's stream)."""
        import numpy as np

        import ortdlpack

        t = ortdlpack.from_dlpack(np.zeros(shape, dtype), device=self.device)
        # The zero fill is queued on ortdlpack's stream: the producer's stream waits for it (DLPack does it).
        return AsyncTensor(self, ortdlpack.from_dlpack(t.__dlpack__(stream=self.stream, max_version=(1, 0))))

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
        import numpy as np

        out = np.empty(t.shape, t.dtype)
        if self._lib.ortdlpack_vd_stream_read(self.stream, out.ctypes.data, t.data_ptr, out.nbytes):
            raise RuntimeError("ortdlpack_vd_stream_read failed")
        self.synchronize()
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
        return self.tensor.__dlpack__(stream=-1, max_version=max_version, dl_device=dl_device, copy=copy)
