"""The exceptions ortdlpack raises for ONNX Runtime's failures: for each of onnxruntime's classes
(``onnxruntime.capi.onnxruntime_pybind11_state.InvalidArgument``, ``Fail``, ``NoSuchFile``, ``NotImplemented``, ...)
a class of the same name that derives from it and from the Python class of ortdlpack's conventions
(``ValueError``, ``BufferError`` or ``RuntimeError``): code written for onnxruntime catches them, and so does code
written for ortdlpack. Only the classes the installed onnxruntime has are here."""

from ._ortdlpack import _onnxruntime_errors

globals().update(_onnxruntime_errors)
__all__ = sorted(_onnxruntime_errors)
