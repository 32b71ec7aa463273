"""A minimal GroupQueryAttention model (com.microsoft), and the runs that show how its KV cache is written in place.

onnxruntime's CPU GroupQueryAttention kernel (contrib_ops/cpu/bert/gqa_attention_base.h) writes the new keys and
values into present_key/present_value. When present_key is the very memory of past_key (and present_value of
past_value: both pairs, compared by data pointer) it runs in "past/present share buffer" mode: the past is not copied,
the new rows are written at row `seqlens_k + 1 - sequence_length` of the buffer, nothing else of it is touched. That is
how onnxruntime-genai runs the decoders its builder writes (genai_config.json `past_present_share_buffer`): one
buffer of the maximum length per layer, bound as both past_key_values.N.key and present.N.key.

    model = make_gqa_model()                                # bytes, for onnxruntime.InferenceSession
    sep = run_separate(sess, q, k, v, past_k, past_v)       # past [B,Nkv,L,H] -> present [B,Nkv,L+S,H] (new arrays)
    shr = run_shared(sess, q, k, v, buf_k, buf_v, past_len) # buf [B,Nkv,M,H] bound as past and present (IOBinding)

Inputs: query [B,S,N*H], key/value [B,S,Nkv*H] (unpacked), past_key/past_value [B,Nkv,P,H] (BNSH), seqlens_k int32 [B]
(total length - 1 per batch row), total_sequence_length int32 [1]; outputs: output [B,S,N*H], present_key/
present_value [B,Nkv,max(total_sequence_length, P),H]. No rotary embedding (do_rotary=0): the cache is what is tested.
`reference` is the same attention in numpy.
"""

from __future__ import annotations

import numpy as np

NUM_HEADS, KV_NUM_HEADS, HEAD_SIZE = 8, 4, 16


def make_gqa_model(num_heads: int = NUM_HEADS, kv_num_heads: int = KV_NUM_HEADS, head_size: int = HEAD_SIZE,
                   opset: int = 18, ir_version: int = 9) -> bytes:
    """The model: one com.microsoft GroupQueryAttention node, every dimension but the heads' symbolic."""
    from onnx import TensorProto, helper

    F, I32 = TensorProto.FLOAT, TensorProto.INT32
    vi = helper.make_tensor_value_info
    node = helper.make_node(
        "GroupQueryAttention",
        ["query", "key", "value", "past_key", "past_value", "seqlens_k", "total_sequence_length"],
        ["output", "present_key", "present_value"], domain="com.microsoft",
        num_heads=num_heads, kv_num_heads=kv_num_heads)
    graph = helper.make_graph(
        [node], "gqa",
        [vi("query", F, ["B", "S", num_heads * head_size]), vi("key", F, ["B", "S", kv_num_heads * head_size]),
         vi("value", F, ["B", "S", kv_num_heads * head_size]),
         vi("past_key", F, ["B", kv_num_heads, "P", head_size]),
         vi("past_value", F, ["B", kv_num_heads, "P", head_size]),
         vi("seqlens_k", I32, ["B"]), vi("total_sequence_length", I32, [1])],
        [vi("output", F, ["B", "S", num_heads * head_size]),
         vi("present_key", F, ["B", kv_num_heads, "T", head_size]),
         vi("present_value", F, ["B", kv_num_heads, "T", head_size])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset),
                                                    helper.make_opsetid("com.microsoft", 1)])
    model.ir_version = ir_version
    return model.SerializeToString()


def lengths(past_len: int, seq_len: int, batch: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """seqlens_k and total_sequence_length for `seq_len` new tokens after `past_len` cached ones (no padding)."""
    total = past_len + seq_len
    return np.full(batch, total - 1, dtype=np.int32), np.array([total], dtype=np.int32)


def run_separate(sess, q, k, v, past_k, past_v):
    """onnxruntime's plain run: past [B,Nkv,L,H] in, (output, present_key, present_value) out, new arrays
    (present [B,Nkv,L+S,H])."""
    seqlens_k, total = lengths(past_k.shape[2], q.shape[1], q.shape[0])
    return sess.run(None, {"query": q, "key": k, "value": v, "past_key": past_k, "past_value": past_v,
                           "seqlens_k": seqlens_k, "total_sequence_length": total})


def run_shared(sess, q, k, v, buf_k, buf_v, past_len: int, total_len: int | None = None):
    """onnxruntime's IOBinding with ONE buffer per cache: buf_k [B,Nkv,M,H] (a C-contiguous float32 numpy array)
    bound as past_key AND as present_key, buf_v likewise; the first `past_len` rows of each are the cache. The kernel
    writes the new rows in place; returns the output (a new array). total_len: total_sequence_length (default:
    past_len + S)."""
    seqlens_k, total = lengths(past_len, q.shape[1], q.shape[0])
    if total_len is not None:
        total = np.array([total_len], dtype=np.int32)
    io = sess.io_binding()
    for name, a in (("query", q), ("key", k), ("value", v), ("seqlens_k", seqlens_k),
                    ("total_sequence_length", total)):
        io.bind_cpu_input(name, a)
    io.bind_output("output", "cpu")
    for past, present, buf in (("past_key", "present_key", buf_k), ("past_value", "present_value", buf_v)):
        assert buf.flags.c_contiguous and buf.dtype == np.float32
        io.bind_input(past, "cpu", 0, np.float32, list(buf.shape), buf.ctypes.data)
        io.bind_output(present, "cpu", 0, np.float32, list(buf.shape), buf.ctypes.data)
    sess.run_with_iobinding(io)
    return io.copy_outputs_to_cpu()[0]


def reference(q, k, v, past_k, past_v, num_heads: int = NUM_HEADS, kv_num_heads: int = KV_NUM_HEADS):
    """GroupQueryAttention in numpy (causal, scale 1/sqrt(H), no rotary): (output, present_key, present_value)."""
    b, s, _ = q.shape
    h = q.shape[2] // num_heads
    kn = k.reshape(b, s, kv_num_heads, h).transpose(0, 2, 1, 3)
    vn = v.reshape(b, s, kv_num_heads, h).transpose(0, 2, 1, 3)
    pk, pv = np.concatenate([past_k, kn], axis=2), np.concatenate([past_v, vn], axis=2)
    past = past_k.shape[2]
    qn = q.reshape(b, s, num_heads, h).transpose(0, 2, 1, 3)
    group = num_heads // kv_num_heads
    keys, values = np.repeat(pk, group, axis=1), np.repeat(pv, group, axis=1)
    scores = qn @ keys.transpose(0, 1, 3, 2) / np.sqrt(h)
    causal = np.arange(past + s)[None, :] > (past + np.arange(s))[:, None]
    scores = np.where(causal, -np.inf, scores)
    probs = np.exp(scores - scores.max(-1, keepdims=True))
    probs /= probs.sum(-1, keepdims=True)
    out = (probs @ values).transpose(0, 2, 1, 3).reshape(b, s, num_heads * h)
    return out.astype(np.float32), pk, pv
