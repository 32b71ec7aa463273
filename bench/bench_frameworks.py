#!/usr/bin/env python3
"""An ONNX model inside compiled torch and JAX code (issue 26): per-call cost against the ways there were before.

    python bench/bench_frameworks.py [--quick] [--rounds N] [--min-time S] [--json FILE]

The model: y = relu(x) on float32[N, K] (N, K symbolic), at two sizes: tiny (1 x 100: per-call overhead) and
memory-bound (1024 x 1024 = 1 Mi floats, 4 MiB in and out).
  torch: torch.compile(fullgraph=True) of f(x) = onnx(x * 0.5 + 0.25) - 1 with ortdlpack.torch_module, against the
         same function eager with ortdlpack.run on an onnxruntime.InferenceSession (output_type="torch").
         Target <= 1.0x.
  JAX:   jax.jit of the model call alone with ortdlpack.jax_function (an XLA FFI call), against jax.jit of
         jax.pure_callback + session.run (onnxruntime). Target <= 0.5x at 1 Mi floats, <= 1.0x tiny.
Every row of a table is measured in the same run, rounds interleaved (bench/harness.py), after the two ways are
checked to give the same result; median microseconds per call (each call ends with the result ready:
block_until_ready for JAX). Lower is better.
"""

from __future__ import annotations

import argparse
import os
import sys

os.environ.setdefault("JAX_PLATFORMS", "cpu")
# Inductor compiles afresh: its on-disk cache (keyed by the graph, not by ortdlpack's version) would hand back the
# code an earlier ortdlpack generated for the same graph.
os.environ.setdefault("TORCHINDUCTOR_FX_GRAPH_CACHE", "0")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import onnxruntime as ort  # noqa: E402
import torch  # noqa: E402
from onnx import TensorProto, helper  # noqa: E402

import ortdlpack  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

THREADS = 2
# ORT's intra-op threads do not spin between runs: spinning threads compete with torch's and XLA's own on 2 cores.
CONFIG = {"session.intra_op.allow_spinning": "0"}
SIZES = {"tiny (1 x 100)": (1, 100), "1 Mi floats (1024 x 1024)": (1024, 1024)}


def model() -> bytes:
    g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "bench",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", "K"])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", "K"])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)])
    m.ir_version = 9
    return m.SerializeToString()


def ort_session(data: bytes) -> ort.InferenceSession:
    so = ort.SessionOptions()
    so.intra_op_num_threads = THREADS
    for k, v in CONFIG.items():
        so.add_session_config_entry(k, v)
    return ort.InferenceSession(data, so, providers=["CPUExecutionProvider"])


def bench_torch(runner: harness.Runner, data: bytes) -> list:
    sess = ort_session(data)
    module = ortdlpack.torch_module(data, intra_op_num_threads=THREADS, config=CONFIG)

    def f(x, run):
        return run(x * 0.5 + 0.25) - 1

    eager = lambda x: f(x, lambda h: ortdlpack.run(sess, {"x": h}, output_type="torch")[0])  # noqa: E731
    compiled = torch.compile(lambda x: f(x, module), fullgraph=True)
    rows = []
    with torch.no_grad():
        for label, shape in SIZES.items():
            x = torch.rand(shape)
            diff = (compiled(x) - eager(x)).abs().max().item()
            assert diff <= 1e-6, f"torch, {label}: compiled and eager differ by {diff}"
            t = runner.compare(f"torch {label}", [("eager", lambda: eager(x)), ("compiled", lambda: compiled(x))])
            rows.append((label, t["eager"], t["compiled"], 1.0, f"max \\|diff\\| {diff:.1e}"))
    return rows


def bench_jax(runner: harness.Runner, data: bytes) -> list:
    sess = ort_session(data)
    onnx_fn = ortdlpack.jax_function(data, intra_op_num_threads=THREADS, config=CONFIG)

    def host_run(a):
        return sess.run(None, {"x": np.asarray(a)})[0]

    @jax.jit
    def with_ffi(x):
        return onnx_fn(x)

    @jax.jit
    def with_callback(x):
        return jax.pure_callback(host_run, jax.ShapeDtypeStruct(x.shape, x.dtype), x)

    rows = []
    for (label, shape), limit in zip(SIZES.items(), (1.0, 0.5)):
        x = jax.random.uniform(jax.random.key(0), shape, jnp.float32)
        assert np.array_equal(with_ffi(x), with_callback(x)), f"JAX, {label}: the two ways differ"
        t = runner.compare(f"JAX {label}", [("pure_callback", lambda: with_callback(x).block_until_ready()),
                                            ("jax_function", lambda: with_ffi(x).block_until_ready())])
        rows.append((label, t["pure_callback"], t["jax_function"], limit, "identical"))
    return rows


def table(runner: harness.Runner, title: str, base: str, ours: str, rows: list) -> None:
    """rows: (size, base seconds, ours seconds, limit, results)."""
    runner.table(["size", f"{base} µs", f"{ours} µs", "ratio", "target", "met", "results"],
                  [(label, harness.us(t_base), harness.us(t_ours), harness.ratio(t_ours / t_base), f"<= {limit:.1f}x",
                    "yes" if t_ours / t_base <= limit else "no", note)
                   for label, t_base, t_ours, limit, note in rows], align="lrrrrll", title=title)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    args = harness.add_options(parser).parse_args(argv)
    runner = harness.Runner.from_args(args)
    data = model()
    runner.header(f"onnxruntime {ort.__version__}", f"torch {torch.__version__}", f"jax {jax.__version__}",
                  f"ortdlpack {ortdlpack.__version__}", f"{THREADS} intra-op threads, not spinning")
    table(runner, "torch: torch.compile(fullgraph) with ortdlpack.torch_module vs eager with ortdlpack.run", "eager + "
          "ortdlpack.run", "compiled + torch_module", bench_torch(runner, data))
    table(runner, "JAX: jax.jit with ortdlpack.jax_function (XLA FFI) vs jax.jit with pure_callback + session.run",
          "jit + pure_callback", "jit + jax_function", bench_jax(runner, data))
    return runner.finish()


if __name__ == "__main__":
    sys.exit(main())
