#!/usr/bin/env python3
"""A greedy decode loop over a decoder onnxruntime-genai's model builder wrote, its KV cache written in place.

    python examples/decode_loop.py --model DIR --tokens N [--prompt 3,4,5,6,7,8,9,10] [--threads T]
                                   [--device cpu|cuda|webgpu] [--way inplace|reference|iobinding]

DIR is the builder's output folder (`python -m onnxruntime_genai.models.builder ... -o DIR`, or
`python scripts/make_decoders.py OUTDIR`): model.onnx and genai_config.json, from which the input and output names,
the number of layers, KV heads, head size and the maximum length are read. The prompt is token ids; the loop takes
the argmax of the last logits (torch) N times: a prefill of the prompt, then N - 1 steps of one token.

Ways (--way):
  inplace    (default) ortdlpack: the KV cache allocated once at the maximum length, torch tensors [1, kv_heads,
             max_length, head_size] per layer, each fed as past_key_values.N.* and bound as the memory ORT writes
             present.N.* into (`in_place=`), bound once; each step rebinds only input_ids and attention_mask.
             The model's GroupQueryAttention then runs in its past/present share-buffer mode (as onnxruntime-genai
             runs it): it writes each step's keys and values at their row of the buffer and copies nothing.
  reference  onnxruntime alone, numpy: each step's present.N.* fed back as past_key_values.N.* (new arrays)
  iobinding  onnxruntime's IOBinding by hand: the same max-length buffers bound as past and present by pointer

What share-buffer mode needs (verified against the plain loop; tests/python/test_decode_loop.py):
  past_key_values.N.key/value   [1, kv_heads, max_length, head_size], the SAME memory as present.N.key/value, bound
                                with that same shape; zeros at first (rows past the cache are never read)
  input_ids                     [1, P] at the prefill, then [1, 1]: the last token
  attention_mask                ones [1, T], T = tokens in the cache after this run (P, then P+1, P+2, ...): the model
                                computes GroupQueryAttention's seqlens_k = sum(mask) - 1 (the new rows go at
                                T - S .. T - 1) and total_sequence_length = T (<= max_length) from it
  logits                        [1, P, vocab] at the prefill, then [1, 1, vocab]

--device cuda: torch CUDA tensors and providers=["cuda"] (onnxruntime-gpu); --device webgpu: providers=["webgpu"]
(onnxruntime-ep-webgpu), the KV buffers copied once into the EP's memory (ortdlpack tensors: torch has no WebGPU
device) and the logits returned to the host for torch's argmax (untested here).
The last two lines printed are `tok/s=<generated tokens after the first per second>` and
`tokens=[<the first 16 generated ids>]`.
"""

from __future__ import annotations

import argparse
import dataclasses
import inspect
import json
import os
import sys
import time

import numpy as np
import onnxruntime as ort

PROMPT = (3, 4, 5, 6, 7, 8, 9, 10)


# --- the model, as genai_config.json describes it ----------------------------------------------------------------


@dataclasses.dataclass
class Decoder:
    path: str  # model.onnx
    layers: int
    num_heads: int
    kv_heads: int
    head_size: int
    vocab: int
    max_length: int
    input_ids: str
    attention_mask: str
    logits: str
    past_keys: list
    past_values: list
    present_keys: list
    present_values: list

    @property
    def pasts(self) -> list:
        return [n for kv in zip(self.past_keys, self.past_values) for n in kv]

    @property
    def presents(self) -> list:
        return [n for kv in zip(self.present_keys, self.present_values) for n in kv]

    def kv_shape(self, length: int) -> tuple:
        return (1, self.kv_heads, length, self.head_size)


def read_decoder(model_dir: str) -> Decoder:
    """The decoder of a builder output folder, from its genai_config.json."""
    with open(os.path.join(model_dir, "genai_config.json")) as f:
        config = json.load(f)
    model, search = config["model"], config["search"]
    dec = model["decoder"]
    ins, outs = dec["inputs"], dec["outputs"]
    n = dec["num_hidden_layers"]
    return Decoder(
        path=os.path.join(model_dir, dec["filename"]), layers=n, num_heads=dec["num_attention_heads"],
        kv_heads=dec["num_key_value_heads"], head_size=dec["head_size"], vocab=model["vocab_size"],
        max_length=search.get("max_length") or model["context_length"], input_ids=ins["input_ids"],
        attention_mask=ins["attention_mask"], logits=outs["logits"],
        past_keys=[ins["past_key_names"] % i for i in range(n)],
        past_values=[ins["past_value_names"] % i for i in range(n)],
        present_keys=[outs["present_key_names"] % i for i in range(n)],
        present_values=[outs["present_value_names"] % i for i in range(n)])


def session_options(threads: int) -> ort.SessionOptions:
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    return so


# --- onnxruntime alone: the reference loop -----------------------------------------------------------------------


def reference_tokens(sess: ort.InferenceSession, dec: Decoder, prompt, n: int, info: dict | None = None) -> list:
    """The plain greedy loop with onnxruntime and numpy: present.N.* fed back as past_key_values.N.* (ORT allocates
    new arrays each step). Returns the n generated ids. info, if given, gets "first" (perf_counter() once the first
    id is known) and "presents" (past name -> the last run's present: the cache of prompt + n - 1 tokens)."""
    ids = np.array([prompt], dtype=np.int64)
    mask = np.ones((1, dec.max_length), dtype=np.int64)
    past = {name: np.zeros(dec.kv_shape(0), dtype=np.float32) for name in dec.pasts}
    names = [dec.logits, *dec.presents]
    tokens = []
    for _ in range(n):
        total = len(prompt) + len(tokens)
        logits, *presents = sess.run(names, {dec.input_ids: ids, dec.attention_mask: mask[:, :total], **past})
        tokens.append(int(logits[0, -1].argmax()))
        if info is not None and len(tokens) == 1:
            info["first"] = time.perf_counter()
        ids = np.array([[tokens[-1]]], dtype=np.int64)
        past = dict(zip(dec.pasts, presents))
    if info is not None:
        info["presents"] = past
    return tokens


class IOBindingLoop:
    """onnxruntime's IOBinding share-buffer loop, by hand: one max-length numpy buffer per past/present pair bound as
    both by pointer, input_ids and the logits in numpy buffers of their own, the mask rebound each step (its shape
    grows). generate() returns the n generated ids."""

    def __init__(self, sess: ort.InferenceSession, dec: Decoder):
        self.sess, self.dec = sess, dec
        self.kv = {name: np.zeros(dec.kv_shape(dec.max_length), dtype=np.float32) for name in dec.pasts}
        self.mask = np.ones((1, dec.max_length), dtype=np.int64)
        self.step_ids = np.zeros((1, 1), dtype=np.int64)
        self.step_logits = np.empty((1, 1, dec.vocab), dtype=np.float32)
        self.io = io = sess.io_binding()
        for past, present in zip(dec.pasts, dec.presents):
            buf = self.kv[past]
            io.bind_input(past, "cpu", 0, np.float32, list(buf.shape), buf.ctypes.data)
            io.bind_output(present, "cpu", 0, np.float32, list(buf.shape), buf.ctypes.data)

    def _bind(self, name, a, output=False):
        (self.io.bind_output if output else self.io.bind_input)(name, "cpu", 0, a.dtype, list(a.shape), a.ctypes.data)

    def generate(self, prompt, n: int) -> list:
        dec, io = self.dec, self.io
        ids = np.array([prompt], dtype=np.int64)
        logits = np.empty((1, len(prompt), dec.vocab), dtype=np.float32)
        self._bind(dec.input_ids, ids)
        self._bind(dec.attention_mask, self.mask[:, :len(prompt)])
        self._bind(dec.logits, logits, output=True)
        self.sess.run_with_iobinding(io)
        tokens = [int(logits[0, -1].argmax())]
        self.first_token_time = time.perf_counter()
        self._bind(dec.input_ids, self.step_ids)
        self._bind(dec.logits, self.step_logits, output=True)
        for _ in range(n - 1):
            self.step_ids[0, 0] = tokens[-1]
            self._bind(dec.attention_mask, self.mask[:, :len(prompt) + len(tokens)])
            self.sess.run_with_iobinding(io)
            tokens.append(int(self.step_logits[0, 0].argmax()))
        return tokens


# --- ortdlpack: the KV cache written in place ---------------------------------------------------------------------


def has_in_place() -> bool:
    """Whether this ortdlpack's InferenceSession.bind takes in_place= (the API this loop is written against)."""
    import ortdlpack

    return "in_place" in inspect.signature(ortdlpack.InferenceSession.bind).parameters


class InPlaceLoop:
    """The loop with ortdlpack: torch KV buffers of the maximum length, fed as past_key_values.N.* and bound as the
    memory of present.N.* (in_place=), bound once; run(feeds=) rebinds input_ids and attention_mask per step.
    generate() returns the n generated ids."""

    def __init__(self, sess, dec: Decoder, device: str = "cpu"):
        import torch

        self.sess, self.dec = sess, dec
        self.torch_device = "cuda" if device == "cuda" else "cpu"
        tdev = self.torch_device
        kv = {name: torch.zeros(dec.kv_shape(dec.max_length), dtype=torch.float32, device=tdev) for name in dec.pasts}
        if device == "webgpu":  # torch has no WebGPU device: the buffers are ortdlpack tensors in the EP's memory
            import ortdlpack

            kv = {name: ortdlpack.from_dlpack(t, device="webgpu:0") for name, t in kv.items()}
        self.kv = kv
        self.mask = torch.ones((1, dec.max_length), dtype=torch.int64, device=tdev)
        self.step_ids = torch.zeros((1, 1), dtype=torch.int64, device=tdev)
        # Between two steps, one torch op: the argmax. A decode step streams the weights through the caches and
        # evicts torch's code, so each torch op after it costs 10-30 us (perf: slicing the mask, indexing and storing
        # the token cost more than the argmax). On the host the mask's views and the ids are read through numpy
        # views of the same memory, a few us; on a GPU they stay torch's (numpy cannot read device memory).
        host = tdev == "cpu"
        self.step_mask = self.mask.numpy() if host else self.mask
        self.step_ids_read = self.step_ids.numpy() if host else self.step_ids
        self.binding = None
        self.out_device = "cpu" if device == "webgpu" else None  # logits to the host for torch's argmax

    def _bind(self, prompt_ids):
        extra = {"device": self.out_device} if self.out_device else {}
        self.binding = self.sess.bind(
            {self.dec.input_ids: prompt_ids, self.dec.attention_mask: self.mask[:, :prompt_ids.shape[1]], **self.kv},
            [self.dec.logits], in_place=dict(zip(self.dec.presents, self.dec.pasts)), output_type="torch", **extra)

    def generate(self, prompt, n: int) -> list:
        import torch

        dec = self.dec
        prompt_ids = torch.tensor([prompt], dtype=torch.int64, device=self.torch_device)
        host = self.torch_device == "cpu"
        tokens = np.empty(n, dtype=np.int64) if host else torch.empty(n, dtype=torch.int64, device=self.torch_device)
        if self.binding is None:
            self._bind(prompt_ids)
            (logits,) = self.binding.run()
        else:  # the KV buffers stay bound: the prefill writes its rows over the last generation's
            (logits,) = self.binding.run(feeds={dec.input_ids: prompt_ids,
                                                dec.attention_mask: self.step_mask[:, :len(prompt)]})
        torch.argmax(logits[:, -1, :], dim=-1, keepdim=True, out=self.step_ids)
        tokens[0] = self.step_ids_read[0, 0]
        self.first_token_time = time.perf_counter()
        for i in range(1, n):
            tokens[i] = self.step(len(prompt) + i)
        return tokens.tolist()

    def step(self, total: int):
        """One decode step after the prefill, `total` tokens in the cache after it: the run rebinding input_ids (the
        last id, in step_ids) and the mask, torch's argmax into step_ids. Returns the new id (a numpy or torch
        scalar)."""
        import torch

        (logits,) = self.binding.run(feeds={self.dec.input_ids: self.step_ids,
                                            self.dec.attention_mask: self.step_mask[:, :total]})
        torch.argmax(logits, dim=-1, out=self.step_ids)  # logits [1, 1, vocab] -> ids [1, 1]
        return self.step_ids_read[0, 0]


# --- the example ----------------------------------------------------------------------------------------------------


def make_session(dec: Decoder, threads: int, device: str, way: str):
    providers = {"cpu": ["CPUExecutionProvider"], "cuda": ["cuda"], "webgpu": ["webgpu"]}[device]
    if way == "inplace":
        import ortdlpack

        return ortdlpack.InferenceSession(dec.path, session_options(threads), providers=providers)
    if device != "cpu":
        raise SystemExit(f"--way {way} runs on the CPU only (numpy feeds)")
    return ort.InferenceSession(dec.path, session_options(threads), providers=providers)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", required=True, help="a builder output folder (model.onnx, genai_config.json)")
    parser.add_argument("--tokens", type=int, default=64, help="tokens to generate")
    parser.add_argument("--prompt", default=",".join(map(str, PROMPT)), help="token ids, comma-separated")
    parser.add_argument("--threads", type=int, default=1, help="intra-op threads")
    parser.add_argument("--device", choices=["cpu", "cuda", "webgpu"], default="cpu")
    parser.add_argument("--way", choices=["inplace", "reference", "iobinding"], default="inplace")
    args = parser.parse_args(argv)
    prompt = [int(t) for t in args.prompt.split(",") if t.strip()]
    dec = read_decoder(args.model)
    if len(prompt) + args.tokens > dec.max_length:
        raise SystemExit(f"{len(prompt)} + {args.tokens} tokens do not fit the maximum length {dec.max_length}")
    if args.way == "inplace" and not has_in_place():
        raise SystemExit("this ortdlpack's InferenceSession.bind has no in_place= (the API this loop is written "
                         "against); --way reference or --way iobinding run with onnxruntime alone")
    sess = make_session(dec, args.threads, args.device, args.way)
    print(f"{dec.path}: {dec.layers} layers, {dec.num_heads} heads over {dec.kv_heads} KV heads of {dec.head_size}, "
          f"vocab {dec.vocab}, max length {dec.max_length}; {args.way} on {args.device}, {args.threads} thread(s)")
    if args.way == "reference":
        info = {}
        tokens = reference_tokens(sess, dec, prompt, args.tokens, info)
        elapsed = time.perf_counter() - info["first"]
    else:
        loop = InPlaceLoop(sess, dec, args.device) if args.way == "inplace" else IOBindingLoop(sess, dec)
        tokens = loop.generate(prompt, args.tokens)
        if args.device == "cuda":
            import torch

            torch.cuda.synchronize()
        elapsed = time.perf_counter() - loop.first_token_time
    rate = (args.tokens - 1) / elapsed if args.tokens > 1 and elapsed > 0 else float("nan")
    print(f"tok/s={rate:.1f}")
    print(f"tokens={tokens[:16]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
