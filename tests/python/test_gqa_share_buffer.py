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

pytest.importorskip("onnx", reason="the model is built with onnx")
from gqa_model import (HEAD_SIZE, KV_NUM_HEADS, NUM_HEADS, make_gqa_model, reference, run_separate,  # noqa: E402
                       run_shared)

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
    with pytest.raises(Exception, match="present_key"):
        run_shared(sess, q, k, v, buf_k, buf_v, 5, total_len=MAX + 1)
