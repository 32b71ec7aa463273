"""ortdlpack.torch_module: an ONNX model as a torch.nn.Module behind the operator ortdlpack::run, which
torch.compile and torch.export trace through. Results equal to onnxruntime's, shapes from the model (a symbolic batch
stays symbolic, a data-dependent size is an unbacked symbol), zero-copy outputs, errors at wrap time and from the kernel, a clear
error on backward, threads, 10k calls without growth, plugin-EP devices. Compiles are few: each costs seconds. (The
code Inductor generates, and where it is generated without ortdlpack's lowering: test_torch_inductor.py.)"""

from __future__ import annotations

import gc
import re
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


@pytest.mark.parametrize("args, kwargs, error, message", [
    ((), {}, ValueError, "input 'x' is missing"),  # the core's rule of a compiled call's arguments
    ((1, 2, 3), {}, ValueError, "the model takes 2 inputs ('x', 'b'), got 3"),
    ((), {"x": 1, "c": 2}, TypeError, "no input 'c'"),
    ((1,), {"x": 1, "b": 2}, TypeError, "input 'x' given twice"),
])
def test_torch_module_call_errors_name_the_inputs(mlp, args, kwargs, error, message):
    with pytest.raises(error, match=re.escape(message)):
        mlp(*args, **kwargs)


def test_torch_module_checks_inputs_as_ort_does(mlp):
    C = ort.capi.onnxruntime_pybind11_state
    with pytest.raises(C.InvalidArgument, match=r"Got invalid dimensions for input: x"):
        mlp(torch.zeros(2, 3), torch.zeros(4))
    with pytest.raises(C.InvalidArgument, match=r"Unexpected input data type"):
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
    with pytest.raises(ValueError, match=re.escape("the model takes 1 inputs ('x'), got 2")):
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
        ((x, x, add._session_id), out, ValueError, re.escape("the model takes 1 inputs ('x'), got 2")),
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
