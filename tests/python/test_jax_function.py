"""ortdlpack.jax_function: an ONNX model as one XLA FFI call (the C++ handler ortdlpack_run) that jax.jit
compiles in: results equal to onnxruntime's under jit and vmap, shapes from the model at trace time (a data-dependent
size refused when wrapped), errors, threads and a function released while XLA runs it, 10k calls without growth,
plugin-EP devices."""

from __future__ import annotations

import gc
import threading

import numpy as np
import onnxruntime as ort
import pytest

import ortdlpack
from conftest import assert_runs_do_not_grow_rss, helper
from framework_models import build_models, reference


@pytest.fixture(scope="module")
def models():
    return build_models()



@pytest.fixture(scope="module")
def jx():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_default_device", jax.devices("cpu")[0])
    return jax


@pytest.fixture(scope="module")
def jmlp(jx, models):
    return ortdlpack.jax_function(models["mlp"], intra_op_num_threads=1)


def test_jax_function_under_jit_and_vmap(jx, jmlp, models):
    jnp = jx.numpy
    x, b = np.random.randn(5, 4).astype(np.float32), np.random.randn(4).astype(np.float32)
    want = reference(models["mlp"], x=x, b=b)
    y, s = jmlp(jnp.asarray(x), b=jnp.asarray(b))
    np.testing.assert_allclose(np.asarray(y), want[0], rtol=1e-6)
    np.testing.assert_array_equal(np.asarray(s), want[1])

    @jx.jit
    def f(x, b):
        y, s = jmlp(jnp.tanh(x), b)
        return jnp.sin(y).sum(axis=1) + s[:, 0]

    got = f(x, b)
    yt, st = reference(models["mlp"], x=np.tanh(x), b=b)
    # jax's tanh and sin are not numpy's to the last bit: a sum near 0 needs an absolute tolerance (one such row,
    # -0.0017, differed by 6e-8: a relative 3e-5)
    np.testing.assert_allclose(np.asarray(got), np.sin(yt).sum(axis=1) + st[:, 0], rtol=1e-5, atol=1e-6)
    assert "ortdlpack_run" in f.lower(x, b).as_text()  # one custom call in the compiled module, no callback
    xs = np.random.randn(3, 5, 4).astype(np.float32)
    ys = jx.jit(jx.vmap(lambda x: jmlp(x, b)[0]))(xs)
    for i in range(3):
        np.testing.assert_allclose(np.asarray(ys[i]), reference(models["mlp"], x=xs[i], b=b)[0], rtol=1e-6)


def test_jax_function_errors(jx, jmlp, models):
    jnp = jx.numpy
    with pytest.raises(ValueError, match=r"input 'x': dimension 1 mismatch: the model expects float32\[N,4\]"):
        jx.jit(jmlp)(jnp.zeros((2, 3), jnp.float32), jnp.zeros(4, jnp.float32))
    with pytest.raises(ValueError, match=r"jax_function: output 'y' \(int64\[1,\?\]\) cannot be described .* "
                                         r"dimension 1 is unnamed, so only a run tells its size"):
        ortdlpack.jax_function(models["nonzero"])
    with pytest.raises(ValueError, match="output 'y'.* not a tensor"):
        ortdlpack.jax_function(models["sequence"])


def test_jax_function_errors_in_the_handler_are_xla_s(jx, jmlp, models):
    """What the handler refuses, or ORT fails at, reaches JAX with XLA's code for the error's kind (python/src/errors.cc):
    INVALID_ARGUMENT for the call's, INTERNAL for ORT's failures in the run."""
    jnp = jx.numpy
    call = jx.ffi.ffi_call("ortdlpack_run", [jx.ShapeDtypeStruct((2, 4), jnp.float32)])
    with pytest.raises(RuntimeError, match="INVALID_ARGUMENT: input 'b' is missing"):
        call(jnp.ones((2, 4), jnp.float32), session=np.uint64(jmlp._compiled.id))
    add = ortdlpack.jax_function(models["add"])
    with pytest.raises(RuntimeError, match="INVALID_ARGUMENT: jax_function: XLA element type 21 is not supported"):
        call(jnp.ones((2, 4), jnp.int4), session=np.uint64(add._compiled.id))  # S4: XLA's one element per byte
    with pytest.raises(RuntimeError, match="INTERNAL: .*broadcast"):
        ortdlpack.jax_function(models["add_broadcast"])(jnp.ones((2, 4), jnp.float32), jnp.ones((2, 3), jnp.float32))


@pytest.mark.parametrize("dtype", ["bool", "int8", "int16", "int32", "uint8", "uint16", "uint32", "float16",
                                   "bfloat16", "float32", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz",
                                   "float8_e5m2fnuz"])
def test_jax_function_reads_and_writes_every_shared_element_type(jx, dtype):
    # XLA's element types through the core's dtype table (its XLA column): an Identity on each, in and out in place.
    # (64-bit types need jax_enable_x64; ORT makes no complex tensors.)
    elem = helper.np_dtype_to_tensor_dtype(np.dtype(jx.numpy.dtype(dtype)))
    io = [helper.make_tensor_value_info(name, elem, ["N"]) for name in ("x", "y")]
    model = helper.make_model(helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "g", io[:1], io[1:]),
                              opset_imports=[helper.make_opsetid("", 21)], ir_version=10)
    x = jx.numpy.asarray(np.arange(5) % 2).astype(dtype)
    y = jx.jit(ortdlpack.jax_function(model.SerializeToString()))(x)
    assert y.dtype == x.dtype and np.array_equal(np.asarray(y), np.asarray(x))


def test_jax_function_from_threads_and_released_while_running(jx, models):
    jnp = jx.numpy
    x = jnp.ones((64, 4), jnp.float32)
    results = []
    # A function dropped right after dispatch: XLA may still be running it asynchronously when its registration
    # goes; the run holds the session until it ends.
    for _ in range(4):
        results.append(ortdlpack.jax_function(models["add"])(x))
        gc.collect()
    for r in results:
        np.testing.assert_array_equal(np.asarray(r), 2 * np.ones((64, 4)))
    f = jx.jit(ortdlpack.jax_function(models["add"]))
    errors = []

    def work():
        try:
            for i in range(100):
                np.testing.assert_array_equal(np.asarray(f(x * i)), np.asarray(x * i * 2))
        except Exception as e:  # noqa: BLE001  (reported below)
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


def test_jax_function_calls_do_not_grow_rss(jx, models):
    f = jx.jit(ortdlpack.jax_function(models["add"], intra_op_num_threads=1))
    x = jx.numpy.ones((8, 4), jx.numpy.float32)
    assert_runs_do_not_grow_rss(lambda i: f(x).block_until_ready())


def test_jax_function_on_a_plugin_ep_device(jx, accel, models):
    f = jx.jit(ortdlpack.jax_function(accel.session(models["add"])))
    x = np.random.randn(3, 4).astype(np.float32)
    np.testing.assert_allclose(np.asarray(f(x)), 2 * x)


def test_jax_function_on_cuda(jx, models):
    if not any(d.platform == "gpu" for d in jx.devices()) or "CUDAExecutionProvider" not in ort.get_available_providers():
        pytest.skip("needs jaxlib with CUDA and onnxruntime-gpu (none here: the CUDA handler is built but unverified "
                    "on this machine)")
    f = jx.jit(ortdlpack.jax_function(models["add"], ep="cuda"))
    x = jx.device_put(np.ones((8, 4), np.float32), jx.devices("gpu")[0])
    np.testing.assert_array_equal(np.asarray(f(x)), 2 * np.ones((8, 4)))
