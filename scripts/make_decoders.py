#!/usr/bin/env python3
"""Random-weight Llama-style decoders, converted by onnxruntime-genai's own model builder.

    python scripts/make_decoders.py OUTDIR [--size small|large|tiny|all]

For each size: a transformers `LlamaForCausalLM(LlamaConfig(...))` with seeded random weights, saved with
`save_pretrained` to OUTDIR/hf/<size>/ (removed once the builder is done) together with a tokenizer made here with
the `tokenizers` library (byte-level BPE of the model's vocabulary size, trained on made-up words; nothing is
downloaded: save_tokenizer), then

    python -m onnxruntime_genai.models.builder -i OUTDIR/hf/<size> -o OUTDIR/<size> -p fp32 -e cpu

which writes OUTDIR/<size>/model.onnx (+ model.onnx.data), genai_config.json and the tokenizer files, and
make_decoders.json: the settings it was built from. A size already built from the current settings is skipped.

Sizes (GQA: 8 query heads over 4 KV heads; SiLU MLP; RMSNorm; fp32; context 2,048 = the KV buffers' maximum length):
  tiny    2 layers, hidden 128, intermediate 256, vocab 512: 0.5 M parameters, a test's model, built in seconds
          (head size 16: the smallest GroupQueryAttention with rotary embedding takes on the CPU)
  small   4 layers, hidden 256, intermediate 1,024, vocab 8,192: 8.1 M parameters, 6.0 M of them (24 MB) read per token
  large   8 layers, hidden 256, intermediate 1,024, vocab 8,192: 12 M parameters, 10 M of them (40 MB) read per token
A decode step of one token is a matrix-vector product per weight: it reads every weight once, so its speed is the
memory's. On the 2-core AMD EPYC this project runs on (32 MiB L3, shared), small's weights stay in the cache and
onnxruntime-genai makes ~1,400-1,700 tok/s at 1 thread; large's do not, ~450 tok/s (issue 41's two decoders: 1,682 and
452). A vocabulary of 32,000 (the lm_head alone 33 MB) or hidden 512 falls off that cliff: 100-300 tok/s.

Needs transformers, tokenizers and onnxruntime-genai (requirements-bench.txt, installed into .venv-bench by
scripts/bench_env.sh); the builder runs in a subprocess of this interpreter.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time

SIZES = {
    "tiny": dict(num_hidden_layers=2, hidden_size=128, intermediate_size=256, num_attention_heads=8,
                 num_key_value_heads=4, vocab_size=512),
    "small": dict(num_hidden_layers=4, hidden_size=256, intermediate_size=1024, num_attention_heads=8,
                  num_key_value_heads=4, vocab_size=8192),
    "large": dict(num_hidden_layers=8, hidden_size=256, intermediate_size=1024, num_attention_heads=8,
                  num_key_value_heads=4, vocab_size=8192),
}
CONTEXT = 2048  # max_position_embeddings: the builder's context_length, genai's max_length (8 + 1,024 tokens fit)
SEED = 41
BOS, EOS = 1, 2


def save_tokenizer(path: str, vocab_size: int) -> None:
    """A byte-level BPE tokenizer of `vocab_size` tokens (`<unk>`, `<s>`, `</s>`, the 256 bytes, merges), trained here
    with the `tokenizers` library on made-up words (seeded: the same tokenizer every time; nothing is downloaded) and
    saved as transformers saves a fast tokenizer (tokenizer.json, tokenizer_config.json): what the builder's
    AutoTokenizer reads and copies next to the model, and what onnxruntime-genai's Tokenizer loads (it reads BPE and
    Unigram tokenizer.json models only: a WordLevel one fails in it with "Cannot know how to parse line")."""
    import random

    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    rng = random.Random(SEED)
    letters = "abcdefghijklmnopqrstuvwxyz"
    text = [" ".join("".join(rng.choice(letters) for _ in range(rng.randint(2, 8))) for _ in range(64))
            for _ in range(2000)]
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(text, trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=["<unk>", "<s>", "</s>"],
                                                      initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                                      show_progress=False))
    if tok.get_vocab_size() != vocab_size:
        raise RuntimeError(f"the tokenizer has {tok.get_vocab_size()} tokens, the model {vocab_size}")
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="<unk>", bos_token="<s>", eos_token="</s>",
                                   model_max_length=CONTEXT)
    fast.save_pretrained(path)


def save_hf_model(path: str, size: str) -> None:
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(SEED)
    config = LlamaConfig(**SIZES[size], max_position_embeddings=CONTEXT, rms_norm_eps=1e-5, rope_theta=10000.0,
                         hidden_act="silu", tie_word_embeddings=False, bos_token_id=BOS, eos_token_id=EOS,
                         torch_dtype="float32")
    model = LlamaForCausalLM(config).eval()
    model.save_pretrained(path, safe_serialization=True)
    save_tokenizer(path, config.vocab_size)


STAMP = "make_decoders.json"  # what a folder was built from: a folder built from other settings is built again


def recipe(size: str) -> dict:
    return {"size": size, **SIZES[size], "context": CONTEXT, "seed": SEED}


def built(out: str) -> bool:
    """Whether `out` (OUTDIR/<size>) holds the model of the current settings of its size."""
    try:
        with open(os.path.join(out, STAMP)) as f:
            stamp = json.load(f)
    except (OSError, ValueError):
        return False
    return (stamp.get("size") in SIZES and stamp == recipe(stamp["size"])
            and all(os.path.exists(os.path.join(out, f)) for f in ("genai_config.json", "model.onnx")))


def make_decoder(outdir: str, size: str, quiet: bool = False) -> str:
    """Builds OUTDIR/<size> (skipped when there); returns its path."""
    out = os.path.join(outdir, size)
    if built(out):
        return out
    shutil.rmtree(out, ignore_errors=True)
    hf = os.path.join(outdir, "hf", size)
    t0 = time.perf_counter()
    save_hf_model(hf, size)
    cmd = [sys.executable, "-m", "onnxruntime_genai.models.builder", "-i", hf, "-o", out, "-p", "fp32", "-e", "cpu",
           "-c", os.path.join(outdir, "hf", "cache")]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0 or not all(os.path.exists(os.path.join(out, f)) for f in ("genai_config.json",
                                                                                      "model.onnx")):
        raise RuntimeError(f"the builder failed ({proc.returncode}): {' '.join(cmd)}\n{proc.stdout}\n{proc.stderr}")
    shutil.rmtree(os.path.join(outdir, "hf"), ignore_errors=True)  # the HF model, the builder's cache: done with
    with open(os.path.join(out, STAMP), "w") as f:
        json.dump(recipe(size), f)
    if not quiet:
        with open(os.path.join(out, "genai_config.json")) as f:
            search = json.load(f)["search"]
        print(f"make_decoders: {out}: {SIZES[size]}, max_length {search['max_length']}, past_present_share_buffer "
              f"{search['past_present_share_buffer']} ({time.perf_counter() - t0:.1f} s)", flush=True)
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("outdir")
    parser.add_argument("--size", choices=[*SIZES, "all"], default="all", help="default: all (tiny, small, large)")
    args = parser.parse_args(argv)
    for size in SIZES if args.size == "all" else [args.size]:
        print(make_decoder(args.outdir, size))
    return 0


if __name__ == "__main__":
    sys.exit(main())
