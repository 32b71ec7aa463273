"""What a hostile user does to what ortdlpack adds over onnxruntime's run, where a wrong answer could hide: outputs that
are feeds, feeds bound for many runs (strided, moved, rebound, copied to a device by ORT), torch views whose values
are not their memory, outputs in memory the feeds' framework cannot hold, outputs written in place of their feed
(in_place), and the session borrow when it fails. Every case would give a wrong answer, or an error onnxruntime does
not raise, without the rule it tests (issues 40 and 41)."""

from __future__ import annotations

import subprocess
import sys
import warnings

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

import ortdlpack
from ortdlpack import _ortdlpack

torch = pytest.importorskip("torch")

F = TensorProto.FLOAT


def model(nodes, inputs, outputs, initializers=(), opset=17) -> bytes:
    vi = helper.make_tensor_value_info
    graph = helper.make_graph(nodes, "g", [vi(n, F, s) for n, s in inputs], [vi(n, F, s) for n, s in outputs],
                              list(initializers))
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 9
    onnx.checker.check_model(m)
    return m.SerializeToString()


# output x is input x; y = x + x beside it
PASS_THROUGH = model([helper.make_node("Add", ["x", "x"], ["y"])], [("x", [2, 3])], [("x", [2, 3]), ("y", [2, 3])])
DOUBLE = model([helper.make_node("Add", ["x", "x"], ["y"])], [("x", ["N", 4])], [("y", ["N", 4])])
ADD = model([helper.make_node("Add", ["x", "c"], ["y"])], [("x", ["N"]), ("c", ["N"])], [("y", ["N"])])


def sessions(m: bytes):
    """The three ways a user runs a model of theirs with ortdlpack: (name, run(feeds, output_names, **kw))."""
    dropin = ortdlpack.InferenceSession(m, providers=["CPUExecutionProvider"])
    plain = ort.InferenceSession(m, providers=["CPUExecutionProvider"])
    core = ortdlpack.Session(m)
    return [
        ("dropin", lambda feeds, names=None, **kw: dropin.run(names, feeds, **kw)),
        ("ortdlpack.run", lambda feeds, names=None, **kw: ortdlpack.run(plain, feeds, names, output_type="torch", **kw)),
        ("Session", lambda feeds, names=None, **kw: core.run(feeds, names, output_type="torch", **kw)),
    ]


def binders(m: bytes):
    """The two bind()s: (name, bind(feeds, output_names, **kw))."""
    dropin = ortdlpack.InferenceSession(m, providers=["CPUExecutionProvider"])
    core = ortdlpack.Session(m)
    return [("dropin", lambda feeds, names=None, **kw: dropin.bind(feeds, names, output_type="torch", **kw)),
            ("Session", lambda feeds, names=None, **kw: core.bind(feeds, names, output_type="torch", **kw))]


# --- 1. an output that is a feed ----------------------------------------------------------------------------------


@pytest.mark.parametrize("way", range(3))
def test_a_passed_through_output_is_written_into_its_destination(way):
    name, run = sessions(PASS_THROUGH)[way]
    x = torch.arange(6.0).reshape(2, 3)
    d = torch.full((2, 3), -1.0)
    out = run({"x": x}, ["x", "y"], outputs={"x": d})
    assert torch.equal(d, x), name  # ORT hands back the feed and writes no destination: the executor copies
    assert out[0].data_ptr() == d.data_ptr()
    assert torch.equal(out[1], 2 * x)


@pytest.mark.parametrize("way", range(2))
def test_a_passed_through_output_of_a_binding_follows_its_feed(way):
    name, bind = binders(PASS_THROUGH)[way]
    xt = torch.zeros(2, 3)
    b = bind({"x": xt})
    b.run()
    xt.fill_(7)
    x_out, y_out = b.run()
    assert torch.equal(x_out, torch.full((2, 3), 7.0)), name
    assert torch.equal(y_out, torch.full((2, 3), 14.0))
    assert x_out.data_ptr() != xt.data_ptr()  # a copy of the feed, never the feed itself


def test_a_passed_through_output_declared_in_place_is_the_feed():
    s = ortdlpack.Session(PASS_THROUGH)
    x = torch.arange(6.0).reshape(2, 3)
    out = s.run({"x": x}, ["x", "y"], in_place={"x": "x"}, output_type="torch")
    assert out[0].data_ptr() == x.data_ptr() and torch.equal(out[1], 2 * x)


# --- 2. feeds bound for many runs ---------------------------------------------------------------------------------


def _views():
    big = torch.zeros(4, 8)
    return {
        "strided": lambda: big[:, ::2],
        "transposed": lambda: torch.zeros(4, 4).t(),
        "expanded": lambda: torch.zeros(1, 4).expand(4, 4),
        "numpy negative strides": lambda: np.zeros((4, 4), np.float32)[::-1],
        "numpy strided": lambda: np.zeros((4, 8), np.float32)[:, ::2],
    }


@pytest.mark.parametrize("view", list(_views()))
@pytest.mark.parametrize("way", range(2))
def test_bind_refuses_a_feed_it_could_only_copy(view, way):
    """A copy made at bind time would miss every later write to the feed: refused, saying why (docs/python.md)."""
    name, bind = binders(DOUBLE)[way]
    with pytest.raises(BufferError, match="where it is on every run of a Binding"):
        bind({"x": _views()[view]()})
    b = bind({"x": torch.zeros(4, 4)})
    with pytest.raises(BufferError, match="where it is on every run of a Binding"):
        b.run(feeds={"x": _views()[view]()})


@pytest.mark.parametrize("way", range(2))
def test_a_bound_feed_whose_memory_moved_is_refused_never_read(way):
    name, bind = binders(DOUBLE)[way]
    x = torch.ones(2, 4)
    b = bind({"x": x})
    assert torch.equal(b.run()[0], 2 * x)
    x.resize_(64, 4)  # torch allocates new storage: the bound memory may be freed
    with pytest.raises(ValueError, match="moved to other memory, or taken another shape, since it was bound"):
        b.run()
    x2 = torch.full((3, 4), 5.0)
    (y,) = b.run(feeds={"x": x2})  # rebound: a new shape, its outputs allocated again
    assert y.shape == (3, 4) and torch.equal(y, 2 * x2)


@pytest.mark.parametrize("shape", [(0,), (0, 4), (2, 0)])
def test_a_bound_empty_torch_feed_runs(shape):
    # An empty tensor has no memory (its import binds a pointer of its own): the moved-memory check compared that
    # pointer with torch's and refused every run (found by fuzz_session).
    x = torch.zeros(shape)
    dims = [f"d{i}" for i in range(len(shape))]
    b = ortdlpack.Session(model([helper.make_node("Identity", ["x"], ["y"])], [("x", dims)], [("y", dims)])).bind(
        {"x": x}, output_type="torch")
    assert b.run()[0].shape == shape
    x.resize_(4)
    with pytest.raises(ValueError, match="taken another shape"):
        b.run()


@pytest.mark.parametrize("change", ["t_", "unsqueeze_"])
def test_a_bound_feed_whose_view_changed_in_place_is_refused(change):
    # The same memory, another shape: the Binding would read it as the shape it was bound with.
    name, bind = binders(DOUBLE)[1]
    x = torch.arange(8.0).reshape(2, 4)
    b = bind({"x": x})
    getattr(x, change)(*([0] if change == "unsqueeze_" else []))
    with pytest.raises(ValueError, match="taken another shape.*t_\\(\\) or unsqueeze_\\(\\)"):
        b.run()


@pytest.mark.parametrize("move", ["resize_", "set_"])
@pytest.mark.parametrize("way", range(2))
def test_a_bound_destination_whose_memory_moved_is_refused_never_written(way, move):
    # Without the check ORT wrote the freed storage (a write after free: a crash, or silently elsewhere) and the
    # tensor kept its old values.
    name, bind = binders(DOUBLE)[way]
    dst = torch.zeros(2, 4)
    b = bind({"x": torch.ones(2, 4)}, outputs={"y": dst})
    b.run()
    assert torch.equal(dst, torch.full((2, 4), 2.0))
    if move == "resize_":
        dst.resize_(1 << 16, 4)
    else:
        dst.set_(torch.zeros(2, 4).untyped_storage(), 0, (2, 4))
    with pytest.raises(ValueError, match="destination of output 'y' has moved to other memory.*outputs="):
        b.run()
    with pytest.raises(ValueError, match="destination of output 'y' has moved"):
        b.run(feeds={"x": torch.ones(2, 4)})  # a rebound feed does not rebind the destination


@pytest.mark.parametrize("way", range(2))
def test_a_destination_moved_back_is_written_again(way):
    # The check compares the memory, not the object's history: a destination whose storage is set back is bound again.
    name, bind = binders(DOUBLE)[way]
    dst = torch.zeros(2, 4)
    storage = dst.untyped_storage()
    b = bind({"x": torch.ones(2, 4)}, outputs={"y": dst})
    dst.set_(torch.zeros(2, 4).untyped_storage(), 0, (2, 4))
    with pytest.raises(ValueError, match="has moved"):
        b.run()
    dst.set_(storage, 0, (2, 4))
    b.run()
    assert torch.equal(dst, torch.full((2, 4), 2.0))


@pytest.mark.parametrize("way", range(2))
def test_a_binding_rebinds_what_changes(way):
    name, bind = binders(DOUBLE)[way]
    x = torch.ones(2, 4)
    b = bind({"x": x})
    (y1,) = b.run()
    (y2,) = b.run(feeds={"x": torch.full((2, 4), 3.0)})  # same shape: the output stays where it is
    assert y2.data_ptr() == y1.data_ptr() and torch.equal(y2, torch.full((2, 4), 6.0))
    (y3,) = b.run(feeds={"x": torch.ones(5, 4)})  # another shape: allocated again
    assert y3.shape == (5, 4) and torch.equal(y3, torch.full((5, 4), 2.0))
    with pytest.raises(ValueError, match="not bound by this Binding"):
        b.run(feeds={"w": torch.ones(2, 4)})
    (y4,) = b.run()  # a failed rebind left it as it was
    assert torch.equal(y4, torch.full((5, 4), 2.0))


@pytest.mark.parametrize("way", range(2))
def test_a_binding_rebinds_a_feed_to_a_list_and_back_to_a_tensor(way):
    # Before: a list (or a Python scalar) given to Binding.run(feeds=) crashed the process (no session to type it
    # with); and an input rebound to a value kept the entry of the tensor bound before, so giving that tensor again
    # was taken for "no change" and the runs read the list's values.
    name, bind = binders(DOUBLE)[way]
    x = torch.ones(2, 4)
    b = bind({"x": x})
    (y,) = b.run(feeds={"x": [[1.0, 2.0, 3.0, 4.0]]})  # a value: a float32 array of the input's type, made now
    assert torch.equal(y, torch.tensor([[2.0, 4.0, 6.0, 8.0]]))
    x.fill_(5.0)
    (y,) = b.run(feeds={"x": x})  # the tensor bound at first, bound again
    assert torch.equal(y, torch.full((2, 4), 10.0))
    x.fill_(6.0)
    assert torch.equal(b.run()[0], torch.full((2, 4), 12.0))
    with pytest.raises(RuntimeError, match="numpy cannot make a float32 array"):
        b.run(feeds={"x": [["a"]]})


@pytest.mark.parametrize("way", range(2))
def test_a_run_that_fails_while_rebinding_leaves_the_binding_as_it_was(way):
    # Before: the feeds rebound ahead of the failure stayed bound in the core while the Binding's Python side kept the
    # old objects, so the old tensor given again was taken for "no change" and the runs read the new one.
    name, bind = binders(ADD)[way]
    x, c = torch.ones(4), torch.ones(4)
    b = bind({"x": x, "c": c})
    with pytest.raises(ValueError, match="input 'w' is not bound"):
        b.run(feeds={"x": torch.full((4,), 100.0), "w": c})
    with pytest.raises(ort.capi.onnxruntime_pybind11_state.InvalidArgument, match="Unexpected input data type"):
        b.run(feeds={"x": torch.full((4,), 100.0), "c": torch.ones(4, dtype=torch.float64)})
    assert torch.equal(b.run()[0], torch.full((4,), 2.0))
    x.fill_(3.0)
    assert torch.equal(b.run(feeds={"x": x, "c": c})[0], torch.full((4,), 4.0))


@pytest.mark.parametrize("feeds", [5, [("x", None)]])
def test_binding_run_feeds_that_are_no_mapping_are_a_type_error(feeds):
    b = ortdlpack.Session(ADD).bind({"x": torch.ones(4), "c": torch.ones(4)})
    with pytest.raises(TypeError, match="Binding.run: feeds must be a mapping of input names to tensors, not "):
        b.run(feeds=feeds)  # (before, for 5: "object of type 'int' has no len()")


def test_runs_of_one_binding_on_threads_keep_what_is_bound_true():
    # One thread rebinds x to one of two tensors every run, another runs what is bound: each rebinding run reads the
    # tensor it names, never the other (the Binding's Python side records a rebinding in the order the core made it).
    import threading

    b = ortdlpack.Session(ADD).bind({"x": torch.ones(4), "c": torch.ones(4)}, output_type="torch")
    feeds = [torch.full((4,), 1.0), torch.full((4,), 2.0)]
    wrong, stop = [], threading.Event()

    def plain():
        while not stop.is_set():
            b.run()

    t = threading.Thread(target=plain)
    t.start()
    try:
        for i in range(2000):
            x = feeds[i % 3 % 2]
            (y,) = b.run(feeds={"x": x})
            if not torch.equal(y, x + 1):
                wrong.append(i)
    finally:
        stop.set()
        t.join()
    assert not wrong


def test_a_binding_cleared_by_the_collector_says_so():
    # tp_clear, as the cyclic collector calls it on a cycle through a Binding; a finalizer in that cycle may still
    # call run(): a TypeError, never a read of what was dropped.
    import ctypes

    b = ortdlpack.Session(DOUBLE).bind({"x": torch.ones(2, 4)})
    get_slot = ctypes.pythonapi.PyType_GetSlot
    get_slot.restype, get_slot.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_int]
    clear = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object)(get_slot(type(b), 51))  # Py_tp_clear, GIL held
    assert clear(b) == 0
    with pytest.raises(TypeError, match="cleared by the garbage collector"):
        b.run()


def test_a_rebound_feed_that_overlaps_a_destination_is_refused():
    s = ortdlpack.Session(DOUBLE)
    dst = torch.zeros(2, 4)
    b = s.bind({"x": torch.ones(2, 4)}, outputs={"y": dst})
    b.run()
    with pytest.raises(ValueError, match="overlaps input 'x'"):
        b.run(feeds={"x": dst})


def test_a_host_feed_a_device_session_reads_is_copied_again_before_every_run(accel):
    """ORT's IoBinding copies a host feed to the device when it is bound: a Binding binds it again before every run,
    or later runs would read that first copy."""
    x = torch.ones(4)
    s = accel.session(model([helper.make_node("Add", ["x", "x"], ["y"])], [("x", [4])], [("y", [4])]))
    b = s.bind({"x": x}, output_type="numpy")
    assert b.run()[0].tolist() == [2.0] * 4
    x.fill_(5)
    assert b.run()[0].tolist() == [10.0] * 4


# --- 3. torch views whose values are not their memory -------------------------------------------------------------


def _neg_views():
    a, b = torch.arange(8.0), torch.arange(8.0) + 10
    return {"conj().imag": torch.complex(a, b).conj().imag, "_neg_view()": b._neg_view()}


@pytest.mark.parametrize("view", list(_neg_views()))
def test_a_negative_view_is_read_as_its_values(view):
    x = _neg_views()[view]
    assert x.is_neg()
    want = x.resolve_neg()
    assert torch.equal(torch.from_dlpack(ortdlpack.from_dlpack(x)), want)
    with pytest.raises(BufferError, match="values are not its memory"):
        ortdlpack.from_dlpack(x, copy=False)
    m = model([helper.make_node("Identity", ["x"], ["y"])], [("x", [8])], [("y", [8])])
    for name, run in sessions(m):
        assert torch.equal(run({"x": x})[0], want), name
    with pytest.raises(BufferError, match="values are not its memory"):  # a destination is never a copy
        ortdlpack.Session(m).run({"x": torch.ones(8)}, outputs={"y": _neg_views()[view]})
    for name, bind in binders(m):
        with pytest.raises(BufferError, match="values are not its memory"):
            bind({"x": x})


# --- 7. outputs in memory the feeds' framework cannot hold --------------------------------------------------------


def test_outputs_torch_cannot_hold_reach_it_where_the_feeds_are(webgpu):
    m = model([helper.make_node("Add", ["x", "x"], ["y"])], [("x", [5, 8])], [("y", [5, 8])])
    s = ortdlpack.InferenceSession(m, providers=["webgpu"])
    x = torch.randn(5, 8)
    (y,) = s.run(None, {"x": x})  # like the feeds: torch on the CPU, as onnxruntime's run returns host arrays
    assert isinstance(y, torch.Tensor) and y.device.type == "cpu" and torch.allclose(y, 2 * x)
    (y,) = s.bind({"x": x}).run()
    assert y.device.type == "cpu" and torch.allclose(y, 2 * x)
    with pytest.raises(BufferError, match="torch cannot hold.*output_type='torch'"):
        s.run(None, {"x": x}, output_type="torch")
    with pytest.raises(BufferError, match="torch cannot hold"):
        s.bind({"x": x}, output_type="torch")
    (t,) = s.run(None, {"x": x}, output_type="ortdlpack")  # a Tensor holds any memory: where the EP produced it
    assert t.device == webgpu.device


def test_outputs_placed_where_the_framework_cannot_hold_them_are_refused(vd):
    _, devices = vd
    s = ortdlpack.Session(DOUBLE, ep=devices[0].ep_name)
    with pytest.raises(BufferError, match="torch cannot hold.*name a device it holds"):
        s.run({"x": torch.ones(2, 4)}, device=devices[0], output_type="torch")
    (t,) = s.run({"x": torch.ones(2, 4)}, device=devices[0])  # ortdlpack's Tensor holds it
    assert t.device == ortdlpack.Device(devices[0])


# --- 8. onnxruntime's exceptions, as onnxruntime raises them --------------------------------------------------------


def test_a_kernel_failure_is_onnxruntime_s_class_and_nothing_else():
    vi = helper.make_tensor_value_info
    graph = helper.make_graph([helper.make_node("Reshape", ["x", "s"], ["y"])], "g",
                              [vi("x", F, [4]), vi("s", TensorProto.INT64, [1])], [vi("y", F, None)])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()
    feeds = {"x": np.ones(4, np.float32), "s": np.array([3], np.int64)}  # 4 elements cannot be 3
    with pytest.raises(Exception) as theirs:
        ort.InferenceSession(m).run(None, feeds)
    for x in (feeds["x"], torch.from_numpy(feeds["x"])):
        with pytest.raises(Exception) as ours:
            ortdlpack.InferenceSession(m).run(None, {"x": x, "s": feeds["s"]})
        assert type(ours.value) is type(theirs.value) and str(ours.value) == str(theirs.value)
        assert not isinstance(ours.value, RuntimeError)  # `except RuntimeError` catches neither


# --- 9. the session borrow, when it fails -----------------------------------------------------------------------


class ForeignCSession:
    """A C session replaced by an object of another kind (a future onnxruntime's): everything onnxruntime's Python run
    calls of it, and no pybind11 conduit to its C++ session (pybind11 finds a C++ object through it)."""

    def __init__(self, inner):
        self._inner = inner

    def __getattr__(self, name):
        if name == "_pybind11_conduit_v1_":
            raise AttributeError(name)
        return getattr(self._inner, name)


def test_without_the_borrow_host_feeds_still_run_through_onnxruntime_s_run():
    s = ortdlpack.InferenceSession(DOUBLE, providers=["CPUExecutionProvider"])
    s._sess = ForeignCSession(s._sess)
    assert _ortdlpack._borrow_status(s).startswith("no SessionIOBinding")
    x = torch.ones(2, 4)
    with pytest.warns(RuntimeWarning, match="cannot reach the ORT session"):
        (y,) = s.run(None, {"x": x})
    assert isinstance(y, torch.Tensor) and torch.equal(y, 2 * x)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # one warning per session
        (y,) = s.run(None, {"x": np.ones((2, 4), np.float32)})
        assert isinstance(y, np.ndarray)
    with pytest.raises(BufferError, match="cannot reach the ORT session.*outputs="):
        s.run(None, {"x": x}, outputs={"y": torch.zeros(2, 4)})
    with pytest.raises(BufferError, match="cannot reach the ORT session"):
        s.bind({"x": x})


def test_python_m_ortdlpack_says_whether_the_borrow_works():
    out = subprocess.run([sys.executable, "-m", "ortdlpack"], capture_output=True, text=True, timeout=120).stdout
    assert "InferenceSession borrow: reached" in out
