"""The torch side of ortdlpack.torch_module (_torch_op.py), imported on its first call: torch is imported here.

The module calls an operator, ``ortdlpack::run(int session, Tensor[] inputs) -> Tensor[]`` (``ortdlpack::run_tracked``
where an input requires grad): the session is an id of the registry compiled code names sessions by. Its kernel is
one C++ function (python/src/torch_kernel.cc), registered as the operator's Python kernel: it runs the session on the
inputs where they are and hands ORT's outputs to torch through its C exchange API, no copy either way, no Python frame
in between; code Inductor generates calls it directly (_call_directly_from_inductor). Its fake implementation
derives the outputs' shapes and dtypes from the model (ShapeRules in the core): a size the inputs give stays that
input's (symbolic) size, a size only the run tells is an unbacked symbol. ONNX Runtime computes no gradients:
backward raises."""

from __future__ import annotations

import sys

import torch

from torch import is_grad_enabled

from . import _ortdlpack
from ._compiled import CompiledSession, lookup


def _dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def _torch_dtypes(compiled: CompiledSession) -> list[torch.dtype]:
    dtypes = []
    for name, dtype in zip(compiled.output_names, compiled.output_dtypes):
        if not isinstance(getattr(torch, dtype, None), torch.dtype):
            raise TypeError(f"torch_module: output '{name}' is {dtype}, which torch has no dtype for")
        dtypes.append(getattr(torch, dtype))
    return dtypes


def _derive(session: int, inputs: list[torch.Tensor], symbolic: bool):
    shapes = [[d if isinstance(d, int) else None for d in x.shape] for x in inputs]
    outputs, pending = _ortdlpack._derive_shapes(session, [_dtype_name(x.dtype) for x in inputs], shapes)
    if symbolic:
        for i, axis, expected, message in pending:
            other = expected if isinstance(expected, int) else inputs[expected[0]].shape[expected[1]]
            torch._check(inputs[i].shape[axis] == other, lambda message=message: message)
    return outputs


# Two operators, one kernel. `run`, for calls no gradient can flow through, is defined with torch.library.Library
# and its kernel registered as it is: torch.library.custom_op would wrap it in Python functions (an autograd kernel
# and its redispatch) that cost more than running a small model. `run_tracked`, for calls where an input requires
# grad, is a custom_op whose autograd kernel makes backward raise ONNX Runtime's reason (no_gradient below).
_SCHEMA = "(int session, Tensor[] inputs) -> Tensor[]"
_library = torch.library.Library("ortdlpack", "FRAGMENT")
_library.define("run" + _SCHEMA)
_library.impl("run", _ortdlpack._torch_run, "CompositeExplicitAutograd")
run_tracked = torch.library.custom_op(
    "ortdlpack::run_tracked", lambda session, inputs: _ortdlpack._torch_run(session, inputs), mutates_args=(),
    schema=_SCHEMA,
)


def _run_fake(session: int, inputs: list[torch.Tensor]) -> list[torch.Tensor]:
    _call_directly_from_inductor()  # compiling: the fake runs before Inductor lowers the graph
    compiled = lookup(session)
    device = inputs[0].device if inputs else torch.device("cpu")
    results = []
    for shape, dtype in zip(_derive(session, inputs, True), compiled.torch_dtypes):
        dims = []
        for d in shape:
            if isinstance(d, int):
                dims.append(d)
            elif d is None:  # only the run tells it: an unbacked symbol
                dims.append(torch.library.get_ctx().new_dynamic_size())
            else:
                dims.append(inputs[d[0]].shape[d[1]])
        results.append(torch.empty(dims, dtype=dtype, device=device))
    return results


torch.library.register_fake("ortdlpack::run", _run_fake, lib=_library)
run_tracked.register_fake(_run_fake)

# What Inductor's Python wrapper names the kernels by (imported in the wrapper's module: `from ortdlpack._ortdlpack
# import _torch_run as _ortdlpack_torch_run`).
_DIRECT = "_ortdlpack_torch_run"
_INTO = "_ortdlpack_torch_run_into"
_lowered = False


def _call_directly_from_inductor() -> None:
    """Makes code Inductor generates call run's kernels itself, not torch.ops.ortdlpack.run.default: that call
    converts the arguments to the dispatcher's values and back to Python objects for the kernel, and the outputs
    twice as well, about 3 us, as much as running a small model (docs/python.md, "What it costs"). Nothing is lost:
    run's kernel is the one for every dispatch key, and an Inductor graph has no autograd.
      A model of one output whose size the inputs' sizes give is written into a buffer Inductor allocates
    (_torch_run_into): Inductor plans that memory with its own, and its next kernels read it without checking what
    came back (ORT refuses a buffer that is not the output's size). Other models: _torch_run, whose outputs Inductor
    checks. The C++ wrapper (AOTInductor) keeps the dispatcher. Registered once, when Inductor is loaded: importing it
    costs seconds, and torch.compile loads it before any graph is traced."""
    global _lowered
    if _lowered or "torch._inductor.lowering" not in sys.modules:
        return
    _lowered = True
    try:  # Inductor's internals: a torch without them keeps the dispatcher's call
        from torch._inductor import ir, lowering
        from torch._inductor.virtualized import V
        from torch.fx.experimental.symbolic_shapes import free_unbacked_symbols

        op = torch.ops.ortdlpack.run.default
        create, register, into_base = ir.FallbackKernel.create, lowering.register_lowering, ir.ExternKernelOut
    except (ImportError, AttributeError):
        return

    def with_import(codegen, name):
        def codegen_with_import(wrapper):
            wrapper.add_import_once(f"from ortdlpack._ortdlpack import {name.removeprefix('_ortdlpack')} as {name}")
            codegen(wrapper)

        return codegen_with_import

    def direct(kernel) -> None:
        codegen = kernel.codegen  # (read first: an Inductor without it fails before the node is changed)
        kernel.set_python_kernel_name(_DIRECT)
        kernel.codegen = with_import(codegen, _DIRECT)

    def into(session, inputs):
        """The node writing the one output into Inductor's buffer: `_ortdlpack_torch_run_into(*inputs, session,
        out=buf)`; None for a model of several outputs or a size only the run tells. Creating the node adds it to
        the graph: every step that may fail on another Inductor comes first, so a failure leaves the graph as it was."""
        fakes = V.graph.current_node.meta["val"]  # the fake implementation's outputs
        if len(fakes) != 1 or free_unbacked_symbols(fakes[0].shape):
            return None
        fake = fakes[0]
        size = [s.node.expr if isinstance(s, torch.SymInt) else s for s in fake.shape]
        layout = ir.FixedLayout(fake.device, fake.dtype, size, ir.FlexibleLayout.contiguous_strides(size))
        contiguous = [ir.ExternKernel.require_contiguous(x) for x in inputs]
        node = into_base(layout, contiguous, [session], python_kernel_name=_INTO)
        node.codegen = with_import(node.codegen, _INTO)
        return ir.TensorBox.create(node)

    @register(op, type_promotion_kind=None)
    def _lower(session, inputs):
        python = not V.graph.cpp_wrapper and not getattr(V.graph, "fx_wrapper", False)
        if python:
            try:
                node = into(session, inputs)
                if node is not None:
                    return [node]
            except (AttributeError, IndexError, KeyError, TypeError):
                pass  # another Inductor: the call below
        outputs = create(op, session, inputs)
        if python:
            try:
                direct(outputs[0].inputs[0])  # the outputs are the items (MultiOutput) of the kernel's list
            except (AttributeError, IndexError, TypeError):
                pass  # another Inductor: the node keeps the dispatcher's call
        return [x.wrap_for_lowering() for x in outputs]


_call_directly_from_inductor()


@torch.library.custom_op("ortdlpack::no_gradient", mutates_args=())
def no_gradient(session: int, grads: list[torch.Tensor], inputs: list[torch.Tensor]) -> list[torch.Tensor]:
    """What backward through ortdlpack::run runs: an error, when (and only when) a gradient is asked for. It takes
    the outputs' gradients so that a compiler's partitioner keeps it in the backward graph."""
    names = lookup(session).input_names
    raise RuntimeError(
        f"ortdlpack.torch_module: backward through the ONNX model (inputs {list(names)}) is not possible: ONNX "
        "Runtime computes no gradients. Detach its inputs (or run it under torch.no_grad()) where no gradient "
        "must flow through it."
    )


@no_gradient.register_fake
def _no_gradient_fake(session: int, grads: list[torch.Tensor], inputs: list[torch.Tensor]) -> list[torch.Tensor]:
    return [torch.empty_like(x) for x in inputs]


def _setup_context(ctx, inputs, output):
    ctx.session = inputs[0]
    ctx.save_for_backward(*inputs[1])


def _backward(ctx, grads):
    return None, no_gradient(ctx.session, [g for g in grads if g is not None], list(ctx.saved_tensors))


run_tracked.register_autograd(_backward, setup_context=_setup_context)
# forward's names for what it calls: compiled code checks every object its source reached on each call (dynamo's
# guards), so one global costs one check where torch.ops.ortdlpack.run is a chain of four.
_run = torch.ops.ortdlpack.run
_run_tracked = torch.ops.ortdlpack.run_tracked


class OnnxModule(torch.nn.Module):
    """An ONNX model as a torch.nn.Module (ortdlpack.torch_module): forward takes the model's inputs positionally in
    the model's order or by name, and returns its output, or a tuple of its outputs."""

    def __init__(self, compiled: CompiledSession):
        super().__init__()
        compiled.torch_dtypes = _torch_dtypes(compiled)
        self._compiled = compiled
        self._session_id = compiled.id
        self._arity = len(compiled.input_names)
        self._single = len(compiled.output_names) == 1

    @property
    def session(self):
        """The ortdlpack.Session the module runs."""
        return self._compiled.session

    def forward(self, *args, **kwargs):
        # All inputs positionally, the usual call, reads only this module's ints (order() would give them as they
        # are): compiled code checks what forward reads on every call, and the names and methods of _compiled would
        # be a dozen checks more (1 us of ~18).
        if kwargs or len(args) != self._arity:
            args = self._compiled.order(args, kwargs)
        inputs = [x.contiguous() for x in args]
        tracked = is_grad_enabled() and any(x.requires_grad for x in inputs)  # (compilers guard on it)
        outputs = (_run_tracked if tracked else _run)(self._session_id, inputs)
        return outputs[0] if self._single else tuple(outputs)
