"""onnxruntime's CPU GroupQueryAttention in past/present share-buffer mode, with onnxruntime alone (IOBinding): what
ortdlpack's in-place binding of a KV cache relies on and documents (tests/python/gqa_model.py; issue 41).

One max-length buffer bound as past_key AND present_key (past_value/present_value likewise) gives, step by step, the
output of the run with separate past [L] and present [L+S] buffers, its buffer's first L+S rows equal that present,
and leaves the rows after them as they were. seqlens_k is what places the new rows (total - 1); total_sequence_length
may be anything from the total to the buffer's length (past it, present's shape no longer is the buffer's: ORT
refuses the bound output).
"""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest

import ortdlpack

pytest.importorskip("onnx", reason="the model is built with onnx")
from gqa_model import (HEAD_SIZE, KV_NUM_HEADS, NUM_HEADS, lengths, make_gqa_model, reference,  # noqa: E402
                       run_separate, run_shared)

MAX = 32


@pytest.fixture(scope="module")
def sess():
    return ort.InferenceSession(make_gqa_model(), providers=["CPUExecutionProvider"])


def qkv(rng, s):
    return tuple(rng.standard_normal((1, s, n * HEAD_SIZE), dtype=np.float32) for n in (NUM_HEADS, KV_NUM_HEADS,
                                                                                          KV_NUM_HEADS))


def test_the_separate_run_is_grouped_query_attention(sess):
    rng = np.random.default_rng(0)
    past = rng.standard_normal((2, 1, KV_NUM_HEADS, 3, HEAD_SIZE), dtype=np.float32)
    q, k, v = qkv(rng, 1)
    got = run_separate(sess, q, k, v, past[0], past[1])
    for g, e in zip(got, reference(q, k, v, past[0], past[1])):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)


def test_one_buffer_as_past_and_present_is_written_in_place(sess):
    """A prompt of 5, then 4 steps of one token: both ways alike, bit for bit."""
    rng = np.random.default_rng(1)
    buf_k = np.full((1, KV_NUM_HEADS, MAX, HEAD_SIZE), np.nan, dtype=np.float32)
    buf_v = buf_k.copy()
    past_k = past_v = np.zeros((1, KV_NUM_HEADS, 0, HEAD_SIZE), dtype=np.float32)
    for s in (5, 1, 1, 1, 1):
        q, k, v = qkv(rng, s)
        length = past_k.shape[2]
        out, past_k, past_v = run_separate(sess, q, k, v, past_k, past_v)
        pointer = buf_k.ctypes.data
        np.testing.assert_array_equal(run_shared(sess, q, k, v, buf_k, buf_v, length), out)
        assert buf_k.ctypes.data == pointer
        total = length + s
        np.testing.assert_array_equal(buf_k[:, :, :total], past_k)
        np.testing.assert_array_equal(buf_v[:, :, :total], past_v)
        assert np.isnan(buf_k[:, :, total:]).all() and np.isnan(buf_v[:, :, total:]).all()


@pytest.mark.parametrize("total", [6, MAX], ids=["total", "buffer length"])
def test_total_sequence_length_from_the_total_to_the_buffer_length(sess, total):
    rng = np.random.default_rng(2)
    past = rng.standard_normal((2, 1, KV_NUM_HEADS, 5, HEAD_SIZE), dtype=np.float32)
    q, k, v = qkv(rng, 1)
    out, present_k, present_v = run_separate(sess, q, k, v, past[0], past[1])
    buf_k, buf_v = (np.zeros((1, KV_NUM_HEADS, MAX, HEAD_SIZE), dtype=np.float32) for _ in range(2))
    buf_k[:, :, :5], buf_v[:, :, :5] = past[0], past[1]
    np.testing.assert_array_equal(run_shared(sess, q, k, v, buf_k, buf_v, 5, total_len=total), out)
    np.testing.assert_array_equal(buf_k[:, :, :6], present_k)
    np.testing.assert_array_equal(buf_v[:, :, :6], present_v)


def test_a_total_past_the_buffer_is_refused(sess):
    rng = np.random.default_rng(3)
    q, k, v = qkv(rng, 1)
    buf_k, buf_v = (np.zeros((1, KV_NUM_HEADS, MAX, HEAD_SIZE), dtype=np.float32) for _ in range(2))
    # (onnxruntime >= 1.24 names the output; 1.23 says only that the bound output's shape is not the one computed)
    with pytest.raises(Exception, match="present_key|OrtValue shape verification failed"):
        run_shared(sess, q, k, v, buf_k, buf_v, 5, total_len=MAX + 1)


# --- ortdlpack: the KV cache declared written in place (in_place=), the same runs --------------------------------


def _steps():
    return (5, 1, 1, 1, 1)  # a prompt of 5, then 4 steps of one token


def _feeds(q, k, v, buf_k, buf_v, length):
    seqlens_k, total = lengths(length, q.shape[1])
    return {"query": q, "key": k, "value": v, "past_key": buf_k, "past_value": buf_v, "seqlens_k": seqlens_k,
            "total_sequence_length": total}


IN_PLACE = {"present_key": "past_key", "present_value": "past_value"}


@pytest.mark.parametrize("way", ["InferenceSession.run", "ortdlpack.run", "Session.run"])
def test_ortdlpack_writes_the_cache_in_place_as_declared(sess, way):
    """torch buffers fed as past_key/past_value and declared the memory of present_key/present_value: onnxruntime's
    IOBinding share-buffer run's results, bit for bit, the buffers written in place and nothing past the cache."""
    torch = pytest.importorskip("torch")
    model = make_gqa_model()
    run = {"InferenceSession.run": lambda f, **kw: ortdlpack.InferenceSession(model).run(None, f, **kw),
           "ortdlpack.run": lambda f, **kw: ortdlpack.run(sess, f, output_type="torch", **kw),
           "Session.run": lambda f, **kw: ortdlpack.Session(model).run(f, output_type="torch", **kw)}[way]
    rng = np.random.default_rng(4)
    buf_k, buf_v = (torch.full((1, KV_NUM_HEADS, MAX, HEAD_SIZE), float("nan")) for _ in range(2))
    ref_k, ref_v = (np.full((1, KV_NUM_HEADS, MAX, HEAD_SIZE), np.nan, dtype=np.float32) for _ in range(2))
    length = 0
    for s in _steps():
        q, k, v = qkv(rng, s)
        want = run_shared(sess, q, k, v, ref_k, ref_v, length)
        feeds = _feeds(*(torch.from_numpy(a) for a in (q, k, v)), buf_k, buf_v, length)
        with pytest.raises(ValueError, match="overlaps input 'past_key'.*declare it in place"):
            run(feeds, outputs={"present_key": buf_k, "present_value": buf_v})  # not declared: refused, untouched
        out, present_k, present_v = run(feeds, in_place=IN_PLACE)
        assert present_k.data_ptr() == buf_k.data_ptr() and present_v.data_ptr() == buf_v.data_ptr()
        np.testing.assert_array_equal(np.asarray(out), want)
        np.testing.assert_array_equal(buf_k.numpy(), ref_k)  # NaN past the cache: compared as equal
        np.testing.assert_array_equal(buf_v.numpy(), ref_v)
        length += s


def test_a_binding_writes_the_cache_in_place_and_rebinds_each_step(sess):
    """bind() once with in_place=, then run(feeds=) with each step's query, key, value and lengths: the KV buffers stay
    bound where they are, the output is allocated again where its shape changes."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(5)
    buf_k, buf_v = (torch.zeros((1, KV_NUM_HEADS, MAX, HEAD_SIZE)) for _ in range(2))
    ref_k, ref_v = (np.zeros((1, KV_NUM_HEADS, MAX, HEAD_SIZE), dtype=np.float32) for _ in range(2))
    binding, length = None, 0
    for s in _steps():
        q, k, v = qkv(rng, s)
        want = run_shared(sess, q, k, v, ref_k, ref_v, length)
        feeds = _feeds(*(torch.from_numpy(a) for a in (q, k, v)), buf_k, buf_v, length)
        if binding is None:
            binding = ortdlpack.InferenceSession(make_gqa_model()).bind(feeds, ["output"], in_place=IN_PLACE)
            (out,) = binding.run()
        else:
            changed = {n: feeds[n] for n in ("query", "key", "value", "seqlens_k", "total_sequence_length")}
            (out,) = binding.run(feeds=changed)
        np.testing.assert_array_equal(out.numpy(), want)
        np.testing.assert_array_equal(buf_k.numpy(), ref_k)
        np.testing.assert_array_equal(buf_v.numpy(), ref_v)
        length += s


def test_in_place_takes_exactly_the_feed_s_memory(sess):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(6)
    q, k, v = (torch.from_numpy(a) for a in qkv(rng, 1))
    buf = torch.zeros((2, 1, KV_NUM_HEADS, MAX, HEAD_SIZE))
    feeds = _feeds(q, k, v, buf[0], buf[1], 0)
    with pytest.raises(ValueError, match="is not the tensor fed as input 'past_key'"):  # another tensor given for it
        ortdlpack.run(sess, feeds, in_place=IN_PLACE, outputs={"present_key": buf[1]})
    wide = torch.zeros((1, KV_NUM_HEADS, MAX, 2 * HEAD_SIZE))
    with pytest.raises(BufferError, match="past_key"):  # a strided view: ORT could only write a copy of it
        ortdlpack.run(sess, feeds | {"past_key": wide[..., :HEAD_SIZE]}, in_place=IN_PLACE)
    with pytest.raises(ValueError, match="in place of two inputs|overlap"):
        ortdlpack.run(sess, feeds | {"past_value": buf[0]}, in_place=IN_PLACE)  # one buffer for both caches
    with pytest.raises(ValueError, match="not fed a tensor"):
        ortdlpack.run(sess, feeds, in_place={"present_key": "nothing"})
    assert not buf.any()  # nothing ran
