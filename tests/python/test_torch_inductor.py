"""Code Inductor generates for ortdlpack.torch_module (python/ortdlpack/_torch_inductor.py): where the lowering is
used (the torch releases it is tested on), the code calls the operator's kernels directly, ORT writing a model's one
output into Inductor's buffer; elsewhere (another torch, ORTDLPACK_TORCH_INDUCTOR=0, an Inductor that refuses it) it
calls the operator through torch's dispatcher, saying why once in a log record, with the same results. The tests of
the lowering skip where it is not used, naming the reason (the oldest supported torch: scripts/ci_oldest_torch.sh)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import onnxruntime as ort
import pytest

import ortdlpack
from framework_models import build_models

torch = pytest.importorskip("torch")

from ortdlpack import _torch_inductor  # noqa: E402  (imports torch)


@pytest.fixture(scope="module")
def models():
    return build_models()


@pytest.fixture(autouse=True)
def _inductor_compiles_afresh():
    """Inductor's on-disk cache is keyed by the graph, not by ortdlpack's version or its lowering: code generated
    earlier for the same graph would be run instead of what this one generates."""
    import torch._inductor.config

    with torch._inductor.config.patch(fx_graph_cache=False):
        yield


def _lowering_is_off() -> str | None:
    return _torch_inductor.off_because(torch.__version__, os.environ.get(_torch_inductor.ENV))


def needs_the_lowering() -> None:
    if (why := _lowering_is_off()) is not None:
        pytest.skip(f"the Inductor lowering is not used here: {why}")


def _compiled_code(f, *args):
    """The result of torch.compile(f, fullgraph=True)(*args), compiled afresh, and the Python wrapper Inductor wrote."""
    from torch._inductor.utils import run_and_get_code

    torch._dynamo.reset()
    with torch.no_grad():
        out, (code, *_) = run_and_get_code(torch.compile(f, fullgraph=True), *args)
    return out, code


@pytest.mark.inductor
def test_inductor_s_code_calls_the_kernels_themselves(models):
    """Inductor's Python wrapper calls run's kernels directly, not torch.ops.ortdlpack.run.default (the dispatcher's
    conversions cost ~3 us a call, as much as a small model's run): a model of one output whose size its inputs give
    is written into a buffer Inductor allocates, with a symbolic batch too (no check of what came back: ORT checks
    the buffer); other models return ORT's outputs, which Inductor checks. The C++ wrapper keeps the dispatcher. All
    give the eager result. (Errors from the direct calls: test_the_operator_s_kernel_errors_are_ortdlpack_s.)"""
    needs_the_lowering()
    add = ortdlpack.torch_module(models["add"])
    x = torch.randn(3, 4)
    out, code = _compiled_code(lambda x: add(x) * 2, x)
    assert "_ortdlpack_torch_run_into(arg0_1, " in code and "out=buf" in code, code
    assert "assert_tensor_metadata" not in code and "_ortdlpack_torch_run(" not in code, code
    torch.testing.assert_close(out, 4 * x)

    torch._dynamo.reset()
    torch._dynamo.utils.counters.clear()
    compiled = torch.compile(lambda x: add(x) * 2, fullgraph=True)
    for n in (2, 5, 7):  # one graph for every batch: the buffer's size is the batch's symbol
        xn = torch.randn(n, 4)
        torch._dynamo.mark_dynamic(xn, 0)
        with torch.no_grad():
            torch.testing.assert_close(compiled(xn), 4 * xn)
    assert torch._dynamo.utils.counters["stats"]["unique_graphs"] == 1

    mlp = ortdlpack.torch_module(models["mlp"])
    b = torch.randn(4)
    out, code = _compiled_code(lambda x: mlp(x, b)[1] + 1, x)  # two outputs: ORT allocates them
    assert "_ortdlpack_torch_run(" in code and "_ortdlpack_torch_run_into" not in code, code
    assert "assert_tensor_metadata" in code, code
    torch.testing.assert_close(out, x + b + 1)

    with torch._inductor.config.patch(cpp_wrapper=True):  # compiles C++: ~10 s
        out, code = _compiled_code(lambda x: add(x) * 2, x)
    assert '"torch.ops.ortdlpack.run.default"' in code and "_ortdlpack_torch_run" not in code, code
    torch.testing.assert_close(out, 4 * x)


@pytest.mark.inductor
def test_a_model_whose_declared_size_is_wrong_fails_in_compiled_code(models):
    """The fake implementation believes the model's declared sizes. Where a run's output is another size, compiled
    code fails with a clear error before any kernel reads it: ORT refuses Inductor's buffer (one output), Inductor's
    check refuses ORT's output (several, or any where the lowering is not used)."""
    module = ortdlpack.torch_module(models["concat_declared_wrong"])
    x, z = torch.randn(2, 4), torch.randn(2, 4)
    assert module(x, z).shape == (2, 8)  # eagerly the output is what the run made
    torch._dynamo.reset()
    compiled = torch.compile(lambda x, z: module(x, z) * 2, fullgraph=True)
    # ORT's class and words: InvalidArgument in newer ORT, RuntimeException in 1.23 (a failed shape verification)
    C = ort.capi.onnxruntime_pybind11_state
    refused = pytest.raises((C.InvalidArgument, C.RuntimeException), match=r"\{2,4\}.*\{2,8\}")
    if _lowering_is_off():
        refused = pytest.raises(AssertionError, match="expected size 8==4")  # Inductor's assert_size_stride
    with torch.no_grad(), refused:
        compiled(x, z)
    with torch.no_grad():
        torch.testing.assert_close(compiled(x, z[:, :0]), 2 * x)  # no columns in z: the declared size is right


@pytest.mark.inductor
@pytest.mark.parametrize("refused", ["into", "both"])
def test_where_inductor_s_nodes_cannot_be_made_the_calls_fall_back(models, monkeypatch, caplog, refused):
    """Where a node for the direct calls cannot be made (an Inductor whose internals differ), the lowering leaves the
    graph as it was and falls back, saying so once in a warning: to _torch_run's node when the buffer's node cannot
    be made, to the dispatcher's call when that node cannot be renamed either. The eager result each time. (The
    failures are injected into this torch.)"""
    needs_the_lowering()
    from torch._inductor import ir

    def refuse(*args, **kwargs):
        raise TypeError("another Inductor")

    monkeypatch.setattr(ir.ExternKernelOut, "__init__", refuse)
    if refused == "both":
        rename = ir.ExternKernel.set_python_kernel_name

        def refuse_ours(self, name):
            if name == _torch_inductor.DIRECT:
                raise AttributeError("set_python_kernel_name")
            rename(self, name)

        monkeypatch.setattr(ir.ExternKernel, "set_python_kernel_name", refuse_ours)
    monkeypatch.setattr(_torch_inductor, "_logged", set())  # (said once a process: this test's are said again)
    module = ortdlpack.torch_module(models["add"])
    x = torch.randn(3, 4)
    for _ in range(2):  # said the first time only
        with caplog.at_level("WARNING", logger=_torch_inductor.__name__):
            out, code = _compiled_code(lambda x: module(x) - 1, x)
        assert "_ortdlpack_torch_run_into" not in code, code
        torch.testing.assert_close(out, x + x - 1)
    if refused == "into":
        assert "_ortdlpack_torch_run(" in code, code
    else:
        assert "torch.ops.ortdlpack.run.default(" in code and _torch_inductor.DIRECT not in code, code
    said = ["Inductor's buffer for a model's one output could not be made (TypeError: another Inductor): compiled "
            "code calls _torch_run, which allocates it"]
    if refused == "both":
        said.append("Inductor's node of ortdlpack::run could not be renamed (AttributeError: set_python_kernel_name): "
                    "compiled code calls it through torch's dispatcher")
    assert [(r.levelname, r.getMessage()) for r in caplog.records] == [
        ("WARNING", "ortdlpack.torch_module: " + m) for m in said]


@pytest.mark.inductor
def test_a_torch_onnx_export_compiles_to_onnxruntime_s_results():
    """A model no one here wrote: torch.onnx's exporter makes the ONNX model (convolution, batch norm, pooling,
    softmax, a dynamic batch); compiled with torch ops around it, every batch size gives onnxruntime's exact result,
    ORT writing into Inductor's buffer (one output, its batch the input's symbol), or through the dispatcher where
    the lowering is not used."""
    import io
    import warnings

    from torch._inductor.utils import run_and_get_code

    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.BatchNorm2d(8), torch.nn.ReLU(),
                              torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(8, 5),
                              torch.nn.Softmax(-1)).eval()
    f = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the TorchScript exporter's deprecation notice
        torch.onnx.export(net, (torch.randn(2, 3, 16, 16),), f, input_names=["image"], output_names=["probs"],
                          dynamic_axes={"image": {0: "batch"}, "probs": {0: "batch"}}, dynamo=False)
    data = f.getvalue()
    module = ortdlpack.torch_module(data)
    upstream = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
    compiled = torch.compile(lambda x: module(x * 2) + 1, fullgraph=True)
    with torch.no_grad():
        for n in (2, 5):
            x = torch.randn(n, 3, 16, 16)
            torch._dynamo.mark_dynamic(x, 0)
            out, code = run_and_get_code(compiled, x) if n == 2 else (compiled(x), None)
            np.testing.assert_array_equal(out.numpy(), upstream.run(None, {"image": (x * 2).numpy()})[0] + 1)
            if code is not None:
                call = "torch.ops.ortdlpack.run.default(" if _lowering_is_off() else "_ortdlpack_torch_run_into("
                assert call in code[0], code[0]




@pytest.mark.parametrize("release, setting, used", [
    ("newest", None, True), ("oldest", "1", True), ("newest", "", True), ("newest", "0", False),
    ("newer", None, False), ("older", None, False), ("older", "1", False), ("nonsense", None, False),
])
def test_the_lowering_is_used_on_the_torch_releases_it_is_tested_on_only(release, setting, used):
    """TESTED's releases, any patch release and local build of them, use the lowering unless
    ORTDLPACK_TORCH_INDUCTOR=0; the release after the newest, the one before the oldest and a version no release
    has do not, saying why."""
    (lo_major, lo_minor), (hi_major, hi_minor) = _torch_inductor.TESTED
    version = {"newest": f"{hi_major}.{hi_minor}.3+cu132", "oldest": f"{lo_major}.{lo_minor}.0",
               "newer": f"{hi_major}.{hi_minor + 1}.0.dev20990101", "older": f"{lo_major}.{lo_minor - 1}.1",
               "nonsense": "main"}[release]
    why = _torch_inductor.off_because(version, setting)
    if used:
        assert why is None
    elif setting == "0":
        assert why == "ORTDLPACK_TORCH_INDUCTOR=0"
    else:
        assert why.startswith(f"torch {version} is not a release the Inductor lowering is tested on ("), why


# A process that compiles `add` twice with Inductor, then prints its log records (ortdlpack's, INFO and up), whether
# the results were x + x, and the code Inductor wrote. argv[1]: "untested" makes this torch one TESTED does not
# name; "refused" names it and makes Inductor's register_lowering fail.
_CHILD = """
import json, logging, sys

records = []
handler = logging.Handler()
handler.emit = lambda r: records.append([r.levelname, r.getMessage()])
logging.getLogger("ortdlpack").addHandler(handler)
logging.getLogger("ortdlpack").setLevel(logging.INFO)
import torch, torch._inductor.config, torch._inductor.lowering
from torch._inductor.utils import run_and_get_code
import ortdlpack
from ortdlpack import _torch_inductor
from framework_models import build_models

torch._inductor.config.fx_graph_cache = False
if sys.argv[1] == "untested":
    _torch_inductor.TESTED = ((1, 0), (1, 0))
if sys.argv[1] == "refused":
    this = tuple(int(p) for p in torch.__version__.split(".")[:2])
    _torch_inductor.TESTED = (this, this)

    register = torch._inductor.lowering.register_lowering

    def refuse(*args, **kwargs):  # ortdlpack's call, the first (Inductor's fallback for an op calls it too)
        torch._inductor.lowering.register_lowering = register
        raise RuntimeError("no lowering today")

    torch._inductor.lowering.register_lowering = refuse
add = ortdlpack.torch_module(build_models()["add"])
x = torch.randn(3, 4)
equal = []
with torch.no_grad():
    for _ in range(2):
        torch._dynamo.reset()
        out, (code, *_) = run_and_get_code(torch.compile(lambda x: add(x), fullgraph=True), x)
        equal.append(torch.equal(out, x + x))
print(json.dumps({"records": records, "equal": equal, "code": code}))
"""
_DISPATCHER = (": compiled code calls ortdlpack::run through torch's dispatcher (the same results, slower: ~10 us more "
               "a call)")


@pytest.mark.inductor
@pytest.mark.parametrize("case, setting, said", [
    ("opt-out", "0", [("INFO", "ORTDLPACK_TORCH_INDUCTOR=0" + _DISPATCHER)]),
    ("untested", "yes", [("WARNING", "ORTDLPACK_TORCH_INDUCTOR='yes' is not 0 or 1: taken as unset"),
                         ("WARNING", "torch {version} is not a release the Inductor lowering is tested on (1.0; "
                                     "ORTDLPACK_TORCH_INDUCTOR=0 makes this warning an INFO record)" + _DISPATCHER)]),
    ("refused", None, [("WARNING", "registering the Inductor lowering failed (RuntimeError: no lowering today)"
                                   + _DISPATCHER)]),
])
def test_where_the_lowering_is_not_used_compiled_code_calls_the_dispatcher_and_says_why(case, setting, said):
    """ORTDLPACK_TORCH_INDUCTOR=0 (an INFO record: it was asked for), a torch release the lowering is not tested on,
    or an Inductor that refuses it: compiled code calls the operator through the dispatcher, with the eager result,
    and the reason is logged once a process. (Registering is once a process too: each case runs in its own.)"""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    env.pop(_torch_inductor.ENV, None)
    if setting is not None:
        env[_torch_inductor.ENV] = setting
    proc = subprocess.run([sys.executable, "-c", _CHILD, case], capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr[-5000:]
    got = json.loads(proc.stdout.splitlines()[-1])
    assert got["equal"] == [True, True]
    assert "torch.ops.ortdlpack.run.default(" in got["code"] and "_ortdlpack_torch_run" not in got["code"], got["code"]
    assert [tuple(r) for r in got["records"]] == [
        (level, "ortdlpack.torch_module: " + m.format(version=torch.__version__)) for level, m in said]
