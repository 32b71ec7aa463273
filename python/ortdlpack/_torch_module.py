"""ortdlpack.torch_module: an ONNX model as a torch.nn.Module that torch.compile and torch.export see through.
Importing ortdlpack does not import torch: _torch_operator.py (the operator and the module; _torch_inductor.py, the
operator's lowering in Inductor) is imported on the first call."""

from __future__ import annotations


def torch_module(model_or_session, **session_kwargs):
    """An ONNX model as a torch.nn.Module that torch.compile (fullgraph) and torch.export trace through, zero-copy.

    model_or_session: a model (path or bytes; ``session_kwargs`` are ortdlpack.Session's keyword arguments:
    providers=, sess_options=, ...) or an ortdlpack.Session. forward takes the model's inputs positionally in the
    model's order or by name and returns its output, or a tuple of its outputs. Raises, naming the input or output,
    for a model whose inputs or outputs are not tensors or whose outputs have no declared rank."""
    from ._compiled import CompiledSession
    from ._torch_operator import OnnxModule

    return OnnxModule(CompiledSession(model_or_session, session_kwargs, "torch_module", True))
