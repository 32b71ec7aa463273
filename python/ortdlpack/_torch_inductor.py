"""Code Inductor generates calls ortdlpack::run's kernels itself: a lowering of the operator, registered with Inductor
once it is loaded. The one module of ortdlpack that touches torch's private Inductor internals.

Without it, compiled code calls the operator through torch's dispatcher, as it calls any custom operator: the same
kernel and the same results, but the dispatcher converts the arguments to its values and back to Python objects for
the kernel, and the outputs twice as well, and ORT allocates the outputs, which Inductor then checks: about 10 us more
a call (bench/bench_frameworks.py's tiny model compiled: 1.3-1.5x of eager instead of 0.9x). Nothing is lost by
calling the kernels directly: run's kernel is the one for every dispatch key, and an Inductor graph has no autograd.

What it relies on, none of it public or promised by torch:
- ``torch._inductor.lowering.register_lowering`` of an OpOverload, and ``ir.FallbackKernel.create`` making the
  dispatcher's node, whose outputs are MultiOutput items of one kernel node (``.inputs[0]``) with ``wrap_for_lowering``;
- ``ir.ExternKernel.set_python_kernel_name`` and ``.codegen(wrapper)``, with ``wrapper.add_import_once``;
- ``ir.ExternKernelOut(layout, inputs, constant_args, python_kernel_name=)``, ``ir.FixedLayout``,
  ``ir.FlexibleLayout.contiguous_strides``, ``ir.ExternKernel.require_contiguous`` and ``ir.TensorBox.create``;
- ``V.graph``'s ``current_node.meta["val"]`` (the fake implementation's outputs), ``cpp_wrapper`` and ``fx_wrapper``,
  and ``torch.fx.experimental.symbolic_shapes.free_unbacked_symbols``.
They change between torch releases (torch 2.10's MultiOutput has no ``wrap_for_lowering``: this lowering fails every
compile there), so the lowering is used only on the torch releases ``TESTED`` names, where
tests/python/test_torch_inductor.py reads the code Inductor generates with it: torch 2.15, the version
requirements.txt pins (scripts/test.sh). Where it is not used (another torch, ``ORTDLPACK_TORCH_INDUCTOR=0``, or an
Inductor that refuses it) the reason is logged once, to the logger ``ortdlpack._torch_inductor``, and compiled code
calls the operator through the dispatcher: so on torch 2.10, the oldest torch_module supports, whose tests
(scripts/ci_oldest_torch.sh) pass that way."""

from __future__ import annotations

import logging
import os
import re
import sys

import torch

# The torch releases (major, minor: oldest, newest) the lowering is tested on. Widen it only with a run of
# tests/python/test_torch_inductor.py on the torch added.
TESTED = ((2, 15), (2, 15))
# ORTDLPACK_TORCH_INDUCTOR=0 turns the lowering off: to tell a bug in it from one in the kernel, or for a profile that
# should show the operator.
ENV = "ORTDLPACK_TORCH_INDUCTOR"

# What Inductor's Python wrapper names the kernels by (imported in the wrapper's module: `from ortdlpack._ortdlpack
# import _torch_run as _ortdlpack_torch_run`).
DIRECT = "_ortdlpack_torch_run"
INTO = "_ortdlpack_torch_run_into"

_log = logging.getLogger(__name__)
_logged: set[str] = set()  # the keys of what _log_once said
_decided = False


def _log_once(key: str, level: int, message: str) -> None:
    if key not in _logged:
        _logged.add(key)
        _log.log(level, "ortdlpack.torch_module: %s", message)


def off_because(version: str, setting: str | None) -> str | None:
    """Why the lowering is not used with torch `version` and ORTDLPACK_TORCH_INDUCTOR `setting` (None: unset), or
    None where it is used."""
    if setting == "0":
        return f"{ENV}=0"
    found = re.match(r"(\d+)\.(\d+)", version)
    if found is None or not TESTED[0] <= (int(found[1]), int(found[2])) <= TESTED[1]:
        tested = "-".join(dict.fromkeys(f"{major}.{minor}" for major, minor in TESTED))
        return (f"torch {version} is not a release the Inductor lowering is tested on ({tested}; {ENV}=0 makes this "
                "warning an INFO record)")
    return None


def register_once_inductor_is_loaded() -> None:
    """Registers the lowering the first time it is called with Inductor loaded (importing Inductor costs seconds, and
    torch.compile loads it before any graph is traced), or logs why not. The operator's fake implementation calls it:
    the fake runs before Inductor lowers the graph."""
    global _decided
    if _decided or "torch._inductor.lowering" not in sys.modules:
        return
    _decided = True
    setting = os.environ.get(ENV)
    if setting not in (None, "", "0", "1"):
        _log_once("setting", logging.WARNING, f"{ENV}={setting!r} is not 0 or 1: taken as unset")
    why = off_because(torch.__version__, setting)
    if why is None:
        try:
            _register()
            return
        except Exception as e:  # noqa: BLE001  (any failure of Inductor's internals: the dispatcher, logged below)
            why = f"registering the Inductor lowering failed ({type(e).__name__}: {e})"
    level = logging.INFO if setting == "0" else logging.WARNING  # (asked for: no warning)
    _log_once("register", level, f"{why}: compiled code calls ortdlpack::run through torch's dispatcher (the same "
              "results, slower: ~10 us more a call)")


def _register() -> None:
    """The lowering of ortdlpack::run: a model of one output whose size the inputs' sizes give is written into a
    buffer Inductor allocates (_torch_run_into): Inductor plans that memory with its own, and its next kernels read
    it without checking what came back (ORT refuses a buffer that is not the output's size). Other models: _torch_run,
    whose outputs Inductor checks. The C++ wrapper (AOTInductor) and the FX wrapper keep the dispatcher's call."""
    from torch._inductor import ir, lowering
    from torch._inductor.virtualized import V
    from torch.fx.experimental.symbolic_shapes import free_unbacked_symbols

    op = torch.ops.ortdlpack.run.default
    create, into_base = ir.FallbackKernel.create, ir.ExternKernelOut

    def with_import(codegen, name):
        def codegen_with_import(wrapper):
            wrapper.add_import_once(f"from ortdlpack._ortdlpack import {name.removeprefix('_ortdlpack')} as {name}")
            codegen(wrapper)

        return codegen_with_import

    def direct(kernel) -> None:
        codegen = kernel.codegen  # (read first: an Inductor without it fails before the node is changed)
        kernel.set_python_kernel_name(DIRECT)
        kernel.codegen = with_import(codegen, DIRECT)

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
        node = into_base(layout, contiguous, [session], python_kernel_name=INTO)
        node.codegen = with_import(node.codegen, INTO)
        return ir.TensorBox.create(node)

    @lowering.register_lowering(op, type_promotion_kind=None)
    def _lower(session, inputs):
        python = not V.graph.cpp_wrapper and not getattr(V.graph, "fx_wrapper", False)
        if python:
            try:
                node = into(session, inputs)
                if node is not None:
                    return [node]
            except (AttributeError, IndexError, KeyError, TypeError) as e:
                _log_once("into", logging.WARNING, f"Inductor's buffer for a model's one output could not be made "
                          f"({type(e).__name__}: {e}): compiled code calls _torch_run, which allocates it")
        outputs = create(op, session, inputs)
        if python:
            try:
                direct(outputs[0].inputs[0])  # the outputs are the items (MultiOutput) of the kernel's list
            except (AttributeError, IndexError, TypeError) as e:
                _log_once("direct", logging.WARNING, f"Inductor's node of ortdlpack::run could not be renamed "
                          f"({type(e).__name__}: {e}): compiled code calls it through torch's dispatcher")
        return [x.wrap_for_lowering() for x in outputs]
