"""The torch side of ortdlpack.torch_module (_torch_module.py), imported on its first call: torch is imported here.

The module calls an operator, ``ortdlpack::run(int session, Tensor[] inputs) -> Tensor[]`` (``ortdlpack::run_tracked``
where an input requires grad): the session is an id of the registry compiled code names sessions by. Its kernel is one
C++ function (python/src/torch_kernel.cc), registered as the operator's Python kernel: it runs the session on the inputs
where they are and hands ORT's outputs to torch through its C exchange API, no copy either way, no Python frame in
between; code Inductor generates calls it directly where _torch_inductor.py's lowering is used. Its fake implementation
derives the outputs' shapes and dtypes from the model (ShapeRules in the core): a size the inputs give stays that
input's (symbolic) size, a size only the run tells is an unbacked symbol. ONNX Runtime computes no gradients: backward
raises."""

from __future__ import annotations

import torch

from torch import is_grad_enabled

from . import _ortdlpack, _torch_inductor
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
    outputs, pending, device_input = _ortdlpack._derive_shapes(session, [_dtype_name(x.dtype) for x in inputs], shapes)
    if symbolic:
        for i, axis, expected, message in pending:
            other = expected if isinstance(expected, int) else inputs[expected[0]].shape[expected[1]]
            torch._check(inputs[i].shape[axis] == other, lambda message=message: message)
    return outputs, torch.device("cpu") if device_input is None else inputs[device_input].device


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
    _torch_inductor.register_once_inductor_is_loaded()  # compiling: Inductor may lower the graph next
    compiled = lookup(session)
    shapes, device = _derive(session, inputs, True)
    results = []
    for shape, dtype in zip(shapes, compiled.torch_dtypes):
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

# Code Inductor generates calls the kernels directly where _torch_inductor.py's lowering is used: registered here
# where Inductor is loaded already, else by the first call of the fake implementation once it is.
_torch_inductor.register_once_inductor_is_loaded()


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
