"""Never wrong, never stricter than onnxruntime (issue 40): ortdlpack checks exactly what onnxruntime's
`InferenceSession.run` checks, and raises exactly what it raises.

Each case of onnxruntime_rules_cases.CASES (a model built with onnx.helper, feeds, output names, run options) runs
through onnxruntime's own `run` with numpy feeds; the outcome there is the rule. Then the same values run through

- `ortdlpack.InferenceSession(...).run` (the drop-in) with the numpy feeds,
- the drop-in with torch tensors of the same values (`torch.from_numpy`),
- `ortdlpack.run(onnxruntime_session, ...)` with the torch tensors,

and each must have the same outcome: run, with outputs of equal dtype, shape and values, or raise an exception of
the SAME class (`type(e) is type(onnxruntime's)`: no other class, no extra base class) with the SAME message. Two
allowances, each forced by what the message is made of: object addresses (" at 0x...") are masked, and where the
message is pybind11's "incompatible function arguments" one, which ends with the reprs of the call's arguments
("Invoked with: ..."), a torch route compares the message up to that line (its arguments are torch tensors).

`python tests/python/onnxruntime_rules_cases.py` prints onnxruntime's outcome of every case (docs/onnxruntime_rules.md).
"""

from __future__ import annotations

import inspect
import types

import numpy as np
import onnxruntime as ort
import pytest

import ortdlpack

pytest.importorskip("onnx")  # (the cases build their models with onnx.helper)

import onnxruntime_rules_cases as rules  # noqa: E402
from conftest import torch  # noqa: E402  (optional: the torch routes skip without it)

ROUTES = ["dropin-numpy", "dropin-torch", "run-torch"]
_INVOKED = "\nInvoked with: "


# --- sessions, once per model -------------------------------------------------------------------------------------

_ORT: dict[str, ort.InferenceSession] = {}
_DROPIN: dict[str, ortdlpack.InferenceSession] = {}


def _options() -> ort.SessionOptions:
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.log_severity_level = 3  # onnxruntime's warnings (VerifyOutputSizes, an initializer in the inputs): quiet
    return so


def ort_session(model: str) -> ort.InferenceSession:
    if model not in _ORT:
        _ORT[model] = ort.InferenceSession(rules.model_bytes(model), _options(), providers=["CPUExecutionProvider"])
    return _ORT[model]


def dropin_session(model: str) -> ortdlpack.InferenceSession:
    if model not in _DROPIN:
        _DROPIN[model] = ortdlpack.InferenceSession(rules.model_bytes(model), _options(),
                                                    providers=["CPUExecutionProvider"])
    return _DROPIN[model]


# --- feeds in a framework, outputs as numpy ------------------------------------------------------------------------


def _torch_of(a: np.ndarray):
    try:
        return torch.from_numpy(a)
    except TypeError:  # arrays torch has no dtype for (str): fed as they are
        return a


def convert(obj, conv):
    """`obj` (feeds, or anything onnxruntime's run is given for them) with every numpy array replaced by conv(array),
    the containers kept as they are (a dict, a MappingProxyType, a list)."""
    if isinstance(obj, np.ndarray):
        return conv(obj)
    if isinstance(obj, types.MappingProxyType):
        return types.MappingProxyType({k: convert(v, conv) for k, v in obj.items()})
    if isinstance(obj, dict):
        return {k: convert(v, conv) for k, v in obj.items()}
    if isinstance(obj, list) and any(isinstance(v, np.ndarray) for v in obj):
        return [convert(v, conv) for v in obj]
    return obj


def _values(feeds) -> list:
    if isinstance(feeds, (dict, types.MappingProxyType)):
        return list(feeds.values())
    return list(feeds) if isinstance(feeds, list) else []


def feed_arrays(feeds) -> list[np.ndarray]:
    return [v for v in _values(feeds) if isinstance(v, np.ndarray)]


def torch_fed(case: rules.Case) -> bool:
    """Whether the torch routes feed a torch tensor at all (a case of lists, None or str arrays has none)."""
    return any(isinstance(v, torch.Tensor) for v in _values(convert(case.feeds, _torch_of)))


def as_numpy(value) -> np.ndarray:
    if isinstance(value, np.ndarray):
        return value
    if isinstance(value, ortdlpack.Tensor):
        return value.numpy()
    if isinstance(value, torch.Tensor):
        return value.detach().cpu().numpy()
    return np.asarray(value)


def call(route: str, case: rules.Case):
    names = rules.resolve(case.output_names)
    if route == "dropin-numpy":
        return dropin_session(case.model).run(names, case.feeds, case.run_options)
    feeds = convert(case.feeds, _torch_of)
    if route == "dropin-torch":
        return dropin_session(case.model).run(names, feeds, case.run_options)
    return ortdlpack.run(ort_session(case.model), feeds, names, run_options=case.run_options)


# --- the outcome ---------------------------------------------------------------------------------------------------


def qualname(e: BaseException) -> str:
    t = type(e)
    bases = ", ".join(f"{b.__module__}.{b.__qualname__}" for b in t.__mro__[1:-2])  # (without BaseException, object)
    return f"{t.__module__}.{t.__qualname__}" + (f" (bases: {bases})" if bases else "")


def comparable_message(message: str, route: str) -> str:
    message = rules.mask_addresses(message)
    if route != "dropin-numpy" and _INVOKED in message:
        message = message.split(_INVOKED)[0]  # the call's arguments: torch tensors on this route
    return message


def summary(outputs) -> str:
    return "; ".join(f"{as_numpy(o).dtype}{list(as_numpy(o).shape)}" for o in outputs)


@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize("case", rules.CASES, ids=lambda c: c.id)
def test_the_outcome_is_onnxruntime_s(case: rules.Case, route: str):
    kind, expected = rules.run_onnxruntime(case, ort_session(case.model))
    try:
        got = call(route, case)
    except Exception as e:  # noqa: BLE001
        if kind == "ok":
            pytest.fail(f"onnxruntime runs it ({summary(expected)}); {route} raises {qualname(e)}: {e}")
        assert type(e) is type(expected), (
            f"class: onnxruntime raises {qualname(expected)}, {route} raises {qualname(e)}\n"
            f"  onnxruntime's message: {expected}\n  {route}'s message: {e}")
        assert comparable_message(str(e), route) == comparable_message(str(expected), route), (
            f"message ({type(e).__qualname__} both)\n  onnxruntime: {expected!s}\n  {route}: {e!s}")
        return
    if kind == "raise":
        pytest.fail(f"onnxruntime raises {qualname(expected)}: {expected}; {route} runs it ({summary(got)})")
    assert len(got) == len(expected), f"{len(expected)} outputs from onnxruntime, {len(got)} from {route}"
    feeds = feed_arrays(case.feeds)
    # the drop-in returns outputs like the feeds: torch where a feed is a torch tensor, else what onnxruntime returns
    like_onnxruntime = route == "dropin-numpy" or (route == "dropin-torch" and not torch_fed(case))
    for k, (g, e) in enumerate(zip(got, expected)):
        if like_onnxruntime:
            assert type(g) is type(e), f"output {k}: onnxruntime returns {type(e)}, the drop-in {type(g)}"
        elif route == "dropin-torch":
            assert isinstance(g, torch.Tensor), f"output {k}: a torch feed gives a torch output, not {type(g)}"
        else:
            assert isinstance(g, ortdlpack.Tensor), f"output {k}: ortdlpack.run returns ortdlpack.Tensor, not {type(g)}"
        gn = as_numpy(g)
        assert (gn.dtype, gn.shape) == (e.dtype, e.shape), (
            f"output {k}: onnxruntime {e.dtype}{e.shape}, {route} {gn.dtype}{gn.shape}")
        np.testing.assert_array_equal(gn, e, err_msg=f"output {k}")
        # Memory: never an alias of a feed where onnxruntime returns a new array (1.32 always does; 1.23 returns the
        # feed's own array for a graph output that is a graph input, numpy in, numpy out); a torch feed, never.
        e_aliases = any(np.shares_memory(e, a) for a in feeds)
        g_aliases = any(np.shares_memory(gn, a) for a in feeds)
        if route != "dropin-numpy" or not e_aliases:
            assert not g_aliases, f"output {k} of {route} shares a feed's memory (onnxruntime's does: {e_aliases})"


# --- the signatures ------------------------------------------------------------------------------------------------


def _params(sig: inspect.Signature) -> list[tuple]:
    return [(p.name, p.kind, p.default) for p in sig.parameters.values()]


def test_run_signature_is_onnxruntime_s():
    """inspect.signature works on the drop-in's run (IDEs, typing tools and wrappers read it) and starts with
    onnxruntime's own parameters, in its order and with its defaults; what ortdlpack adds is keyword-only."""
    ours = inspect.signature(ortdlpack.InferenceSession.run)
    theirs = _params(inspect.signature(ort.InferenceSession.run))
    assert [p[0] for p in theirs] == ["self", "output_names", "input_feed", "run_options"]
    params = _params(ours)
    # self is positional-only, as for every method written in C (the bound method drops it, below).
    assert params[0][0] == "self" and params[1:4] == theirs[1:]
    extra = params[4:]
    assert all(kind is inspect.Parameter.KEYWORD_ONLY for _, kind, _ in extra), extra
    assert {"outputs", "device", "output_type"} <= {name for name, _, _ in extra}
    bound = inspect.signature(dropin_session("fixed").run)  # a bound method: without self
    assert [p[0] for p in _params(bound)][:3] == ["output_names", "input_feed", "run_options"]


def test_bind_signature():
    assert str(inspect.signature(ortdlpack.InferenceSession.bind)) == (
        "(self, /, feeds, output_names=None, *, outputs=None, in_place=None, device=None, output_type=None)")


def test_ortdlpack_run_signature():
    """ortdlpack.run(session, feeds, output_names=None, *, outputs=None, device=None, run_options=None,
    output_type=None), as docs/session.md writes it."""
    params = _params(inspect.signature(ortdlpack.run))
    assert [p[0] for p in params[:3]] == ["session", "feeds", "output_names"]
    assert params[2][2] is None
    assert {name for name, kind, _ in params[3:] if kind is inspect.Parameter.KEYWORD_ONLY} >= {
        "outputs", "device", "run_options", "output_type"}


# --- a real tool that branches on onnxruntime's exception classes ------------------------------------------------


@pytest.mark.parametrize("file_name", ["reshape.onnx", "reshape-Fail.onnx"])
def test_onnxmltools_compare_runtime(tmp_path, monkeypatch, file_name):
    """onnxmltools' compare_runtime (onnxmltools/utils/utils_backend_onnxruntime.py) catches `RuntimeError` from
    `sess.run` apart from any other exception: a model whose file name has "-Fail" and fails with a RuntimeError is
    an ExpectedAssertionError, with another exception an OnnxRuntimeAssertionError ("Unable to run onnx ...").
    onnxruntime's classes are no RuntimeError: a class with an extra base changes what the tool concludes. The drop-in
    replaces onnxruntime.InferenceSession for the tool (it imports onnxruntime inside the function: the module's
    attribute is patched)."""
    backend = pytest.importorskip(
        "onnxmltools.utils.utils_backend_onnxruntime",
        reason="onnxmltools is not installed (requirements.txt: onnxmltools==1.16.0)")
    path = tmp_path / file_name
    path.write_bytes(rules.model_bytes("reshape"))
    case = rules.CASES_BY_ID["reshape_impossible"]
    test = {"onnx": str(path), "data": dict(case.feeds), "expected": [np.zeros((4, 2), np.float32)]}

    def outcome():
        try:
            # (options given: compare_runtime would read them from the file name, and "Fail" is none it knows)
            backend.compare_runtime(dict(test), options={})
        except Exception as e:  # noqa: BLE001
            return e
        pytest.fail("compare_runtime accepted a model that fails to run")

    theirs = outcome()
    monkeypatch.setattr(ort, "InferenceSession", ortdlpack.InferenceSession)
    ours = outcome()
    assert type(ours) is type(theirs), f"onnxruntime: {qualname(theirs)}: {theirs}\nortdlpack: {qualname(ours)}: {ours}"
    assert str(ours) == str(theirs)
