"""ONNX's node conformance models (every model the pinned `onnx` generates, onnx_node_cases.py) through the drop-in,
against onnxruntime itself in the same run: wherever onnxruntime runs a model, ortdlpack returns identical outputs
(dtype, shape, every byte) through

- ortdlpack.InferenceSession.run with the same numpy feeds, in onnxruntime's call order;
- ortdlpack.InferenceSession.run with torch feeds and output_type="torch";
- ortdlpack.run on the plain onnxruntime.InferenceSession;

and wherever onnxruntime fails (loading or running), each path fails with an instance of onnxruntime's exception class.
What differs by design (docs/python.md, "What differs"): float8 outputs come as ml_dtypes arrays (onnxruntime returns
their bits as uint8), bfloat16/int4/... outputs come as ml_dtypes arrays (onnxruntime cannot return them: RuntimeError
"No corresponding Numpy type"), and numpy arrays of ml_dtypes' types are accepted as feeds (onnxruntime refuses them):
there onnxruntime's outputs are read from its OrtValues (run_with_ort_values), or, for feeds it cannot be given at all
(packed sub-byte types), ONNX's expected outputs are the reference, within the case's tolerances.

Under AddressSanitizer (scripts/sanitize.sh) every ORTDLPACK_CONFORMANCE_SAMPLE-th model runs."""

from __future__ import annotations

import os

import numpy as np
import onnxruntime as ort
import pytest

import ortdlpack

pytest.importorskip("onnx")
ml_dtypes = pytest.importorskip("ml_dtypes")
torch = pytest.importorskip("torch")

import onnx_node_cases  # noqa: E402

from onnxruntime.capi import onnxruntime_pybind11_state as C  # noqa: E402

_SAMPLE = int(os.environ.get("ORTDLPACK_CONFORMANCE_SAMPLE", "1"))
CASES = onnx_node_cases.load()[::_SAMPLE]

# onnxruntime's run cannot return these element types (it raises for the output, not for the model).
_NO_NUMPY_TYPE = "No corresponding Numpy type"


def _options() -> ort.SessionOptions:
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.log_severity_level = 4  # the models ORT refuses would print their errors too
    return so


def _is_extension(v) -> bool:
    """A numpy array of an ml_dtypes type (what onnxruntime's run refuses and ortdlpack takes)."""
    return isinstance(v, np.ndarray) and v.dtype.num >= 256  # numpy's user-defined types: ml_dtypes


def _onnx_type(dtype) -> int:
    from onnx import helper

    return helper.np_dtype_to_tensor_dtype(dtype)


def _reference_feed(v):
    """A feed as onnxruntime can be given it: as it is, or an OrtValue over the bits of a byte-sized ml_dtypes array;
    None for a packed sub-byte one, which onnxruntime takes in no form from Python."""
    if not _is_extension(v):
        return v
    if v.dtype.itemsize == 1 and v.dtype.name.startswith("float8") or v.dtype.name == "bfloat16":
        bits = v.view(np.uint8 if v.dtype.itemsize == 1 else np.uint16)
        return ort.OrtValue.ortvalue_from_numpy_with_onnx_type(bits.copy(), _onnx_type(v.dtype))
    return None


def _ortdlpack_takes(v) -> bool:
    try:
        ortdlpack.from_dlpack(v)
        return True
    except BufferError:
        return False


def _canonical(x):
    """An output as numpy (ml_dtypes for the types numpy lacks), lists and dicts element by element."""
    if x is None or isinstance(x, (str, bytes, int, float)):
        return x
    if isinstance(x, list):
        return [_canonical(e) for e in x]
    if isinstance(x, dict):
        return {k: _canonical(v) for k, v in x.items()}
    if isinstance(x, np.ndarray):
        return x
    if isinstance(x, torch.Tensor):
        if x.dtype in (torch.bfloat16,) or "float8" in str(x.dtype):
            return np.asarray(ortdlpack.from_dlpack(x))
        return x.numpy()
    if isinstance(x, (ortdlpack.Tensor, ort.OrtValue)):
        if isinstance(x, ort.OrtValue) and not x.is_tensor():
            return x  # (a sparse tensor or a sequence OrtValue: compared by identity of type only)
        return np.asarray(ortdlpack.from_dlpack(x))
    return x


def _same(ours, ref, what, rtol=None, atol=None):
    """`ours` equals onnxruntime's `ref`: the same dtype and shape and the same bytes (float8: onnxruntime's uint8 bits;
    rtol/atol given: ONNX's expected values, within the case's tolerances)."""
    ours, ref = _canonical(ours), _canonical(ref)
    if isinstance(ref, list):
        assert isinstance(ours, list) and len(ours) == len(ref), what
        for k, (a, b) in enumerate(zip(ours, ref)):
            _same(a, b, f"{what}[{k}]", rtol, atol)
        return
    if isinstance(ref, dict):
        assert isinstance(ours, dict) and ours.keys() == ref.keys(), what
        for k in ref:
            _same(ours[k], ref[k], f"{what}[{k!r}]", rtol, atol)
        return
    if ref is None or not isinstance(ref, np.ndarray):
        assert type(ours) is type(ref), f"{what}: {type(ours)} vs {type(ref)}"
        return
    assert isinstance(ours, np.ndarray), f"{what}: {type(ours)}"
    assert ours.shape == ref.shape, f"{what}: shape {ours.shape} vs {ref.shape}"
    if ref.dtype == np.uint8 and ours.dtype.name.startswith("float8"):
        ours = ours.view(np.uint8)  # by design: ml_dtypes' float8, onnxruntime's bits
    if rtol is not None:
        if ref.dtype == object:
            assert ours.tolist() == ref.tolist(), what
        else:
            np.testing.assert_allclose(ours.astype(np.float64), ref.astype(np.float64), rtol=rtol, atol=atol,
                                       err_msg=what)
        return
    assert ours.dtype == ref.dtype, f"{what}: dtype {ours.dtype} vs {ref.dtype}"
    if ref.dtype == object:
        assert ours.tolist() == ref.tolist(), what
    else:
        assert ours.tobytes() == ref.tobytes(), f"{what}: values differ"


def _torch_feed(v):
    """A feed as a torch user has it: a torch tensor where torch has the dtype, else as it is."""
    if isinstance(v, np.ndarray) and v.dtype.kind in "biuf" and not _is_extension(v):
        if v.dtype.kind == "u" and v.dtype.itemsize == 8:  # (torch takes numpy's uint64, not its ulonglong twin)
            return torch.from_numpy(v.view(np.int64).copy()).view(torch.uint64)
        return torch.from_numpy(v.copy())
    if _is_extension(v) and (v.dtype.name == "bfloat16" or v.dtype.name.startswith("float8")) and _ortdlpack_takes(v):
        return torch.from_dlpack(ortdlpack.from_dlpack(v))
    return v


def _raises_like(expected: BaseException, call, what):
    """`call` fails with an instance of `expected`'s class (onnxruntime's)."""
    try:
        call()
    except Exception as e:  # noqa: BLE001 (the class is what is checked)
        assert isinstance(e, type(expected)), f"{what}: {type(e).__mro__} is no {type(expected)}: {e}"
        return
    pytest.fail(f"{what}: accepted what onnxruntime refuses ({type(expected).__name__}: {expected})")


def _reference(sess, case):
    """onnxruntime's outputs for the case: ("run", outputs); ("expected", ONNX's outputs) for feeds onnxruntime cannot
    be given in any form; ("raises", its exception)."""
    feeds = dict(case.feeds)
    try:
        return "run", sess.run(None, feeds)
    except Exception as e:  # noqa: BLE001
        refused = e
    # What ortdlpack adds (ml_dtypes feeds it takes, outputs of types numpy lacks): onnxruntime's OrtValues instead.
    extension = any(_is_extension(v) and _ortdlpack_takes(v) for v in feeds.values())
    if not extension and _NO_NUMPY_TYPE not in str(refused):
        return "raises", refused
    ref_feeds = {n: _reference_feed(v) for n, v in feeds.items()}
    if any(v is None for v in ref_feeds.values()):
        return "expected", case.expected
    try:
        values = {n: v if isinstance(v, ort.OrtValue) else ort.OrtValue.ortvalue_from_numpy(v)
                  for n, v in ref_feeds.items()}
        outputs = sess.run_with_ort_values(None, values)
    except Exception as e:  # noqa: BLE001
        return "raises", e
    if any(v.is_tensor() and not _ortdlpack_takes(v) for v in outputs):
        return "raises", refused  # an output of a type neither can return (int2, float8e8m0): onnxruntime's refusal
    return "run", outputs


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_node_model(case):
    try:
        ref_sess = ort.InferenceSession(case.model, _options(), providers=["CPUExecutionProvider"])
    except Exception as e:  # noqa: BLE001: loading failed in onnxruntime: the drop-in fails alike (it is onnxruntime's)
        _raises_like(e, lambda: ortdlpack.InferenceSession(case.model, _options(),
                                                           providers=["CPUExecutionProvider"]), "load")
        return
    sess = ortdlpack.InferenceSession(case.model, _options(), providers=["CPUExecutionProvider"])
    how, ref = _reference(ref_sess, case)
    numpy_feeds = dict(case.feeds)
    torch_feeds = {n: _torch_feed(v) for n, v in case.feeds}
    paths = {
        "numpy": lambda: sess.run(None, numpy_feeds),
        "torch": lambda: sess.run(None, torch_feeds, output_type="torch"),
        "ortdlpack.run": lambda: ortdlpack.run(ref_sess, numpy_feeds),
    }
    if how == "raises":
        for what, call in paths.items():
            _raises_like(ref, call, what)
        return
    sub_byte = any(isinstance(r, np.ndarray) and r.dtype.num >= 256 and r.dtype.itemsize == 1 and
                   r.dtype.name.split("_")[0] in ("int4", "uint4", "float4", "int2", "uint2") for r in map(_canonical, ref))
    for what, call in paths.items():
        if what == "torch" and sub_byte:  # torch has no sub-byte dtypes: said before ORT runs
            with pytest.raises(BufferError, match="which torch cannot hold"):
                call()
            continue
        outputs = call()
        assert len(outputs) == len(ref), what
        for k, (ours, want) in enumerate(zip(outputs, ref)):
            if case.random:  # random draws: the same dtype and shape
                ours, want = _canonical(ours), _canonical(want)
                assert (ours.dtype, ours.shape) == (want.dtype, want.shape), what
            elif how == "expected":
                _same(ours, want, f"{what} output {k}", case.rtol, case.atol)
            else:
                _same(ours, want, f"{what} output {k}")


def test_the_cases_are_onnx_s_whole_node_suite():
    # ~1,880 models in onnx 1.23 (a regression in the generator would silently shrink the comparison).
    assert len(onnx_node_cases.load()) > 1500
