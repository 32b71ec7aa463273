"""The DLPack 1.3 C exchange API: ours (Tensor.__dlpack_c_exchange_api__) and torch's, used by from_dlpack."""

import ctypes
import gc

import numpy as np
import onnxruntime as ort
import pytest

import ortdlpack as od
from conftest import DLManagedTensorVersioned, DLTensor, DLDataType, DLDevice, FakeProducer, _capi, entry_points
from conftest import TensorProto, helper, torch  # optional: tests using one skip without it


class DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class Header(ctypes.Structure):
    _fields_ = [("version", DLPackVersion), ("prev_api", ctypes.c_void_p)]


SET_ERROR = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p)


class ExchangeAPI(ctypes.Structure):
    _fields_ = [
        ("header", Header),
        ("managed_tensor_allocator", ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(DLTensor),
                                                      ctypes.POINTER(ctypes.POINTER(DLManagedTensorVersioned)),
                                                      ctypes.c_void_p, SET_ERROR)),
        ("managed_tensor_from_py_object_no_sync", ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object,
                                                                    ctypes.POINTER(ctypes.POINTER(DLManagedTensorVersioned)))),
        ("managed_tensor_to_py_object_no_sync", ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.POINTER(DLManagedTensorVersioned),
                                                                  ctypes.POINTER(ctypes.py_object))),
        ("dltensor_from_py_object_no_sync", ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object, ctypes.POINTER(DLTensor))),
        ("current_work_stream", ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_int, ctypes.c_int32, ctypes.POINTER(ctypes.c_void_p))),
    ]


@pytest.fixture(scope="module")
def api():
    cap = od.Tensor.__dlpack_c_exchange_api__
    assert type(cap).__name__ == "PyCapsule"
    ptr = _capi.PyCapsule_GetPointer(cap, b"dlpack_exchange_api")
    return ctypes.cast(ptr, ctypes.POINTER(ExchangeAPI)).contents


def test_header(api):
    assert (api.header.version.major, api.header.version.minor) == (1, 3)
    assert api.header.prev_api is None
    for name, _ in ExchangeAPI._fields_[1:]:
        assert getattr(api, name), name


def test_managed_tensor_from_and_to_py_object(api):
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = od.from_dlpack(a)
    out = ctypes.POINTER(DLManagedTensorVersioned)()
    assert api.managed_tensor_from_py_object_no_sync(t, ctypes.byref(out)) == 0
    m = out.contents
    assert m.dl_tensor.data == a.ctypes.data
    assert [m.dl_tensor.shape[i] for i in range(2)] == [2, 3]
    obj = ctypes.py_object()
    assert api.managed_tensor_to_py_object_no_sync(out, ctypes.byref(obj)) == 0
    back = obj.value
    assert isinstance(back, od.Tensor)
    assert np.from_dlpack(back).ctypes.data == a.ctypes.data


def test_dltensor_from_py_object_allocates_nothing_and_is_stable(api):
    t = od.from_dlpack(np.arange(12, dtype=np.int64).reshape(3, 4))
    d1, d2 = DLTensor(), DLTensor()
    assert api.dltensor_from_py_object_no_sync(t, ctypes.byref(d1)) == 0
    assert api.dltensor_from_py_object_no_sync(t, ctypes.byref(d2)) == 0
    assert ctypes.addressof(d1.shape.contents) == ctypes.addressof(d2.shape.contents)  # storage kept in the object
    assert [d1.shape[i] for i in range(2)] == [3, 4] and [d1.strides[i] for i in range(2)] == [4, 1]
    assert (d1.dtype.code, d1.dtype.bits) == (0, 64)


def test_wrong_type_sets_type_error(api):
    out = ctypes.POINTER(DLManagedTensorVersioned)()
    with pytest.raises(TypeError):
        api.managed_tensor_from_py_object_no_sync(np.zeros(2), ctypes.byref(out))


def test_allocator(api):
    shape = (ctypes.c_int64 * 2)(2, 5)
    proto = DLTensor()
    proto.device = DLDevice(1, 0)
    proto.ndim = 2
    proto.dtype = DLDataType(2, 32, 1)
    proto.shape = ctypes.cast(shape, ctypes.POINTER(ctypes.c_int64))
    out = ctypes.POINTER(DLManagedTensorVersioned)()
    errors = []
    cb = SET_ERROR(lambda ctx, kind, msg: errors.append((kind, msg)))
    assert api.managed_tensor_allocator(ctypes.byref(proto), ctypes.byref(out), None, cb) == 0
    assert [out.contents.dl_tensor.shape[i] for i in range(2)] == [2, 5]
    out.contents.deleter(out)
    proto.dtype = DLDataType(2, 32, 4)  # lanes 4
    assert api.managed_tensor_allocator(ctypes.byref(proto), ctypes.byref(out), None, cb) == -1
    assert errors and errors[0][0] == b"BufferError"


def test_current_work_stream_is_null_for_host_memory(api):
    s = ctypes.c_void_p(1)
    assert api.current_work_stream(1, 0, ctypes.byref(s)) == 0
    assert s.value is None


def test_current_work_stream_is_the_stream_named_to_producers(api, vd):
    # docs/python.md said "always NULL"; the code (and streams.md, rule 3) return ortdlpack's stream of the device.
    _, devices = vd
    device = od.from_dlpack(np.zeros(1, np.float32), device=devices[0]).__dlpack_device__()
    named = []

    class Producer:  # records the stream it is asked to order its work before, and exports nothing
        def __dlpack_device__(self):
            return device

        def __dlpack__(self, *, stream=None, **kwargs):
            named.append(stream)
            raise BufferError("nothing to export")

    with pytest.raises(BufferError):
        od.from_dlpack(Producer())
    s = ctypes.c_void_p()
    assert api.current_work_stream(*device, ctypes.byref(s)) == 0
    assert s.value and named[0] == s.value


def test_to_py_object_frees_a_bad_tensor(api, collect):
    p = FakeProducer(np.arange(3, dtype=np.int8), lanes=2)
    m = p._build()
    obj = ctypes.py_object()
    with pytest.raises(BufferError):
        api.managed_tensor_to_py_object_no_sync(ctypes.pointer(m), ctypes.byref(obj))
    assert p.deleted == 1  # ownership was given away: freed on failure


def test_torch_exchange_both_ways():
    x = torch.arange(6, dtype=torch.float32)
    t = entry_points().exchange(x, od.Tensor)
    assert isinstance(t, od.Tensor)
    y = entry_points().exchange(t, torch.Tensor)
    assert isinstance(y, torch.Tensor) and y.data_ptr() == x.data_ptr()


def test_from_dlpack_uses_torch_exchange_api():
    x = torch.arange(4, dtype=torch.int32)
    calls = []

    class Spy(torch.Tensor):  # __dlpack__ must not be called when the exchange API is there
        def __dlpack__(self, *a, **k):
            calls.append(1)
            return super().__dlpack__(*a, **k)

    s = x.as_subclass(Spy)
    t = od.from_dlpack(s)
    assert calls == []
    assert torch.from_dlpack(t).data_ptr() == x.data_ptr()


def test_tvm_ffi_consumes_through_exchange_api():
    tvm_ffi = pytest.importorskip("tvm_ffi")
    a = np.arange(5, dtype=np.float32)
    t = od.from_dlpack(a)
    f = tvm_ffi.from_dlpack(t)
    assert np.from_dlpack(f).ctypes.data == a.ctypes.data


# --- the consumer's cache of other types' tables: bounded, O(1), keeps no type alive (issue 17, item 13) ----------


def _new_class_instance(kind, base):
    """An object of a class made for this call, as proxy and wrapper libraries make them: a plain class with
    __dlpack__ (no table), or a torch.Tensor subclass (torch's table, inherited)."""
    if kind == "torch subclass":
        return torch.Tensor._make_subclass(type("T", (torch.Tensor,), {}), base)
    return type("H", (), {"__dlpack__": lambda self, **kw: base.__dlpack__(**kw),
                          "__dlpack_device__": lambda self: (1, 0)})()


@pytest.mark.parametrize("kind", ["plain", "torch subclass"])
def test_classes_made_per_import_are_not_kept_alive(kind, collect):
    # Before: every type from_dlpack was asked about was held by a strong reference in a vector searched front to
    # back (55 MiB of RSS per 20,000 such classes, and imports slowing down as they accumulated).
    import weakref

    base = torch.arange(8, dtype=torch.float32) if kind == "torch subclass" else np.arange(8, dtype=np.float32)
    refs = []
    for _ in range(2_000):
        x = _new_class_instance(kind, base)
        refs.append(weakref.ref(type(x)))
        assert od.from_dlpack(x).data_ptr == od.from_dlpack(base).data_ptr
        del x
    collect()
    alive = sum(r() is not None for r in refs)
    assert alive == 0, f"{alive} of {len(refs)} producer classes still alive"


def test_soak_classes_made_per_import_do_not_grow_rss():
    from conftest import assert_runs_do_not_grow_rss

    base = np.arange(8, dtype=np.float32)
    assert_runs_do_not_grow_rss(lambda i: od.from_dlpack(_new_class_instance("plain", base)), runs=20_000,
                                limit=4 << 20)


# --- hostile producer tables (found by fuzz/fuzz_exchange.py) -------------------------------------------------------

FROM_PY_CB = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(ctypes.POINTER(DLManagedTensorVersioned)))
TO_PY_CB = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(DLManagedTensorVersioned), ctypes.POINTER(ctypes.c_void_p))


WORK_STREAM_CB = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_int, ctypes.c_int32, ctypes.POINTER(ctypes.c_void_p))


def _producer_type(from_py=None, to_py=None, major=1, cycle=False, dlpack=None, work_stream=None):
    """A class whose __dlpack_c_exchange_api__ table holds these callbacks (and __dlpack__ = `dlpack` when given)."""
    table = ExchangeAPI()
    table.header.version = DLPackVersion(major, 3)
    if cycle:
        table.header.prev_api = ctypes.addressof(table.header)
    for name, cb in (("managed_tensor_from_py_object_no_sync", from_py), ("managed_tensor_to_py_object_no_sync", to_py),
                     ("current_work_stream", work_stream)):
        if cb is not None:
            setattr(table, name, ctypes.cast(cb, dict(ExchangeAPI._fields_)[name]))
    capsule = _capi.PyCapsule_New(ctypes.addressof(table), b"dlpack_exchange_api", None)
    attrs = {"__dlpack_c_exchange_api__": capsule, "_keep": (table, from_py, to_py, work_stream)}
    if dlpack is not None:
        attrs["__dlpack__"] = lambda self, **kw: dlpack(**kw)
    return type("HostileProducer", (), attrs)


def test_a_cyclic_table_chain_is_no_table():
    # Before: exchange_api_of followed prev_api until it found major 1, forever around a cycle (a hang).
    cls = _producer_type(major=2, cycle=True)
    with pytest.raises(TypeError, match="must be a DLPack producer"):
        od.from_dlpack(cls())


def test_a_table_that_succeeds_without_a_tensor_is_asked_through_dlpack():
    # Before: a segmentation fault (the NULL tensor was read).
    @FROM_PY_CB
    def no_tensor(obj, out):
        out[0] = ctypes.POINTER(DLManagedTensorVersioned)()
        return 0

    a = np.arange(3, dtype=np.float32)
    cls = _producer_type(from_py=no_tensor, dlpack=a.__dlpack__)
    assert np.from_dlpack(od.from_dlpack(cls())).ctypes.data == a.ctypes.data


def test_a_device_tensor_without_a_deleter_is_not_deleted():
    # DLPack allows a NULL deleter; before, the device tensor's was called (a segmentation fault).
    p = FakeProducer(np.arange(3, dtype=np.float32), device=(2, 0))
    m = p._build()
    m.deleter = ctypes.cast(None, type(m.deleter))

    @FROM_PY_CB
    def device_tensor(obj, out):
        out[0] = ctypes.pointer(m)
        return 0

    a = np.arange(3, dtype=np.float32)
    cls = _producer_type(from_py=device_tensor, dlpack=a.__dlpack__)
    assert np.from_dlpack(od.from_dlpack(cls())).ctypes.data == a.ctypes.data  # through __dlpack__


def test_exchange_through_tables_that_fail_without_a_result_is_buffer_error():
    # Before: exchange read the NULL results (a segmentation fault) or raised without an exception set.
    @FROM_PY_CB
    def silent_failure(obj, out):
        return -1

    @TO_PY_CB
    def no_object(m, out):
        m.contents.deleter(m)
        out[0] = None
        return 0

    with pytest.raises(BufferError, match="managed_tensor_from_py_object_no_sync failed"):
        entry_points().exchange(_producer_type(from_py=silent_failure)(), od.Tensor)
    with pytest.raises(BufferError, match="managed_tensor_to_py_object_no_sync failed"):
        entry_points().exchange(od.from_dlpack(np.arange(3.0)), _producer_type(from_py=silent_failure, to_py=no_object))


def test_exchange_needs_a_type_with_a_table_on_both_sides():
    t = od.from_dlpack(np.arange(3.0))
    with pytest.raises(TypeError, match="to_type must be a type"):
        entry_points().exchange(t, "Tensor")
    with pytest.raises(TypeError, match="both types need a __dlpack_c_exchange_api__"):
        entry_points().exchange(np.arange(3.0), od.Tensor)
    with pytest.raises(TypeError, match="both types need a __dlpack_c_exchange_api__"):
        entry_points().exchange(t, np.ndarray)


# --- device tensors handed over unordered, as torch's table does on CUDA --------------------------------------------


@pytest.fixture
def async_producer(vd):
    from async_producer import AsyncProducer

    _, devices = vd
    p = AsyncProducer(devices[0])
    old = p.set_delay_us(20_000)  # the producer's write lands 20 ms after it is queued
    yield p
    p.set_delay_us(old)
    p.close()
    gc.collect()


def _unordered_device_tensor(api, producer, values, stream, stream_status=0):
    """An object like a torch CUDA tensor whose write of `values` is still queued on the producer's stream: its type's
    table hands the tensor over unordered (no_sync) and names `stream` its current work stream, returning
    `stream_status`; its __dlpack__(stream=S) orders the write before S. Returns (object, the keyword arguments of
    each __dlpack__ call); the object's `exports` counts the table's exports."""
    x = producer.empty(np.shape(values))
    producer.write(x, values)

    @FROM_PY_CB
    def from_py(obj, out):
        ctypes.cast(obj, ctypes.py_object).value.exports += 1
        return api.managed_tensor_from_py_object_no_sync(x.tensor, out)

    @WORK_STREAM_CB
    def work_stream(device_type, device_id, out):
        out[0] = stream
        return stream_status

    calls = []
    cls = _producer_type(from_py=from_py, work_stream=work_stream,
                         dlpack=lambda **kw: (calls.append(kw), x.__dlpack__(**kw))[1])
    cls.__dlpack_device__ = lambda self: x.__dlpack_device__()
    cls.exports = 0
    return cls(), calls


def test_a_device_tensor_from_a_table_is_ordered_after_its_producer_s_stream(api, async_producer, counters):
    # One export, through the table: ortdlpack's stream waits for the producer's current work stream on the device.
    # Before: the tensor was dropped for not being kDLCPU and exported again through __dlpack__.
    data = np.arange(64, dtype=np.float32) + 1
    y, calls = _unordered_device_tensor(api, async_producer, data, async_producer.stream)
    waits = counters()["stream_waits"]
    t = od.from_dlpack(y)
    assert calls == [], "the tensor was exported a second time, through __dlpack__"
    assert counters()["stream_waits"] > waits, "ortdlpack's stream did not wait for the producer's on the device"
    np.testing.assert_array_equal(t.numpy(), data)  # zeros if read before the producer's write landed


def test_a_device_tensor_whose_stream_cannot_be_waited_for_goes_through_dlpack(api, async_producer, counters):
    # A 0 handle names no stream on the virtual device (it is CUDA's default stream only): ortdlpack cannot order the
    # tensor itself, so the producer orders it, told ortdlpack's stream through __dlpack__.
    data = np.arange(64, dtype=np.float32) + 2
    y, calls = _unordered_device_tensor(api, async_producer, data, None)
    t = od.from_dlpack(y)
    assert len(calls) == 1 and calls[0]["stream"] == async_producer.ortdlpack_stream()
    np.testing.assert_array_equal(t.numpy(), data)


def test_a_table_whose_current_work_stream_fails_goes_through_dlpack(api, async_producer):
    # current_work_stream returning -1: the tensor is released and the producer orders its work through __dlpack__.
    data = np.arange(64, dtype=np.float32) + 3
    y, calls = _unordered_device_tensor(api, async_producer, data, async_producer.stream, stream_status=-1)
    t = od.from_dlpack(y)
    assert len(calls) == 1 and calls[0]["stream"] == async_producer.ortdlpack_stream()
    np.testing.assert_array_equal(t.numpy(), data)


# --- a producer is asked for its tensor once --------------------------------------------------------------------


def test_a_device_feed_from_a_table_is_exported_once(api, async_producer):
    # ortdlpack.run on onnxruntime's InferenceSession: the feed is exported once, through the table, and ordered after
    # the producer's stream. Before: once to look for a numpy view (dropped: not host memory), then again to import it.
    from framework_models import build_models

    data = (np.arange(64, dtype=np.float32) + 4).reshape(16, 4)
    y, calls = _unordered_device_tensor(api, async_producer, data, async_producer.stream)
    session = ort.InferenceSession(build_models()["add"], providers=["CPUExecutionProvider"])
    (out,) = od.run(session, {"x": y})
    assert (y.exports, calls) == (1, [])
    np.testing.assert_array_equal(out, 2 * data)


def test_a_host_feed_numpy_has_no_dtype_for_is_exported_once(api):
    # A bfloat16 tensor (numpy has no bfloat16 of its own: no numpy view) from a table, fed to ortdlpack.run: exported
    # once and imported. Before: exported to look for a numpy view (dropped), then again to import it.
    ml_dtypes = pytest.importorskip("ml_dtypes")
    data = np.arange(6, dtype=np.float32).astype(ml_dtypes.bfloat16)
    t = od.from_dlpack(data)

    @FROM_PY_CB
    def from_py(obj, out):
        ctypes.cast(obj, ctypes.py_object).value.exports += 1
        return api.managed_tensor_from_py_object_no_sync(t, out)

    cls = _producer_type(from_py=from_py, dlpack=t.__dlpack__)
    cls.exports = 0
    x = cls()
    # y = float32(x): an output numpy has, so onnxruntime's run is where the run goes (feeds it can read as they are)
    vi = [helper.make_tensor_value_info("x", TensorProto.BFLOAT16, [6]),
          helper.make_tensor_value_info("y", TensorProto.FLOAT, [6])]
    node = helper.make_node("Cast", ["x"], ["y"], to=TensorProto.FLOAT)
    model = helper.make_model(helper.make_graph([node], "g", vi[:1], vi[1:]),
                              opset_imports=[helper.make_opsetid("", 18)], ir_version=9)
    (out,) = od.run(ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]), {"x": x})
    assert x.exports == 1
    np.testing.assert_array_equal(out, np.arange(6, dtype=np.float32))


def test_as_ortvalue_asks_a_table_once_then_dlpack(api, async_producer):
    # A device tensor whose stream cannot be waited for: one export through the table (released), one through
    # __dlpack__ naming ortdlpack's stream; onnxruntime's OrtValue then cannot wrap the memory. Before: as_ortvalue
    # asked the table twice.
    data = np.arange(64, dtype=np.float32) + 5
    y, calls = _unordered_device_tensor(api, async_producer, data, async_producer.stream, stream_status=-1)
    with pytest.raises(BufferError, match="onnxruntime.OrtValue cannot wrap memory"):
        od.as_ortvalue(y)
    assert y.exports == 1 and len(calls) == 1 and calls[0]["stream"] == async_producer.ortdlpack_stream()


def test_as_ortvalue_asks_a_plain_producer_once():
    # numpy and other producers without a table: one __dlpack__ call whatever the capsule holds (a read-only array
    # is imported by ortdlpack, a writable one goes to onnxruntime as it is). Before: a read-only array was asked
    # plainly (refused: a legacy capsule cannot say read-only), then again with max_version.
    for writable in (True, False):
        a = np.arange(6, dtype=np.float32)
        a.flags.writeable = writable
        calls = []

        class Counting:
            def __dlpack__(self, **kw):
                calls.append(kw)
                return a.__dlpack__(**kw)

            def __dlpack_device__(self):
                return a.__dlpack_device__()

        v = od.as_ortvalue(Counting())
        assert len(calls) == 1, (writable, calls)
        np.testing.assert_array_equal(v.numpy(), a)

