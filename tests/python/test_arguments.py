"""Every argument of every public function: a wrong type is a TypeError naming the argument, a value out of range a
ValueError naming it (docs/python.md, Errors; issue 17, items 8, 10 and 11). Never RuntimeError, which means that
ONNX Runtime failed, and never nanobind's "incompatible function arguments" listing internal signatures."""

from __future__ import annotations

import re

import numpy as np
import onnxruntime as ort
import pytest

import ortdlpack as od
from conftest import cpu_session, tiny_input


@pytest.fixture(scope="module")
def model(models):
    return models["add_tiny"]


@pytest.fixture(scope="module")
def sessions(model):
    return {"run": cpu_session(model), "Session": od.Session(model, intra_op_num_threads=1)}


def _feeds():
    return {"x": tiny_input()}


def _dst():
    return {"y": np.zeros((1, 100), np.float32)}


# (id, error class, argument the message names, call(model, sessions))
CASES = [
    # Session(path_or_bytes, sess_options, providers, provider_options, *, intra_op_num_threads, inter_op_num_threads,
    # ep, ep_options, config, stream, output_type): the onnxruntime arguments in test_dropin.py
    *[(f"intra_op_num_threads={v!r}", TypeError, "intra_op_num_threads",
       lambda m, s, v=v: od.Session(m, intra_op_num_threads=v)) for v in ("2", 1.5, b"2", [2])],
    *[(f"intra_op_num_threads={v!r}", ValueError, "intra_op_num_threads",
       lambda m, s, v=v: od.Session(m, intra_op_num_threads=v)) for v in (2**40, -1)],
    ("inter_op_num_threads='1'", TypeError, "inter_op_num_threads", lambda m, s: od.Session(m, inter_op_num_threads="1")),
    ("inter_op_num_threads=2**31", ValueError, "inter_op_num_threads",
     lambda m, s: od.Session(m, inter_op_num_threads=2**31)),
    ("ep=3", TypeError, "ep", lambda m, s: od.Session(m, ep=3)),
    ("ep=''", ValueError, "execution provider name", lambda m, s: od.Session(m, ep="")),
    ("ep_options=[...]", TypeError, "ep_options", lambda m, s: od.Session(m, ep="cpu", ep_options=[("a", "b")])),
    ("ep_options={'a': [1]}", TypeError, "ep_options", lambda m, s: od.Session(m, ep="cpu", ep_options={"a": [1]})),
    ("config={'a': 1}", TypeError, "config", lambda m, s: od.Session(m, config={"a": 1})),
    ("stream='0'", TypeError, "stream", lambda m, s: od.Session(m, stream="0")),
    ("stream=-1", ValueError, "stream", lambda m, s: od.Session(m, stream=-1)),
    ("path_or_bytes=42", TypeError, "path_or_bytes", lambda m, s: od.Session(42)),
    # ortdlpack.run(session, feeds, output_names=None, *, outputs=None, in_place=None, device=None, run_options=None):
    # feeds, output names and run_options of a shape onnxruntime's run takes apart are its (test_onnxruntime_rules.py)
    ("run(session=object())", TypeError, "session", lambda m, s: od.run(object(), _feeds())),
    ("run(in_place=3)", TypeError, "in_place", lambda m, s: od.run(s["run"], _feeds(), in_place=3)),
    ("run(in_place={'y': 3})", TypeError, "in_place", lambda m, s: od.run(s["run"], _feeds(), in_place={"y": 3})),
    ("Session(feeds=None)", TypeError, "feeds", lambda m, s: _call(s, "Session", None)),
    ("Session(feeds=[...])", TypeError, "feeds", lambda m, s: _call(s, "Session", [("x", tiny_input())])),
    ("Session(output_names=3)", TypeError, "output_names", lambda m, s: _call(s, "Session", _feeds(), 3)),
    ("Session(output_names=[1])", TypeError, "output_names", lambda m, s: _call(s, "Session", _feeds(), [1])),
    ("Session(run_options=3)", TypeError, "run_options", lambda m, s: _call(s, "Session", _feeds(), run_options=3)),
    # both runners: outputs, device
    *[case for kind in ("run", "Session") for case in [
        (f"{kind}(outputs=3)", TypeError, "outputs", lambda m, s, k=kind: _call(s, k, _feeds(), outputs=3)),
        (f"{kind}(device=3.5)", TypeError, "device", lambda m, s, k=kind: _call(s, k, _feeds(), device=3.5)),
        (f"{kind}(device='warp')", ValueError, "device", lambda m, s, k=kind: _call(s, k, _feeds(), device="warp")),
    ]],
    # from_dlpack(x, /, *, device=None, copy=None), Tensor.to(device), Device(spec)
    ("from_dlpack(device=3.5)", TypeError, "device", lambda m, s: od.from_dlpack(np.zeros(2), device=3.5)),
    ("from_dlpack(device=(1, 2**40))", ValueError, "device", lambda m, s: od.from_dlpack(np.zeros(2), device=(1, 2**40))),
    ("from_dlpack(copy=1)", TypeError, "copy", lambda m, s: od.from_dlpack(np.zeros(2), copy=1)),
    ("Tensor.to(3)", TypeError, "device", lambda m, s: od.from_dlpack(np.zeros(2)).to(3)),
    ("Device(1.5)", TypeError, "spec", lambda m, s: od.Device(1.5)),
    ("Device(('a', 0))", TypeError, "spec", lambda m, s: od.Device(("a", 0))),
    ("Device((1, -1))", ValueError, "spec", lambda m, s: od.Device((1, -1))),
    # Tensor.__dlpack__(*, stream, max_version, dl_device, copy)
    ("__dlpack__(stream='a')", TypeError, "stream", lambda m, s: od.from_dlpack(np.zeros(2)).__dlpack__(stream="a")),
    ("__dlpack__(stream=7)", ValueError, "stream", lambda m, s: od.from_dlpack(np.zeros(2)).__dlpack__(stream=7)),
    ("__dlpack__(max_version=(1,))", TypeError, "max_version",
     lambda m, s: od.from_dlpack(np.zeros(2)).__dlpack__(max_version=(1,))),
    ("__dlpack__(dl_device=3.5)", TypeError, "dl_device",
     lambda m, s: od.from_dlpack(np.zeros(2)).__dlpack__(dl_device=3.5)),
    ("__dlpack__(copy='no')", TypeError, "copy", lambda m, s: od.from_dlpack(np.zeros(2)).__dlpack__(copy="no")),
    # register_device(name, ort_device_type, vendor_id, memory_type, dl_device_type), unregister_device(...)
    ("register_device(name=1)", TypeError, "name", lambda m, s: od.register_device(1, "npu", 0xA110, "default", "maia")),
    ("register_device(ort_device_type=1.5)", TypeError, "ort_device_type",
     lambda m, s: od.register_device("X", 1.5, 0xA110, "default", "maia")),
    ("register_device(ort_device_type=99)", ValueError, "ort_device_type",
     lambda m, s: od.register_device("X", 99, 0xA110, "default", "maia")),
    ("register_device(vendor_id='x')", TypeError, "vendor_id",
     lambda m, s: od.register_device("X", "npu", "x", "default", "maia")),
    ("register_device(vendor_id=-1)", ValueError, "vendor_id",
     lambda m, s: od.register_device("X", "npu", -1, "default", "maia")),
    ("register_device(vendor_id=2**40)", ValueError, "vendor_id",
     lambda m, s: od.register_device("X", "npu", 2**40, "default", "maia")),
    ("register_device(memory_type=1.5)", TypeError, "memory_type",
     lambda m, s: od.register_device("X", "npu", 0xA110, 1.5, "maia")),
    ("register_device(memory_type=99)", ValueError, "memory_type",
     lambda m, s: od.register_device("X", "npu", 0xA110, 99, "maia")),
    ("register_device(dl_device_type=2**40)", ValueError, "dl_device_type",
     lambda m, s: od.register_device("X", "npu", 0xA110, "default", 2**40)),
    ("register_device(dl_device_type=1.5)", TypeError, "dl_device_type",
     lambda m, s: od.register_device("X", "npu", 0xA110, "default", 1.5)),
    ("unregister_device(vendor_id='x')", TypeError, "vendor_id", lambda m, s: od.unregister_device("npu", "x", "default")),
    ("unregister_device(vendor_id=-1)", ValueError, "vendor_id", lambda m, s: od.unregister_device("npu", -1, "default")),
    # register_execution_provider_library(name, path)
    ("register_execution_provider_library(name=1)", TypeError, "name",
     lambda m, s: od.register_execution_provider_library(1, "/nonexistent.so")),
    ("register_execution_provider_library(path=1)", TypeError, "path",
     lambda m, s: od.register_execution_provider_library("x", 1)),
    # as_ortvalue(x)
    ("as_ortvalue(3)", TypeError, "x", lambda m, s: od.as_ortvalue(3)),
]


def _call(sessions, kind, *args, **kw):
    if kind == "run":
        return od.run(sessions["run"], *args, **kw)
    return sessions["Session"].run(*args, **kw)


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_argument_errors(model, sessions, case):
    _, error, argument, call = case
    with pytest.raises(Exception) as e:
        call(model, sessions)
    message = str(e.value)
    assert type(e.value) is error, f"{type(e.value).__name__}: {message}"
    assert re.search(rf"\b{argument}\b", message), message
    assert "incompatible function arguments" not in message and "bad_cast" not in message


def test_thread_counts_take_any_integer(model):
    s = od.Session(model, intra_op_num_threads=np.int64(1), inter_op_num_threads=0)  # 0: ORT's default
    assert s.run(_feeds())[0].shape == (1, 100)


# --- EP names (item 10) ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("ep", ["cpu", "CPU", "CPUExecutionProvider"])
def test_cpu_ep_by_every_name(model, ep):
    # Before: "cpu" failed ("no execution provider named 'cpu'") while "cuda" was accepted.
    (y,) = od.Session(model, ep=ep).run(_feeds())
    np.testing.assert_array_equal(np.asarray(y), cpu_session(model).run(None, _feeds())[0])


# --- onnxruntime's argument order (item 11) ----------------------------------------------------------------------


def test_onnxruntime_order_says_the_expected_call(sessions):
    # onnxruntime's own error for feeds that are no mapping, with a note saying ortdlpack.run's order
    with pytest.raises(AttributeError) as e:
        _call(sessions, "run", None, _feeds())
    assert any("ortdlpack.run's order is run(session, feeds" in n for n in e.value.__notes__)


def test_session_run_takes_onnxruntime_order_too(sessions):
    # Session is onnxruntime's drop-in (issue 19): run(output_names, input_feed) runs, outputs like the feeds.
    (y,) = sessions["Session"].run(None, _feeds())
    np.testing.assert_array_equal(y, sessions["run"].run(None, _feeds())[0])
