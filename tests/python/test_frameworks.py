"""Round trips with numpy, torch, jax and tensorflow, both directions, every dtype each framework has."""

import numpy as np
import pytest

import ortdlpack as od
from conftest import jax, jnp, ml_dtypes, tf, torch  # optional: tests using one skip without it


SHAPES = [(), (0,), (3, 0, 2), (5,), (2, 3, 4)]

NUMPY = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16", "float32",
         "float64"]
# Framework dtypes by name (looked up in the test: a missing framework skips its tests, not the file).
TORCH = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16", "float32",
         "float64", "bfloat16", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz"]
JAX = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16", "float32",
       "float64", "bfloat16", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz"]
TF = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16", "float32",
      "float64", "bfloat16"]


def values(shape, dtype="float32"):
    n = int(np.prod(shape)) if shape else 1
    return (np.arange(n) % 3).reshape(shape).astype(dtype)


def as_f64(a):
    return np.asarray(a).astype(np.float64)


# --- numpy ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", NUMPY)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_numpy_both_ways(dtype, shape):
    a = values(shape, dtype)
    t = od.from_dlpack(a)
    assert t.shape == a.shape and t.dtype == dtype
    b = np.from_dlpack(t)
    assert b.dtype == a.dtype and b.shape == a.shape
    np.testing.assert_array_equal(a, b)
    if a.size:
        assert b.ctypes.data == a.ctypes.data


def test_numpy_sliced_view_with_offset():
    base = np.arange(24, dtype=np.float32).reshape(4, 6)
    view = base[1:3]  # compact, nonzero offset
    t = od.from_dlpack(view, copy=False)
    np.testing.assert_array_equal(t.numpy(), view)
    assert t.numpy().ctypes.data == view.ctypes.data


@pytest.mark.parametrize("view", [lambda b: b[:, 1:4], lambda b: b[::2], lambda b: b.T, lambda b: b[:, ::-1]])
def test_numpy_non_contiguous(view):
    base = np.arange(24, dtype=np.float32).reshape(4, 6)
    v = view(base)
    with pytest.raises(BufferError):
        od.from_dlpack(v, copy=False)
    for copy in (None, True):
        t = od.from_dlpack(v, copy=copy)
        np.testing.assert_array_equal(t.numpy(), v)
        assert t.numpy().flags.c_contiguous


def test_numpy_size_one_dims_with_any_stride_need_no_copy():
    base = np.arange(12, dtype=np.int64).reshape(3, 4)
    v = base[1:2, :]  # shape (1, 4): stride of dim 0 is irrelevant
    t = od.from_dlpack(v, copy=False)
    assert t.numpy().ctypes.data == v.ctypes.data


def test_numpy_read_only():
    a = values((3, 2))
    a.flags.writeable = False
    t = od.from_dlpack(a)
    assert t.read_only
    b = np.from_dlpack(t)
    assert not b.flags.writeable
    assert not t.numpy().flags.writeable


def test_numpy_array_protocol():
    t = od.from_dlpack(values((2, 2), "int32"))
    np.testing.assert_array_equal(np.asarray(t), values((2, 2), "int32"))
    assert np.asarray(t, dtype=np.float64).dtype == np.float64
    assert np.array(t, copy=True).ctypes.data != np.asarray(t).ctypes.data


# --- torch ---------------------------------------------------------------------------------------------------


def torch_values(shape, dtype):
    return torch.from_numpy(values(shape, "float32")).to(dtype)


@pytest.mark.parametrize("dtype", TORCH, ids=str)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_torch_both_ways(dtype, shape):
    dtype = getattr(torch, dtype)
    x = torch_values(shape, dtype)
    t = od.from_dlpack(x)
    assert t.shape == tuple(x.shape)
    y = torch.from_dlpack(t)
    assert y.dtype == dtype and y.shape == x.shape
    assert torch.equal(x.to(torch.float32), y.to(torch.float32))
    if x.numel():
        assert y.data_ptr() == x.data_ptr()


def test_torch_views():
    base = torch.arange(24, dtype=torch.float32).reshape(4, 6)
    t = od.from_dlpack(base[2:], copy=False)  # storage offset
    assert torch.from_dlpack(t).data_ptr() == base[2:].data_ptr()
    nc = base[:, ::2]
    with pytest.raises(BufferError):
        od.from_dlpack(nc, copy=False)
    assert torch.equal(torch.from_dlpack(od.from_dlpack(nc)), nc)
    assert torch.equal(torch.from_dlpack(od.from_dlpack(base.T, copy=True)), base.T)


def test_torch_reads_read_only_tensor_through_versioned_capsule():
    a = values((3,))
    a.flags.writeable = False
    t = od.from_dlpack(a)
    y = torch.from_dlpack(t)  # torch asks for max_version >= (1, 0)
    assert torch.equal(y, torch.from_numpy(a.copy()))


# --- jax -----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", JAX)
@pytest.mark.parametrize("shape", [s for s in SHAPES], ids=str)
def test_jax_both_ways(dtype, shape):
    np_dtype = getattr(ml_dtypes, dtype, None) or np.dtype(dtype)
    x = jnp.asarray(values(shape, "float32").astype(np_dtype))
    t = od.from_dlpack(x)
    assert t.shape == x.shape and t.dtype == dtype
    y = jax.dlpack.from_dlpack(t)
    assert y.dtype == x.dtype and y.shape == x.shape
    np.testing.assert_array_equal(as_f64(x), as_f64(y))


def test_jax_consumes_without_copy():
    a = np.arange(16, dtype=np.float32)  # 64-byte aligned buffer for XLA
    t = od.from_dlpack(a)
    y = jnp.from_dlpack(t)
    np.testing.assert_array_equal(np.asarray(y), a)


# --- tensorflow ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", TF, ids=str)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_tensorflow_both_ways(dtype, shape):
    dtype = getattr(tf, dtype)
    x = tf.cast(tf.constant(values(shape, "float32")), dtype)
    t = od.from_dlpack(x)
    assert t.shape == tuple(x.shape)
    y = tf.experimental.dlpack.from_dlpack(t.__dlpack__())
    assert y.dtype == dtype
    np.testing.assert_array_equal(as_f64(tf.cast(x, tf.float64)), as_f64(tf.cast(y, tf.float64)))


# --- between frameworks through ortdlpack ---------------------------------------------------------------------


def test_torch_to_jax_to_numpy_through_ortdlpack():
    x = torch.arange(8, dtype=torch.float32)
    t = od.from_dlpack(x)
    j = jnp.from_dlpack(t)
    n = np.from_dlpack(od.from_dlpack(j))
    np.testing.assert_array_equal(n, x.numpy())
