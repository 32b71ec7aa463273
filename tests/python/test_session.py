"""ortdlpack.run: a plain onnxruntime.InferenceSession on DLPack tensors, without copies."""

from __future__ import annotations

import gc

import numpy as np
import onnxruntime as ort
import pytest

import ortdlpack
from conftest import assert_runs_do_not_grow_rss, cpu_session, data_ptr, tiny_input
from conftest import jnp, tf, torch  # optional: tests using one skip without it

# ortdlpack.run is ortdlpack.session.run (exported by the package's __init__).
from ortdlpack.session import run  # noqa: E402


@pytest.fixture(scope="module")
def add(models):
    return cpu_session(models["add_tiny"])


@pytest.fixture(scope="module")
def feature(models):
    return cpu_session(models["feature"])


@pytest.fixture(scope="module")
def head(models):
    return cpu_session(models["head"])


def _expected(add, x):
    return add.run(None, {"x": np.asarray(x)})[0]


# --- feeds from every framework ----------------------------------------------------------------------------------


def test_numpy_feed(add):
    x = tiny_input()
    (y,) = run(add, {"x": x})
    assert isinstance(y, ortdlpack.Tensor)
    assert y.shape == (1, 100) and y.dtype == "float32"
    np.testing.assert_array_equal(np.from_dlpack(y), _expected(add, x))


def test_torch_feed_and_consumers_share_memory(add):
    x = torch.from_numpy(tiny_input())
    (y,) = run(add, {"x": x})
    a = np.from_dlpack(y)
    t = torch.from_dlpack(y)
    assert a.ctypes.data == t.data_ptr()  # both views of ORT's output buffer: no copy on the way out
    np.testing.assert_array_equal(t.numpy(), _expected(add, x))


def test_jax_feed(add):
    x = jnp.asarray(tiny_input())
    (y,) = run(add, {"x": x})
    np.testing.assert_array_equal(np.from_dlpack(y), _expected(add, np.asarray(x)))


def test_tensorflow_feed(add):
    x = tf.constant(tiny_input())
    (y,) = run(add, {"x": x})
    np.testing.assert_array_equal(np.from_dlpack(y), _expected(add, x.numpy()))


def test_ortvalue_and_tensor_feeds(add):
    x = tiny_input()
    (y1,) = run(add, {"x": ort.OrtValue.ortvalue_from_numpy(x)})
    (y2,) = run(add, {"x": ortdlpack.from_dlpack(x)})
    np.testing.assert_array_equal(np.from_dlpack(y1), np.from_dlpack(y2))


def test_noncontiguous_feed_is_accepted(add):
    base = torch.from_numpy(np.ascontiguousarray(np.tile(tiny_input(), (2, 1)).T))  # (100, 2)
    x = base.T[:1]  # (1, 100), strided view
    assert not x.is_contiguous()
    (y,) = run(add, {"x": x})
    np.testing.assert_array_equal(np.from_dlpack(y), _expected(add, x.contiguous()))


# --- outputs into preallocated buffers ---------------------------------------------------------------------------


def test_output_into_preallocated_torch(add):
    x = torch.from_numpy(tiny_input())
    dst = torch.full((1, 100), -1.0)
    (y,) = run(add, {"x": x}, outputs={"y": dst})
    assert data_ptr(y) == dst.data_ptr()
    np.testing.assert_array_equal(dst.numpy(), _expected(add, x))


def test_output_into_preallocated_numpy(add):
    dst = np.zeros((1, 100), np.float32)
    (y,) = run(add, {"x": tiny_input()}, outputs={"y": dst})
    assert data_ptr(y) == dst.ctypes.data
    np.testing.assert_array_equal(dst, _expected(add, tiny_input()))


def test_device_cpu(add):
    (y,) = run(add, {"x": tiny_input()}, device="cpu")
    assert y.__dlpack_device__() == (1, 0)
    (y,) = run(add, {"x": tiny_input()}, ["y"], device=(1, 0))
    np.testing.assert_array_equal(np.from_dlpack(y), _expected(add, tiny_input()))


def test_two_model_pipeline_without_copies(feature, head):
    x = torch.rand(4, 3, 64, 64, generator=torch.Generator().manual_seed(0))
    (feat,) = run(feature, {"x": x})
    f = torch.relu(torch.from_dlpack(feat))
    assert f.shape == (4, 128)
    logits = torch.empty(4, 10)
    run(head, {"feat": f}, outputs={"logits": logits})
    ref = head.run(None, {"feat": np.maximum(feature.run(None, {"x": x.numpy()})[0], 0)})[0]
    np.testing.assert_allclose(logits.numpy(), ref, rtol=1e-5, atol=1e-5)


# --- errors, all before ORT runs --------------------------------------------------------------------------------


def test_unknown_input(add):
    with pytest.raises(ValueError, match=r"unknown input 'z'.*'x'"):
        run(add, {"x": tiny_input(), "z": tiny_input()})


def test_missing_input(add):
    with pytest.raises(ValueError, match=r"missing input 'x' \(float32\[1,100\]\)"):
        run(add, {})


def test_wrong_dtype(add):
    with pytest.raises(ValueError, match=r"input 'x'.*element type.*float32\[1,100\].*float64\[1,100\]"):
        run(add, {"x": tiny_input().astype(np.float64)})


def test_wrong_rank(add):
    with pytest.raises(ValueError, match=r"input 'x'.*rank"):
        run(add, {"x": tiny_input().reshape(100)})


def test_wrong_fixed_dim(feature):
    with pytest.raises(ValueError, match=r"input 'x'.*dimension 1.*float32\[N,3,64,64\]"):
        run(feature, {"x": np.zeros((1, 4, 64, 64), np.float32)})


def test_unknown_and_duplicate_outputs(add):
    with pytest.raises(ValueError, match=r"unknown output 'q'"):
        run(add, {"x": tiny_input()}, ["q"])
    with pytest.raises(ValueError, match=r"'y' is requested twice"):
        run(add, {"x": tiny_input()}, ["y", "y"])
    with pytest.raises(ValueError, match=r"unknown output 'q'"):
        run(add, {"x": tiny_input()}, outputs={"q": np.zeros((1, 100), np.float32)})


def test_preallocated_output_wrong_shape(add):
    with pytest.raises(ValueError, match=r"destination 'y'.*dimension 1"):
        run(add, {"x": tiny_input()}, outputs={"y": torch.empty(1, 99)})
    with pytest.raises(ValueError, match=r"destination 'y'.*element type"):
        run(add, {"x": tiny_input()}, outputs={"y": torch.empty(1, 100, dtype=torch.float64)})


def test_preallocated_output_read_only(add):
    dst = np.zeros((1, 100), np.float32)
    dst.flags.writeable = False
    with pytest.raises((ValueError, BufferError), match=r"'y'"):
        run(add, {"x": tiny_input()}, outputs={"y": dst})


def test_preallocated_output_never_copied(add):
    dst = torch.empty(1, 200)[:, ::2]  # (1, 100) with stride 2: ORT could only write into a copy
    with pytest.raises(BufferError, match=r"destination 'y'"):
        run(add, {"x": tiny_input()}, outputs={"y": dst})


def test_producer_whose_dlpack_raises(add):
    class Broken:
        def __dlpack__(self, **kwargs):
            raise RuntimeError("producer exploded")

        def __dlpack_device__(self):
            return (1, 0)

    with pytest.raises(RuntimeError, match=r"input 'x'.*producer exploded"):
        run(add, {"x": Broken()})


def test_not_a_tensor(add):
    with pytest.raises(TypeError, match=r"input 'x'.*list"):
        run(add, {"x": [1.0] * 100})
    with pytest.raises(TypeError, match=r"mapping"):
        run(add, [("x", tiny_input())])


# --- lifetimes and leaks ------------------------------------------------------------------------------------------


def test_outputs_own_their_memory_after_an_ortvalue_feed(add):
    # An OrtValue feed takes the IOBinding path. In onnxruntime <= 1.29 the values get_outputs() returns are freed
    # with the binding: the returned Tensors must hold ORT's outputs themselves (later runs reuse freed buffers).
    xs = [tiny_input() * k for k in range(1, 6)]
    ys = [run(add, {"x": ort.OrtValue.ortvalue_from_numpy(x)})[0] for x in xs]
    for x, y in zip(xs, ys):
        np.testing.assert_array_equal(np.from_dlpack(y), _expected(add, x))


def test_outputs_outlive_session(models):
    sess = cpu_session(models["add_tiny"])
    (y,) = run(sess, {"x": tiny_input()})
    t = torch.from_dlpack(y)
    del sess, y
    gc.collect()
    np.testing.assert_allclose(t.numpy(), tiny_input() + (t.numpy() - tiny_input()))  # still readable
    assert t.shape == (1, 100)


def test_feeds_are_not_held_after_run(add):
    import weakref

    x = torch.from_numpy(tiny_input())
    ref = weakref.ref(x)
    run(add, {"x": x})
    run(add, {"x": x}, outputs={"y": torch.empty(1, 100)})
    del x
    gc.collect()
    assert ref() is None


def test_ten_thousand_runs_do_not_grow_rss(add):
    x = torch.from_numpy(tiny_input())
    dst = torch.empty(1, 100)

    def run_once(i):
        if i % 2:
            run(add, {"x": x}, outputs={"y": dst})
        else:
            torch.from_dlpack(run(add, {"x": x})[0])

    assert_runs_do_not_grow_rss(run_once)
