"""Run a plain ``onnxruntime.InferenceSession`` on DLPack tensors, without copies.

    import ortdlpack, torch
    feat, = ortdlpack.run(feature_session, {"x": torch_images})          # any DLPack producer as a feed
    logits = torch.from_dlpack(ortdlpack.run(head_session, {"feat": feat})[0])   # zero-copy both ways

Every decision (names, types, shapes, devices, staging, destinations, output placement) and every message is the
C++ core's run plan (``include/ortdlpack/run_plan.h``), the same as for ``ortdlpack.Session``; this module only
binds the plan to onnxruntime's public API and runs it.
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping, Sequence

from onnxruntime import InferenceSession, RunOptions

from ._ortdlpack import _IDLE_BINDINGS, _Planner

__all__ = ["run"]

# id(session) -> (weak reference to the session, its planner); an entry goes with its session. A dict lookup by id
# costs a fraction of a WeakKeyDictionary lookup, which makes a weak reference on every call.
_PLANNERS: dict = {}


def _planner(session) -> _Planner:
    """The core's metadata of `session`, read once per session."""
    key = id(session)
    entry = _PLANNERS.get(key)
    if entry is not None and entry[0]() is session:
        return entry[1]
    if not isinstance(session, InferenceSession):
        raise TypeError(f"ortdlpack.run: session must be an onnxruntime.InferenceSession, not {type(session).__name__}")
    planner = _Planner(session)
    try:
        ref = weakref.ref(session, lambda _, key=key: _PLANNERS.pop(key, None))
    except TypeError:  # not weak-referenceable: no cache
        return planner
    _PLANNERS[key] = (ref, planner)
    return planner


def run(session, feeds: Mapping, output_names: Sequence[str] | None = None, *, outputs: Mapping | None = None,
        device=None, run_options=None, output_type: str | None = None) -> list:
    """Runs `session` on `feeds` and returns the outputs (``ortdlpack.Tensor`` s by default), in `output_names`
    order.

    :param session: an ``onnxruntime.InferenceSession``.
    :param feeds: input name -> DLPack producer, ``onnxruntime.OrtValue`` or ``ortdlpack.Tensor``; every model
        input exactly once. Imported without a copy unless ORT cannot hold the layout.
    :param output_names: outputs to return (default: all, in model order).
    :param outputs: output name -> preallocated DLPack destination (e.g. a torch tensor); ORT writes the result
        into it (it must be writable, compact, in memory the session writes, and match the model's type and shape).
        The returned Tensor for that output shares the destination's memory.
    :param device: where outputs without a destination are allocated (anything ``ortdlpack.Device`` takes).
        Default: where the session's execution provider produces them.
    :param run_options: an ``onnxruntime.RunOptions``, passed through.
    :param output_type: what the outputs are made as: ``"ortdlpack"`` (the default: ``ortdlpack.Tensor``),
        ``"torch"``, ``"numpy"``, ``"cupy"``, ``"jax"``, or ``"like_feeds"`` (the framework of the first feed), each
        over the output's memory (torch through its C exchange API, numpy through its C API). ``"numpy"`` places the
        outputs in host memory.
    :raises ValueError: unknown, duplicate or missing names; element type, rank or fixed-dimension mismatch;
        a read-only destination; a device the session cannot produce outputs on.
    :raises BufferError: a destination that would need a copy or that the session cannot write.
    :raises TypeError: a feed that is not a tensor; a `session` that is not an ``onnxruntime.InferenceSession``;
        `run_options` that are not an ``onnxruntime.RunOptions``; an `output_type` that is not a str.
    """
    planner = _planner(session)
    if run_options is not None and not isinstance(run_options, RunOptions):
        raise TypeError(f"ortdlpack.run: run_options must be an onnxruntime.RunOptions or None, not {type(run_options).__name__}")
    plan = planner.run(session, feeds, output_names, outputs, device, run_options, output_type)
    if type(plan) is list:  # a host-only plan, run with session.run
        return plan
    idle = planner.idle
    binding = idle.pop() if idle else session.io_binding()
    try:
        return plan.run(session, binding, run_options)  # outputs converted before the binding is cleared
    finally:
        binding.clear_binding_inputs()
        binding.clear_binding_outputs()  # drops ORT's and the wrapper's references to the caller's memory
        if len(idle) < _IDLE_BINDINGS:
            idle.append(binding)
