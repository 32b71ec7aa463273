"""ONNX's node conformance models and their inputs, as the pinned `onnx` package generates them.

onnx >= 1.19 ships no test data: `onnx.backend.test.loader.load_model_tests(kind="node")` makes the ~1,880 models and
their inputs in memory (numpy's seed fixed: two generations are byte-identical). They are generated once per onnx and
numpy version into the per-user cache (`$ORTDLPACK_DEPS_DIR` or `${XDG_CACHE_HOME:-~/.cache}/ortdlpack`, as set-up
caches ORT's SDK), never into the source tree, and read from there by test_conformance.py and bench_dropin.py.
"""

from __future__ import annotations

import dataclasses
import os
import pathlib
import pickle
import tempfile
import warnings


@dataclasses.dataclass
class Case:
    name: str
    model: bytes
    # One data set's feeds in the model's input order: (name, value). Values are numpy arrays (ml_dtypes' for the
    # element types numpy lacks: bfloat16, float8, int4, ...), lists (sequences), dicts (maps) or None (an optional
    # input without a value), as onnx's own runner hands them to a backend.
    feeds: list
    # ONNX's expected outputs, in the model's output order (the reference implementation's values), and the tolerances
    # of the case.
    expected: list
    rtol: float
    atol: float
    # Whether the model draws random numbers (two runs differ: only dtypes and shapes compare).
    random: bool


def cache_root() -> pathlib.Path:
    root = os.environ.get("ORTDLPACK_DEPS_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "ortdlpack")
    return pathlib.Path(root) / "onnx-node-tests"


def _value(v):
    """A node test's input or output as a backend is handed it (TensorProtos, numpy scalars: arrays)."""
    import numpy as np
    from onnx import TensorProto, numpy_helper

    if isinstance(v, TensorProto):
        return numpy_helper.to_array(v)
    if isinstance(v, np.generic):
        return np.asarray(v)
    return v


# Operators whose outputs are random draws (Dropout too, in training mode: its third input).
_RANDOM = {"RandomNormal", "RandomNormalLike", "RandomUniform", "RandomUniformLike", "Bernoulli", "Multinomial"}


def _generate() -> list[Case]:
    from onnx.backend.test.loader import load_model_tests

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the generators' own overflow/divide warnings
        tests = load_model_tests(kind="node")
    cases = []
    for t in tests:
        if t.model is None or not t.data_sets:
            continue
        initializers = {i.name for i in t.model.graph.initializer}
        names = [i.name for i in t.model.graph.input if i.name not in initializers]
        inputs, outputs = t.data_sets[0]
        if len(inputs) > len(names):
            continue
        random = any(n.op_type in _RANDOM or (n.op_type == "Dropout" and len(n.input) > 2) for n in t.model.graph.node)
        cases.append(Case(t.name, t.model.SerializeToString(), [(n, _value(v)) for n, v in zip(names, inputs)],
                          [_value(v) for v in outputs], t.rtol, t.atol, random))
    return sorted(cases, key=lambda c: c.name)


def load() -> list[Case]:
    """The cases, from the cache (generated there first when missing)."""
    import numpy as np
    import onnx

    path = cache_root() / f"onnx-{onnx.__version__}-numpy-{np.__version__}-v2.pkl"  # v2: Case.random
    try:
        with open(path, "rb") as f:
            return pickle.load(f)
    except (OSError, EOFError, pickle.UnpicklingError, AttributeError):
        pass
    cases = _generate()
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=path.parent, delete=False) as f:  # written whole, then renamed
        pickle.dump(cases, f)
    os.replace(f.name, path)
    return cases
