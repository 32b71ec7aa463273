#!/usr/bin/env python3
"""atheris harness for the session run path from Python: ``ortdlpack.run`` on an ``onnxruntime.InferenceSession``,
``ortdlpack.Session.run`` in both argument orders and ``Session.bind(...).run()``, with hostile requests.

Two models (built here with ``onnx``): z = x + y and s = x on x: float32[N, 3], y: float32[3]; and Identity on
a: int64[L], b: bool[2, 2], h: a float16 scalar. Sessions on the CPU EP and, for the first model, on the virtual
device's plugin EP (ortdlpack.testing). A request mixes, per input: the right numpy array (contiguous, strided,
negative strides, read-only, empty), the same as a torch tensor, an onnxruntime.OrtValue or an ortdlpack.Tensor on the
virtual device; a wrong element type, rank or fixed dimension; nested lists and Python scalars; junk (None, str,
object, dict); missing inputs and unknown names. Output names: all, a list, unknown or repeated names, a str.
Destinations (``outputs=``): right, read-only, strided, of the wrong type or shape, on the virtual device, for unknown
or unrequested outputs. ``device=`` and ``output_type=``: right values and junk.

The contract checked: every call either succeeds or raises TypeError, ValueError, BufferError, RuntimeError,
NotImplementedError or one of onnxruntime's exception classes; a crash, a hang or another exception is a
finding. A request without a mistake must succeed with the right values (x + y, x, the fed values), in the
destinations where given; a request with a mistake the harness knows ortdlpack refuses (a wrong element type, rank
or fixed dimension, a missing input, an unknown input or output name, a read-only or mistyped destination, a device
the session has no EP for) must raise. Feeds are never changed, and no call keeps a reference to a feed.

Run (scripts/fuzz.sh does this):  .venv/bin/python fuzz/fuzz_session.py -max_total_time=600 CORPUS_DIR
"""
import gc
import os
import sys

import atheris

import numpy as np
import onnxruntime as ort
import torch
from onnx import TensorProto, helper

with atheris.instrument_imports():  # ortdlpack's Python modules; the harness's functions are instrumented below
    import ortdlpack as od
    import ortdlpack.testing

CANARY = os.environ.get("ORTDLPACK_FUZZ_CANARY") is not None  # scripts/fuzz.sh --self-test
ALLOWED = (TypeError, ValueError, BufferError, RuntimeError, NotImplementedError) + tuple(
    c for c in vars(ort.capi.onnxruntime_pybind11_state).values() if isinstance(c, type) and issubclass(c, Exception)
)
EP_NAME = "VirtualDeviceEP"


def _model(nodes, inputs, outputs):
    graph = helper.make_graph(nodes, "fuzz", inputs, outputs)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=9).SerializeToString()


ADD = _model(
    [helper.make_node("Add", ["x", "y"], ["z"]), helper.make_node("Identity", ["x"], ["s"])],
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3]), helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])],
    [helper.make_tensor_value_info("z", TensorProto.FLOAT, ["N", 3]), helper.make_tensor_value_info("s", TensorProto.FLOAT, ["N", 3])],
)
IDENTITY = _model(
    [helper.make_node("Identity", [i], [i + "2"]) for i in "abh"],
    [
        helper.make_tensor_value_info("a", TensorProto.INT64, ["L"]),
        helper.make_tensor_value_info("b", TensorProto.BOOL, [2, 2]),
        helper.make_tensor_value_info("h", TensorProto.FLOAT16, []),
    ],
    [
        helper.make_tensor_value_info("a2", TensorProto.INT64, ["L"]),
        helper.make_tensor_value_info("b2", TensorProto.BOOL, [2, 2]),
        helper.make_tensor_value_info("h2", TensorProto.FLOAT16, []),
    ],
)
# model -> (inputs, outputs), each name -> (dtype, dims; None: the model's named dim)
SPECS = {
    "add": (
        {"x": (np.float32, (None, 3)), "y": (np.float32, (3,))},
        {"z": (np.float32, (None, 3)), "s": (np.float32, (None, 3))},
    ),
    "identity": (
        {"a": (np.int64, (None,)), "b": (np.bool_, (2, 2)), "h": (np.float16, ())},
        {"a2": (np.int64, (None,)), "b2": (np.bool_, (2, 2)), "h2": (np.float16, ())},
    ),
}

ort.set_default_logger_severity(3)  # ORT's warnings (VerifyOutputSizes of a scalar fed another rank) flood the log
od.register_execution_provider_library("fuzz_session_vd", ortdlpack.testing.virtual_device_library())
VD = sorted((d for d in ort.get_ep_devices() if d.ep_name == EP_NAME), key=lambda d: d.device.device_id)


def _ort_session(model, devices=()):
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    if devices:
        so.add_provider_for_devices(list(devices), {})
        return ort.InferenceSession(model, so)
    return ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])


# (model name, runner kind, session, the virtual devices whose memory it writes, those it allocates outputs on).
# ep= appends every device of the EP. ortdlpack.run knows an onnxruntime session's EPs by name only: it plans for
# every device of them, and ORT then refuses to allocate on a device the session was not created with (a RuntimeError
# when it runs: docs/session.md).
SESSIONS = [
    ("add", "run", _ort_session(ADD), (), ()),
    ("add", "Session", od.Session(ADD, intra_op_num_threads=1), (), ()),
    ("add", "Session", od.Session(ADD, intra_op_num_threads=1, ep=EP_NAME), (0, 1), (0, 1)),
    ("add", "run", _ort_session(ADD, VD[:1]), (0, 1), (0,)),
    ("identity", "run", _ort_session(IDENTITY), (), ()),
    ("identity", "Session", od.Session(IDENTITY, intra_op_num_threads=1), (), ()),
]


def numpy_of(x):
    """A numpy array of any output or feed a run may return or take."""
    if isinstance(x, np.ndarray):
        return x
    if isinstance(x, torch.Tensor) and x.device.type == "cpu":
        return x.detach().numpy()
    if isinstance(x, torch.Tensor):  # on the virtual device (torch's PrivateUse1): torch cannot copy it, ortdlpack can
        x = od.from_dlpack(x)
    if isinstance(x, od.Tensor):
        return np.from_dlpack(x.to("cpu"))
    if isinstance(x, ort.OrtValue):
        return x.numpy()
    raise AssertionError(f"a run returned a {type(x).__name__}")


class Request:
    def __init__(self):
        self.mistake = False  # a mistake ortdlpack must refuse
        self.unknown = False  # something whose outcome the harness does not model (it must not crash)
        self.not_mapping = False  # the feeds are a list: onnxruntime's run raises AttributeError for them
        self.values = {}  # input name -> numpy values fed
        self.keep = []  # (numpy feed, a copy of its values), checked after the call


@atheris.instrument_func
def pick_array(fdp, dtype, shape):
    """A numpy array of `dtype` and `shape` with small values, contiguous or a strided, reversed or read-only view."""
    size = int(np.prod(shape)) if shape else 1
    a = ((np.arange(size) * 7 + fdp.ConsumeIntInRange(0, 9)) % 5).astype(dtype).reshape(shape)
    layout = fdp.ConsumeIntInRange(0, 7)
    if layout == 1 and shape:  # every other element of a twice-as-wide array: not compact
        wide = np.zeros(shape[:-1] + (2 * shape[-1],), dtype)
        wide[..., ::2] = a
        a = wide[..., ::2]
    elif layout == 2 and shape:
        a = a[::-1]  # negative strides
    if layout == 3:
        a = a.copy()
        a.flags.writeable = False
    return a


@atheris.instrument_func
def pick_feed(fdp, req, name, dtype, dims, n, runner):
    shape = tuple(n if d is None else d for d in dims)
    kind = fdp.ConsumeIntInRange(0, 19)
    if kind == 0:  # wrong element type
        other = np.float64 if dtype != np.float64 else np.float32
        req.mistake = True
        return pick_array(fdp, other, shape)
    if kind == 1:  # wrong rank
        if dims:
            req.mistake = True
        else:  # a rank-0 declaration takes any shape, on every run path, as onnxruntime's run takes it
            req.unknown = True
        return pick_array(fdp, dtype, shape + (1,))
    if kind == 2 and any(d is not None for d in dims):  # a wrong fixed dimension
        req.mistake = True
        return pick_array(fdp, dtype, tuple(n if d is None else d + 1 for d in dims))
    if kind == 3:  # a nested list or a scalar: onnxruntime's run converts some
        req.unknown = True
        return pick_array(fdp, dtype, shape).tolist() if fdp.ConsumeBool() else 1.5
    if kind == 4:
        req.mistake = True
        return [None, "x", object(), {"a": 1}, b"\x00"][fdp.ConsumeIntInRange(0, 4)]
    a = pick_array(fdp, dtype, shape)
    req.values[name] = a.copy()
    if kind == 5:
        return torch.from_numpy(a.copy())
    if kind == 6:
        return ort.OrtValue.ortvalue_from_numpy(a.copy())
    if kind == 7:
        return od.from_dlpack(a.copy(), device=VD[fdp.ConsumeIntInRange(0, 1)])
    if kind == 8:
        return od.from_dlpack(a)
    return a


@atheris.instrument_func
def pick_destinations(fdp, req, model, requested, n, vd_ids, runner):
    inputs, outputs = SPECS[model]
    if fdp.ConsumeIntInRange(0, 2) != 0:
        return None
    if fdp.ConsumeIntInRange(0, 15) == 0:
        req.mistake = True
        return [np.zeros(3, np.float32)]
    dests = {}
    for _ in range(fdp.ConsumeIntInRange(1, 3)):
        k = fdp.ConsumeIntInRange(0, len(outputs))
        if k == len(outputs):
            dests["unknown"] = np.zeros(3, np.float32)
            req.mistake = True
            continue
        name = list(outputs)[k]
        if name in dests:
            continue  # a dict holds one destination per name
        dtype, dims = outputs[name]
        shape = tuple(n if d is None else d for d in dims)
        kind = fdp.ConsumeIntInRange(0, 9)
        if kind == 0:
            d = np.zeros(shape, np.float64 if dtype != np.float64 else np.float32)
            req.mistake = True
        elif kind == 1:
            d = np.zeros(shape + (1,), dtype)
            if dims or runner == "Session":
                req.mistake = True
            else:  # a scalar: ortdlpack.run sees unknown rank (docs/session.md)
                req.unknown = True
        elif kind == 2:
            d = np.zeros(shape, dtype)
            d.flags.writeable = False
            req.mistake = True
        elif kind == 3 and shape and shape[0] > 1 and all(shape):
            d = np.zeros((2 * shape[0],) + shape[1:], dtype)[::2]  # strided: not compact
            req.mistake = True
        elif kind == 4:
            i = fdp.ConsumeIntInRange(0, 1)
            d = od.from_dlpack(np.zeros(shape, dtype), device=VD[i])
            if i not in vd_ids:
                req.mistake = True  # memory the session cannot write (BufferError)
        else:
            d = np.zeros(shape, dtype)
        if name not in requested:
            req.mistake = True
        dests[name] = d
    return dests


@atheris.instrument_func
def pick_device(fdp, req, vd_ids, alloc_ids, allocated):
    """device=: where outputs without a destination go (`allocated`: whether there are any)."""
    k = fdp.ConsumeIntInRange(0, 11)
    if k <= 5:
        return None
    if k == 6:
        return "cpu"
    if k == 7:
        return (1, 0)
    if k in (8, 9):
        i = k - 8
        if allocated and i not in vd_ids:
            req.mistake = True
        elif allocated and i not in alloc_ids:
            req.unknown = True
        return VD[i] if fdp.ConsumeBool() else (12, i)  # an OrtEpDevice or the DLPack device (kDLExtDev)
    if k == 10:
        if allocated:
            req.mistake = True  # no CUDA EP here
        return (2, 0)
    req.mistake = True
    return ["gpu", 3.5, (1,), object()][fdp.ConsumeIntInRange(0, 3)]


@atheris.instrument_func
def test_one(data):
    if CANARY and data.startswith(b"CANARY"):
        raise AssertionError("the self-test's canary input (a finding on purpose)")
    fdp = atheris.FuzzedDataProvider(data)
    model, kind, session, vd_ids, alloc_ids = SESSIONS[fdp.ConsumeIntInRange(0, len(SESSIONS) - 1)]
    inputs, outputs = SPECS[model]
    n = fdp.ConsumeIntInRange(0, 3)
    req = Request()
    feeds = {}
    for name, (dtype, dims) in inputs.items():
        if fdp.ConsumeIntInRange(0, 15) == 0:
            req.mistake = True  # missing
            continue
        feeds[name] = pick_feed(fdp, req, name, dtype, dims, n, kind)
    if fdp.ConsumeIntInRange(0, 15) == 0:
        feeds["unknown"] = np.zeros(3, np.float32)
        req.mistake = True
    if fdp.ConsumeIntInRange(0, 31) == 0:
        feeds = list(feeds.values())  # not a mapping
        req.mistake = req.not_mapping = True
    names = None
    requested = list(outputs)
    if fdp.ConsumeBool():
        names = []
        for _ in range(fdp.ConsumeIntInRange(1, 3)):
            k = fdp.ConsumeIntInRange(0, len(outputs))
            if k == len(outputs):
                names.append("unknown")
                req.mistake = True
            else:
                name = list(outputs)[k]
                if name in names:
                    req.unknown = True  # repeated: onnxruntime's order allows it
                names.append(name)
        requested = [s for s in names if s in outputs]
        if fdp.ConsumeIntInRange(0, 15) == 0:
            names = names[0]  # a str, not a list
            req.unknown = True
    kwargs = {}
    order = fdp.ConsumeIntInRange(0, 3) if kind == "Session" else 0
    if order != 2:  # onnxruntime's order takes no destinations nor device
        dests = pick_destinations(fdp, req, model, requested, n, vd_ids, kind)
        if dests is not None:
            kwargs["outputs"] = dests
        device = pick_device(fdp, req, vd_ids, alloc_ids, not isinstance(dests, dict) or any(o not in dests for o in requested))
        if device is not None:
            kwargs["device"] = device
    if order != 2 and fdp.ConsumeIntInRange(0, 7) == 0:
        k = fdp.ConsumeIntInRange(0, 4)
        kwargs["output_type"] = ["numpy", "torch", "like_feeds", None, "bogus"][k]
        if k == 4:
            req.mistake = True
        dests = kwargs.get("outputs")
        on_device = kwargs.get("device") not in (None, "cpu", (1, 0)) or (
            isinstance(dests, dict) and any(isinstance(d, od.Tensor) for d in dests.values())
        )
        if k in (0, 1, 2) and (on_device or vd_ids):
            # numpy outputs live in host memory, torch's in memory torch has: an output produced elsewhere with the
            # type named is a BufferError (docs/python.md), where the harness does not model where it is produced
            req.unknown = True
    if order == 3 and isinstance(feeds, dict) and any(
        (isinstance(f, np.ndarray) and not f.flags.c_contiguous) or (isinstance(f, torch.Tensor) and not f.is_contiguous())
        for f in feeds.values()
    ):
        req.unknown = True  # bind() refuses a feed only a copy could hold (CopyRequiredError), where it binds it
    req.keep = [(f, f.copy()) for f in (feeds.values() if isinstance(feeds, dict) else feeds) if isinstance(f, np.ndarray)]
    refs = [sys.getrefcount(f) for f, _ in req.keep]

    try:
        if kind == "run":
            results = od.run(session, feeds, names, **kwargs)
        elif order == 2:
            results = session.run(names, feeds)
        elif order == 3:
            results = session.bind(feeds, names, **kwargs).run()
        else:
            results = session.run(feeds, names, **kwargs)
    except ALLOWED as e:
        if not req.mistake and not req.unknown:
            raise AssertionError(f"a request without a mistake failed: {type(e).__name__}: {e}") from e
        results = None
    except AttributeError as e:
        # onnxruntime's own run reads feeds that are no mapping as one (`.keys()`): its AttributeError is what the
        # drop-in and ortdlpack.run raise for them (onnxruntime's errors, issue 40)
        if not req.not_mapping:
            raise AssertionError(f"AttributeError is not an error a run may raise: {e}") from e
        results = None
    except Exception as e:  # noqa: BLE001 - the finding
        raise AssertionError(f"{type(e).__name__} is not an error a run may raise: {e}") from e
    if results is not None:
        if req.mistake and not req.unknown:
            raise AssertionError(f"a request with a mistake ran ({feeds!r}, {names!r}, {kwargs!r})")
        if not req.unknown:
            check_results(model, results, requested if names is not None else outputs, req, kwargs.get("outputs"))
    del results
    for (f, before), count in zip(req.keep, refs):
        if not np.array_equal(f, before, equal_nan=True):
            raise AssertionError("a run changed a feed")
        if sys.getrefcount(f) != count:
            raise AssertionError("a run kept a reference to a feed")


def check_results(model, results, names, req, dests):
    if len(results) != len(names):
        raise AssertionError(f"{len(results)} outputs for {names}")
    for name, r in zip(names, results):
        got = numpy_of(r)
        if model == "add":
            x, y = req.values["x"], req.values["y"]
            want = x + y if name == "z" else x
        else:
            want = req.values[name[0]]
        if got.shape != want.shape or got.dtype != want.dtype or not np.array_equal(got, want):
            raise AssertionError(f"output {name}: {got!r}, expected {want!r}")
        if dests and name in dests and isinstance(dests[name], np.ndarray):
            if not np.array_equal(dests[name], want):
                raise AssertionError(f"destination {name} does not hold the output")


def main():
    gc.freeze()  # the set-up's objects (torch's, onnxruntime's) stay out of every collection
    atheris.Setup(sys.argv, test_one)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
