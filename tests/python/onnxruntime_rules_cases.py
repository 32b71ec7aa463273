"""onnxruntime's own rules for `InferenceSession.run`, as cases: a model built with `onnx.helper`, the feeds (numpy),
the output names and run options. test_onnxruntime_rules.py holds ortdlpack to them (the same outcome as
onnxruntime's run: equal outputs, or the same exception class and message); run as a script, this module measures
the installed onnxruntime and prints what it does for each case (docs/onnxruntime_rules.md was written from its
output under onnxruntime 1.23.2 and 1.32.0):

    python tests/python/onnxruntime_rules_cases.py            # a markdown table
    python tests/python/onnxruntime_rules_cases.py --json     # one JSON object per case

It needs numpy, onnx and onnxruntime only (no ortdlpack, no torch), so it runs in a plain venv of another
onnxruntime version. Add a case to CASES and both the table and the test pick it up.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import re
import sys
import types
from collections.abc import Callable
from typing import Any

import numpy as np
from onnx import TensorProto, checker, helper, numpy_helper

F, D, I32, I64, B = TensorProto.FLOAT, TensorProto.DOUBLE, TensorProto.INT32, TensorProto.INT64, TensorProto.BOOL


def tensor(name: str, elem: int, shape) -> Any:
    """A graph input/output: `shape` None: no shape at all (any rank); [] a scalar; an int a fixed dimension, a str
    a symbolic one (dim_param), None an unnamed one ('?')."""
    return helper.make_tensor_value_info(name, elem, shape)


def make_model(nodes, inputs, outputs, initializers=(), *, opset: int = 17, ir: int = 8, check: bool = True) -> bytes:
    graph = helper.make_graph(nodes, "rules", inputs, outputs, list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = ir
    if check:
        checker.check_model(model, full_check=True)
    return model.SerializeToString()


# --- the models ---------------------------------------------------------------------------------------------------


def _identity(shape, elem=F) -> bytes:
    # (onnx.checker refuses a graph input or output without a shape: "Field 'shape' of 'type' is required but
    # missing"; onnxruntime loads such models, and exporters write them)
    return make_model([helper.make_node("Identity", ["x"], ["y"])], [tensor("x", elem, shape)],
                      [tensor("y", elem, shape)], check=shape is not None)


MODELS: dict[str, Callable[[], bytes]] = {
    # y = x + x on a declared scalar (rank 0) input and output
    "scalar": lambda: make_model([helper.make_node("Add", ["x", "x"], ["y"])], [tensor("x", F, [])],
                                 [tensor("y", F, [])]),
    # a declared scalar output the run makes of rank 1: y = ReduceSum(x, keepdims=1) declared float[]
    "scalar_output": lambda: make_model([helper.make_node("ReduceSum", ["x"], ["y"], keepdims=1)],
                                        [tensor("x", F, [3])], [tensor("y", F, [])], check=False),
    "fixed": lambda: _identity([2, 3]),
    "fixed_zero": lambda: _identity([0, 3]),
    "symbolic": lambda: _identity(["N", 3]),
    "unnamed": lambda: _identity([None, 3]),
    "no_shape": lambda: _identity(None),
    "int64": lambda: _identity([2], I64),
    "bool": lambda: _identity([2], B),
    # two inputs of one symbolic dimension N, joined: Concat accepts different sizes
    "same_symbol": lambda: make_model([helper.make_node("Concat", ["a", "b"], ["y"], axis=0)],
                                      [tensor("a", F, ["N"]), tensor("b", F, ["N"])], [tensor("y", F, ["M"])]),
    # unnamed dims ('?') on two inputs: Add broadcasts [?] + [?]
    "two_unnamed": lambda: make_model([helper.make_node("Add", ["a", "b"], ["y"])],
                                      [tensor("a", F, [None]), tensor("b", F, [None])], [tensor("y", F, [None])]),
    # a graph input of type optional(tensor(float)): y = OptionalHasElement(x)
    "optional_input": lambda: make_model(
        [helper.make_node("OptionalHasElement", ["x"], ["y"])],
        [helper.make_value_info("x", helper.make_optional_type_proto(helper.make_tensor_type_proto(F, [2])))],
        [tensor("y", B, [])], opset=18),
    # an op's optional input left out (""): y = Clip(x, <no min>, max) with max a constant initializer
    "op_optional_blank": lambda: make_model(
        [helper.make_node("Clip", ["x", "", "hi"], ["y"])], [tensor("x", F, [3])], [tensor("y", F, [3])],
        [numpy_helper.from_array(np.array(1.5, np.float32), "hi")]),
    # an initializer also listed as a graph input (IR >= 4): an overridable initializer, a default for the input
    "overridable": lambda: make_model(
        [helper.make_node("Add", ["x", "w"], ["y"])], [tensor("x", F, [2]), tensor("w", F, [2])],
        [tensor("y", F, [2])], [numpy_helper.from_array(np.array([10, 20], np.float32), "w")]),
    # an initializer not listed as a graph input (IR >= 4): a constant
    # an initializer listed as a graph input under IR 3 (where every initializer must be): not overridable
    "initializer_input_ir3": lambda: make_model(
        [helper.make_node("Add", ["x", "w"], ["y"])], [tensor("x", F, [2]), tensor("w", F, [2])],
        [tensor("y", F, [2])], [numpy_helper.from_array(np.array([10, 20], np.float32), "w")], opset=7, ir=3),
    "constant_initializer": lambda: make_model(
        [helper.make_node("Add", ["x", "w"], ["y"])], [tensor("x", F, [2])], [tensor("y", F, [2])],
        [numpy_helper.from_array(np.array([10, 20], np.float32), "w")]),
    # two outputs: y = x + 1, z = x * 2
    "two_outputs": lambda: make_model(
        [helper.make_node("Add", ["x", "one"], ["y"]), helper.make_node("Mul", ["x", "two"], ["z"])],
        [tensor("x", F, [2])], [tensor("y", F, [2]), tensor("z", F, [2])],
        [numpy_helper.from_array(np.array(1, np.float32), "one"),
         numpy_helper.from_array(np.array(2, np.float32), "two")]),
    # the graph lists the same tensor twice as outputs: outputs [y, y]
    "duplicated_output": lambda: make_model([helper.make_node("Add", ["x", "x"], ["y"])], [tensor("x", F, [2])],
                                            [tensor("y", F, [2]), tensor("y", F, [2])]),
    # a graph output that is the graph input (no node)
    "passthrough": lambda: make_model([], [tensor("x", F, [2])], [tensor("x", F, [2])]),
    # ... beside another output
    "passthrough_and_other": lambda: make_model([helper.make_node("Add", ["x", "x"], ["y"])], [tensor("x", F, [2])],
                                                [tensor("x", F, [2]), tensor("y", F, [2])]),
    # kernels that fail at run time: Reshape to a shape given by an input; Gather with an index given by an input
    "reshape": lambda: make_model([helper.make_node("Reshape", ["x", "shape"], ["y"])],
                                  [tensor("x", F, [6]), tensor("shape", I64, [2])], [tensor("y", F, [None, None])]),
    "gather": lambda: make_model([helper.make_node("Gather", ["x", "i"], ["y"], axis=0)],
                                 [tensor("x", F, [3]), tensor("i", I64, [1])], [tensor("y", F, [1])]),
}


@functools.cache
def model_bytes(name: str) -> bytes:
    return MODELS[name]()


# --- the cases ----------------------------------------------------------------------------------------------------


def f32(*v) -> np.ndarray:
    return np.array(v, np.float32)


X23 = np.arange(6, dtype=np.float32).reshape(2, 3)


class Fresh:
    """A value made anew for each call (a generator is used up by the call that reads it)."""

    def __init__(self, make: Callable[[], Any], text: str):
        self.make, self.text = make, text

    def __repr__(self) -> str:
        return self.text


def resolve(value):
    return value.make() if isinstance(value, Fresh) else value


@dataclasses.dataclass
class Case:
    id: str
    model: str  # a key of MODELS
    feeds: Any  # input name -> numpy array (or whatever onnxruntime's run is given: the feeds object itself)
    output_names: Any = None
    run_options: Any = None
    rule: str = ""  # what the case asks, in words (the table's first column)


CASES: list[Case] = [
    # rank-0 inputs
    Case("scalar_fed_scalar", "scalar", {"x": np.array(1.5, np.float32)}, rule="scalar input fed shape []"),
    Case("scalar_fed_1", "scalar", {"x": f32(1.5)}, rule="scalar input fed shape [1]"),
    Case("scalar_fed_1x1", "scalar", {"x": f32(1.5).reshape(1, 1)}, rule="scalar input fed shape [1,1]"),
    Case("scalar_fed_2", "scalar", {"x": f32(1.5, 2.5)}, rule="scalar input fed shape [2]"),
    Case("scalar_fed_numpy_scalar", "scalar", {"x": np.float32(1.5)}, rule="scalar input fed a numpy scalar"),
    Case("scalar_fed_python_float", "scalar", {"x": 1.5}, rule="scalar input fed a Python float"),
    Case("scalar_output_of_rank_1", "scalar_output", {"x": f32(1, 2, 3)},
         rule="output declared scalar, computed [1]"),
    # fixed dims
    Case("fixed_ok", "fixed", {"x": X23}, rule="fixed dims [2,3] fed [2,3]"),
    Case("fixed_dim_mismatch", "fixed", {"x": np.zeros((2, 4), np.float32)}, rule="fixed dims [2,3] fed [2,4]"),
    Case("fixed_transposed", "fixed", {"x": np.zeros((3, 2), np.float32)}, rule="fixed dims [2,3] fed [3,2]"),
    Case("fixed_rank_mismatch", "fixed", {"x": np.zeros(6, np.float32)}, rule="fixed dims [2,3] fed [6]"),
    Case("fixed_rank_3", "fixed", {"x": np.zeros((1, 2, 3), np.float32)}, rule="fixed dims [2,3] fed [1,2,3]"),
    Case("fixed_noncontiguous", "fixed", {"x": np.arange(12, dtype=np.float32).reshape(2, 6)[:, ::2]},
         rule="fixed dims [2,3] fed a strided view [2,3]"),
    Case("fixed_fortran", "fixed", {"x": np.asfortranarray(X23)}, rule="fixed dims [2,3] fed a Fortran-order array"),
    # symbolic / unnamed dims
    Case("symbolic_any", "symbolic", {"x": np.zeros((5, 3), np.float32)}, rule="dims [N,3] fed [5,3]"),
    Case("symbolic_fixed_mismatch", "symbolic", {"x": np.zeros((5, 4), np.float32)}, rule="dims [N,3] fed [5,4]"),
    Case("symbolic_rank_mismatch", "symbolic", {"x": np.zeros(3, np.float32)}, rule="dims [N,3] fed [3]"),
    Case("same_symbol_different_sizes", "same_symbol", {"a": f32(1, 2), "b": f32(3, 4, 5)},
         rule="a:[N], b:[N] fed [2] and [3]"),
    Case("unnamed_any", "unnamed", {"x": np.zeros((4, 3), np.float32)}, rule="dims [?,3] fed [4,3]"),
    Case("two_unnamed_different_sizes", "two_unnamed", {"a": f32(1, 2), "b": f32(3)},
         rule="a:[?], b:[?] fed [2] and [1]"),
    Case("no_shape_rank_0", "no_shape", {"x": np.array(2.0, np.float32)}, rule="no shape fed rank 0"),
    Case("no_shape_rank_3", "no_shape", {"x": np.zeros((1, 2, 3), np.float32)}, rule="no shape fed rank 3"),
    # empty tensors
    Case("fixed_zero_fed_0x3", "fixed_zero", {"x": np.zeros((0, 3), np.float32)}, rule="dims [0,3] fed [0,3]"),
    Case("fixed_zero_fed_1x3", "fixed_zero", {"x": np.zeros((1, 3), np.float32)}, rule="dims [0,3] fed [1,3]"),
    Case("fixed_fed_0x3", "fixed", {"x": np.zeros((0, 3), np.float32)}, rule="dims [2,3] fed [0,3]"),
    Case("symbolic_fed_0x3", "symbolic", {"x": np.zeros((0, 3), np.float32)}, rule="dims [N,3] fed [0,3]"),
    Case("no_shape_fed_0", "no_shape", {"x": np.zeros((0,), np.float32)}, rule="no shape fed [0]"),
    # element types
    Case("float64_for_float32", "fixed", {"x": X23.astype(np.float64)}, rule="float32 input fed float64"),
    Case("int32_for_int64", "int64", {"x": np.array([1, 2], np.int32)}, rule="int64 input fed int32"),
    Case("bool_for_float32", "fixed", {"x": np.ones((2, 3), bool)}, rule="float32 input fed bool"),
    Case("float32_for_bool", "bool", {"x": f32(0, 1)}, rule="bool input fed float32"),
    Case("bool_ok", "bool", {"x": np.array([True, False])}, rule="bool input fed bool"),
    Case("list_for_float32", "fixed", {"x": [[0, 1, 2], [3, 4, 5]]}, rule="float32 input fed a list of ints"),
    Case("ragged_list", "fixed", {"x": [[0, 1, 2], [3]]}, rule="a list numpy cannot make an array of"),
    Case("str_for_float32", "fixed", {"x": np.array([["a", "b", "c"], ["d", "e", "f"]])},
         rule="float32 input fed a str array"),
    # optional inputs
    Case("optional_left_out", "optional_input", {}, rule="optional(tensor) input left out"),
    Case("optional_fed_none", "optional_input", {"x": None}, rule="optional(tensor) input fed None"),
    Case("optional_fed_tensor", "optional_input", {"x": f32(1, 2)}, rule="optional(tensor) input fed a tensor"),
    Case("op_optional_blank", "op_optional_blank", {"x": f32(1, 2, 3)}, rule='an op\'s optional input "" (Clip)'),
    Case("required_fed_none", "fixed", {"x": None}, rule="a tensor input fed None"),
    # overridable initializers
    Case("overridable_not_fed", "overridable", {"x": f32(1, 2)}, rule="overridable initializer not fed"),
    Case("overridable_fed", "overridable", {"x": f32(1, 2), "w": f32(100, 200)}, rule="overridable initializer fed"),
    Case("overridable_wrong_shape", "overridable", {"x": f32(1, 2), "w": f32(1, 2, 3)},
         rule="overridable initializer fed [3] for [2]"),
    Case("overridable_wrong_dtype", "overridable", {"x": f32(1, 2), "w": np.array([1, 2], np.int64)},
         rule="overridable initializer fed int64 for float32"),
    Case("ir3_initializer_input_fed", "initializer_input_ir3", {"x": f32(1, 2), "w": f32(100, 200)},
         rule="IR 3: an initializer listed as a graph input, fed"),
    Case("ir3_initializer_input_not_fed", "initializer_input_ir3", {"x": f32(1, 2)},
         rule="IR 3: an initializer listed as a graph input, not fed"),
    Case("constant_initializer_fed", "constant_initializer", {"x": f32(1, 2), "w": f32(100, 200)},
         rule="a constant initializer (not a graph input) fed"),
    # names
    Case("unknown_input", "fixed", {"x": X23, "z": X23}, rule="an unknown input name beside the inputs"),
    Case("unknown_input_only", "fixed", {"z": X23}, rule="an unknown input name instead of the input"),
    Case("missing_input", "same_symbol", {"a": f32(1)}, rule="a required input missing"),
    Case("no_feeds", "fixed", {}, rule="no feeds"),
    Case("unknown_output", "fixed", {"x": X23}, ["q"], rule="an unknown output name"),
    Case("output_twice", "fixed", {"x": X23}, ["y", "y"], rule='output_names ["y", "y"]'),
    Case("outputs_reordered", "two_outputs", {"x": f32(1, 2)}, ["z", "y"], rule='output_names ["z", "y"]'),
    Case("output_names_empty", "two_outputs", {"x": f32(1, 2)}, [], rule="output_names []"),
    Case("output_names_none", "two_outputs", {"x": f32(1, 2)}, None, rule="output_names None"),
    Case("output_names_tuple", "two_outputs", {"x": f32(1, 2)}, ("z",), rule='output_names ("z",)'),
    Case("output_names_empty_str", "two_outputs", {"x": f32(1, 2)}, "", rule='output_names "" (falsy: every output)'),
    Case("output_names_str", "fixed", {"x": X23}, "y", rule='output_names "y" (a str)'),
    Case("output_names_generator", "two_outputs", {"x": f32(1, 2)},
         Fresh(lambda: (n for n in ["z"]), "(n for n in ['z'])"), rule="output_names a generator"),
    Case("output_names_int", "fixed", {"x": X23}, [0], rule="output_names [0]"),
    Case("output_names_bytes", "fixed", {"x": X23}, [b"y"], rule='output_names [b"y"]'),
    # the graph's outputs
    Case("duplicated_graph_output", "duplicated_output", {"x": f32(1, 2)}, rule="graph outputs [y, y]"),
    Case("duplicated_graph_output_named", "duplicated_output", {"x": f32(1, 2)}, ["y"],
         rule='graph outputs [y, y], output_names ["y"]'),
    Case("passthrough", "passthrough", {"x": f32(1, 2)}, rule="graph output x = graph input x"),
    Case("passthrough_and_other", "passthrough_and_other", {"x": f32(1, 2)},
         rule="graph outputs [x, y], x the graph input"),
    # run-time failures
    Case("reshape_ok", "reshape", {"x": f32(*range(6)), "shape": np.array([2, 3], np.int64)},
         rule="Reshape to [2,3]"),
    Case("reshape_impossible", "reshape", {"x": f32(*range(6)), "shape": np.array([4, 2], np.int64)},
         rule="Reshape of 6 elements to [4,2]"),
    Case("gather_out_of_range", "gather", {"x": f32(1, 2, 3), "i": np.array([7], np.int64)},
         rule="Gather index 7 of 3"),
    # the call's shape
    Case("feeds_a_list", "fixed", [X23], rule="feeds a list, not a mapping"),
    Case("feeds_none", "fixed", None, rule="feeds None"),
    Case("feeds_mappingproxy", "fixed", types.MappingProxyType({"x": X23}),
         rule="feeds a read-only mapping (types.MappingProxyType), not a dict"),
    Case("feed_key_int", "fixed", {0: X23}, rule="a feed key that is an int (the only key)"),
    Case("feed_key_int_beside", "fixed", {"x": X23, 0: X23}, rule="a feed key that is an int, beside x"),
    Case("feed_key_bytes", "fixed", {b"x": X23}, rule="a feed key that is bytes"),
    Case("run_options_str", "fixed", {"x": X23}, None, "fast", rule='run_options "fast" (a str)'),
    Case("run_options_dict", "fixed", {"x": X23}, None, {}, rule="run_options {} (a dict)"),
]

CASES_BY_ID = {c.id: c for c in CASES}
assert len(CASES_BY_ID) == len(CASES), "case ids must be unique"


# --- the outcome of a run -----------------------------------------------------------------------------------------

_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def mask_addresses(message: str) -> str:
    """A message with the objects' addresses masked: pybind11's "incompatible function arguments" lists the call's
    arguments (the session object among them), whose addresses differ between two sessions."""
    return _ADDRESS.sub(" at 0x…", message)


def run_onnxruntime(case: Case, session=None):
    """onnxruntime's own run on the case: ("ok", outputs) or ("raise", exception)."""
    import onnxruntime as ort

    if session is None:
        session = ort.InferenceSession(model_bytes(case.model), providers=["CPUExecutionProvider"])
    try:
        return "ok", session.run(resolve(case.output_names), case.feeds, case.run_options)
    except Exception as e:  # noqa: BLE001  (the outcome is what is measured)
        return "raise", e


def describe(kind: str, value) -> dict:
    if kind == "raise":
        t = type(value)
        return {"outcome": "raises", "class": f"{t.__module__}.{t.__qualname__}", "message": str(value)}
    outs = []
    for v in value:
        if isinstance(v, np.ndarray):
            outs.append({"dtype": str(v.dtype), "shape": list(v.shape), "values": v.tolist()})
        else:
            outs.append({"type": type(v).__name__, "repr": repr(v)})
    return {"outcome": "runs", "outputs": outs}


def measure(case: Case) -> dict:
    import onnxruntime as ort

    out = {"id": case.id, "rule": case.rule, "onnxruntime": ort.__version__}
    session = ort.InferenceSession(model_bytes(case.model), providers=["CPUExecutionProvider"])
    kind, value = run_onnxruntime(case, session)
    out.update(describe(kind, value))
    if kind == "ok" and isinstance(case.feeds, (dict, types.MappingProxyType)):
        # does an output share memory with a feed (a pass-through output)?
        arrays = [v for v in case.feeds.values() if isinstance(v, np.ndarray)]
        out["aliases_feed"] = [any(np.shares_memory(o, a) for a in arrays) if isinstance(o, np.ndarray) else False
                               for o in value]
    return out


def _short(d: dict) -> str:
    if d["outcome"] == "raises":
        text = f"`{d['class'].rsplit('.', 1)[-1]}`: {mask_addresses(d['message'])}"
        return text.replace("|", "\\|").replace("\n", " ")
    parts = []
    for o in d["outputs"]:
        parts.append(f"{o['dtype']}{o['shape']} {o['values']}" if "dtype" in o else o["repr"])
    alias = d.get("aliases_feed")
    extra = f" (shares the feed's memory: {alias})" if alias and any(alias) else ""
    return ("runs: " + "; ".join(parts) + extra).replace("|", "\\|")


def main(argv: list[str]) -> None:
    import warnings

    warnings.simplefilter("ignore")
    results = [measure(c) for c in CASES]
    if "--json" in argv:
        for r in results:
            print(json.dumps(r))
        return
    print("| case | rule | onnxruntime " + results[0]["onnxruntime"] + " |\n|---|---|---|")
    for r in results:
        print(f"| `{r['id']}` | {r['rule']} | {_short(r)} |")


if __name__ == "__main__":
    main(sys.argv[1:])
