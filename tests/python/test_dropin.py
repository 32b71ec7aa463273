"""ortdlpack.InferenceSession as a drop-in for onnxruntime.InferenceSession: a subclass of it.

The first part ports usage patterns of onnxruntime's own test suite (onnxruntime/test/python/onnxruntime_test_python.py:
test_run_model, test_run_model_from_bytes, test_run_model2, test_run_model_symbolic_input, test_boolean_inputs,
test_list_as_input, test_model_serialization, test_run_model_multiple_threads, test_get_providers,
test_deserialization_from_path_object, test_model_meta, test_profiler_with_session_options,
test_profiler_get_start_time_ns, test_graph_optimization_level, test_session_options_add_free_dimension_override_*,
test_session_options_add_initializer, test_raise_wrong_num_inputs, test_sequence_* types), written anew on models
built here (test_onnxruntime_suite.py ports the rest). Each runs, unchanged, against both classes: `Session` is
onnxruntime.InferenceSession or ortdlpack.InferenceSession. The second part tests what ortdlpack.InferenceSession adds
(DLPack feeds, outputs in the caller's framework, destinations, bind()) and its errors, which are onnxruntime's
classes.
"""

from __future__ import annotations

import inspect
import json
import os
import pathlib
import re
import threading
import warnings

import numpy as np
import onnxruntime as ort
import pytest

import ortdlpack

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

CLASSES = {"onnxruntime": ort.InferenceSession, "ortdlpack": ortdlpack.InferenceSession}
X = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], dtype=np.float32)


def _model(nodes, inputs, outputs, initializers=(), **meta):
    graph = helper.make_graph(nodes, meta.pop("graph_name", "g"), inputs, outputs, list(initializers),
                              doc_string=meta.pop("graph_doc", ""))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], **meta)
    model.ir_version = 10
    return model


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    """Models like onnxruntime's test data, written once: {name: path}."""
    d = tmp_path_factory.mktemp("dropin")
    f = TensorProto.FLOAT
    w = numpy_helper.from_array(X.copy(), "W")  # mul_1: Y = X * W with W = X
    built = {
        "mul_1": _model([helper.make_node("Mul", ["X", "W"], ["Y"])], [helper.make_tensor_value_info("X", f, [3, 2])],
                        [helper.make_tensor_value_info("Y", f, [3, 2])], [w], producer_name="ortdlpack-tests",
                        graph_name="mul_graph", doc_string="multiplies", graph_doc="the graph", model_version=3,
                        domain="org.example"),
        "matmul_1": _model([helper.make_node("MatMul", ["X", "W"], ["Y"])],
                           [helper.make_tensor_value_info("X", f, [3, 2])], [helper.make_tensor_value_info("Y", f, [3, 1])],
                           [numpy_helper.from_array(np.array([[1.0], [2.0]], np.float32), "W")]),
        "matmul_2": _model([helper.make_node("MatMul", ["X", "W"], ["Y"])],
                           [helper.make_tensor_value_info("X", f, ["N", 2])], [helper.make_tensor_value_info("Y", f, ["N", 1])],
                           [numpy_helper.from_array(np.array([[1.0], [2.0]], np.float32), "W")]),
        "foldable": _model([helper.make_node("Mul", ["A", "B"], ["C"]), helper.make_node("Add", ["X", "C"], ["Y"])],
                           [helper.make_tensor_value_info("X", f, [3, 2])], [helper.make_tensor_value_info("Y", f, [3, 2])],
                           [numpy_helper.from_array(X.copy(), "A"), numpy_helper.from_array(X.copy(), "B")]),
        "logicaland": _model([helper.make_node("And", ["input1:0", "input:0"], ["output:0"])],
                             [helper.make_tensor_value_info("input1:0", TensorProto.BOOL, [2, 2]),
                              helper.make_tensor_value_info("input:0", TensorProto.BOOL, [2, 2])],
                             [helper.make_tensor_value_info("output:0", TensorProto.BOOL, [2, 2])]),
        "abs_free_dimensions": _model(
            [helper.make_node("Abs", ["x"], ["y"])],
            [helper.make_tensor_value_info("x", f, ["Dim1", "Dim2", 5])],
            [helper.make_tensor_value_info("y", f, ["Dim1", "Dim2", 5])]),
        "sequence_length": _model([helper.make_node("SequenceLength", ["X"], ["Y"])],
                                  [helper.make_tensor_sequence_value_info("X", f, None)],
                                  [helper.make_tensor_value_info("Y", TensorProto.INT64, [])]),
    }
    # Denotations of abs_free_dimensions' first two dims (onnxruntime's test model has DATA_BATCH, DATA_CHANNEL).
    dims = built["abs_free_dimensions"].graph.input[0].type.tensor_type.shape.dim
    dims[0].denotation, dims[1].denotation = "DATA_BATCH", "DATA_CHANNEL"
    paths = {}
    for name, model in built.items():
        paths[name] = str(d / f"{name}.onnx")
        onnx.save(model, paths[name])
    return paths


@pytest.fixture(params=list(CLASSES))
def Session(request):  # noqa: N802 (the class under test, spelled as onnxruntime's tests spell it)
    return CLASSES[request.param]


# --- onnxruntime's usage patterns, unchanged against both classes ------------------------------------------------


def test_run_model(Session, models):
    sess = Session(models["mul_1"], providers=["CPUExecutionProvider"])
    inputs = sess.get_inputs()
    assert len(inputs) == 1
    assert inputs[0].name == "X"
    assert inputs[0].shape == [3, 2]
    outputs = sess.get_outputs()
    assert len(outputs) == 1
    assert outputs[0].name == "Y"
    assert outputs[0].shape == [3, 2]
    res = sess.run([outputs[0].name], {inputs[0].name: X})
    np.testing.assert_allclose(res[0], X * X, rtol=1e-05, atol=1e-08)


def test_run_model_from_bytes(Session, models):
    with open(models["mul_1"], "rb") as f:
        content = f.read()
    sess = Session(content, providers=["CPUExecutionProvider"])
    input_name = sess.get_inputs()[0].name
    assert input_name == "X"
    assert sess.get_inputs()[0].shape == [3, 2]
    output_name = sess.get_outputs()[0].name
    res = sess.run([output_name], {input_name: X})
    np.testing.assert_allclose(res[0], X * X, rtol=1e-05, atol=1e-08)


def test_run_model2(Session, models):
    sess = Session(models["matmul_1"], providers=["CPUExecutionProvider"])
    assert sess.get_outputs()[0].shape == [3, 1]
    res = sess.run([sess.get_outputs()[0].name], {sess.get_inputs()[0].name: X})
    np.testing.assert_allclose(res[0], np.array([[5.0], [11.0], [17.0]], dtype=np.float32), rtol=1e-05, atol=1e-08)


def test_run_model_symbolic_input(Session, models):
    sess = Session(models["matmul_2"], providers=["CPUExecutionProvider"])
    assert sess.get_inputs()[0].shape == ["N", 2]
    assert sess.get_outputs()[0].shape == ["N", 1]
    res = sess.run(["Y"], {"X": X})
    np.testing.assert_allclose(res[0], np.array([[5.0], [11.0], [17.0]], dtype=np.float32), rtol=1e-05, atol=1e-08)


def test_boolean_inputs(Session, models):
    sess = Session(models["logicaland"], providers=["CPUExecutionProvider"])
    a = np.array([[True, True], [False, False]], dtype=bool)
    b = np.array([[True, False], [True, False]], dtype=bool)
    # the order of the model is kept
    assert [i.name for i in sess.get_inputs()] == ["input1:0", "input:0"]
    assert [i.type for i in sess.get_inputs()] == ["tensor(bool)", "tensor(bool)"]
    assert sess.get_outputs()[0].type == "tensor(bool)"
    assert sess.get_outputs()[0].shape == [2, 2]
    res = sess.run(["output:0"], {"input1:0": a, "input:0": b})
    np.testing.assert_equal(res[0], np.array([[True, False], [False, False]], dtype=bool))


def test_list_as_input(Session, models):
    sess = Session(models["mul_1"], providers=["CPUExecutionProvider"])
    res = sess.run([], {sess.get_inputs()[0].name: X.tolist()})
    np.testing.assert_allclose(res[0], X * X, rtol=1e-05, atol=1e-08)


def test_model_serialization(Session, models, tmp_path):
    so = ort.SessionOptions()
    so.log_severity_level = 1
    so.logid = "TestModelSerialization"
    so.optimized_model_filepath = str(tmp_path / "optimized.onnx")
    Session(models["mul_1"], sess_options=so, providers=["CPUExecutionProvider"])
    assert os.path.isfile(so.optimized_model_filepath)


def test_run_model_multiple_threads(Session, models):
    so = ort.SessionOptions()
    so.log_verbosity_level = 1
    so.logid = "MultiThreadsTest"
    sess = Session(models["mul_1"], sess_options=so, providers=["CPUExecutionProvider"])
    errors = []

    def run_model(run_options):
        try:
            for _ in range(20):
                res = sess.run([], {"X": X}, run_options=run_options)
                np.testing.assert_allclose(res[0], X * X, rtol=1e-05, atol=1e-08)
        except Exception as e:  # noqa: BLE001 (reported below)
            errors.append(e)

    threads = []
    for logid in ("thread1", "thread2"):
        ro = ort.RunOptions()
        ro.logid = logid
        threads.append(threading.Thread(target=run_model, args=(ro,)))
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_get_providers(Session, models):
    sess = Session(models["mul_1"], providers=ort.get_available_providers()[-1:])
    assert "CPUExecutionProvider" in sess.get_providers()
    assert sess.get_providers()[-1] == "CPUExecutionProvider"


def test_deserialization_from_path_object(Session, models):
    sess = Session(pathlib.Path(models["mul_1"]), providers=["CPUExecutionProvider"])
    np.testing.assert_array_equal(np.asarray(sess.run(None, {"X": X})[0]), X * X)


def test_model_meta(Session, models):
    meta = Session(models["mul_1"], providers=["CPUExecutionProvider"]).get_modelmeta()
    assert meta.producer_name == "ortdlpack-tests"
    assert meta.graph_name == "mul_graph"
    assert meta.domain == "org.example"
    assert meta.description == "multiplies"
    assert meta.graph_description == "the graph"
    assert meta.version == 3
    assert meta.custom_metadata_map == {}


def test_profiler_with_session_options(Session, models, tmp_path):
    so = ort.SessionOptions()
    so.enable_profiling = True
    so.profile_file_prefix = str(tmp_path / "profile")
    sess = Session(models["mul_1"], sess_options=so, providers=["CPUExecutionProvider"])
    sess.run([], {"X": X})
    profile_file = sess.end_profiling()
    with open(profile_file) as f:
        events = json.load(f)
    assert events and all({"pid", "dur", "ts", "ph", "name", "args"} <= set(e) for e in events)


def test_profiler_get_start_time_ns(Session, models, tmp_path):
    def start_time():
        so = ort.SessionOptions()
        so.enable_profiling = True
        so.profile_file_prefix = str(tmp_path / "start")
        sess = Session(models["mul_1"], sess_options=so, providers=["CPUExecutionProvider"])
        t = sess.get_profiling_start_time_ns()
        os.remove(sess.end_profiling())
        return t

    t1, t2, t3 = start_time(), start_time(), start_time()
    assert t1 <= t2 <= t3


def test_graph_optimization_level(Session, models, tmp_path):
    opt = ort.SessionOptions()
    opt.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
    sess = Session(models["logicaland"], sess_options=opt, providers=["CPUExecutionProvider"])
    a = np.array([[True, True], [False, False]], dtype=bool)
    b = np.array([[True, False], [True, False]], dtype=bool)
    np.testing.assert_array_equal(np.asarray(sess.run([], {"input1:0": a, "input:0": b})[0]), a & b)

    # The level reaches ORT: foldable's Mul of two initializers is folded from ORT_ENABLE_BASIC on, kept without
    # optimisations (the optimized model ORT writes shows which).
    def optimized_ops(level):
        so = ort.SessionOptions()
        so.graph_optimization_level = level
        so.optimized_model_filepath = str(tmp_path / f"{int(level)}.onnx")
        folded = Session(models["foldable"], sess_options=so, providers=["CPUExecutionProvider"])
        np.testing.assert_array_equal(np.asarray(folded.run(None, {"X": X})[0]), X + X * X)
        return [n.op_type for n in onnx.load(so.optimized_model_filepath).graph.node]

    assert optimized_ops(ort.GraphOptimizationLevel.ORT_DISABLE_ALL) == ["Mul", "Add"]
    assert optimized_ops(ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED) == ["Add"]


def test_session_options_add_free_dimension_override_by_denotation(Session, models):
    so = ort.SessionOptions()
    so.add_free_dimension_override_by_denotation("DATA_BATCH", 3)
    so.add_free_dimension_override_by_denotation("DATA_CHANNEL", 5)
    sess = Session(models["abs_free_dimensions"], sess_options=so, providers=["CPUExecutionProvider"])
    assert sess.get_inputs()[0].shape == [3, 5, 5]


def test_session_options_add_free_dimension_override_by_name(Session, models):
    so = ort.SessionOptions()
    so.add_free_dimension_override_by_name("Dim1", 4)
    so.add_free_dimension_override_by_name("Dim2", 6)
    sess = Session(models["abs_free_dimensions"], sess_options=so, providers=["CPUExecutionProvider"])
    assert sess.get_inputs()[0].shape == [4, 6, 5]


def test_session_options_add_initializer(Session, models):
    so = ort.SessionOptions()
    w = ort.OrtValue.ortvalue_from_numpy(np.array([[2.0, 1.0], [4.0, 3.0], [6.0, 5.0]], dtype=np.float32))
    so.add_initializer("W", w)  # overrides the model's W; the caller keeps it alive
    sess = Session(models["mul_1"], sess_options=so, providers=["CPUExecutionProvider"])
    res = sess.run(["Y"], {"X": X})
    np.testing.assert_array_equal(res[0], np.array([[2.0, 2.0], [12.0, 12.0], [30.0, 30.0]], dtype=np.float32))


def test_raise_wrong_num_inputs(Session, models):
    sess = Session(models["logicaland"], providers=["CPUExecutionProvider"])
    with pytest.raises(ValueError, match="input1:0"):
        sess.run([], {"input:0": np.array([[True, True], [False, False]], dtype=bool)})


def test_sequence_types(Session, models):
    sess = Session(models["sequence_length"], providers=["CPUExecutionProvider"])
    assert sess.get_inputs()[0].type == "seq(tensor(float))"
    assert sess.get_outputs()[0].type == "tensor(int64)"
    assert sess.get_outputs()[0].shape == []


def test_session_config_entry_is_honoured(Session, models):
    so = ort.SessionOptions()
    so.add_session_config_entry("session.intra_op.allow_spinning", "0")
    sess = Session(models["mul_1"], sess_options=so, providers=["CPUExecutionProvider"])
    np.testing.assert_allclose(sess.run(None, {"X": X})[0], X * X)
    # An entry that makes ORT refuse the session is refused by both (so it was passed on, not dropped).
    so.add_session_config_entry("session.disable_cpu_ep_fallback", "1")
    with pytest.raises(Exception, match="fallback"):
        Session(models["mul_1"], sess_options=so, providers=["CPUExecutionProvider"])


def test_run_options_terminate(Session, models):
    sess = Session(models["mul_1"], providers=["CPUExecutionProvider"])
    ro = ort.RunOptions()
    ro.terminate = True
    with pytest.raises(Exception, match="(?i)terminat"):
        sess.run(None, {"X": X}, ro)


# --- what ortdlpack.InferenceSession adds -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def mul(models):
    return ortdlpack.InferenceSession(models["mul_1"], providers=["CPUExecutionProvider"])


def test_it_is_an_onnxruntime_inference_session(mul):
    assert isinstance(mul, ort.InferenceSession)
    assert ortdlpack.InferenceSession is not ortdlpack.Session  # the core's session stays, for C++ parity
    assert mul.get_session_options() is not None and mul.get_provider_options() == {"CPUExecutionProvider": {}}
    assert mul._model_path.endswith("mul_1.onnx") and mul._sess is not None


@pytest.mark.parametrize("output_type", ["numpy", "torch", "ortdlpack", "like_feeds", None])
def test_output_type(mul, output_type):
    torch = pytest.importorskip("torch")
    x = torch.from_numpy(X.copy())
    (y,) = mul.run(None, {"X": x}, output_type=output_type)
    want = {"numpy": np.ndarray, "torch": torch.Tensor, "ortdlpack": ortdlpack.Tensor, "like_feeds": torch.Tensor,
            None: torch.Tensor}
    assert type(y) is want[output_type]
    np.testing.assert_array_equal(np.asarray(y), X * X)


def test_outputs_like_the_feeds(mul):
    torch = pytest.importorskip("torch")
    jnp = pytest.importorskip("jax.numpy")
    assert type(mul.run(None, {"X": X})[0]) is np.ndarray
    assert type(mul.run(None, {"X": X.tolist()})[0]) is np.ndarray
    assert type(mul.run(None, {"X": ort.OrtValue.ortvalue_from_numpy(X)})[0]) is np.ndarray  # as onnxruntime
    assert isinstance(mul.run(None, {"X": torch.from_numpy(X.copy())})[0], torch.Tensor)
    (j,) = mul.run(None, {"X": jnp.asarray(X)})
    assert isinstance(j, type(jnp.asarray(X)))
    np.testing.assert_array_equal(np.asarray(j), X * X)


def test_the_session_s_output_type_is_the_default(models):
    torch = pytest.importorskip("torch")
    sess = ortdlpack.InferenceSession(models["mul_1"], output_type="torch")
    assert isinstance(sess.run(None, {"X": X})[0], torch.Tensor)
    assert isinstance(sess.run(None, {"X": X}, output_type="numpy")[0], np.ndarray)
    with pytest.raises(ValueError, match="output_type"):
        ortdlpack.InferenceSession(models["mul_1"], output_type="pandas")


def test_a_torch_output_is_written_into_its_destination(mul):
    torch = pytest.importorskip("torch")
    dst = torch.empty(3, 2)
    (y,) = mul.run(None, {"X": torch.from_numpy(X.copy())}, outputs={"Y": dst})
    assert y.data_ptr() == dst.data_ptr()
    np.testing.assert_array_equal(dst.numpy(), X * X)


def test_output_type_on_ortdlpack_run(models):
    torch = pytest.importorskip("torch")
    sess = ort.InferenceSession(models["mul_1"], providers=["CPUExecutionProvider"])
    (y,) = ortdlpack.run(sess, {"X": torch.from_numpy(X.copy())}, output_type="torch")
    assert isinstance(y, torch.Tensor)
    (z,) = ortdlpack.run(sess, {"X": X}, output_type="like_feeds")
    assert isinstance(z, np.ndarray)
    np.testing.assert_array_equal(y.numpy(), z)


def test_bind_reruns_on_the_same_tensors(mul):
    x = X.copy()
    b = mul.bind({"X": x}, output_type="numpy")
    (first,) = b.run()
    addr = first.ctypes.data
    for k in range(3):
        x[:] = X + k  # contents change in place; the binding reads them
        (y,) = b.run()
        assert y.ctypes.data == addr  # the same output buffer every run
        np.testing.assert_allclose(y, (X + k) * X)
    assert b.output_names == ["Y"]


def test_bind_into_a_destination(mul):
    dst = np.zeros((3, 2), np.float32)
    b = mul.bind({"X": X}, outputs={"Y": dst})
    (y,) = b.run()
    np.testing.assert_array_equal(dst, X * X)
    assert np.from_dlpack(y).ctypes.data == dst.ctypes.data


def test_errors_are_onnxruntime_s_classes(mul):
    from onnxruntime.capi import onnxruntime_pybind11_state as C

    torch = pytest.importorskip("torch")
    for feed in (X.astype(np.float64), torch.from_numpy(X.astype(np.float64))):  # ORT's check, on either route
        with pytest.raises(C.InvalidArgument, match="Unexpected input data type") as info:
            mul.run(None, {"X": feed})
        assert type(info.value) is C.InvalidArgument  # onnxruntime's class, nothing more
    with pytest.raises(C.InvalidArgument, match="Invalid input name: Q$"):
        mul.run(None, {"X": torch.from_numpy(X.copy()), "Q": X})
    ro = ort.RunOptions()
    ro.terminate = True
    for feed in (torch.from_numpy(X.copy()), X):  # the core's executor, onnxruntime's run
        with pytest.raises(C.Fail) as info:
            mul.run(None, {"X": feed}, ro)
        assert type(info.value) is C.Fail and not isinstance(info.value, RuntimeError)


def test_run_argument_errors(mul):
    with pytest.raises(TypeError, match="input_feed"):
        mul.run({"X": X})  # ortdlpack.Session's order is not onnxruntime's: refused as onnxruntime refuses it
    with pytest.raises(TypeError, match="incompatible function arguments"):  # onnxruntime's own
        mul.run(None, {"X": X}, run_options="fast")
    with pytest.raises(ValueError, match="output_type"):
        mul.run(None, {"X": X}, output_type="pandas")
    with pytest.raises(TypeError, match="output_type"):
        mul.run(None, {"X": X}, output_type=3)
    with pytest.raises(RuntimeError, match="Unable to handle object"):  # onnxruntime's own error, unchanged
        mul.run(None, {"X": object()})


def test_bind_argument_errors(mul):
    with pytest.raises(ValueError, match=r"Required inputs \(\['X'\]\) are missing"):
        mul.bind({"Q": X})
    with pytest.raises(TypeError):
        mul.bind([X])
    b = mul.bind({"X": X})
    with pytest.raises(TypeError, match="run_options"):
        b.run(run_options=1)
    # Binding.run's own arguments, as Python words a call's errors
    with pytest.raises(TypeError, match=r"run\(\) takes at most 1 positional argument"):
        b.run(None, None)
    with pytest.raises(TypeError, match="unexpected keyword argument 'feed'"):
        b.run(feed={"X": X})
    with pytest.raises(TypeError, match="Binding.run: feeds must be a mapping"):
        b.run(feeds=[X])
    with pytest.raises(TypeError):
        ortdlpack.Binding.run(mul, None)  # not a Binding
    assert str(inspect.signature(b.run)) == "(run_options=None, *, feeds=None)"


# --- Tensor.as_framework and Tensor.data_ptr ----------------------------------------------------------------------


def test_tensor_as_framework_shares_the_memory():
    torch = pytest.importorskip("torch")
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = ortdlpack.from_dlpack(a)
    x = t.as_framework("torch")
    assert isinstance(x, torch.Tensor) and x.data_ptr() == a.ctypes.data
    n = t.as_framework("numpy")
    assert isinstance(n, np.ndarray) and n.ctypes.data == a.ctypes.data
    assert t.as_framework("ortdlpack") is t
    with pytest.raises(ValueError, match="like_feeds"):
        t.as_framework("like_feeds")
    with pytest.raises(ValueError, match="output_type 'pandas'"):
        t.as_framework("pandas")
    with pytest.raises(TypeError, match="output_type"):
        t.as_framework(None)


def test_data_ptr_is_an_int_and_a_method():
    a = np.arange(4, dtype=np.float32)
    t = ortdlpack.from_dlpack(a)
    assert t.data_ptr == a.ctypes.data  # the property, as before
    assert t.data_ptr() == a.ctypes.data and type(t.data_ptr()) is int  # torch's and OrtValue's spelling
    assert isinstance(t.data_ptr, int)
    with pytest.raises(TypeError):
        t.data_ptr(1)


def test_a_c_session_whose_ort_session_is_not_recognised_still_runs_host_feeds(models):
    # ortdlpack runs an InferenceSession on its own OrtSession, taken from onnxruntime's SessionIOBinding and accepted
    # only if it starts with the vtable of ORT's session class. Where it cannot reach it (as with a future
    # onnxruntime's layout), host feeds run through onnxruntime's own run (a RuntimeWarning says so, once); what needs
    # the OrtSession is a BufferError naming the version (test_never_wrong.py tries each way the borrow fails).
    class Unrecognised:  # everything of a C session but a conduit to its OrtSession
        def __init__(self, real):
            self._real = real

        def __getattr__(self, name):
            if name == "_pybind11_conduit_v1_":
                raise AttributeError(name)
            return getattr(self._real, name)

    s = ortdlpack.InferenceSession(models["mul_1"], providers=["CPUExecutionProvider"])
    s._sess = Unrecognised(s._sess)
    with pytest.warns(RuntimeWarning, match=f"onnxruntime {re.escape(ort.__version__)}"):
        (y,) = s.run(None, {"X": X})
    np.testing.assert_array_equal(y, X * X)
    with pytest.raises(BufferError, match=f"onnxruntime {re.escape(ort.__version__)}.*InferenceSession"):
        s.bind({"X": X})


_CPU = "CPUExecutionProvider"


@pytest.mark.parametrize("kwargs", [
    dict(providers=[_CPU]), dict(providers=[(_CPU, {})]), dict(providers=[(_CPU, {"arena_extend_strategy": "kSameAsRequested"})]),
    dict(providers=[[_CPU, {}]]), dict(providers=[_CPU], provider_options=[{}]),
    dict(providers=[(_CPU, {})], provider_options=[{}]), dict(providers=[(_CPU, {"a": "1"})], provider_options=[{}]),
    dict(providers=[_CPU], provider_options=[{}, {}]), dict(provider_options=[{}]),
    dict(providers=[_CPU], provider_options=["x"]), dict(providers=(_CPU,), provider_options=({},)),
    dict(providers=[(_CPU, None)]), dict(providers=[(_CPU, {"a": object()})]),
], ids=["names", "pair", "pair-options", "list-pair", "names+options", "pair+options", "pair-options+options",
        "lengths-differ", "options-alone", "options-not-dict", "tuples", "pair-none", "value-object"])
def test_provider_arguments_end_as_onnxruntimes_do(models, kwargs):
    """providers= / provider_options= in every shape: the drop-in ends as onnxruntime does (its session's providers
    and result, or its exception class), whichever of the core's rule (with_provider_options) and onnxruntime's own
    judges the argument."""
    def outcome(cls):
        try:
            s = cls(models["mul_1"], **kwargs)
            return s.get_providers(), s.run(None, {"X": X})[0].tolist()
        except Exception as e:  # (the class is what is compared)
            return type(e)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # onnxruntime's own warnings on odd arguments are not what is compared
        assert outcome(ortdlpack.InferenceSession) == outcome(ort.InferenceSession)

