"""Per-tensor cost of handing a tensor between ONNX Runtime and torch / numpy / jax, measured in one run.

ortdlpack (Tensor.__dlpack__, and the DLPack 1.3 C exchange API) beside upstream onnxruntime's own
OrtValue.__dlpack__ / OrtValue.from_dlpack, and beside the copy path .numpy() + torch.from_numpy, for a 4 KiB and a
64 MiB float32 tensor. Prints one markdown table; "speed-up" is upstream DLPack time / ortdlpack time.

    python bench/bench_python.py [--quick]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import onnxruntime as ort  # noqa: E402
import torch  # noqa: E402

import ortdlpack as od  # noqa: E402


def per_call_us(fns, budget_s: float) -> list[float]:
    """Per-call µs of each of `fns`: best of 7 rounds of the mean time of one call, the rounds of the functions
    interleaved, so that load changes on the machine hit all of them alike (ratios stay fair on a busy machine)."""
    loops = []
    for fn in fns:
        fn()
        t0 = time.perf_counter()
        n = 0
        while time.perf_counter() - t0 < 0.02:
            fn()
            n += 1
        per = max((time.perf_counter() - t0) / max(n, 1), 1e-9)
        loops.append(max(1, int(budget_s / 7 / per)))
    best = [float("inf")] * len(fns)
    for _ in range(7):
        for i, fn in enumerate(fns):
            t = time.perf_counter()
            for _ in range(loops[i]):
                fn()
            best[i] = min(best[i], (time.perf_counter() - t) / loops[i] * 1e6)
    return best


def fmt(us: float | None) -> str:
    if us is None:
        return "n/a"
    return f"{us:.2f}" if us < 100 else f"{us:.0f}"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="shorter runs (noisier)")
    args = ap.parse_args()
    budget = 0.15 if args.quick else 0.6

    exchange = od._ortdlpack._exchange
    rows = []
    for label, n in (("4 KiB", 1024), ("64 MiB", 16 * 1024 * 1024)):
        a = np.arange(n, dtype=np.float32)
        v = ort.OrtValue.ortvalue_from_numpy(a)  # upstream ORT tensor
        t = od.from_dlpack(v)  # the same ORT memory as an ortdlpack.Tensor
        x = torch.from_numpy(a.copy())
        j = jnp.asarray(a)
        nb = np.array(a)

        def row(what, call, ours, upstream, copy_path):
            rows.append((label, what, call, *per_call_us([ours, upstream, copy_path], budget)))

        # ORT -> framework
        row("ORT -> torch", "`torch.from_dlpack(t)`",
            lambda: torch.from_dlpack(t), lambda: torch.from_dlpack(v),
            lambda: torch.from_numpy(v.numpy()))
        row("ORT -> torch (C exchange API)", "`_exchange(t, torch.Tensor)`",
            lambda: exchange(t, torch.Tensor), lambda: torch.from_dlpack(v),
            lambda: torch.from_numpy(v.numpy()))
        row("ORT -> numpy", "`np.from_dlpack(t)`",
            lambda: np.from_dlpack(t), lambda: np.from_dlpack(v),
            lambda: v.numpy())
        row("ORT -> numpy (`.numpy()`)", "`t.numpy()`",
            lambda: t.numpy(), lambda: v.numpy(),
            lambda: v.numpy())
        row("ORT -> jax", "`jnp.from_dlpack(t)`",
            lambda: jnp.from_dlpack(t), lambda: jnp.from_dlpack(v),
            lambda: jnp.asarray(v.numpy()))
        # framework -> ORT
        row("torch -> ORT (C exchange API)", "`od.from_dlpack(x)`",
            lambda: od.from_dlpack(x), lambda: ort.OrtValue.from_dlpack(x),
            lambda: ort.OrtValue.ortvalue_from_numpy(x.numpy()))
        row("torch -> ORT (`__dlpack__`)", "`od.from_dlpack(x.__dlpack__(max_version=(1, 3)))`",
            lambda: od.from_dlpack(x.__dlpack__(max_version=(1, 3))), lambda: ort.OrtValue.from_dlpack(x),
            lambda: ort.OrtValue.ortvalue_from_numpy(x.numpy()))
        row("torch -> onnxruntime.OrtValue", "`od.as_ortvalue(x)`",
            lambda: od.as_ortvalue(x), lambda: ort.OrtValue.from_dlpack(x),
            lambda: ort.OrtValue.ortvalue_from_numpy(x.numpy()))
        row("numpy -> ORT", "`od.from_dlpack(a)`",
            lambda: od.from_dlpack(nb), lambda: ort.OrtValue.from_dlpack(nb),
            lambda: ort.OrtValue.ortvalue_from_numpy(nb))
        row("numpy -> onnxruntime.OrtValue", "`od.as_ortvalue(a)`",
            lambda: od.as_ortvalue(nb), lambda: ort.OrtValue.from_dlpack(nb),
            lambda: ort.OrtValue.ortvalue_from_numpy(nb))
        row("jax -> ORT", "`od.from_dlpack(j)`",
            lambda: od.from_dlpack(j), lambda: ort.OrtValue.from_dlpack(j),
            lambda: ort.OrtValue.ortvalue_from_numpy(np.asarray(j)))

    print(f"onnxruntime {ort.__version__}, torch {torch.__version__}, numpy {np.__version__}, jax {jax.__version__}, "
          f"ortdlpack {od.__version__}, Python {sys.version.split()[0]}; per-call µs, best of 7 interleaved rounds")
    print()
    print("| size | direction | ortdlpack call | ortdlpack µs | upstream DLPack µs | .numpy() path µs | speed-up vs upstream |")
    print("|---|---|---|---:|---:|---:|---:|")
    for size, what, call, ours, up, copy in rows:
        print(f"| {size} | {what} | {call} | {fmt(ours)} | {fmt(up)} | {fmt(copy)} | {up / ours:.2f}x |")
    # The targets of issue 10: ortdlpack time / upstream time, 4 KiB rows of this run.
    small = {what: (ours, up) for size, what, _, ours, up, _ in rows if size == "4 KiB"}
    print()
    print("| target (4 KiB) | ortdlpack / upstream | limit | met |")
    print("|---|---:|---:|---|")
    for what, limit in (("numpy -> onnxruntime.OrtValue", 1.0), ("ORT -> torch", 0.5),
                        ("ORT -> numpy (`.numpy()`)", 1.0), ("torch -> ORT (C exchange API)", 0.2)):
        ours, up = small[what]
        print(f"| {what} | {ours / up:.2f}x | {limit:.1f}x | {'yes' if ours / up <= limit else 'no'} |")
    sys.stdout.flush()
    # Leave while every tensor is still alive, without interpreter teardown: freeing upstream's OrtValue after
    # jnp.from_dlpack(OrtValue) (the ORT -> jax baseline) lets jax's asynchronous host copy read freed memory, a crash
    # reproduced without ortdlpack (docs/python.md).
    os._exit(0)


if __name__ == "__main__":
    sys.exit(main())
