"""Bad input gives the documented exception, never a crash.

TypeError   not a DLPack object (no __dlpack__, not a capsule, capsule of another name), bad argument types
ValueError  malformed DLPack fields, a consumed capsule, invalid argument values (stream, device names)
BufferError well-formed but not exchangeable (dtype, lanes, device, layout with copy=False, DLPack major 2)
"""

import sys

import numpy as np
import pytest

import ortdlpack as od
from conftest import FakeProducer, _capi


def fake(**kw):
    return FakeProducer(np.arange(6, dtype=np.float32).reshape(2, 3), **kw)


@pytest.mark.parametrize("x", [1, "abc", None, [1, 2], object(), np.float32(1.0).item()])
def test_non_dlpack_objects_are_type_errors(x):
    with pytest.raises(TypeError):
        od.from_dlpack(x)


def test_capsule_with_another_name_is_type_error():
    cap = _capi.PyCapsule_New(id(object), b"not_a_tensor", None)
    with pytest.raises(TypeError, match="not a DLPack tensor"):
        od.from_dlpack(cap)


def test_dlpack_returning_non_capsule_is_type_error():
    class Liar:
        def __dlpack__(self, **kw):
            return 42

    with pytest.raises(TypeError):
        od.from_dlpack(Liar())


def test_producer_exceptions_propagate():
    class Broken:
        def __dlpack__(self, **kw):
            raise RuntimeError("producer failed")

    with pytest.raises(RuntimeError, match="producer failed"):
        od.from_dlpack(Broken())


GARBAGE = {
    "negative ndim": (dict(ndim=-1), ValueError),
    "huge ndim": (dict(ndim=1000), ValueError),
    "NULL shape": (dict(shape=None), ValueError),
    "negative dim": (dict(shape=(2, -3)), ValueError),
    "overflowing shape": (dict(shape=(2**62, 2**62), strides=None), ValueError),
    "overflowing bytes": (dict(shape=(2**61, 1), strides=None), ValueError),
    "NULL data with elements": (dict(data=None), ValueError),
    "byte_offset overflow": (dict(byte_offset=2**64 - 1), ValueError),
    "strides overflow": (dict(strides=(2**62, 1)), ValueError),
    "unknown dtype code": (dict(code=99), BufferError),
    "bits mismatch": (dict(code=2, bits=24), BufferError),
    "lanes 2": (dict(lanes=2), BufferError),
    "lanes 0": (dict(lanes=0), BufferError),
    "unknown device": (dict(device=(99, 0)), BufferError),
    "unmapped device": (dict(device=(9, 0)), BufferError),
}


@pytest.mark.parametrize("versioned", [True, False], ids=["versioned", "legacy"])
@pytest.mark.parametrize("case", list(GARBAGE), ids=list(GARBAGE))
def test_garbage_fields(case, versioned, collect):
    fields, error = GARBAGE[case]
    p = fake(versioned=versioned, **fields)
    with pytest.raises(error):
        od.from_dlpack(p)
    collect()
    assert p.deleted == 1  # the capsule kept ownership and freed the tensor exactly once


def test_size_zero_with_null_data_is_fine():
    p = FakeProducer(np.zeros((0, 3), np.float32), data=None)
    t = od.from_dlpack(p)
    assert t.shape == (0, 3)


def test_strided_with_copy_false_is_buffer_error():
    p = fake(strides=(1, 2))
    with pytest.raises(BufferError):
        od.from_dlpack(p, copy=False)


def test_misaligned_data_needs_a_copy():
    buf = np.zeros(17, np.uint8)
    p = FakeProducer(buf, code=2, bits=32, shape=(4,), strides=(1,), byte_offset=1)
    with pytest.raises(BufferError):
        od.from_dlpack(p, copy=False)
    t = od.from_dlpack(FakeProducer(buf, code=2, bits=32, shape=(4,), strides=(1,), byte_offset=1))
    assert t.shape == (4,)


def test_argument_type_errors():
    t = od.from_dlpack(np.zeros(2))
    with pytest.raises(TypeError):
        od.from_dlpack(t, device=3.5)
    with pytest.raises(TypeError):
        t.__dlpack__(dl_device="cpu", max_version=[1, 0])
    with pytest.raises(TypeError):
        od.from_dlpack()  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        od.Tensor()  # no public constructor: from_dlpack makes Tensors


def test_value_errors():
    t = od.from_dlpack(np.zeros(2))
    with pytest.raises(ValueError):
        t.__dlpack__(stream=7)
    with pytest.raises(ValueError):
        od.Device("warp:0")
    with pytest.raises(ValueError):
        od.register_device("x", "tpu", 1, "default", "ext_dev")


def test_register_device_conflicts_are_value_errors():
    with pytest.raises(ValueError):
        od.register_device("Cuda", "gpu", 0x10DE, "default", "ext_dev")  # built-in memory
    with pytest.raises(ValueError):
        od.register_device("Fake", "npu", 0xBEEF, "default", "cuda")  # reserved for NVIDIA memory
    with pytest.raises(ValueError):
        od.register_device("Fake", "cpu", 0, "default", "ext_dev")  # CPU memory is always kDLCPU


def test_register_and_unregister_device():
    od.register_device("FakeNpu", "npu", 0xBEEF, "default", "maia")
    od.register_device("FakeNpu", "npu", 0xBEEF, "default", "maia")  # same row again: no-op
    with pytest.raises(ValueError):
        od.register_device("Other", "npu", 0xBEEF, "default", "hexagon")
    assert od.unregister_device("npu", 0xBEEF, "default")
    assert not od.unregister_device("npu", 0xBEEF, "default")


def test_no_crash_after_many_errors():
    for _ in range(1000):
        with pytest.raises(ValueError):
            od.from_dlpack(fake(ndim=-1))
    assert sys.getrefcount(None) > 0


# --- one exception for "a copy is needed and copy=False forbids it" ---------------------------------------------------


def test_copy_required_error_is_both_value_error_and_buffer_error():
    assert issubclass(od.CopyRequiredError, ValueError) and issubclass(od.CopyRequiredError, BufferError)


@pytest.mark.parametrize("route", ["producer", "capsule", "ndarray", "dl_device", "array"])
def test_every_copy_false_refusal_is_copy_required_error(route):
    strided = np.arange(12, dtype=np.float32).reshape(3, 4)[:, ::2]
    t = od.from_dlpack(np.arange(4, dtype=np.int32))
    with pytest.raises(od.CopyRequiredError) as e:
        if route == "producer":
            od.from_dlpack(fake(strides=(1, 2)), copy=False)
        elif route == "capsule":
            od.from_dlpack(strided.__dlpack__(max_version=(1, 0)), copy=False)
        elif route == "ndarray":
            od.from_dlpack(strided, copy=False)
        elif route == "dl_device":
            t.__dlpack__(max_version=(1, 3), dl_device=(12, 0), copy=False)
        else:
            np.asarray(t, dtype=np.float64, copy=False)
    assert isinstance(e.value, ValueError) and isinstance(e.value, BufferError)


torch = pytest.importorskip("torch")


# torch deprecates quantized tensors (and warns on creating one); while it has them, they must be refused cleanly.
@pytest.mark.filterwarnings("ignore:torch.quantize_per_tensor:UserWarning")
@pytest.mark.parametrize("kind", ["quantized", "sparse"])
def test_torch_tensors_without_dlpack_form_are_buffer_errors(kind):
    # torch's C exchange table refuses them with RuntimeError; the protocol (and torch's own __dlpack__) says BufferError.
    x = torch.arange(6, dtype=torch.float32)
    x = torch.quantize_per_tensor(x, 0.1, 0, torch.qint8) if kind == "quantized" else x.reshape(2, 3).to_sparse()
    with pytest.raises(BufferError):
        od.from_dlpack(x)
