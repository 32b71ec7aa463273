"""A session registered for compiled code (torch's operator, XLA's FFI call), shared by torch_module and
jax_function: the model or ortdlpack.Session it wraps, the id compiled graphs carry, and the call convention
(inputs positionally in the model's order, or by name). The registration lives as long as this object, in the one
registry of them (the core's src/compiled_sessions.h), which borrows it, and keeps its session alive for a run that holds
the entry when it goes."""

from __future__ import annotations

import os
import weakref

from . import _ortdlpack
from ._ortdlpack import Session


def lookup(session_id: int) -> CompiledSession:
    """The live registration of `session_id`; ValueError (the registry's message) once it was released."""
    return _ortdlpack._compiled_session(session_id)


class CompiledSession:
    def __init__(self, model_or_session, session_kwargs: dict, framework: str, undetermined_allowed: bool):
        if isinstance(model_or_session, Session):
            if session_kwargs:
                raise TypeError(
                    f"{framework}: keyword arguments ({', '.join(session_kwargs)}) create a session from a model; "
                    "an ortdlpack.Session was given"
                )
            self.session = model_or_session
        elif isinstance(model_or_session, (str, bytes, bytearray, memoryview, os.PathLike)):
            self.session = Session(model_or_session, **session_kwargs)
        else:
            raise TypeError(
                f"{framework}: model_or_session must be a model (a path or the model's bytes) or an "
                f"ortdlpack.Session, not {type(model_or_session).__name__}"
            )
        self.framework = framework
        self.input_names = self.session.input_names
        self.output_names = self.session.output_names
        self.id, self.output_dtypes = _ortdlpack._compile_session(self, framework, undetermined_allowed)
        weakref.finalize(self, _ortdlpack._release_compiled, self.id)

    def order(self, args: tuple, kwargs: dict) -> list:
        """The inputs in the model's order, from positional arguments and/or arguments by input name, up to the last
        one given: which inputs a call may leave out is the core's rule (the kernel's, the tracer's)."""
        names = self.input_names
        values = list(args) + [None] * max(0, len(names) - len(args))
        for name, value in kwargs.items():
            if name not in names:
                raise TypeError(f"{self.framework}: the model has no input '{name}' (its inputs: {names})")
            i = names.index(name)
            if values[i] is not None:
                raise TypeError(f"{self.framework}: input '{name}' given twice")
            values[i] = value
        while values and values[-1] is None:
            values.pop()
        if any(v is None for v in values):
            left_out = [n for n, v in zip(names, values) if v is None]
            raise TypeError(f"{self.framework}: inputs {left_out} are left out before inputs given after them")
        _ortdlpack._check_positional(self.id, len(values))  # the core's rule: ValueError for too many, too few
        return values
