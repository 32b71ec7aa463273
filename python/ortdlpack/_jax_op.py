"""ortdlpack.jax_function: an ONNX model as a function of jax.Arrays that jax.jit compiles in.

The function is one ``jax.ffi.ffi_call`` to ``ortdlpack_run``, a C++ XLA FFI handler built into the extension
(python/src/xla_ffi.cc): XLA hands it its buffers, which it runs the session on, ORT writing the results into XLA's
result buffers; no copy, no Python, no host round trip. The result shapes come from the model at trace time
(ShapeRules in the core): a model with an output whose size only the run tells is refused when it is wrapped, as XLA
needs every shape before it runs. vmap runs the model once per mapped element (``vmap_method="sequential"``), which
any model allows."""

from __future__ import annotations

from . import _ortdlpack
from ._compiled import CompiledSession

_TARGET = "ortdlpack_run"
_registered: set[str] = set()


def _register_target(jax) -> None:
    """Registers the handler with XLA once per platform this jax has (cpu; CUDA where jaxlib has it)."""
    platforms = {"cpu"} | ({"CUDA"} if any(d.platform == "gpu" for d in jax.devices()) else set())
    handlers = _ortdlpack._xla_ffi_handlers()
    for platform in platforms - _registered:
        jax.ffi.register_ffi_target(_TARGET, handlers[platform], platform=platform)
        _registered.add(platform)


def jax_function(model_or_session, **session_kwargs):
    """An ONNX model as a function of jax.Arrays, usable under jax.jit and jax.vmap, zero-copy.

    model_or_session: a model (path or bytes; ``session_kwargs`` are ortdlpack.Session's keyword arguments) or an
    ortdlpack.Session. The function takes the model's inputs positionally in the model's order or by name and
    returns its output, or a tuple of its outputs. Raises, naming the input or output, for a model whose inputs or
    outputs are not tensors, or with an output whose shape its inputs' shapes do not determine."""
    import jax
    import jax.numpy as jnp
    import numpy as np

    compiled = CompiledSession(model_or_session, session_kwargs, "jax_function", False)
    _register_target(jax)
    session_id = np.uint64(compiled.id)
    single = len(compiled.output_names) == 1

    def call(*args, **kwargs):
        inputs = [jnp.asarray(x) for x in compiled.order(args, kwargs)]
        shapes, _, _ = _ortdlpack._derive_shapes(compiled.id, [x.dtype.name for x in inputs], [x.shape for x in inputs])
        results = jax.ffi.ffi_call(
            _TARGET,
            [jax.ShapeDtypeStruct(tuple(s), d) for s, d in zip(shapes, compiled.output_dtypes)],
            vmap_method="sequential",
        )(*inputs, session=session_id)
        return results[0] if single else tuple(results)

    call.session = compiled.session
    call._compiled = compiled  # the registration lives as long as the function
    return call
