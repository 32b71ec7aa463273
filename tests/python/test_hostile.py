"""What a hostile or careless user does to what ortdlpack adds to onnxruntime (issue 34): destinations that share
memory with a feed or with each other, reference cycles through ortdlpack's objects, interrupts raised in a
producer's callbacks, runs racing with set_providers, malformed calls, values that must come back in the caller's
framework. Each test would have caught one of the failures an outside suite found: a silent wrong answer, a cycle
never collected, a Ctrl-C lost, a C++ exception name, a class onnxruntime does not raise."""

from __future__ import annotations

import collections.abc
import ctypes
import gc
import sys
import threading
import time
import weakref

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

import ortdlpack
from conftest import ORT_VERSION, ml_dtypes, skip_if_ort_lacks_dtype, torch  # (optional: a test that uses one skips without it)
from ortdlpack import errors

# --- models ----------------------------------------------------------------------------------------------------------


def _model(nodes, inputs, outputs, opset=18) -> bytes:
    graph = helper.make_graph(nodes, "hostile", inputs, outputs)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 9
    return model.SerializeToString()


def _f32(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


# t = Transpose(x), m = MatMul(x, x): writing either into x (or both into one buffer) while ORT reads x is wrong.
TRANSPOSE_MATMUL = _model([helper.make_node("Transpose", ["x"], ["t"]), helper.make_node("MatMul", ["x", "x"], ["m"])],
                          [_f32("x", [4, 4])], [_f32("t", [4, 4]), _f32("m", [4, 4])])
# z = x + y
ADD = _model([helper.make_node("Add", ["x", "y"], ["z"])], [_f32("x", ["N", 3]), _f32("y", [3])], [_f32("z", ["N", 3])])


def _x() -> np.ndarray:
    return np.arange(16, dtype=np.float32).reshape(4, 4)


# The four ways to run with destinations: the drop-in, ortdlpack.run, ortdlpack.Session, and bind() of each.
def _drop_in(feeds, names, outputs):
    return ortdlpack.InferenceSession(TRANSPOSE_MATMUL, providers=["CPUExecutionProvider"]).run(
        names, feeds, outputs=outputs)


def _run(feeds, names, outputs):
    return ortdlpack.run(ort.InferenceSession(TRANSPOSE_MATMUL, providers=["CPUExecutionProvider"]), feeds, names,
                         outputs=outputs)


def _session(feeds, names, outputs):
    return ortdlpack.Session(TRANSPOSE_MATMUL).run(feeds, names, outputs=outputs)


def _drop_in_bind(feeds, names, outputs):
    return ortdlpack.InferenceSession(TRANSPOSE_MATMUL, providers=["CPUExecutionProvider"]).bind(
        feeds, names, outputs=outputs)


def _session_bind(feeds, names, outputs):
    return ortdlpack.Session(TRANSPOSE_MATMUL).bind(feeds, names, outputs=outputs)


RUNNERS = [_drop_in, _run, _session, _drop_in_bind, _session_bind]


# --- 1. destinations that share memory ---------------------------------------------------------------------------


@pytest.mark.parametrize("framework", ["numpy", "torch"])
@pytest.mark.parametrize("runner", RUNNERS, ids=lambda r: r.__name__.strip("_"))
def test_a_destination_that_is_a_feed_is_refused_and_nothing_is_written(runner, framework):
    x = _x() if framework == "numpy" else torch.from_numpy(_x())
    before = np.array(np.asarray(x))
    with pytest.raises(ValueError, match=r"output destination 't' overlaps input 'x'") as e:
        runner({"x": x}, ["t", "m"], {"t": x})
    assert type(e.value) is ValueError  # ortdlpack's own refusal: its documented class, not onnxruntime's
    np.testing.assert_array_equal(np.asarray(x), before)


@pytest.mark.parametrize("runner", RUNNERS, ids=lambda r: r.__name__.strip("_"))
def test_two_destinations_that_share_memory_are_refused(runner):
    d = np.zeros((4, 4), np.float32)
    with pytest.raises(ValueError, match=r"output destinations 't' and 'm' overlap"):
        runner({"x": _x()}, ["t", "m"], {"t": d, "m": d})
    assert not d.any()


def test_any_shared_byte_is_an_overlap_and_disjoint_views_are_not():
    # Two views of one buffer: overlapping by one row is refused; the two halves are distinct memory and run.
    buf = np.zeros((8, 4), np.float32)
    with pytest.raises(ValueError, match="overlap"):
        _session({"x": _x()}, ["t", "m"], {"t": buf[0:4], "m": buf[3:7]})
    t, m = _session({"x": _x()}, ["t", "m"], {"t": buf[0:4], "m": buf[4:8]})
    np.testing.assert_array_equal(buf[0:4], _x().T)
    np.testing.assert_array_equal(buf[4:8], _x() @ _x())
    # A destination inside a feed's buffer (torch views of one storage) is an overlap.
    big = torch.zeros(32)
    x = big[:16].view(4, 4)
    x.copy_(torch.from_numpy(_x()))
    with pytest.raises(ValueError, match="overlaps input 'x'"):
        _session({"x": x}, ["t"], {"t": big[12:28].view(4, 4)})


def test_one_tensor_read_as_two_feeds_is_allowed():
    # Only writes conflict: x fed to both inputs of Add is fine.
    session = ortdlpack.Session(_model([helper.make_node("Add", ["a", "b"], ["c"])], [_f32("a", [3]), _f32("b", [3])],
                                       [_f32("c", [3])]))
    x = np.arange(3, dtype=np.float32)
    (c,) = session.run({"a": x, "b": x})
    np.testing.assert_array_equal(np.asarray(c), x + x)


def test_the_compiled_kernel_s_out_that_is_an_input_is_refused():
    pytest.importorskip("torch")
    module = ortdlpack.torch_module(ADD)
    x, y = torch.ones(2, 3), torch.ones(3)
    with pytest.raises(ValueError, match=r"overlaps input 'x'"):
        ortdlpack._ortdlpack._torch_run_into(x, y, module._session_id, out=x)
    assert torch.equal(x, torch.ones(2, 3))


def test_device_memory_destinations_that_share_memory_are_refused(accel):
    # Device memory (the virtual device's guarded memory; the WebGPU EP's buffers, compared by handle).
    x = ortdlpack.from_dlpack(np.ones((2, 3), np.float32), device=accel.device)
    y = ortdlpack.from_dlpack(np.ones(3, np.float32), device=accel.device)
    session = accel.session(ADD)
    with pytest.raises(ValueError, match=r"output destination 'z' overlaps input 'x'"):
        session.run({"x": x, "y": y}, outputs={"z": x})
    np.testing.assert_array_equal(np.from_dlpack(x.to("cpu")), np.ones((2, 3), np.float32))
    del x, y


# --- 2. reference cycles ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("base", [ortdlpack.InferenceSession, ortdlpack.Session])
def test_a_binding_stored_on_its_session_is_collected(base):
    class Wrapper(base):  # what a class that wraps a model does
        pass

    s = Wrapper(ADD, providers=["CPUExecutionProvider"])
    x = torch.zeros(1000, 3)
    s.b = s.bind({"x": x, "y": torch.ones(3)})
    s.b.run()
    ws, wx = weakref.ref(s), weakref.ref(x)
    del s, x
    gc.collect()
    assert ws() is None and wx() is None


def test_a_bound_tensor_that_refers_to_its_binding_stays_until_the_reference_is_dropped():
    """The cycle docs/python.md ("Reference cycles") names: the Binding holds the torch tensor through its DLPack
    export (a C++ reference, which keeps the Python tensor alive: invisible to the collector). Dropping the reference
    back frees both."""
    s = ortdlpack.InferenceSession(ADD, providers=["CPUExecutionProvider"])
    x = torch.zeros(1000, 3)
    x.b = s.bind({"x": x, "y": torch.ones(3)})
    x.b.run()
    wx = weakref.ref(x)
    del x
    gc.collect()
    assert wx() is not None  # the documented cycle
    del wx().b
    gc.collect()
    assert wx() is None


def test_cycles_through_bindings_do_not_grow_rss():
    # 30 rounds of 8 MiB feeds bound on sessions that hold their bindings: what kept 60 of 60 objects and 491 MiB.
    # (Named for scripts/sanitize.sh's deselection of RSS tests: ASan's quarantine grows RSS by design.)
    # Every object is collected, and RSS is flat once glibc returns freed memory (malloc_trim, as the report measured).
    class Wrapper(ortdlpack.InferenceSession):
        pass

    alive = []

    def round_():
        s = Wrapper(ADD, providers=["CPUExecutionProvider"])
        x = torch.zeros(699050, 3)
        s.b = s.bind({"x": x, "y": torch.ones(3)})
        (z,) = s.b.run()
        alive.extend((weakref.ref(s), weakref.ref(x), weakref.ref(z)))

    psutil = pytest.importorskip("psutil")
    trim = ctypes.CDLL(None).malloc_trim if sys.platform == "linux" else (lambda _: None)
    round_()
    gc.collect()
    trim(0)
    before = psutil.Process().memory_info().rss
    for _ in range(30):
        round_()
    gc.collect()
    trim(0)
    assert [r for r in alive if r() is not None] == []
    assert psutil.Process().memory_info().rss - before < 32 << 20


@pytest.mark.parametrize("wrap", ["torch_module", "jax_function"])
def test_a_compiled_wrapper_stored_on_its_session_is_collected(wrap):
    # The registry compiled code names sessions by borrows the session: the wrapper's own reference, which the
    # collector sees, is what keeps it (python/src/compiled_sessions.cc).
    pytest.importorskip("jax" if wrap == "jax_function" else "torch")

    class Wrapper(ortdlpack.Session):
        pass

    s = Wrapper(ADD)
    s.wrapped = getattr(ortdlpack, wrap)(s)
    session_id = s.wrapped._session_id if wrap == "torch_module" else None
    ws = weakref.ref(s)
    del s
    gc.collect()
    assert ws() is None
    if session_id is not None:
        with pytest.raises(ValueError, match="is not registered"):
            ortdlpack._ortdlpack._compiled_session(session_id)


def test_a_wrapper_released_during_its_run_keeps_the_session_for_that_run():
    # A run on another thread (GIL released) while the last reference to the wrapper goes: the run finishes on a
    # live session and gives the right result; the session goes with the run.
    pytest.importorskip("torch")
    n = 2048  # (a run of about a second on two cores: the release lands while it is in ORT)
    matmul = _model([helper.make_node("MatMul", ["a", "b"], ["c"])], [_f32("a", [n, n]), _f32("b", [n, n])],
                    [_f32("c", [n, n])])
    class Weakly(ortdlpack.Session):  # (a subclass: weak references to it can be made)
        pass

    session = Weakly(matmul)
    module = ortdlpack.torch_module(session)
    ws = weakref.ref(session)
    del session
    a = torch.rand(n, n)
    result = {}
    started = threading.Event()

    def run():
        started.set()
        result["c"] = ortdlpack._ortdlpack._torch_run(session_id, [a, a])

    session_id = module._session_id
    thread = threading.Thread(target=run)
    thread.start()
    started.wait()
    time.sleep(0.1)
    del module  # (no cycle: the registration goes now, by its reference count, and its finalizer runs meanwhile)
    gc.collect()
    alive = ws() is not None
    running = thread.is_alive()  # (after `alive` was read: a run still going then was going when it was read)
    assert alive or not running, "the session was released while a run on it was in progress"
    thread.join()
    torch.testing.assert_close(result["c"][0], a @ a, rtol=1e-4, atol=1e-3)
    gc.collect()
    assert ws() is None


# --- 3. interrupts ------------------------------------------------------------------------------------------------


class _Raises:
    """A numpy-backed producer whose `where` callback raises `exc`."""

    def __init__(self, exc, where):
        self.exc, self.where, self.a = exc, where, np.ones(3, np.float32)

    def __dlpack__(self, **kw):
        if self.where == "__dlpack__":
            raise self.exc
        return self.a.__dlpack__(**kw)

    def __dlpack_device__(self):
        if self.where == "__dlpack_device__":
            raise self.exc
        return self.a.__dlpack_device__()


_ADD3 = _model([helper.make_node("Add", ["x", "y"], ["z"])], [_f32("x", [3]), _f32("y", [3])], [_f32("z", [3])])
_CALLS = {
    "from_dlpack": lambda p: ortdlpack.from_dlpack(p),
    "as_ortvalue": lambda p: ortdlpack.as_ortvalue(p),
    "ortdlpack.run": lambda p: ortdlpack.run(ort.InferenceSession(_ADD3, providers=["CPUExecutionProvider"]),
                                             {"x": p, "y": np.ones(3, np.float32)}),
    "drop-in run": lambda p: ortdlpack.InferenceSession(_ADD3, providers=["CPUExecutionProvider"]).run(
        None, {"x": p, "y": np.ones(3, np.float32)}),
    "Session.run": lambda p: ortdlpack.Session(_ADD3).run({"x": p, "y": np.ones(3, np.float32)}),
    "bind": lambda p: ortdlpack.Session(_ADD3).bind({"x": p, "y": np.ones(3, np.float32)}),
    "destination": lambda p: ortdlpack.Session(_ADD3).run({"x": np.ones(3, np.float32), "y": np.ones(3, np.float32)},
                                                          outputs={"z": p}),
}


@pytest.mark.parametrize("exc", [KeyboardInterrupt, SystemExit, GeneratorExit])
@pytest.mark.parametrize("where", ["__dlpack_device__", "__dlpack__"])
@pytest.mark.parametrize("call", sorted(_CALLS))
def test_an_interrupt_in_a_producer_propagates_unchanged(call, where, exc):
    raised = exc()
    with pytest.raises(exc) as e:
        _CALLS[call](_Raises(raised, where))
    assert e.value is raised and not getattr(raised, "__notes__", None)


class _Feeds(collections.abc.Mapping):
    """A mapping (no dict) whose `items` is interrupted: looked up (`attribute`) or called (`call`)."""

    def __init__(self, how, **feeds):
        self.how, self.feeds = how, feeds

    def __getitem__(self, k):
        return self.feeds[k]

    def __iter__(self):
        return iter(self.feeds)

    def __len__(self):
        return len(self.feeds)

    def __getattribute__(self, name):
        if name == "items" and object.__getattribute__(self, "how") == "attribute":
            raise KeyboardInterrupt
        return object.__getattribute__(self, name)

    def items(self):
        raise KeyboardInterrupt


@pytest.mark.parametrize("how", ["attribute", "call"])
@pytest.mark.parametrize("way", ["ortdlpack.run", "Session.run"])
def test_an_interrupt_reading_the_feeds_propagates(how, way):
    feeds = _Feeds(how, x=np.ones(3, np.float32), y=np.ones(3, np.float32))
    if way == "Session.run":
        with pytest.raises(KeyboardInterrupt):
            ortdlpack.Session(_ADD3).run(feeds)
        return
    if ORT_VERSION < (1, 24):
        pytest.skip("onnxruntime 1.23's run takes a dict of feeds only: it refuses this mapping before reading it")
    s = ortdlpack.InferenceSession(_ADD3, providers=["CPUExecutionProvider"])
    with pytest.raises(KeyboardInterrupt):
        ortdlpack.run(s, feeds)


def test_an_interrupt_converting_a_list_feed_propagates():
    class Interrupted:  # a list element numpy converts with __float__
        def __float__(self):
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        ortdlpack.Session(_ADD3).run({"x": [Interrupted(), 1.0, 2.0], "y": np.ones(3, np.float32)})


# --- 4. races with set_providers --------------------------------------------------------------------------------


def test_runs_racing_set_providers_see_a_whole_session_or_onnxruntime_s_class():
    ones = torch.ones  # (before the thread starts: without torch the test skips here)
    s = ortdlpack.InferenceSession(ADD, providers=["CPUExecutionProvider"])
    x, y = np.ones((2, 3), np.float32), np.ones(3, np.float32)
    outcomes: dict = {}
    stop = threading.Event()

    def runner():
        while not stop.is_set():
            for call in (lambda: s.run(None, {"x": x, "y": y}),
                         lambda: ortdlpack.run(s, {"x": ones(2, 3), "y": ones(3)})):
                try:
                    (z,) = call()
                    assert np.array_equal(np.asarray(z), x + y)
                    key = "ok"
                except AttributeError as e:  # onnxruntime's own run fails so in the same window
                    assert "set_providers" in str(e), e
                    key = "AttributeError"
                outcomes[key] = outcomes.get(key, 0) + 1

    thread = threading.Thread(target=runner)
    thread.start()
    try:
        end = time.monotonic() + 1.5
        while time.monotonic() < end:
            s.set_providers(["CPUExecutionProvider"])
            s.disable_fallback()
            s.enable_fallback()
            time.sleep(0.001)  # (lets some runs see a whole session)
    finally:
        stop.set()
        thread.join()
    assert set(outcomes) <= {"ok", "AttributeError"} and outcomes.get("ok", 0) > 0, outcomes


# --- 5. the shape of a call, as onnxruntime answers it ----------------------------------------------------------


def test_an_output_named_twice_comes_twice_as_onnxruntime_returns_it():
    x = _x()
    expected = ort.InferenceSession(TRANSPOSE_MATMUL, providers=["CPUExecutionProvider"]).run(["t", "m", "t"],
                                                                                             {"x": x})
    for got in (ortdlpack.InferenceSession(TRANSPOSE_MATMUL, providers=["CPUExecutionProvider"]).run(
                    ["t", "m", "t"], {"x": x}),
                ortdlpack.InferenceSession(TRANSPOSE_MATMUL, providers=["CPUExecutionProvider"]).run(
                    ["t", "m", "t"], {"x": torch.from_numpy(x)}),
                ortdlpack.Session(TRANSPOSE_MATMUL).run({"x": x}, ["t", "m", "t"]),
                ortdlpack.Session(TRANSPOSE_MATMUL).bind({"x": x}, ["t", "m", "t"]).run()):
        assert len(got) == 3
        for g, e in zip(got, expected):
            np.testing.assert_array_equal(np.asarray(g), e)
    b = ortdlpack.Session(TRANSPOSE_MATMUL).bind({"x": x}, ["t", "t"])
    assert b.output_names == ["t", "t"]


# Feeds that are no mapping or keyed by something other than str, malformed output names: what onnxruntime's run
# makes of them, exactly (test_onnxruntime_rules.py compares every such call with onnxruntime's own).


def test_output_names_as_bytes_are_taken_as_onnxruntime_takes_them():
    (t,) = ortdlpack.InferenceSession(TRANSPOSE_MATMUL, providers=["CPUExecutionProvider"]).run([b"t"], {"x": _x()})
    np.testing.assert_array_equal(t, _x().T)


# --- 6. every value in the caller's framework -------------------------------------------------------------------

_SEQ = helper.make_model(
    helper.make_graph(
        [helper.make_node("SplitToSequence", ["x"], ["s"], axis=0), helper.make_node("Optional", ["x"], ["o"])], "seq",
        [_f32("x", [2, 3])],
        [helper.make_tensor_sequence_value_info("s", TensorProto.FLOAT, None),
         helper.make_value_info("o", helper.make_optional_type_proto(
             helper.make_tensor_type_proto(TensorProto.FLOAT, [2, 3])))]),
    opset_imports=[helper.make_opsetid("", 18)])
_SEQ.ir_version = 9


@pytest.mark.parametrize("output_type,cls", [("torch", "torch.Tensor"), ("ortdlpack", ortdlpack.Tensor),
                                             ("numpy", np.ndarray), (None, "torch.Tensor")])
def test_tensors_inside_sequences_and_optionals_come_in_the_requested_framework(output_type, cls):
    cls = torch.Tensor if cls == "torch.Tensor" else cls
    s = ortdlpack.InferenceSession(_SEQ.SerializeToString(), providers=["CPUExecutionProvider"])
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    seq, opt = s.run(None, {"x": torch.from_numpy(x)}, output_type=output_type)
    assert isinstance(seq, list) and all(isinstance(v, cls) for v in seq) and isinstance(opt, cls)
    np.testing.assert_array_equal(np.asarray(seq[1]), x[1:2])
    np.testing.assert_array_equal(np.asarray(opt), x)


def test_float8_e8m0_both_ways():
    if not hasattr(torch, "float8_e8m0fnu"):
        pytest.skip(f"torch {torch.__version__} has no float8_e8m0fnu")
    skip_if_ort_lacks_dtype("float8_e8m0fnu")
    cast = _model([helper.make_node("Cast", ["x"], ["y"], to=TensorProto.FLOAT8E8M0)], [_f32("x", [4])],
                  [helper.make_tensor_value_info("y", TensorProto.FLOAT8E8M0, [4])], opset=24)
    try:
        s = ortdlpack.InferenceSession(cast, providers=["CPUExecutionProvider"])
    except Exception as e:  # an onnxruntime without opset 24's Cast to float8e8m0
        pytest.skip(f"onnxruntime {ort.__version__} cannot load a Cast to float8e8m0: {e}")
    x = np.array([1, 2, 4, 0.5], np.float32)
    (y,) = s.run(None, {"x": torch.from_numpy(x)})
    assert y.dtype == torch.float8_e8m0fnu and torch.equal(y.float(), torch.from_numpy(x))
    (yn,) = s.run(None, {"x": x})  # numpy: an ml_dtypes array, where onnxruntime's own run has no numpy type
    assert yn.dtype == ml_dtypes.float8_e8m0fnu
    # Feeds: torch's and ml_dtypes' e8m0 as the same Tensor dtype.
    e = torch.from_numpy(x).to(torch.float8_e8m0fnu)
    for feed in (e, np.asarray(x).astype(ml_dtypes.float8_e8m0fnu)):
        t = ortdlpack.from_dlpack(feed)
        assert str(t.dtype) == "float8_e8m0fnu"
        assert torch.equal(torch.from_dlpack(t).float(), torch.from_numpy(x))


class _NoImporter:
    """A DLPack producer whose package (this test module) has no from_dlpack: its feeds give ortdlpack.Tensors."""

    def __init__(self, a):
        self.a = a

    def __dlpack__(self, **kw):
        return self.a.__dlpack__(**kw)

    def __dlpack_device__(self):
        return self.a.__dlpack_device__()


def test_like_feeds_for_every_dlpack_producer():
    tvm_ffi = pytest.importorskip("tvm_ffi")  # a framework no rule of ortdlpack's names: its from_dlpack is used
    x, y = np.ones((2, 3), np.float32), np.ones(3, np.float32)
    s = ortdlpack.InferenceSession(ADD, providers=["CPUExecutionProvider"])
    feeds = {"x": tvm_ffi.from_dlpack(x), "y": tvm_ffi.from_dlpack(y)}
    for got in (s.run(None, feeds), ortdlpack.run(s, feeds, output_type="like_feeds"), s.bind(feeds).run(),
                ortdlpack.Session(ADD).run(feeds, output_type="like_feeds")):
        (z,) = got
        assert type(z) is type(feeds["x"])
        np.testing.assert_array_equal(np.from_dlpack(z), x + y)
    (z,) = s.run(None, {"x": _NoImporter(x), "y": _NoImporter(y)})
    assert isinstance(z, ortdlpack.Tensor)


# --- 7. ortdlpack.run on a subclass that overrides run ------------------------------------------------------------


def test_ortdlpack_run_does_not_call_a_subclass_s_run():
    # Decided (docs/session.md): ortdlpack.run runs the session's C session itself, as onnxruntime's own
    # run_with_ort_values does; a subclass's run() is the subclass's and is not called (ortdlpack.InferenceSession's
    # own run is ortdlpack.run: calling it would recurse).
    class Override(ort.InferenceSession):
        def run(self, *args, **kw):
            raise AssertionError("ortdlpack.run called the subclass's run")

    s = Override(_ADD3, providers=["CPUExecutionProvider"])
    (z,) = ortdlpack.run(s, {"x": np.ones(3, np.float32), "y": np.ones(3, np.float32)}, output_type="numpy")
    np.testing.assert_array_equal(z, np.full(3, 2, np.float32))
