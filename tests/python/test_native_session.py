"""ortdlpack.Session: an ONNX Runtime session created and run in C++ (ortdlpack::Session) from Python."""

from __future__ import annotations

import gc
import pathlib

import numpy as np
import onnxruntime as ort
import pytest

import ortdlpack
from conftest import EP_NAME, assert_runs_do_not_grow_rss, cpu_session, data_ptr, tiny_input
from conftest import torch  # optional: tests using one skip without it


@pytest.fixture(scope="module")
def add(models):
    return ortdlpack.Session(models["add_tiny"], intra_op_num_threads=1)


@pytest.fixture(scope="module")
def add_ref(models):
    return cpu_session(models["add_tiny"])


# --- construction -------------------------------------------------------------------------------------------------


def test_names(add):
    assert add.input_names == ("x",)
    assert add.output_names == ("y",)


@pytest.mark.parametrize("kind", ["str", "pathlike", "bytes"])
def test_model_from_path_or_bytes(models, add_ref, kind):
    path = models["add_tiny"]
    model = {"str": str(path), "pathlike": pathlib.Path(path), "bytes": pathlib.Path(path).read_bytes()}[kind]
    s = ortdlpack.Session(model, intra_op_num_threads=1, inter_op_num_threads=1)
    (y,) = s.run({"x": tiny_input()})
    np.testing.assert_array_equal(np.from_dlpack(y), add_ref.run(None, {"x": tiny_input()})[0])


def test_bad_model_path_is_ort_runtime_error(tmp_path):
    with pytest.raises(RuntimeError, match="nonexistent.onnx"):
        ortdlpack.Session(str(tmp_path / "nonexistent.onnx"))
    with pytest.raises(RuntimeError):
        ortdlpack.Session(b"not an onnx model")
    with pytest.raises(TypeError, match="model"):
        ortdlpack.Session(42)


def test_unknown_ep_lists_the_available_ones(models):
    with pytest.raises(ValueError, match=r"'NoSuchEP'.*available:.*'CPUExecutionProvider'"):
        ortdlpack.Session(models["add_tiny"], ep="NoSuchEP")
    with pytest.raises(ValueError, match="ep_options needs ep"):
        ortdlpack.Session(models["add_tiny"], ep_options={"a": "b"})


def test_session_config_entries(models, add_ref):
    s = ortdlpack.Session(models["add_tiny"], config={"session.intra_op.allow_spinning": "0"})
    (y,) = s.run({"x": tiny_input()})
    np.testing.assert_array_equal(np.from_dlpack(y), add_ref.run(None, {"x": tiny_input()})[0])
    with pytest.raises(TypeError, match="config"):
        ortdlpack.Session(models["add_tiny"], config={"session.intra_op.allow_spinning": 0})
    with pytest.raises(TypeError, match="config"):
        ortdlpack.Session(models["add_tiny"], config=[("a", "b")])


# --- runs: results, zero copy ----------------------------------------------------------------------------------------


def test_numpy_feed(add, add_ref):
    x = tiny_input()
    (y,) = add.run({"x": x})
    assert isinstance(y, ortdlpack.Tensor)
    assert y.shape == (1, 100) and y.dtype == "float32"
    np.testing.assert_array_equal(np.from_dlpack(y), add_ref.run(None, {"x": x})[0])


def test_torch_feed_and_torch_consumer_share_the_output(add, add_ref):
    x = torch.from_numpy(tiny_input())
    (y,) = add.run({"x": x}, ["y"])
    t = torch.from_dlpack(y)
    assert t.data_ptr() == y.data_ptr == data_ptr(y)  # ORT's output buffer, not a copy
    np.testing.assert_array_equal(t.numpy(), add_ref.run(None, {"x": x.numpy()})[0])


def test_ortvalue_and_tensor_feeds(add):
    x = tiny_input()
    (y1,) = add.run({"x": ort.OrtValue.ortvalue_from_numpy(x)})
    (y2,) = add.run({"x": ortdlpack.from_dlpack(x)})
    np.testing.assert_array_equal(np.from_dlpack(y1), np.from_dlpack(y2))


def test_feed_is_read_in_place(add, add_ref):
    # The feed is also the output's destination: ORT reads x from the caller's buffer and writes y into it (the
    # destination is that buffer: same data pointer), and the elementwise Add gives x + b there.
    buf = torch.from_numpy(tiny_input().copy())
    expected = add_ref.run(None, {"x": buf.numpy().copy()})[0]
    (y,) = add.run({"x": buf}, outputs={"y": buf})
    assert y.data_ptr == buf.data_ptr()
    np.testing.assert_array_equal(buf.numpy(), expected)


@pytest.mark.parametrize("framework", ["numpy", "torch"])
def test_outputs_into_preallocated_destinations(add, add_ref, framework):
    dst = np.full((1, 100), -1, np.float32) if framework == "numpy" else torch.full((1, 100), -1.0)
    ptr = dst.ctypes.data if framework == "numpy" else dst.data_ptr()
    (y,) = add.run({"x": tiny_input()}, outputs={"y": dst})
    assert y.data_ptr == ptr
    np.testing.assert_array_equal(np.asarray(dst), add_ref.run(None, {"x": tiny_input()})[0])


def test_device_cpu(add):
    (y,) = add.run({"x": tiny_input()}, device="cpu")
    assert y.__dlpack_device__() == (1, 0)
    (y,) = add.run({"x": tiny_input()}, device=(1, 0))
    assert y.__dlpack_device__() == (1, 0)


def test_feature_head_pipeline(models):
    feature = ortdlpack.Session(models["feature"], intra_op_num_threads=1)
    head = ortdlpack.Session(models["head"], intra_op_num_threads=1)
    feature_ref, head_ref = cpu_session(models["feature"]), cpu_session(models["head"])
    x = torch.rand(4, 3, 64, 64, generator=torch.Generator().manual_seed(0))
    (feat,) = feature.run({"x": x})
    f = torch.relu(torch.from_dlpack(feat))
    logits = torch.empty(4, 10)
    (out,) = head.run({"feat": f}, outputs={"logits": logits})
    assert out.data_ptr == logits.data_ptr()
    ref = head_ref.run(None, {"feat": np.maximum(feature_ref.run(None, {"x": x.numpy()})[0], 0)})[0]
    np.testing.assert_allclose(logits.numpy(), ref, rtol=1e-5, atol=1e-5)


# --- errors -------------------------------------------------------------------------------------------------------


def test_unknown_input(add):
    with pytest.raises(ValueError, match=r"unknown input 'z'.*'x'"):
        add.run({"x": tiny_input(), "z": tiny_input()})


def test_missing_input(add):
    with pytest.raises(ValueError, match=r"missing input 'x' \(float32\[1,100\]\)"):
        add.run({})


def test_wrong_dtype(add):
    with pytest.raises(ValueError, match=r"input 'x'.*element type.*float32\[1,100\].*float64\[1,100\]"):
        add.run({"x": tiny_input().astype(np.float64)})


def test_wrong_rank(add):
    with pytest.raises(ValueError, match=r"input 'x'.*rank"):
        add.run({"x": tiny_input().reshape(100)})


def test_unknown_output(add):
    with pytest.raises(ValueError, match=r"unknown output 'q'"):
        add.run({"x": tiny_input()}, ["q"])
    with pytest.raises(TypeError, match="output_names"):
        add.run({"x": tiny_input()}, "y")


def test_read_only_destination(add):
    dst = np.zeros((1, 100), np.float32)
    dst.flags.writeable = False
    with pytest.raises(ValueError, match=r"'y' is read-only"):
        add.run({"x": tiny_input()}, outputs={"y": dst})


def test_destination_is_never_copied(add):
    dst = torch.empty(1, 200)[:, ::2]  # strided: ORT could only write into a copy
    with pytest.raises(BufferError):
        add.run({"x": tiny_input()}, outputs={"y": dst})


def test_feeds_must_be_a_mapping(add):
    with pytest.raises(TypeError, match="mapping"):
        add.run([("x", tiny_input())])
    with pytest.raises(TypeError):
        add.run({"x": [1.0] * 100})


# --- the virtual device plugin EP ---------------------------------------------------------------------------------


def test_virtual_device_ep_runs_a_device_feed(vd, counters, models, add_ref):
    _, devices = vd
    s = ortdlpack.Session(models["add_tiny"], ep=EP_NAME)
    x = tiny_input()
    expected = add_ref.run(None, {"x": x})[0]
    t = ortdlpack.from_dlpack(x, device=devices[1])
    assert t.__dlpack_device__()[0] != 1  # device-resident feed
    (y,) = s.run({"x": t})
    np.testing.assert_array_equal(np.asarray(y.to("cpu")), expected)
    assert counters()["bytes_d2h"] >= x.nbytes  # ORT staged the feed to the CPU kernel through the EP's transfer
    (y,) = s.run({"x": t}, device=devices[0])  # outputs allocated on the EP device's memory
    assert y.device == ortdlpack.Device(devices[0])
    np.testing.assert_array_equal(np.asarray(y.to("cpu")), expected)
    del s, t, y
    gc.collect()


def test_virtual_device_ep_unknown_name_lists_it(vd, models):
    with pytest.raises(ValueError, match=rf"available:.*'{EP_NAME}'"):
        ortdlpack.Session(models["add_tiny"], ep="virtualdeviceep")


# --- lifetimes and leaks ------------------------------------------------------------------------------------------


def test_outputs_outlive_the_session(models, add_ref):
    s = ortdlpack.Session(models["add_tiny"])
    (y,) = s.run({"x": tiny_input()})
    t = torch.from_dlpack(y)
    del s, y
    gc.collect()
    np.testing.assert_array_equal(t.numpy(), add_ref.run(None, {"x": tiny_input()})[0])


def test_feeds_are_not_held_after_run(add):
    import weakref

    x = torch.from_numpy(tiny_input())
    ref = weakref.ref(x)
    add.run({"x": x})
    add.run({"x": x}, outputs={"y": torch.empty(1, 100)})
    del x
    gc.collect()
    assert ref() is None


def test_ten_thousand_runs_do_not_grow_rss(add):
    x = torch.from_numpy(tiny_input())
    dst = torch.empty(1, 100)

    def run_once(i):
        if i % 2:
            add.run({"x": x}, outputs={"y": dst})
        else:
            torch.from_dlpack(add.run({"x": x})[0])

    assert_runs_do_not_grow_rss(run_once)
