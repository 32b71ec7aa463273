"""Every dtype of the core's table: import, name, export (versioned and legacy), numpy view."""

import numpy as np
import pytest

import ortdlpack as od
from conftest import (ALL_DTYPES, UNSUPPORTED_DTYPES, raw_producer, read_legacy, read_versioned,
                      skip_if_ort_lacks_dtype)
from conftest import ml_dtypes, torch  # optional: tests using one skip without it


@pytest.mark.parametrize("name,code,bits", ALL_DTYPES, ids=[d[0] for d in ALL_DTYPES])
def test_every_dtype_round_trips_through_dlpack(name, code, bits):
    skip_if_ort_lacks_dtype(name)
    p = raw_producer(code, bits)
    t = od.from_dlpack(p)
    assert t.dtype == name
    assert t.shape == (8,)
    cap = t.__dlpack__(max_version=(1, 3))
    m = read_versioned(cap)
    assert (m.dl_tensor.dtype.code, m.dl_tensor.dtype.bits, m.dl_tensor.dtype.lanes) == (code, bits, 1)
    assert m.dl_tensor.data == p.buffer.ctypes.data  # zero copy
    assert (m.version.major, m.version.minor) == (1, 3)
    back = od.from_dlpack(cap)
    assert back.dtype == name


@pytest.mark.parametrize("name,code,bits", [d for d in ALL_DTYPES if d[2] >= 8], ids=lambda d: str(d))
def test_legacy_export_of_byte_types(name, code, bits):
    skip_if_ort_lacks_dtype(name)
    t = od.from_dlpack(raw_producer(code, bits))
    m = read_legacy(t.__dlpack__())
    assert (m.dl_tensor.dtype.code, m.dl_tensor.dtype.bits) == (code, bits)


@pytest.mark.parametrize("name,code,bits", UNSUPPORTED_DTYPES, ids=[d[0] for d in UNSUPPORTED_DTYPES])
def test_types_ort_cannot_hold_are_buffer_errors(name, code, bits, collect):
    p = raw_producer(code, bits)
    with pytest.raises(BufferError):
        od.from_dlpack(p)
    collect()
    assert p.deleted == 1  # the failed import left the tensor to its capsule, whose destructor freed it


@pytest.mark.parametrize("name", ["int4", "uint4", "float4_e2m1fn"])
def test_packed_types_need_versioned(name):
    skip_if_ort_lacks_dtype(name)
    code, bits = next((c, b) for n, c, b in ALL_DTYPES if n == name)
    t = od.from_dlpack(raw_producer(code, bits))
    with pytest.raises(BufferError):
        t.__dlpack__()


NUMPY_NATIVE = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16",
                "float32", "float64"]


@pytest.mark.parametrize("name", NUMPY_NATIVE)
def test_numpy_native_dtypes(name):
    a = (np.arange(6) % 2).astype(name).reshape(2, 3)
    t = od.from_dlpack(a)
    assert t.dtype == name
    b = t.numpy()
    assert b.dtype == np.dtype(name)
    np.testing.assert_array_equal(a, b)
    assert b.ctypes.data == a.ctypes.data


@pytest.mark.parametrize("name", ["bfloat16", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz",
                                  ])
def test_ml_dtypes_views(name):
    values = np.array([0.5, 1.0, 2.0, 4.0], dtype=np.float32)
    src = values.astype(getattr(ml_dtypes, name))
    code = dict((n, c) for n, c, _ in ALL_DTYPES)[name]
    from conftest import FakeProducer

    raw = src.view(np.uint8)
    p = FakeProducer(raw, code=code, bits=src.itemsize * 8, shape=(4,), strides=(1,))
    t = od.from_dlpack(p)
    b = t.numpy()
    assert b.dtype == getattr(ml_dtypes, name)
    np.testing.assert_array_equal(b.astype(np.float32), values)
    assert b.ctypes.data == raw.ctypes.data


@pytest.mark.parametrize("name,signed", [("int4", True), ("uint4", False)])
def test_packed_types_unpack_into_ml_dtypes(name, signed):
    bits = 4 if "4" in name else 2
    per_byte = 8 // bits
    values = np.array([-1, 1, 0, -2, 1, 0, -1, 1], dtype=np.int8) if signed else np.array([1, 2, 3, 0, 1, 2, 3, 0], np.int8)
    packed = np.zeros(len(values) // per_byte, np.uint8)
    for i, v in enumerate(values):
        packed[i // per_byte] |= (int(v) & ((1 << bits) - 1)) << (bits * (i % per_byte))
    code = 0 if signed else 1
    from conftest import FakeProducer

    t = od.from_dlpack(FakeProducer(packed, code=code, bits=bits, shape=(len(values),), strides=(1,)))
    b = t.numpy()
    assert b.dtype == getattr(ml_dtypes, name)
    np.testing.assert_array_equal(b.astype(np.int8), values)
    with pytest.raises(ValueError):
        t.__array__(copy=False)


def test_bool_stays_bool_everywhere():
    a = np.array([True, False, True])
    t = od.from_dlpack(a)
    assert t.dtype == "bool"
    assert read_versioned(t.__dlpack__(max_version=(1, 0))).dl_tensor.dtype.code == 6
    assert torch.from_dlpack(t).dtype == torch.bool
    assert od.from_dlpack(torch.tensor([True, False])).dtype == "bool"
    assert t.ortvalue.data_type() == "tensor(bool)"


@pytest.mark.parametrize("name", ["bfloat16", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz"])
def test_torch_low_precision_both_ways(name):
    tdtype = getattr(torch, name)
    x = torch.tensor([0.5, 1.0, 2.0, -4.0]).to(tdtype)
    t = od.from_dlpack(x)
    assert t.dtype == name
    y = torch.from_dlpack(t)
    assert y.dtype == tdtype
    assert y.data_ptr() == x.data_ptr()
    np.testing.assert_array_equal(t.numpy().astype(np.float32), x.float().numpy())


def test_dtype_of_unknown_name_is_value_error():
    with pytest.raises(ValueError):
        od.register_device("x", "npu", 0x1234, "default", "nonsense")
