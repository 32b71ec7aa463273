#!/usr/bin/env python3
"""atheris harness for the Python protocol of ortdlpack: arbitrary keyword combinations (and a few positional
mistakes) to ``ortdlpack.Tensor.__dlpack__`` / ``__dlpack_device__`` and ``ortdlpack.from_dlpack``.

The extension module itself is not coverage-instrumented (atheris sees Python code only); the harness's own
functions are instrumented, so the fuzzer is guided by which outcome (accepted, which error, which path) each
argument combination reaches.

The contract checked: every call either succeeds or raises one of the exceptions the Array API standard allows for
DLPack (TypeError, ValueError, BufferError, RuntimeError, NotImplementedError); anything else (another exception
type, a crash, a hang) is a finding. What succeeds is checked too: a capsule round-trips to the same values.

Run (scripts/fuzz.sh does this):  .venv/bin/python fuzz/fuzz_protocol.py -max_total_time=600 CORPUS_DIR
"""
import os
import sys

import atheris

with atheris.instrument_imports():
    import numpy as np
    import ortdlpack as od

CANARY = os.environ.get("ORTDLPACK_FUZZ_CANARY") is not None  # scripts/fuzz.sh --self-test
ALLOWED = (TypeError, ValueError, BufferError, RuntimeError, NotImplementedError)
DTYPES = [np.float32, np.float64, np.int8, np.int32, np.int64, np.uint8, np.bool_, np.float16, np.complex64]


@atheris.instrument_func
def pick_value(fdp):
    """An argument value: the right kinds, wrong kinds, and edge values."""
    choice = fdp.ConsumeIntInRange(0, 14)
    if choice == 0:
        return None
    if choice == 1:
        return fdp.ConsumeBool()
    if choice == 2:
        return fdp.ConsumeIntInRange(-(2**70), 2**70)
    if choice == 3:
        return (fdp.ConsumeIntInRange(-3, 3), fdp.ConsumeIntInRange(-3, 3))
    if choice == 4:
        return (1, fdp.ConsumeIntInRange(0, 5))  # a plausible max_version
    if choice == 5:
        return (fdp.ConsumeIntInRange(1, 20), fdp.ConsumeIntInRange(-1, 3))  # a DLPack device
    if choice == 6:
        return fdp.ConsumeUnicodeNoSurrogates(8)
    if choice == 7:
        return fdp.ConsumeFloat()
    if choice == 8:
        return tuple(fdp.ConsumeIntInRange(-2, 2) for _ in range(fdp.ConsumeIntInRange(0, 4)))
    if choice == 9:
        return (1, 0)  # kDLCPU, 0
    if choice == 10:
        return object()
    if choice == 11:
        return [fdp.ConsumeIntInRange(0, 3)]
    if choice == 12:
        return -1
    if choice == 13:
        return b"\x00"
    return fdp.ConsumeIntInRange(0, 3)


@atheris.instrument_func
def pick_kwargs(fdp, names):
    kwargs = {}
    for name in names:
        if fdp.ConsumeBool():
            kwargs[name] = pick_value(fdp)
    if fdp.ConsumeIntInRange(0, 15) == 0:
        kwargs[fdp.ConsumeUnicodeNoSurrogates(6) or "bogus"] = pick_value(fdp)
    return kwargs


@atheris.instrument_func
def pick_array(fdp):
    dtype = DTYPES[fdp.ConsumeIntInRange(0, len(DTYPES) - 1)]
    ndim = fdp.ConsumeIntInRange(0, 3)
    shape = tuple(fdp.ConsumeIntInRange(0, 4) for _ in range(ndim))
    a = (np.arange(int(np.prod(shape)) if shape else 1) % 7).astype(dtype).reshape(shape)
    if ndim >= 2 and fdp.ConsumeBool():
        a = a.T  # non-compact
    if ndim >= 1 and fdp.ConsumeBool():
        a = a[::-1]  # negative strides
    if fdp.ConsumeIntInRange(0, 7) == 0:
        a = a.copy()
        a.flags.writeable = False
    return a


@atheris.instrument_func
def test_one(data):
    if CANARY and data.startswith(b"CANARY"):
        raise AssertionError("the self-test's canary input (a finding on purpose)")
    fdp = atheris.FuzzedDataProvider(data)
    src = pick_array(fdp)
    try:
        t = od.from_dlpack(src, **pick_kwargs(fdp, ("device", "copy")))
    except ALLOWED:
        return
    if fdp.ConsumeBool():
        try:
            t.__dlpack_device__()
        except ALLOWED:
            pass
    positional = [pick_value(fdp)] if fdp.ConsumeIntInRange(0, 15) == 0 else []
    kwargs = pick_kwargs(fdp, ("stream", "max_version", "dl_device", "copy"))
    try:
        cap = t.__dlpack__(*positional, **kwargs)
    except ALLOWED:
        return
    # A capsule we produced must import back (ortdlpack and numpy) with the same values, once.
    mode = fdp.ConsumeIntInRange(0, 2)
    try:
        if mode == 0:
            back = od.from_dlpack(cap, **pick_kwargs(fdp, ("device", "copy")))
            back = np.from_dlpack(back)
        else:
            back = np.from_dlpack(t)
    except ALLOWED:
        return
    if back.shape != src.shape or not np.array_equal(back, src):
        raise AssertionError(f"round trip changed the values: {src!r} -> {back!r} ({kwargs})")


def main():
    atheris.Setup(sys.argv, test_one)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
