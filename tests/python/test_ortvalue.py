"""onnxruntime interop: OrtValues in and out of sessions, one ORT per process, plugin EP devices."""

import numpy as np
import onnxruntime as ort
import pytest

import ortdlpack as od
import ortdlpack.testing
from conftest import helper, jnp, onnx, TensorProto, torch  # optional: tests using one skip without it


@pytest.fixture(scope="module")
def session():
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [None, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [None, 4])
    z = helper.make_tensor_value_info("z", TensorProto.FLOAT, [None, 4])
    b = helper.make_tensor_value_info("b", TensorProto.BOOL, [None, 4])
    graph = helper.make_graph([helper.make_node("Add", ["x", "y"], ["z"]), helper.make_node("Greater", ["x", "y"], ["b"])],
                              "add", [x, y], [z, b])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 10
    onnx.checker.check_model(model)
    return ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])


def test_session_fed_with_torch_tensors(session):
    x = torch.arange(8, dtype=torch.float32).reshape(2, 4)
    y = torch.full((2, 4), 3.0)
    feeds = {"x": od.as_ortvalue(x), "y": od.as_ortvalue(y)}
    assert feeds["x"].data_ptr() == x.data_ptr()  # zero copy in
    z, b = session.run_with_ort_values(["z", "b"], feeds)
    tz = od.from_dlpack(z)
    tb = od.from_dlpack(b)
    assert tb.dtype == "bool"
    zt = torch.from_dlpack(tz)
    assert zt.data_ptr() == z.data_ptr()  # zero copy out
    assert torch.equal(zt, x + y)
    assert torch.equal(torch.from_dlpack(tb), x > y)
    zj = jnp.from_dlpack(tz)
    np.testing.assert_array_equal(np.asarray(zj), (x + y).numpy())
    zn = np.from_dlpack(tz)
    assert zn.ctypes.data == z.data_ptr()


def test_as_ortvalue_keeps_the_producer_alive(session, collect):
    x = torch.arange(4, dtype=torch.float32).reshape(1, 4)
    v = od.as_ortvalue(x)
    del x
    collect()
    z, _ = session.run_with_ort_values(["z", "b"], {"x": v, "y": od.as_ortvalue(np.ones((1, 4), np.float32))})
    np.testing.assert_array_equal(z.numpy(), [[1, 2, 3, 4]])


def test_as_ortvalue_of_read_only_and_strided(session):
    a = np.arange(8, dtype=np.float32).reshape(4, 2).T  # strided: copied
    r = np.ones((2, 4), np.float32)
    r.flags.writeable = False  # read-only: fed as is (ORT never writes inputs)
    vr = od.as_ortvalue(r)
    assert vr.data_ptr() == r.ctypes.data
    z, _ = session.run_with_ort_values(["z", "b"], {"x": od.as_ortvalue(a), "y": vr})
    np.testing.assert_array_equal(z.numpy(), a + 1)


@pytest.mark.parametrize("kind", ["plain", "bool", "float16", "offset", "strided", "read_only", "torch", "capsule"])
def test_as_ortvalue_hands_plain_tensors_over_and_imports_the_rest(kind):
    # Plain tensors go to onnxruntime's OrtValue.from_dlpack as they are; the others through ortdlpack's import.
    base = np.arange(12, dtype=np.int32)
    x = {"plain": base, "bool": base % 3 == 0, "float16": base.astype(np.float16), "offset": base[3:],
         "strided": base[::2], "read_only": base.copy(), "torch": torch.from_numpy(base),
         "capsule": base.__dlpack__(max_version=(1, 0))}[kind]
    if kind == "read_only":
        x.flags.writeable = False
    expected = np.asarray(base if kind in ("torch", "capsule") else x)
    v = od.as_ortvalue(x)
    np.testing.assert_array_equal(v.numpy(), expected)
    assert (v.data_ptr() == expected.ctypes.data) == (kind != "strided")


def test_as_ortvalue_of_an_ortvalue_is_itself():
    v = ort.OrtValue.ortvalue_from_numpy(np.zeros(2, np.float32))
    assert od.as_ortvalue(v) is v


def test_ortvalue_property_shares_memory():
    a = np.zeros(3, np.float32)
    v = od.from_dlpack(a).ortvalue
    assert isinstance(v, ort.OrtValue)
    a[0] = 2
    assert v.numpy()[0] == 2


def test_from_dlpack_of_an_ortvalue():
    v = ort.OrtValue.ortvalue_from_numpy(np.arange(6, dtype=np.int64).reshape(2, 3))
    t = od.from_dlpack(v)
    assert t.shape == (2, 3) and t.dtype == "int64"
    assert torch.from_dlpack(t).data_ptr() == v.data_ptr()
    vb = ort.OrtValue.ortvalue_from_numpy(np.array([True, False]))
    assert od.from_dlpack(vb).dtype == "bool"


def test_one_ort_per_process():
    # The core runs on the API the wheel handed over: a tensor made by ORT's Python module and one made by the core
    # are interchangeable in one session (checked above); here: the negotiated API version is the wheel's.
    assert od._ortdlpack._ort_api_version() >= 23
    assert od._ortdlpack._initialized()


def test_virtual_device_round_trip(vd):
    ep_device = vd[1][0]
    dev = od.Device(ep_device)
    assert dev.type != 1  # not CPU memory
    a = np.arange(6, dtype=np.float32)
    t = od.from_dlpack(a, device=ep_device)
    assert t.device == dev
    with pytest.raises(RuntimeError):
        np.from_dlpack(t)  # numpy's own error: it cannot read that memory
    c = np.from_dlpack(t, device="cpu")  # numpy asks for dl_device=(1, 0): exported as a copy on the host
    np.testing.assert_array_equal(c, a)
    with pytest.raises(ValueError):
        t.__array__(copy=False)
    np.testing.assert_array_equal(t.numpy(), a)  # copied back through the EP's data transfer
    back = od.from_dlpack(t.__dlpack__(max_version=(1, 3), dl_device=(1, 0)))
    np.testing.assert_array_equal(np.from_dlpack(back), a)
    assert t.to("cpu").device == "cpu"
    with pytest.raises(BufferError):
        t.__dlpack__(max_version=(1, 3), dl_device=(1, 0), copy=False)
