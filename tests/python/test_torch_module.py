"""ortdlpack.torch_module: an ONNX model as a torch.nn.Module behind the operator ortdlpack::run, which
torch.compile and torch.export trace through. Results equal to onnxruntime's, shapes from the model (a symbolic batch
stays symbolic, a data-dependent size is an unbacked symbol), zero-copy outputs, errors at wrap time and from the kernel, a clear
error on backward, threads, 10k calls without growth, plugin-EP devices. Compiles are few: each costs seconds."""

from __future__ import annotations

import gc
import threading

import numpy as np
import onnxruntime as ort
import pytest

import ortdlpack
from conftest import assert_runs_do_not_grow_rss
from framework_models import build_models, reference


@pytest.fixture(scope="module")
def models():
    return build_models()


torch = pytest.importorskip("torch")


@pytest.fixture(autouse=True)
def _inductor_compiles_afresh():
    """Inductor's on-disk cache is keyed by the graph, not by ortdlpack's version: code an earlier build generated
    for the same graph would be run instead of what this one generates."""
    import torch._inductor.config

    with torch._inductor.config.patch(fx_graph_cache=False):
        yield


@pytest.fixture(scope="module")
def mlp(models):
    return ortdlpack.torch_module(models["mlp"], intra_op_num_threads=1)


def test_torch_module_takes_inputs_in_order_or_by_name(mlp, models):
    x, b = torch.randn(5, 4), torch.randn(4)
    want = reference(models["mlp"], x=x.numpy(), b=b.numpy())
    for y, s in (mlp(x, b), mlp(b=b, x=x), mlp(x, b=b)):
        np.testing.assert_allclose(y.numpy(), want[0], rtol=1e-6)
        np.testing.assert_array_equal(s.numpy(), want[1])
    single = ortdlpack.torch_module(models["add"])
    assert torch.equal(single(x), x + x)  # one output: a tensor, not a tuple
    y, _ = mlp(x.t().contiguous().t(), b)  # a non-contiguous input is made contiguous by torch, in the graph
    np.testing.assert_allclose(y.numpy(), want[0], rtol=1e-6)


@pytest.mark.parametrize("args, kwargs, message", [
    ((), {}, "missing inputs ['x', 'b']"),
    ((1, 2, 3), {}, "takes 2 inputs"),
    ((), {"x": 1, "c": 2}, "no input 'c'"),
    ((1,), {"x": 1, "b": 2}, "input 'x' given twice"),
])
def test_torch_module_call_errors_name_the_inputs(mlp, args, kwargs, message):
    with pytest.raises(TypeError, match=message.replace("[", r"\[").replace("]", r"\]")):
        mlp(*args, **kwargs)


def test_torch_module_checks_inputs_against_the_model(mlp):
    with pytest.raises(ValueError, match=r"input 'x': dimension 1 mismatch: the model expects float32\[N,4\]"):
        mlp(torch.zeros(2, 3), torch.zeros(4))
    with pytest.raises(ValueError, match="input 'b': element type mismatch"):
        mlp(torch.zeros(2, 4), torch.zeros(4, dtype=torch.float64))


def test_torch_outputs_are_ort_s_memory(models):
    """Zero-copy out: the operator's outputs are ORT's buffers handed to torch (storage torch did not allocate, one
    buffer per run), not copies into torch's memory. (Zero-copy in: the kernel imports each input through torch's C
    exchange API like every torch feed, test_exchange_api.py.)"""
    module = ortdlpack.torch_module(models["mlp"])
    x, b = torch.randn(3, 4), torch.randn(4)
    first = module(x, b)
    second = module(x, b)
    for y in (*first, *second):
        assert not y.untyped_storage().resizable()  # torch's own allocations are resizable
    assert first[0].data_ptr() != second[0].data_ptr()  # each run's outputs are that run's
    torch.testing.assert_close(first, second)


def test_the_operator_s_kernel_errors_are_ortdlpack_s(models):
    """The kernel is C++ registered as the operator's Python kernel: its errors reach the caller as ortdlpack's
    exceptions, whether the operator is called eagerly or from compiled code."""
    module = ortdlpack.torch_module(models["add"])
    with pytest.raises(ValueError, match="ortdlpack::run: 2 inputs for a model of 1"):
        torch.ops.ortdlpack.run(module._session_id, [torch.zeros(1, 4), torch.zeros(1, 4)])
    with pytest.raises(TypeError, match="inputs must be a list of tensors"):
        ortdlpack._ortdlpack._torch_run(module._session_id, (torch.zeros(1, 4),))
    with pytest.raises(TypeError, match="the tensor"):
        ortdlpack._ortdlpack._torch_run(module._session_id, [object()])
    session_id = module._session_id
    compiled = torch.compile(lambda x: torch.ops.ortdlpack.run(session_id, [x])[0] + 1, fullgraph=True)
    x = torch.zeros(1, 4)
    torch.testing.assert_close(compiled(x), x + 1)
    del module
    gc.collect()
    with pytest.raises(ValueError, match=f"compiled session {session_id} is not registered"):
        compiled(x)


def test_the_into_kernel_s_errors(models):
    """_torch_run_into, what Inductor's code calls for a model of one output, checks what it is handed: the session
    id, the inputs, and `out`, which ORT writes into and so is never copied and must be the output's dtype and size."""
    run_into = ortdlpack._ortdlpack._torch_run_into
    add, mlp = (ortdlpack.torch_module(models[name]) for name in ("add", "mlp"))
    x = torch.randn(2, 4)
    out = torch.empty(2, 4)
    run_into(x, add._session_id, out=out)
    torch.testing.assert_close(out, x + x)
    cases = [
        ((), out, TypeError, r"_torch_run_into\(\*inputs, session, out=...\) has no session"),
        ((x, "1"), out, TypeError, "last positional argument is the session's id \\(an int\\), not str"),
        ((x, 10**9), out, ValueError, "compiled session 1000000000 is not registered"),
        ((x, torch.randn(4), mlp._session_id), torch.empty(2, 3), ValueError, "writes one output; the model has 2"),
        ((x, x, add._session_id), out, ValueError, "2 inputs for a model of 1"),
        ((x, add._session_id), torch.empty(2, 4, dtype=torch.float64), ValueError, "element type mismatch"),
        ((x, add._session_id), torch.empty(2, 5), ValueError, "dimension 1 mismatch"),
        ((x, add._session_id), torch.empty(4, 2).t(), ortdlpack.CopyRequiredError, "copying was not allowed"),
        ((x, add._session_id), object(), TypeError, "out must be a DLPack producer"),
    ]
    for args, dest, error, message in cases:
        with pytest.raises(error, match=message):
            run_into(*args, out=dest)
    with pytest.raises(TypeError):
        run_into(x, add._session_id)  # no out=


def test_torch_compile_fullgraph_keeps_the_batch_symbolic(mlp, models):
    """torch.compile(fullgraph=True) with torch ops before and after: 0 graph breaks, one graph for every batch
    size of a mark_dynamic batch (no recompile per size), results equal to eager."""
    def f(x, b):
        y, s = mlp(torch.tanh(x) * 2, b)
        return torch.sigmoid(y).sum(dim=1) + s.mean(dim=1)

    x = torch.randn(6, 4)
    b = torch.randn(4)
    assert torch._dynamo.explain(f)(x, b).graph_break_count == 0
    torch._dynamo.reset()
    torch._dynamo.utils.counters.clear()
    compiled = torch.compile(f, fullgraph=True)
    for n in (6, 7, 9):
        xn = torch.randn(n, 4)
        torch._dynamo.mark_dynamic(xn, 0)
        torch.testing.assert_close(compiled(xn, b), f(xn, b))
    assert torch._dynamo.utils.counters["stats"]["unique_graphs"] == 1


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
    check refuses ORT's output (several)."""
    module = ortdlpack.torch_module(models["concat_declared_wrong"])
    x, z = torch.randn(2, 4), torch.randn(2, 4)
    assert module(x, z).shape == (2, 8)  # eagerly the output is what the run made
    torch._dynamo.reset()
    compiled = torch.compile(lambda x, z: module(x, z) * 2, fullgraph=True)
    # ORT's words: ValueError in newer ORT (INVALID_ARGUMENT), RuntimeError in 1.23 (a failed shape verification)
    with torch.no_grad(), pytest.raises((ValueError, RuntimeError),
                                        match=r"run: the session failed: ONNX Runtime: .*\{2,4\}.*\{2,8\}"):
        compiled(x, z)
    with torch.no_grad():
        torch.testing.assert_close(compiled(x, z[:, :0]), 2 * x)  # no columns in z: the declared size is right


@pytest.mark.inductor
@pytest.mark.parametrize("refused", ["into", "both"])
def test_where_inductor_s_nodes_cannot_be_made_the_calls_fall_back(models, monkeypatch, refused):
    """Where a node for the direct calls cannot be made (another torch's internals), the lowering leaves the graph as
    it was and falls back: to _torch_run's node when the buffer's node cannot be made, to the dispatcher's call
    when that node cannot be renamed either. The eager result each time. (The failures are injected into this
    torch.)"""
    from torch._inductor import ir

    from ortdlpack import _torch_operator

    def refuse(*args, **kwargs):
        raise TypeError("another Inductor")

    monkeypatch.setattr(ir.ExternKernelOut, "__init__", refuse)
    if refused == "both":
        rename = ir.ExternKernel.set_python_kernel_name

        def refuse_ours(self, name):
            if name == _torch_operator._DIRECT:
                raise AttributeError("set_python_kernel_name")
            rename(self, name)

        monkeypatch.setattr(ir.ExternKernel, "set_python_kernel_name", refuse_ours)
    module = ortdlpack.torch_module(models["add"])
    x = torch.randn(3, 4)
    out, code = _compiled_code(lambda x: module(x) - 1, x)
    assert "_ortdlpack_torch_run_into" not in code, code
    if refused == "into":
        assert "_ortdlpack_torch_run(" in code, code
    else:
        assert "torch.ops.ortdlpack.run.default(" in code and _torch_operator._DIRECT not in code, code
    torch.testing.assert_close(out, x + x - 1)


@pytest.mark.inductor
def test_a_torch_onnx_export_compiles_to_onnxruntime_s_results():
    """A model no one here wrote: torch.onnx's exporter makes the ONNX model (convolution, batch norm, pooling,
    softmax, a dynamic batch); compiled with torch ops around it, every batch size gives onnxruntime's exact result,
    ORT writing into Inductor's buffer (one output, its batch the input's symbol)."""
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
                assert "_ortdlpack_torch_run_into(" in code[0], code[0]


def test_torch_export_with_a_dynamic_batch(mlp):
    class Wrapper(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.onnx = mlp

        def forward(self, x, b):
            y, s = self.onnx(x + 1, b)
            return y * 2, s

    x, b = torch.randn(5, 4), torch.randn(4)
    batch = torch.export.Dim("batch")
    exported = torch.export.export(Wrapper(), (x, b), dynamic_shapes={"x": {0: batch}, "b": None})
    assert "ortdlpack.run" in str(exported.graph)
    for n in (5, 11):
        xn = torch.randn(n, 4)
        for got, want in zip(exported.module()(xn, b), Wrapper()(xn, b)):
            torch.testing.assert_close(got, want)


def test_torch_data_dependent_output_is_an_unbacked_size(models):
    module = ortdlpack.torch_module(models["nonzero"])

    class Wrapper(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.onnx = module

        def forward(self, x):
            return self.onnx(x) + 1

    x = torch.tensor([0.0, 2.0, 0.0, 3.0])
    exported = torch.export.export(Wrapper(), (x,))
    (out,) = [n for n in exported.graph.nodes if n.op == "output"][0].args[0]
    assert isinstance(out.meta["val"].shape[1], torch.SymInt)  # unbacked: only the run tells it
    torch.testing.assert_close(exported.module()(x), torch.tensor([[2, 4]]))
    torch.testing.assert_close(exported.module()(torch.tensor([1.0, 1.0, 0.0, 1.0])), torch.tensor([[1, 2, 4]]))


def test_torch_backward_is_a_clear_error(mlp):
    x = torch.randn(3, 4, requires_grad=True)
    b = torch.randn(4)
    y, _ = mlp(x, b)
    with pytest.raises(RuntimeError, match="ONNX Runtime computes no gradients"):
        (y.sum() + x.sum()).backward()  # never a silent zero gradient through the model
    compiled = torch.compile(lambda x: mlp(x * 2, b)[0].sum(), backend="aot_eager", fullgraph=True)
    loss = compiled(x)  # the forward compiles and runs; only asking for the gradient fails
    with pytest.raises(RuntimeError, match="ONNX Runtime computes no gradients"):
        loss.backward()
    with torch.no_grad():
        assert mlp(x, b)[0].shape == (3, 3)


@pytest.mark.parametrize("name, message", [
    ("sequence", r"torch_module: output 'y' \(seq\(tensor\(float\)\)\) cannot be described to the framework's "
                 r"tracer: it is not a tensor"),
])
def test_torch_module_refuses_what_it_cannot_describe(models, name, message):
    with pytest.raises(ValueError, match=message):
        ortdlpack.torch_module(models[name])


def test_wrapping_arguments_are_checked(models):
    session = ortdlpack.Session(models["add"])
    with pytest.raises(TypeError, match="keyword arguments \\(providers\\) create a session from a model"):
        ortdlpack.torch_module(session, providers=["CPUExecutionProvider"])
    with pytest.raises(TypeError, match="must be a model .* or an ortdlpack.Session, not int"):
        ortdlpack.jax_function(3)


def test_a_released_module_is_a_clear_error_for_graphs_that_outlive_it(models):
    module = ortdlpack.torch_module(models["add"])
    session_id = module._session_id
    del module
    gc.collect()
    with pytest.raises(ValueError, match=f"compiled session {session_id} is not registered"):
        torch.ops.ortdlpack.run(session_id, [torch.zeros(1, 4)])


def test_torch_module_from_threads(mlp, models):
    x = [torch.randn(i + 1, 4) for i in range(4)]
    b = torch.randn(4)
    want = [reference(models["mlp"], x=xi.numpy(), b=b.numpy())[0] for xi in x]
    errors = []

    def work(i):
        try:
            for _ in range(200):
                np.testing.assert_allclose(mlp(x[i], b)[0].numpy(), want[i], rtol=1e-6)
        except Exception as e:  # noqa: BLE001  (reported below)
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


def test_torch_module_calls_do_not_grow_rss(models):
    module = ortdlpack.torch_module(models["add"], intra_op_num_threads=1)
    x = torch.ones(8, 4)
    pytest.importorskip("psutil")  # imported before objects are counted
    for _ in range(1_000):  # first calls fill torch's and ortdlpack's caches
        module(x)
    gc.collect()
    before = len(gc.get_objects())
    assert_runs_do_not_grow_rss(lambda i: module(x))
    gc.collect()
    assert len(gc.get_objects()) - before < 100


def test_torch_module_on_a_plugin_ep_device(accel, models):
    """A session on a plugin EP's device: the torch tensors stay in host memory (torch cannot hold the device's),
    ORT moves them through the EP's data transfer; results as on the CPU."""
    module = ortdlpack.torch_module(accel.session(models["add"]))
    x = torch.randn(3, 4)
    torch.testing.assert_close(module(x), x + x)


@pytest.mark.inductor
def test_torch_module_compiled_on_a_plugin_ep_device(accel, models):
    """The same session inside an Inductor graph, whose code calls the kernel directly: results as eager."""
    module = ortdlpack.torch_module(accel.session(models["add"]))
    compiled = torch.compile(lambda x: module(x * 2) - 1, fullgraph=True)
    x = torch.randn(3, 4)
    with torch.no_grad():
        torch.testing.assert_close(compiled(x), 4 * x - 1)


@pytest.mark.inductor
def test_torch_module_on_cuda_runs_on_torchs_stream(models):
    if not torch.cuda.is_available() or "CUDAExecutionProvider" not in ort.get_available_providers():
        pytest.skip("needs a CUDA device, torch with CUDA and onnxruntime-gpu (none here: the CUDA path is "
                    "unverified on this machine)")
    stream = torch.cuda.current_stream().cuda_stream
    module = ortdlpack.torch_module(models["add"], ep="cuda", stream=stream)
    x = torch.randn(64, 4, device="cuda")
    compiled = torch.compile(lambda x: module(x * 2) + 1, fullgraph=True)
    torch.testing.assert_close(compiled(x), 4 * x + 1)
