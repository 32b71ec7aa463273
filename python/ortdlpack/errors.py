"""The exceptions ortdlpack's session APIs raise for ONNX Runtime's failures: onnxruntime's own classes, by their
names (``ortdlpack.errors.InvalidArgument`` is ``onnxruntime.capi.onnxruntime_pybind11_state.InvalidArgument``;
``Fail``, ``NoSuchFile``, ``NotImplemented``, ...), raised with onnxruntime's messages, so code written for onnxruntime
catches them unchanged. Only the classes the installed onnxruntime has are here."""

from ._ortdlpack import _onnxruntime_errors

globals().update(_onnxruntime_errors)
__all__ = sorted(_onnxruntime_errors)
