"""ortdlpack.InferenceSession: onnxruntime's InferenceSession, whose run() also takes DLPack tensors.

A subclass of ``onnxruntime.InferenceSession``: the constructor, ``providers=None``, the fallback, ``set_providers``,
``io_binding``, ``run_with_ort_values``, ``run_async``, profiling, every ``get_*`` and every exception are
onnxruntime's own. What it adds: ``run`` reads feeds of any DLPack framework where they are and returns outputs in
the caller's framework (``output_type=``, ``outputs=``, ``device=``), ``bind()`` plans a run once, and plugin-EP
devices are found by the names users write. The decisions are the C++ core's (``_ortdlpack``).
"""

from __future__ import annotations

import onnxruntime as _ort

from . import _ortdlpack


class InferenceSession(_ort.InferenceSession):
    """``onnxruntime.InferenceSession`` (``isinstance`` holds: every method, attribute, default and exception of
    onnxruntime's is there and behaves as onnxruntime's does), whose ``run`` also takes DLPack tensors of any
    framework zero-copy and returns outputs in the caller's framework.

    ``output_type``: the default of ``run()`` and ``bind()`` (``None``: like the feeds). ``providers`` take the names
    users write ("webgpu", "qnn", "cuda", an EP's own name: an installed EP package is registered, once, under its EP's
    name); ``ep`` / ``ep_options``: one provider, as ``ortdlpack.Session`` takes it."""

    def __init__(self, path_or_bytes, sess_options=None, providers=None, provider_options=None, *,
                 output_type: str | None = None, ep: str | None = None, ep_options: dict | None = None,
                 **kwargs) -> None:
        _ortdlpack._check_output_type(output_type)
        self._ortdlpack_output_type = output_type
        # The names users write ("webgpu", "qnn", ...) as onnxruntime takes them, EP packages registered as needed;
        # ep / ep_options: one EP, the shorthand of ortdlpack.Session.
        sess_options, providers, provider_options = _ortdlpack._onnxruntime_providers(
            sess_options, providers, provider_options, ep, ep_options)
        super().__init__(path_or_bytes, sess_options, providers, provider_options, **kwargs)

    # onnxruntime's run(output_names, input_feed, run_options=None, *, outputs=None, in_place=None, device=None,
    # output_type=None) and bind(feeds, output_names=None, *, ...): C++ methods (no Python frame per call), their
    # signatures and documentation their own.
    run = _ortdlpack._inference_session_run
    bind = _ortdlpack._inference_session_bind
