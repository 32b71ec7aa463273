"""Per-tensor cost of handing a tensor between ONNX Runtime and torch / numpy / jax, measured in one run.

ortdlpack (Tensor.__dlpack__, and the DLPack 1.3 C exchange API) beside upstream onnxruntime's own
OrtValue.__dlpack__ / OrtValue.from_dlpack, and beside the copy path .numpy() + torch.from_numpy, for a 4 KiB and a
64 MiB float32 tensor, each row's three calls checked to hand over the same values, then timed together in
interleaved rounds (bench/harness.py). Prints the table (median µs per call; "speed-up" is upstream DLPack time /
ortdlpack time) and the targets.

    python bench/bench_python.py [--quick] [--rounds N] [--min-time S] [--json FILE]
"""

from __future__ import annotations

import argparse
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import onnxruntime as ort  # noqa: E402
import torch  # noqa: E402

import ortdlpack as od  # noqa: E402


WAYS = ("ortdlpack", "upstream DLPack", ".numpy() path")


def host(x) -> np.ndarray:
    """What a way returned (a framework's array, an ortdlpack.Tensor, an onnxruntime.OrtValue) as a numpy array."""
    return x.numpy() if isinstance(x, ort.OrtValue) else np.from_dlpack(x)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    args = harness.add_options(parser).parse_args(argv)
    runner = harness.Runner.from_args(args)
    runner.header(f"onnxruntime {ort.__version__}", f"torch {torch.__version__}", f"numpy {np.__version__}",
                  f"jax {jax.__version__}", f"ortdlpack {od.__version__}")

    exchange = od._ortdlpack._testing.exchange
    rows = []
    for label, n in (("4 KiB", 1024), ("64 MiB", 16 * 1024 * 1024)):
        a = np.arange(n, dtype=np.float32)
        v = ort.OrtValue.ortvalue_from_numpy(a)  # upstream ORT tensor
        t = od.from_dlpack(v)  # the same ORT memory as an ortdlpack.Tensor
        x = torch.from_numpy(a.copy())
        j = jnp.asarray(a)
        nb = np.array(a)

        def row(what, call, ours, upstream, copy_path):
            for way, fn in zip(WAYS, (ours, upstream, copy_path)):  # every way hands over the same values
                assert np.array_equal(host(fn()), a), f"{label} {what}: {way}"
            times = runner.compare(f"{label} {what}", zip(WAYS, (ours, upstream, copy_path)))
            rows.append((label, what, call, *(times[w] for w in WAYS)))

        # ORT -> framework
        row("ORT -> torch", "`torch.from_dlpack(t)`",
            lambda: torch.from_dlpack(t), lambda: torch.from_dlpack(v),
            lambda: torch.from_numpy(v.numpy()))
        row("ORT -> torch (C exchange API)", "`_testing.exchange(t, torch.Tensor)`",
            lambda: exchange(t, torch.Tensor), lambda: torch.from_dlpack(v),
            lambda: torch.from_numpy(v.numpy()))
        row("ORT -> numpy", "`np.from_dlpack(t)`",
            lambda: np.from_dlpack(t), lambda: np.from_dlpack(v),
            lambda: v.numpy())
        row("ORT -> numpy (`.numpy()`)", "`t.numpy()`",
            lambda: t.numpy(), lambda: v.numpy(),
            lambda: v.numpy())
        # (jax copies host memory it imports, asynchronously: each call waits for its array to be ready)
        row("ORT -> jax", "`jnp.from_dlpack(t)`",
            lambda: jnp.from_dlpack(t).block_until_ready(), lambda: jnp.from_dlpack(v).block_until_ready(),
            lambda: jnp.asarray(v.numpy()).block_until_ready())
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

    runner.table(["size", "direction", "ortdlpack call", "ortdlpack µs", "upstream DLPack µs", ".numpy() path µs",
                   "speed-up vs upstream"],
                  [(size, what, call, harness.us(ours), harness.us(up), harness.us(copy), harness.ratio(up / ours))
                   for size, what, call, ours, up, copy in rows], align="lllrrrr")
    # The targets: ortdlpack time / upstream time, 4 KiB rows of this run.
    small = {what: (ours, up) for size, what, _, ours, up, _ in rows if size == "4 KiB"}
    runner.targets([(what, small[what][0] / small[what][1], limit)
                     for what, limit in (("numpy -> onnxruntime.OrtValue", 1.0), ("ORT -> torch", 0.5),
                                         ("ORT -> numpy (`.numpy()`)", 1.0), ("torch -> ORT (C exchange API)", 0.2))],
                    "target (4 KiB)", "ortdlpack / upstream")
    runner.finish()
    sys.stdout.flush()
    # Leave while every tensor is still alive, without interpreter teardown: freeing upstream's OrtValue after
    # jnp.from_dlpack(OrtValue) (the ORT -> jax baseline) lets jax's asynchronous host copy read freed memory, a crash
    # reproduced without ortdlpack (docs/python.md).
    os._exit(0)


if __name__ == "__main__":
    sys.exit(main())
