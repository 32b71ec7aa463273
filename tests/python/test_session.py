"""The session runners, one suite: ortdlpack.run on a plain onnxruntime.InferenceSession, ortdlpack.InferenceSession's
run (onnxruntime's call order) and ortdlpack.Session.run (a session created and run by the C++ core). All carry out
the core's run plan (src/run_plan.h), so every behaviour is the same on every path; the checks ORT makes itself on
numpy arrays it reads as they are (onnxruntime's run) keep ORT's words, with the same exception class."""

from __future__ import annotations

import gc
import re
import pathlib
import weakref

import numpy as np
import onnxruntime as ort
import pytest

import ortdlpack
from conftest import EP_NAME, ORT_VERSION, assert_runs_do_not_grow_rss, cpu_session, data_ptr, tiny_input

torch = pytest.importorskip("torch")

RUNNERS = ["ortdlpack.run", "InferenceSession.run", "Session.run"]


class Runner:
    """One model behind one of the runners, called as runner(feeds, output_names=None, outputs=, device=): outputs
    are ortdlpack.Tensors unless output_type= says otherwise."""

    def __init__(self, kind: str, path):
        self.kind = kind
        if kind == "ortdlpack.run":
            self.session = cpu_session(path)
            self._run = lambda *args, **kw: ortdlpack.run(self.session, *args, **kw)
        elif kind == "InferenceSession.run":
            opts = ort.SessionOptions()
            opts.intra_op_num_threads = 1
            self.session = ortdlpack.InferenceSession(path, opts, providers=["CPUExecutionProvider"],
                                                      output_type="ortdlpack")
            self._run = lambda feeds, names=None, **kw: self.session.run(names, feeds, **kw)
        else:
            self.session = ortdlpack.Session(path, intra_op_num_threads=1)
            self._run = self.session.run

    def __call__(self, feeds, output_names=None, **kw):
        return self._run(feeds, output_names, **kw)


@pytest.fixture(scope="module", params=RUNNERS)
def make(request, models):
    """make(model_name) -> a Runner of that model (one per model and runner in the module)."""
    cache = {}

    def get(name):
        if name not in cache:
            cache[name] = Runner(request.param, models[name])
        return cache[name]

    return get


@pytest.fixture(scope="module")
def add(make):
    return make("add_tiny")


@pytest.fixture(scope="module")
def add_ref(models):
    return cpu_session(models["add_tiny"])


def _expected(add_ref, x):
    return add_ref.run(None, {"x": np.asarray(x)})[0]


# --- feeds from every framework ----------------------------------------------------------------------------------


def test_numpy_feed(add, add_ref):
    x = tiny_input()
    (y,) = add({"x": x})
    assert isinstance(y, ortdlpack.Tensor)
    assert y.shape == (1, 100) and y.dtype == "float32"
    np.testing.assert_array_equal(np.from_dlpack(y), _expected(add_ref, x))


def test_torch_feed_and_consumers_share_the_output(add, add_ref):
    x = torch.from_numpy(tiny_input())
    (y,) = add({"x": x}, ["y"])
    a = np.from_dlpack(y)
    t = torch.from_dlpack(y)
    assert a.ctypes.data == t.data_ptr() == y.data_ptr  # views of ORT's output buffer: no copy on the way out
    np.testing.assert_array_equal(t.numpy(), _expected(add_ref, x))


def test_jax_feed(add, add_ref):
    jnp = pytest.importorskip("jax.numpy")
    x = jnp.asarray(tiny_input())
    (y,) = add({"x": x})
    np.testing.assert_array_equal(np.from_dlpack(y), _expected(add_ref, np.asarray(x)))


def test_tensorflow_feed(add, add_ref):
    tf = pytest.importorskip("tensorflow")
    x = tf.constant(tiny_input())
    (y,) = add({"x": x})
    np.testing.assert_array_equal(np.from_dlpack(y), _expected(add_ref, x.numpy()))


def test_ortvalue_and_tensor_feeds(add):
    x = tiny_input()
    (y1,) = add({"x": ort.OrtValue.ortvalue_from_numpy(x)})
    (y2,) = add({"x": ortdlpack.from_dlpack(x)})
    np.testing.assert_array_equal(np.from_dlpack(y1), np.from_dlpack(y2))


def test_outputs_own_their_memory_after_an_ortvalue_feed(add, add_ref):
    # An OrtValue feed takes the IOBinding path. In onnxruntime <= 1.29 the values get_outputs() returns are freed
    # with the binding: the returned Tensors must hold ORT's outputs themselves (later runs reuse freed buffers).
    xs = [tiny_input() * k for k in range(1, 6)]
    ys = [add({"x": ort.OrtValue.ortvalue_from_numpy(x)})[0] for x in xs]
    for x, y in zip(xs, ys):
        np.testing.assert_array_equal(np.from_dlpack(y), _expected(add_ref, x))


def test_noncontiguous_feed_is_accepted(add, add_ref):
    base = torch.from_numpy(np.ascontiguousarray(np.tile(tiny_input(), (2, 1)).T))  # (100, 2)
    x = base.T[:1]  # (1, 100), strided view
    assert not x.is_contiguous()
    (y,) = add({"x": x})
    np.testing.assert_array_equal(np.from_dlpack(y), _expected(add_ref, x.contiguous()))


def test_a_destination_that_is_its_own_feed_is_refused(add):
    # The feed is also the output's destination: even where an elementwise Add would happen to give x + b in place,
    # ORT writes the destination while it reads the feed, which for most models is a wrong answer without an error.
    # It is refused before ORT runs, naming both, and nothing is written (tests/python/test_hostile.py has the rest).
    buf = torch.from_numpy(tiny_input().copy())
    before = buf.clone()
    with pytest.raises(ValueError, match=r"output destination 'y' overlaps input 'x'"):
        add({"x": buf}, outputs={"y": buf})
    assert torch.equal(buf, before)


def _identity_model(elem_type) -> bytes:
    from onnx import helper

    value = lambda name: helper.make_tensor_value_info(name, elem_type, [2, 3])  # noqa: E731
    graph = helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "identity", [value("x")], [value("y")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 9
    return model.SerializeToString()


@pytest.mark.parametrize("dtype", ["bool", "int64", "uint8", "float16", "bfloat16"])
@pytest.mark.parametrize("kind", RUNNERS)
def test_element_types_in_and_out(kind, dtype):
    # Host-only plans of common types run through session.run on numpy views; bfloat16 (no numpy type) and every
    # destination go through an IOBinding, bound by address with the ONNX element type.
    onnx = pytest.importorskip("onnx")
    runner = Runner(kind, _identity_model(getattr(onnx.TensorProto, dtype.upper())))
    x = torch.arange(6).reshape(2, 3).to(getattr(torch, dtype))
    (y,) = runner({"x": x})
    assert y.dtype == dtype
    assert torch.equal(torch.from_dlpack(y), x)
    dst = torch.empty_like(x)
    (z,) = runner({"x": x}, outputs={"y": dst})
    assert z.data_ptr == dst.data_ptr() and torch.equal(dst, x)


# --- outputs into preallocated buffers, output placement ---------------------------------------------------------


@pytest.mark.parametrize("framework", ["numpy", "torch"])
def test_outputs_into_preallocated_destinations(add, add_ref, framework):
    dst = np.full((1, 100), -1, np.float32) if framework == "numpy" else torch.full((1, 100), -1.0)
    ptr = dst.ctypes.data if framework == "numpy" else dst.data_ptr()
    (y,) = add({"x": tiny_input()}, outputs={"y": dst})
    assert y.data_ptr == data_ptr(y) == ptr
    np.testing.assert_array_equal(np.asarray(dst), _expected(add_ref, tiny_input()))


def test_device_cpu(add, add_ref):
    (y,) = add({"x": tiny_input()}, device="cpu")
    assert y.__dlpack_device__() == (1, 0)
    (y,) = add({"x": tiny_input()}, ["y"], device=(1, 0))
    assert y.__dlpack_device__() == (1, 0)
    np.testing.assert_array_equal(np.from_dlpack(y), _expected(add_ref, tiny_input()))


def test_two_model_pipeline_without_copies(make, models):
    feature, head = make("feature"), make("head")
    feature_ref, head_ref = cpu_session(models["feature"]), cpu_session(models["head"])
    x = torch.rand(4, 3, 64, 64, generator=torch.Generator().manual_seed(0))
    (feat,) = feature({"x": x})
    f = torch.relu(torch.from_dlpack(feat))
    assert f.shape == (4, 128)
    logits = torch.empty(4, 10)
    (out,) = head({"feat": f}, outputs={"logits": logits})
    assert out.data_ptr == logits.data_ptr()
    ref = head_ref.run(None, {"feat": np.maximum(feature_ref.run(None, {"x": x.numpy()})[0], 0)})[0]
    np.testing.assert_allclose(logits.numpy(), ref, rtol=1e-5, atol=1e-5)


# --- errors: onnxruntime's where its run would raise (its class, its words), ortdlpack's own for what it adds ---------

C = ort.capi.onnxruntime_pybind11_state


def test_unknown_input(add):
    with pytest.raises(C.InvalidArgument, match=r"^\[ONNXRuntimeError\] : 2 : INVALID_ARGUMENT : Invalid input name: z$"):
        add({"x": tiny_input(), "z": tiny_input()})


def test_missing_input(add):
    with pytest.raises(ValueError, match=r"^Required inputs \(\['x'\]\) are missing from input feed \(\[\]\)\.$") as e:
        add({})
    assert type(e.value) is ValueError  # onnxruntime's Python raises a plain ValueError


# A feed's element type, rank and dimensions are ORT's to check when it runs: its class and words on every runner,
# for numpy and torch feeds alike, bound runs (a destination) included, exactly as onnxruntime's run raises them.


def _wrong_feed(runner, feed, onnxruntime_s: str):
    for x in (feed, torch.from_numpy(feed)):
        with pytest.raises(C.InvalidArgument, match=onnxruntime_s) as info:
            runner({"x": x})
        assert not isinstance(info.value, ValueError)  # onnxruntime's class, nothing more
    out = runner.session.get_outputs()[0]
    destination = torch.empty([d if isinstance(d, int) else 1 for d in out.shape])
    with pytest.raises(C.InvalidArgument, match=onnxruntime_s):
        runner({"x": torch.from_numpy(feed)}, outputs={out.name: destination})


def test_wrong_dtype(add):
    _wrong_feed(add, tiny_input().astype(np.float64), "Unexpected input data type")


def test_wrong_rank(add):
    _wrong_feed(add, tiny_input().reshape(100), "Invalid rank for input: x")


def test_wrong_fixed_dim(make):
    _wrong_feed(make("feature"), np.zeros((1, 4, 64, 64), np.float32), "Got invalid dimensions for input: x")


def test_unknown_and_duplicate_outputs(add):
    with pytest.raises(C.InvalidArgument, match=r"Invalid output name:q$"):
        add({"x": tiny_input()}, ["q"])
    # An output named twice comes twice, as onnxruntime's run returns it (the same values).
    twice = add({"x": tiny_input()}, ["y", "y"])
    assert len(twice) == 2
    np.testing.assert_array_equal(np.asarray(twice[0]), np.asarray(twice[1]))
    with pytest.raises(ValueError, match=r"unknown output 'q'"):
        add({"x": tiny_input()}, outputs={"q": np.zeros((1, 100), np.float32)})
    with pytest.raises(TypeError):
        add({"x": tiny_input()}, "y")


def test_destination_wrong_shape_or_dtype(add):
    with pytest.raises(ValueError, match=r"destination 'y'.*dimension 1"):
        add({"x": tiny_input()}, outputs={"y": torch.empty(1, 99)})
    with pytest.raises(ValueError, match=r"destination 'y'.*element type"):
        add({"x": tiny_input()}, outputs={"y": torch.empty(1, 100, dtype=torch.float64)})


def test_read_only_destination(add):
    dst = np.zeros((1, 100), np.float32)
    dst.flags.writeable = False
    with pytest.raises(ValueError, match=r"'y' is read-only"):
        add({"x": tiny_input()}, outputs={"y": dst})


def test_destination_is_never_copied(add):
    dst = torch.empty(1, 200)[:, ::2]  # (1, 100) with stride 2: ORT could only write into a copy
    with pytest.raises(BufferError, match=r"destination 'y'"):
        add({"x": tiny_input()}, outputs={"y": dst})


def test_producer_whose_dlpack_raises(add):
    class Broken:
        def __dlpack__(self, **kwargs):
            raise RuntimeError("producer exploded")

        def __dlpack_device__(self):
            return (1, 0)

    with pytest.raises(RuntimeError, match=r"producer exploded\n.*input 'x'"):  # the producer's own, with a note
        add({"x": Broken()})


def test_any_mapping_of_feeds_and_any_sequence_of_output_names(add, add_ref):
    import collections.abc
    import types

    class Feeds(collections.abc.Mapping):  # a Python mapping class: __getitem__, as a sequence would have
        def __init__(self, **items):
            self._items = items

        def __getitem__(self, key):
            return self._items[key]

        def __iter__(self):
            return iter(self._items)

        def __len__(self):
            return len(self._items)

    for feeds in (Feeds(x=tiny_input()), types.MappingProxyType({"x": tiny_input()})):
        if add.kind != "Session.run" and ORT_VERSION < (1, 24):
            # onnxruntime 1.23's run takes a dict only (1.24 on: any mapping): its own TypeError, as onnxruntime raises
            with pytest.raises(TypeError, match="incompatible function arguments"):
                add(feeds, ["y"])
            continue
        for names in (["y"], ("y",)):
            (y,) = add(feeds, names)
            np.testing.assert_array_equal(np.from_dlpack(y), _expected(add_ref, tiny_input()))
        # output names as any iterable, as onnxruntime 1.32's run takes them (a generator); ortdlpack.Session's own
        # run takes a list or a tuple
        if add.kind == "Session.run":
            with pytest.raises(TypeError, match="output_names must be a list or a tuple"):
                add(feeds, (n for n in ["y"]))
        else:
            (y,) = add(feeds, (n for n in ["y"]))
            np.testing.assert_array_equal(np.from_dlpack(y), _expected(add_ref, tiny_input()))


def test_lists_are_fed_as_onnxruntime_feeds_them_and_a_list_is_not_a_mapping(add, add_ref):
    # A list is converted to the input's declared element type, as onnxruntime does; one that cannot be is
    # onnxruntime's RuntimeError (onnxruntime's run converts it; the core's Session and a bound run with numpy).
    x = tiny_input()
    (y,) = add({"x": x.tolist()})
    np.testing.assert_array_equal(np.from_dlpack(y), _expected(add_ref, x))
    for outputs in (None, {"y": np.zeros((1, 100), np.float32)}):
        with pytest.raises(RuntimeError, match=r"(?i)could not create tensor from given input list"):
            add({"x": [[1.0] * 100, "a"]}, outputs=outputs)
    # feeds that are no mapping: onnxruntime's error where its run would take them apart (AttributeError: its run reads
    # input_feed.keys()), ortdlpack.Session's own TypeError
    with pytest.raises(TypeError if add.kind == "Session.run" else AttributeError, match=r"mapping|keys"):
        add([("x", tiny_input())])


# --- device memory on a CPU session (the virtual device plugin EP) ------------------------------------------------


def test_device_feed_is_staged_for_a_cpu_session(vd, counters, add, add_ref):
    _, devices = vd
    x = tiny_input()
    t = ortdlpack.from_dlpack(x, device=devices[1])
    (y,) = add({"x": t})
    np.testing.assert_array_equal(np.from_dlpack(y), _expected(add_ref, x))
    assert counters()["bytes_d2h"] >= x.nbytes  # the one copy: the CPU kernel cannot read device memory
    del t, y


def test_device_destination_on_a_cpu_session_is_refused(vd, counters, add):
    # A CPU kernel would write through the device pointer (a segmentation fault in ortdlpack.Session.run before the
    # run plan); a destination is never copied, so it is refused before ORT runs.
    _, devices = vd
    dst = ortdlpack.from_dlpack(np.zeros((1, 100), np.float32), device=devices[0])
    with pytest.raises(BufferError, match=r"output destination 'y' is in VirtualDevice:0.*cannot write"):
        add({"x": tiny_input()}, outputs={"y": dst})
    del dst


@pytest.mark.parametrize("device", [(12, 0), "ep_device"])
def test_outputs_on_a_device_a_cpu_session_has_no_ep_for_are_refused(vd, counters, add, device):
    # Before the run plan, ortdlpack.Session.run silently returned host tensors here and ortdlpack.run raised.
    _, devices = vd
    device = devices[0] if device == "ep_device" else device
    with pytest.raises(ValueError, match=r"output 'y' cannot be placed in VirtualDevice:0.*no execution provider"):
        add({"x": tiny_input()}, device=device)


# --- ortdlpack.Session only: construction, and a session with the plugin EP ---------------------------------------


@pytest.fixture(scope="module")
def native(models):
    return ortdlpack.Session(models["add_tiny"], intra_op_num_threads=1)


def test_names(native):
    assert native.input_names == ("x",)
    assert native.output_names == ("y",)


@pytest.mark.parametrize("kind", ["str", "pathlike", "bytes"])
def test_model_from_path_or_bytes(models, add_ref, kind):
    path = models["add_tiny"]
    model = {"str": str(path), "pathlike": pathlib.Path(path), "bytes": pathlib.Path(path).read_bytes()}[kind]
    s = ortdlpack.Session(model, intra_op_num_threads=1, inter_op_num_threads=1)
    (y,) = s.run({"x": tiny_input()})
    np.testing.assert_array_equal(np.from_dlpack(y), _expected(add_ref, tiny_input()))


def test_bad_model_is_onnxruntime_s_error(tmp_path):
    from onnxruntime.capi import onnxruntime_pybind11_state as C

    missing = str(tmp_path / "nonexistent.onnx")
    with pytest.raises(C.NoSuchFile) as ours:
        ortdlpack.Session(missing)
    with pytest.raises(C.NoSuchFile) as theirs:
        ort.InferenceSession(missing)
    assert str(ours.value) == str(theirs.value)  # onnxruntime's class and words, nothing more
    with pytest.raises(C.InvalidProtobuf):
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
    np.testing.assert_array_equal(np.from_dlpack(y), _expected(add_ref, tiny_input()))
    with pytest.raises(TypeError, match="config"):
        ortdlpack.Session(models["add_tiny"], config={"session.intra_op.allow_spinning": 0})
    with pytest.raises(TypeError, match="config"):
        ortdlpack.Session(models["add_tiny"], config=[("a", "b")])


def test_virtual_device_ep_runs_a_device_feed(vd, counters, models, add_ref):
    _, devices = vd
    s = ortdlpack.Session(models["add_tiny"], ep=EP_NAME)
    x = tiny_input()
    expected = _expected(add_ref, x)
    t = ortdlpack.from_dlpack(x, device=devices[1])
    assert t.__dlpack_device__()[0] != 1  # device-resident feed
    (y,) = s.run({"x": t})
    np.testing.assert_array_equal(np.asarray(y.to("cpu")), expected)
    assert counters()["bytes_d2h"] >= x.nbytes  # the feed was staged to the CPU kernel through the EP's transfer
    (y,) = s.run({"x": t}, device=devices[0])  # the session has the EP: ORT places the output on its device
    assert y.device == ortdlpack.Device(devices[0])
    np.testing.assert_array_equal(np.asarray(y.to("cpu")), expected)
    del s, t, y
    gc.collect()


def test_virtual_device_ep_unknown_name_lists_it(vd, models):
    with pytest.raises(ValueError, match=rf"available:.*'{EP_NAME}'"):
        ortdlpack.Session(models["add_tiny"], ep="virtualdeviceep")


# --- lifetimes and leaks ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", RUNNERS)
def test_outputs_outlive_the_session(models, add_ref, kind):
    runner = Runner(kind, models["add_tiny"])
    (y,) = runner({"x": tiny_input()})
    t = torch.from_dlpack(y)
    del runner, y
    gc.collect()
    np.testing.assert_array_equal(t.numpy(), _expected(add_ref, tiny_input()))


def test_feeds_are_not_held_after_run(add):
    x = torch.from_numpy(tiny_input())
    ref = weakref.ref(x)
    add({"x": x})
    add({"x": x}, outputs={"y": torch.empty(1, 100)})
    del x
    gc.collect()
    assert ref() is None


def test_ten_thousand_runs_do_not_grow_rss(add):
    x = torch.from_numpy(tiny_input())
    dst = torch.empty(1, 100)

    def run_once(i):
        if i % 2:
            add({"x": x}, outputs={"y": dst})
        else:
            torch.from_dlpack(add({"x": x})[0])

    assert_runs_do_not_grow_rss(run_once)


def test_ortdlpack_run_keeps_no_session_alive(models):
    # The per-session metadata and idle IOBindings go with the session.
    session = cpu_session(models["add_tiny"])
    dst = np.zeros((1, 100), np.float32)
    ortdlpack.run(session, {"x": tiny_input()})
    ortdlpack.run(session, {"x": tiny_input()}, outputs={"y": dst})  # an IOBinding left idle in the cache
    ref = weakref.ref(session)
    del session
    gc.collect()
    assert ref() is None


def test_ortdlpack_run_runs_the_c_session(models, add_ref):
    # ortdlpack.run runs a session's C session (its _sess) itself, doing what InferenceSession.run adds around it
    # (the checks, the fallback): a class's Python run() is not called, so a subclass that calls ortdlpack.run from its
    # own run() (ortdlpack.InferenceSession) does not recurse.
    class Counting(ort.InferenceSession):
        calls = 0

        def run(self, *args, **kw):
            Counting.calls += 1
            return ortdlpack.run(self, args[1], args[0])

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    session = Counting(models["add_tiny"], opts, providers=["CPUExecutionProvider"])
    x = tiny_input()
    (y,) = session.run(None, {"x": x})
    assert Counting.calls == 1
    np.testing.assert_array_equal(np.asarray(y), _expected(add_ref, x))


def test_set_providers_makes_a_new_plan(models, add_ref):
    # set_providers() replaces the session's C session: the next run is planned for the new one.
    session = cpu_session(models["add_tiny"])
    x = tiny_input()
    ortdlpack.run(session, {"x": torch.from_numpy(x)})
    old = session._sess
    session.set_providers(["CPUExecutionProvider"])
    assert session._sess is not old
    (y,) = ortdlpack.run(session, {"x": torch.from_numpy(x)})
    np.testing.assert_array_equal(np.asarray(y), _expected(add_ref, x))


# --- issue 17: both runners fail alike, check every determined dimension, refuse what must not be written ----------


def _model(nodes, inputs, outputs) -> bytes:
    """A model from (name, elem_type, shape) inputs and outputs around `nodes`."""
    from onnx import helper

    info = lambda name, elem, shape: helper.make_tensor_value_info(name, elem, shape)  # noqa: E731
    graph = helper.make_graph(nodes, "m", [info(*i) for i in inputs], [info(*o) for o in outputs])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 9
    return model.SerializeToString()


def _add_model(a_shape, b_shape, c_shape) -> bytes:
    from onnx import TensorProto, helper

    f = TensorProto.FLOAT
    return _model([helper.make_node("Add", ["a", "b"], ["c"])], [("a", f, a_shape), ("b", f, b_shape)],
                  [("c", f, c_shape)])


def _onnxruntime_s_failure(model, feeds):
    try:
        ort.InferenceSession(model, providers=["CPUExecutionProvider"]).run(None, feeds)
    except Exception as e:  # noqa: BLE001
        return e
    pytest.fail("onnxruntime ran it")


@pytest.mark.parametrize("kind", RUNNERS)
def test_a_failing_run_is_onnxruntime_s_class_on_every_path(kind):
    # a and b have independent dimensions (M, N): the plan accepts [3] and [4], and the Add kernel fails. onnxruntime's
    # run raises its class for ORT's code (Fail, RuntimeException before 1.2x); ortdlpack raises that class on both
    # paths: onnxruntime's run (numpy feeds) and the core's executor (torch feeds into a destination).
    pytest.importorskip("onnx")
    model = _add_model(["M"], ["N"], ["M"])
    runner = Runner(kind, model)
    want = type(_onnxruntime_s_failure(model, {"a": np.zeros(3, np.float32), "b": np.zeros(4, np.float32)}))
    for feeds, outputs in (({"a": np.zeros(3, np.float32), "b": np.zeros(4, np.float32)}, None),  # onnxruntime's run
                           ({"a": torch.zeros(3), "b": torch.zeros(4)}, {"c": np.zeros(3, np.float32)})):  # the core
        with pytest.raises(want) as e:
            runner(feeds, outputs=outputs)
        assert type(e.value) is want, type(e.value).__mro__  # onnxruntime's class exactly: no RuntimeError base
        assert "broadcast" in str(e.value)


def test_a_destination_of_another_size_is_refused_by_ort_and_left_untouched(make):
    # feature is float32[N,3,64,64] -> float32[N,128]: "N" is a label, as ORT reads it, so a [2,128] destination for a
    # batch of 1 passes the plan and ORT refuses it when the run allocates feat; nothing is written into it.
    dst = torch.full((2, 128), -1.0)
    with pytest.raises((C.InvalidArgument, C.RuntimeException)):  # ORT's: INVALID_ARGUMENT (1.32), RUNTIME_EXCEPTION
        make("feature")({"x": torch.zeros(1, 3, 64, 64)}, outputs={"feat": dst})
    assert torch.equal(dst, torch.full((2, 128), -1.0))


@pytest.mark.parametrize("kind", RUNNERS)
def test_a_named_dimension_is_a_label_not_a_constraint(kind):
    # ORT reads a dimension's name as a label: Add(a[N], b[N]) runs on [3] and [1] (broadcast), as onnxruntime runs
    # it; a Paddle2ONNX model that names both spatial dims "?" runs on 48x192 (rapidocr's cls model).
    pytest.importorskip("onnx")
    runner = Runner(kind, _add_model(["N"], ["N"], ["N"]))
    (c,) = runner({"a": torch.ones(3), "b": torch.ones(1)})
    np.testing.assert_array_equal(np.asarray(c), np.full(3, 2, np.float32))


@pytest.mark.parametrize("kind", RUNNERS)
def test_destination_dimensions_named_by_another_output_are_not_guessed(kind):
    # A dimension only outputs name (no feed determines it) is left to ORT: any size is accepted before the run.
    pytest.importorskip("onnx")
    from onnx import TensorProto, helper

    f = TensorProto.FLOAT
    runner = Runner(kind, _model([helper.make_node("Identity", ["x"], ["y"])], [("x", f, ["N"])], [("y", f, ["K"])]))
    dst = np.zeros(5, np.float32)
    (y,) = runner({"x": np.arange(5, dtype=np.float32)}, outputs={"y": dst})
    np.testing.assert_array_equal(dst, np.arange(5, dtype=np.float32))


def _immutable_destination(framework: str):
    """A zero float32[1,100] of jax or tensorflow, importing only that one (tensorflow's tests run last: conftest)."""
    if framework == "jax":
        jnp = pytest.importorskip("jax.numpy")
        return jnp.zeros((1, 100), jnp.float32)
    tf = pytest.importorskip("tensorflow")
    return tf.zeros((1, 100), tf.float32)


@pytest.mark.parametrize("framework", ["jax", "tensorflow"])
def test_immutable_arrays_import_read_only(framework):
    # Item 6: jax and TensorFlow arrays are immutable by contract (their capsules carry no READ_ONLY flag).
    x = _immutable_destination(framework)
    t = ortdlpack.from_dlpack(x)
    assert t.read_only
    assert not np.from_dlpack(t).flags.writeable  # the flag goes out again with a versioned export


@pytest.mark.parametrize("framework", ["jax", "tensorflow"])
def test_immutable_arrays_are_refused_as_destinations(add, framework):
    dst = _immutable_destination(framework)
    with pytest.raises(ValueError, match=r"output destination 'y' is read-only.*immutable"):
        add({"x": tiny_input()}, outputs={"y": dst})
    assert not np.asarray(dst).any()  # untouched


def test_immutable_arrays_are_still_fed_and_round_trip():
    jnp = pytest.importorskip("jax.numpy")
    x = jnp.arange(16, dtype=jnp.float32)
    y = jnp.from_dlpack(ortdlpack.from_dlpack(x))  # jax reads only legacy capsules: it gets what jax hands out itself
    np.testing.assert_array_equal(np.asarray(y), np.asarray(x))


def test_a_leaf_that_requires_grad_is_refused_as_destination(add):
    # Item 7: torch refuses in-place writes to such a leaf, and its __dlpack__: ORT must not write it either.
    dst = torch.zeros(1, 100, requires_grad=True)
    with pytest.raises(ValueError, match=r"output destination 'y'.*requires grad.*detach"):
        add({"x": tiny_input()}, outputs={"y": dst})
    assert dst._version == 0 and not dst.detach().any()
    (y,) = add({"x": tiny_input()}, outputs={"y": dst.detach()})  # what torch says to do
    assert y.data_ptr == dst.data_ptr()
    (y,) = add({"x": dst.detach().requires_grad_()})  # reading it is fine
    assert y.shape == (1, 100)


class _ProducerError(Exception):
    """An exception whose constructor takes two arguments (rebuilding it from one message fails)."""

    def __init__(self, code, detail):
        super().__init__(f"{code}: {detail}")
        self.code = code


def test_a_producer_s_exception_is_kept_with_the_input_name(add):
    # Item 9. Before: rebuilt from one message -> TypeError("__init__() missing 1 required positional argument").
    raised = _ProducerError(7, "device lost")

    class Producer:
        def __dlpack__(self, **kwargs):
            raise raised

        def __dlpack_device__(self):
            return (1, 0)

    with pytest.raises(_ProducerError) as e:
        add({"x": Producer()})
    assert e.value is raised and e.value.code == 7
    assert any("input 'x'" in note for note in getattr(e.value, "__notes__", []))
    with pytest.raises(_ProducerError) as e:
        add({"x": tiny_input()}, outputs={"y": Producer()})
    assert any("output destination 'y'" in note for note in getattr(e.value, "__notes__", []))


def test_onnxruntime_s_argument_order_gets_onnxruntime_s_error_and_a_note_saying_the_call(add, add_ref):
    # run(None, feeds) / run(["y"], feeds), onnxruntime's order: onnxruntime's own error for feeds that are no
    # mapping, with a note (PEP 678). ortdlpack.Session.run takes that order.
    if add.kind == "InferenceSession.run":
        pytest.skip("onnxruntime's order is InferenceSession.run's own")
    if add.kind == "Session.run":
        for names in (None, ["y"]):
            (y,) = add(names, {"x": tiny_input()})
            np.testing.assert_array_equal(y, _expected(add_ref, tiny_input()))
        return
    for names in (None, ["y"]):
        # onnxruntime's own error for feeds that are no mapping, with a note saying ortdlpack.run's order
        with pytest.raises(AttributeError, match="keys") as e:
            add(names, {"x": tiny_input()})
        assert any("run(session, feeds, output_names=None" in n for n in getattr(e.value, "__notes__", []))


# --- issue 17 item 3 / issue 16 item 3: a user's InferenceSession with a plugin EP takes its device tensors -------


def _ep_runner(kind, models, ep_device):
    """add_tiny on the plugin EP of `ep_device` (and the CPU EP): a user's InferenceSession built with
    add_provider_for_devices, or an ortdlpack.Session on the same EP device."""
    if kind == "Session.run":
        return ortdlpack.Session(models["add_tiny"], intra_op_num_threads=1, ep=EP_NAME,
                                 ep_options={"device_id": str(ep_device.device.device_id)})
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.add_provider_for_devices([ep_device], {})
    return ort.InferenceSession(models["add_tiny"], opts)


def _run_on(session, *args, **kw):
    if isinstance(session, ortdlpack.Session):
        return session.run(*args, **kw)
    return ortdlpack.run(session, *args, **kw)


@pytest.mark.parametrize("kind", RUNNERS)
def test_plugin_ep_session_places_outputs_on_its_device(vd, counters, models, add_ref, kind):
    # Before: ortdlpack.run passed planning and failed inside ORT ("Failed to find allocator for device ..."): the
    # IOBinding named the device without its vendor and memory type.
    _, devices = vd
    session = _ep_runner(kind, models, devices[0])
    x = tiny_input()
    (y,) = _run_on(session, {"x": x}, device=devices[0])
    assert y.device == ortdlpack.Device(devices[0])
    c = counters()
    assert c["bytes_d2h"] == 0 and c["bytes_h2d"] == y.nbytes  # ORT's one copy of its result onto the device
    np.testing.assert_array_equal(np.asarray(y.to("cpu")), _expected(add_ref, x))
    del y, session
    gc.collect()


@pytest.mark.parametrize("kind", RUNNERS)
def test_plugin_ep_session_writes_device_destinations_in_place(vd, counters, models, add_ref, kind):
    # Before: ortdlpack.run raised "BufferError: onnxruntime.OrtValue cannot wrap memory on VirtualDevice:0".
    _, devices = vd
    session = _ep_runner(kind, models, devices[0])
    x = tiny_input()
    dst = ortdlpack.from_dlpack(np.full((1, 100), -1, np.float32), device=devices[0])
    base = counters()
    (y,) = _run_on(session, {"x": x}, outputs={"y": dst})
    assert y.data_ptr == dst.data_ptr and y.device == dst.device  # the destination itself: zero copies of it
    c = counters()
    assert c["bytes_d2h"] == base["bytes_d2h"] and c["allocs"] == base["allocs"]
    np.testing.assert_array_equal(np.asarray(dst.to("cpu")), _expected(add_ref, x))
    del y, dst, session
    gc.collect()


@pytest.mark.parametrize("kind", RUNNERS)
def test_plugin_ep_session_writes_an_empty_device_destination(vd, kind, tmp_path):
    # Found by fuzz/fuzz_session.py: ORT allocates nothing for an empty tensor on the device (its data pointer is
    # NULL), and ortdlpack.run bound such a destination by that address: onnxruntime's SessionIOBinding.bind_output
    # refused it ("RuntimeError: ... data_ptr != 0 was false. Pointer to data memory is not valid").
    from conftest import TensorProto, helper, onnx

    _, devices = vd
    graph = helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "identity",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 3])])
    path = tmp_path / "identity.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)]), path)
    session = _ep_runner(kind, {"add_tiny": str(path)}, devices[0])
    dst = ortdlpack.from_dlpack(np.zeros((0, 3), np.float32), device=devices[0])
    (y,) = _run_on(session, {"x": np.zeros((0, 3), np.float32)}, outputs={"y": dst})
    assert y.shape == (0, 3) and y.device == dst.device
    del y, dst, session
    gc.collect()


def test_outputs_in_host_memory_the_session_cannot_allocate_are_refused(add):
    # Found by fuzz/fuzz_run.cc: asked for pinned (kDLCUDAHost) or another device's HOST_ACCESSIBLE memory, which it
    # has no allocator for, ORT silently allocated the output in CPU memory: the run returned it as if placed there.
    with pytest.raises(ValueError, match=r"output 'y' cannot be placed in CudaPinned:0.*no execution provider"):
        add({"x": tiny_input()}, device=(3, 0))


@pytest.mark.parametrize("kind", ["ortdlpack.run", "Session.run"])
def test_numpy_outputs_are_in_host_memory(vd, counters, models, add_ref, kind):
    # output_type='numpy' reads every output on the host (the core's RunOptions::read_on_host): a device session's
    # output comes back in host memory; device= or a destination on the device is refused before ORT runs.
    _, devices = vd
    session = _ep_runner(kind, models, devices[0])
    x = tiny_input()
    (y,) = _run_on(session, {"x": x}, output_type="numpy")
    assert isinstance(y, np.ndarray)
    np.testing.assert_array_equal(y, _expected(add_ref, x))
    (y,) = _run_on(session, {"x": x}, output_type="numpy", device="cpu")
    np.testing.assert_array_equal(y, _expected(add_ref, x))
    destination = ortdlpack.from_dlpack(np.zeros_like(x), device=devices[0])
    start = counters()
    with pytest.raises(ValueError, match=r"outputs read on the host \(numpy arrays\) cannot be placed in Virtual"):
        _run_on(session, {"x": x}, output_type="numpy", device=devices[0])
    with pytest.raises(ValueError, match=r"outputs read on the host .*destination of 'y', in Virtual"):
        _run_on(session, {"x": x}, output_type="numpy", outputs={"y": destination})
    assert counters()["allocs"] == start["allocs"]  # refused before ORT ran


def test_plugin_ep_session_both_runners_make_the_same_copies(vd, counters, models, add_ref):
    # A chain on the device: a device feed (staged to the CPU kernel, the one copy a run may make), its output
    # placed on the device and fed to the next run. The user's InferenceSession and ortdlpack.Session move the same
    # bytes.
    _, devices = vd
    seen = {}
    x = tiny_input()
    for kind in RUNNERS:
        session = _ep_runner(kind, models, devices[0])
        t = ortdlpack.from_dlpack(x, device=devices[0])
        start = counters()
        (y,) = _run_on(session, {"x": t}, device=devices[0])
        (z,) = _run_on(session, {"x": y}, device=devices[0])
        end = counters()
        seen[kind] = {k: end[k] - start[k] for k in ("bytes_h2d", "bytes_d2h", "bytes_d2d", "allocs")}
        np.testing.assert_array_equal(np.asarray(z.to("cpu")), _expected(add_ref, _expected(add_ref, x)))
        del t, y, z, session
        gc.collect()
    assert seen["ortdlpack.run"] == seen["Session.run"], seen

# --- ortdlpack.Session: onnxruntime's constructor arguments and both call orders --------------------------------


@pytest.fixture(scope="module")
def mul(models):
    return ortdlpack.Session(models["add_tiny"], providers=["CPUExecutionProvider"])


def test_session_takes_both_call_orders(mul):
    x = tiny_input()
    (a,) = mul.run(None, {"x": x})  # onnxruntime's order: outputs like the feeds (numpy here)
    assert isinstance(a, np.ndarray)
    (b,) = mul.run({"x": x})  # ortdlpack's order: Tensors
    assert isinstance(b, ortdlpack.Tensor)
    (c,) = mul.run({"x": x}, ["y"])
    np.testing.assert_array_equal(a, np.from_dlpack(b))
    np.testing.assert_array_equal(a, np.from_dlpack(c))


def test_session_node_arg_repr_and_fields(mul):
    arg = mul.get_inputs()[0]
    assert (arg.name, arg.type, arg.shape) == ("x", "tensor(float)", [1, 100])
    assert "x" in repr(arg) and "tensor(float)" in repr(arg)
    assert mul.input_names == ("x",) and mul.output_names == ("y",)


def test_session_constructor_argument_errors(models):
    path = models["add_tiny"]
    with pytest.raises(TypeError, match="sess_options"):
        ortdlpack.Session(path, sess_options="fast")
    with pytest.raises(TypeError, match="providers"):
        ortdlpack.Session(path, providers="CPUExecutionProvider")
    with pytest.raises(TypeError, match="providers"):
        ortdlpack.Session(path, providers=[("CPUExecutionProvider",)])
    with pytest.raises(TypeError, match="provider_options"):
        ortdlpack.Session(path, providers=["CPUExecutionProvider"], provider_options="x")
    with pytest.raises(ValueError, match="provider_options"):
        ortdlpack.Session(path, providers=["CPUExecutionProvider"], provider_options=[{}, {}])
    with pytest.raises(ValueError, match="both"):
        ortdlpack.Session(path, providers=["CPUExecutionProvider"], ep="cpu")
    with pytest.raises(ValueError, match="listed twice"):
        ortdlpack.Session(path, providers=["CPUExecutionProvider", "cpu"])
    with pytest.raises(ValueError, match="NoSuchExecutionProvider"):
        ortdlpack.Session(path, providers=["NoSuchExecutionProvider"])
    with pytest.raises(ValueError, match="output_type"):
        ortdlpack.Session(path, output_type="pandas")
    with pytest.raises(TypeError, match="options of provider 'CPUExecutionProvider'"):
        ortdlpack.Session(path, providers=[("CPUExecutionProvider", "fast")])
    with pytest.raises(TypeError, match=r"\['arena'\]"):
        ortdlpack.Session(path, providers=[("CPUExecutionProvider", {"arena": object()})])
    with pytest.raises(ValueError, match="provider_options needs providers"):
        ortdlpack.Session(path, provider_options=[{}])
    with pytest.raises(ValueError, match="names only where provider_options is given"):
        ortdlpack.Session(path, providers=[("CPUExecutionProvider", {"a": "1"})], provider_options=[{"b": "2"}])
    with pytest.raises(ValueError, match="names only where provider_options is given"):  # onnxruntime's rule
        ortdlpack.Session(path, providers=[("CPUExecutionProvider", {"a": "1"})], provider_options=[{}])
    with pytest.raises(ValueError, match=r"given as a \(name, options\) pair"):  # even with no options in it
        ortdlpack.Session(path, providers=[("CPUExecutionProvider", {})], provider_options=[{}])
    with pytest.raises(TypeError, match=r"\(name, options\) tuple"):  # onnxruntime's rule: a tuple
        ortdlpack.Session(path, providers=[["CPUExecutionProvider", {}]])
    # option values as onnxruntime takes them: str, bool, int, float
    ortdlpack.Session(path, providers=["CPUExecutionProvider"], provider_options=[{"use_arena": True}])


def test_session_options_without_a_c_api_setter_are_honoured(models):
    # enable_mem_reuse and execution_order have no setter in ORT's C API: kept all the same, the core starting from a
    # copy of the options themselves.
    so = ort.SessionOptions()
    so.enable_mem_reuse = False
    so.execution_order = ort.ExecutionOrder.PRIORITY_BASED
    sess = ortdlpack.Session(models["add_tiny"], sess_options=so)
    x = tiny_input()
    np.testing.assert_allclose(sess.run(None, {"x": x})[0], cpu_session(models["add_tiny"]).run(None, {"x": x})[0])


def test_session_options_with_providers_are_refused(models):
    # Providers added to the options themselves: ortdlpack could not list them (get_providers, device memory).
    cpu = [d for d in ort.get_ep_devices() if d.ep_name == "CPUExecutionProvider"]
    so = ort.SessionOptions()
    so.add_provider_for_devices(cpu, {})
    with pytest.raises(ValueError, match="providers="):
        ortdlpack.Session(models["add_tiny"], sess_options=so)
