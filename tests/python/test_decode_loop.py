"""The greedy decode loop of examples/decode_loop.py over a decoder onnxruntime-genai's builder wrote (issue 41).

The model is scripts/make_decoders.py's "tiny" one (2 layers, GQA 8/4 heads of 16, vocab 512, context 2,048; random
weights), built once into <tmp>/ortdlpack-decoders (~10 s; kept for later sessions and for bench/bench_decode.py) by
the builder of onnxruntime-genai: the tests skip, saying so, where it and transformers are not installed (they are
benchmark-only dependencies: requirements-bench.txt, scripts/bench_env.sh installs them into .venv-bench, whose
Python then builds the model).

- onnxruntime's own IOBinding share-buffer loop (max-length KV buffers bound as both past_key_values.N.* and
  present.N.*) gives the plain loop's ids, and its buffers hold the plain loop's last presents: the recipe the
  example documents.
- The example's ortdlpack loop (`bind(..., in_place=)`, `run(feeds=)`) gives the plain loop's ids (an ortdlpack
  without in_place= makes the example exit saying so, and that test fail).
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
import pytest
from conftest import ROOT, run_script

sys.path.insert(0, os.path.join(ROOT, "examples"))
import decode_loop  # noqa: E402

MODELS = os.path.join(tempfile.gettempdir(), "ortdlpack-decoders")
TOKENS = 24


def builder_python() -> str | None:
    """A Python that has what scripts/make_decoders.py needs: this one, else .venv-bench's."""
    if all(importlib.util.find_spec(m) for m in ("onnxruntime_genai", "transformers", "tokenizers")):
        return sys.executable
    bench = os.path.join(ROOT, ".venv-bench", "bin", "python")
    return bench if os.path.exists(bench) else None


@pytest.fixture(scope="module")
def tiny_decoder() -> str:
    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    from make_decoders import built

    path = os.path.join(MODELS, "tiny")
    if not built(path):
        python = builder_python()
        if python is None:
            pytest.skip("onnxruntime-genai and transformers are not installed (benchmark-only dependencies: "
                        "requirements-bench.txt; scripts/bench_env.sh installs them into .venv-bench)")
        proc = subprocess.run([python, os.path.join(ROOT, "scripts", "make_decoders.py"), MODELS, "--size", "tiny"],
                              capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0 and built(path), proc.stdout + proc.stderr
    return path


@pytest.fixture(scope="module")
def reference(tiny_decoder):
    """The plain loop's ids and last presents (onnxruntime alone, numpy, present fed back as past)."""
    import onnxruntime as ort

    dec = decode_loop.read_decoder(tiny_decoder)
    sess = ort.InferenceSession(dec.path, decode_loop.session_options(1), providers=["CPUExecutionProvider"])
    info = {}
    tokens = decode_loop.reference_tokens(sess, dec, decode_loop.PROMPT, TOKENS, info)
    return dec, sess, tokens, info["presents"]


def printed_tokens(out: str) -> list:
    tail = out.strip().splitlines()[-2:]
    assert re.fullmatch(r"tok/s=[0-9.]+", tail[0]), out
    match = re.fullmatch(r"tokens=(\[[0-9, ]*\])", tail[1])
    assert match, out
    return eval(match.group(1))  # a list of ints, as printed


def test_the_config_describes_the_model(reference):
    dec = reference[0]
    assert (dec.layers, dec.num_heads, dec.kv_heads, dec.head_size, dec.vocab) == (2, 8, 4, 16, 512)
    assert dec.max_length >= len(decode_loop.PROMPT) + 1024
    inputs = {i.name: i for i in reference[1].get_inputs()}
    assert set(inputs) == {dec.input_ids, dec.attention_mask, *dec.pasts}
    assert inputs[dec.pasts[0]].shape[1:] == [dec.kv_heads, "past_sequence_length", "kv_cache_dim"]


def test_iobinding_share_buffer_gives_the_plain_loops_ids_and_cache(reference):
    """onnxruntime's IOBinding with ONE max-length buffer per past/present pair: the same ids, the buffers' first
    rows the plain loop's last presents, and the rows after them never written (NaN left as it was)."""
    dec, sess, tokens, presents = reference
    loop = decode_loop.IOBindingLoop(sess, dec)
    for buf in loop.kv.values():
        buf[...] = np.nan  # nothing the loop writes depends on what the buffers held
    assert loop.generate(decode_loop.PROMPT, TOKENS) == tokens
    rows = len(decode_loop.PROMPT) + TOKENS - 1
    for name in dec.pasts:
        np.testing.assert_array_equal(loop.kv[name][:, :, :rows], presents[name])
        assert np.isnan(loop.kv[name][:, :, rows:]).all()
    assert loop.generate(decode_loop.PROMPT, TOKENS) == tokens  # a second generation over the first one's buffers


@pytest.mark.parametrize("way", ["reference", "iobinding"])
def test_the_example_with_onnxruntime_alone(tiny_decoder, reference, way):
    out = run_script("examples/decode_loop.py", "--model", tiny_decoder, "--tokens", str(TOKENS), "--way", way)
    assert printed_tokens(out) == reference[2][:16]


def test_the_example_writes_the_kv_cache_in_place(tiny_decoder, reference):
    """The example's ortdlpack loop (InferenceSession.bind(..., in_place=)): the plain loop's ids."""
    pytest.importorskip("torch")  # the example's KV buffers are torch tensors
    out = run_script("examples/decode_loop.py", "--model", tiny_decoder, "--tokens", str(TOKENS))
    assert printed_tokens(out) == reference[2][:16]


def test_the_in_place_loop_in_process_generates_twice_over_its_buffers(reference):
    """InPlaceLoop (the example's loop and bench_decode's): the plain loop's ids and last presents in its KV buffers,
    rows past them never written; a second generation rebinds the prompt (the mask through a numpy view of the torch
    mask's memory) over the first one's buffers and gives the same ids."""
    torch = pytest.importorskip("torch")
    import ortdlpack

    dec, _, tokens, presents = reference
    loop = decode_loop.InPlaceLoop(ortdlpack.InferenceSession(dec.path, decode_loop.session_options(1)), dec)
    for buf in loop.kv.values():
        buf.fill_(float("nan"))
    assert loop.generate(decode_loop.PROMPT, TOKENS) == tokens
    rows = len(decode_loop.PROMPT) + TOKENS - 1
    for name in dec.pasts:
        np.testing.assert_array_equal(loop.kv[name][:, :, :rows].numpy(), presents[name])
        assert torch.isnan(loop.kv[name][:, :, rows:]).all()
    assert loop.generate(decode_loop.PROMPT, TOKENS) == tokens
    short = decode_loop.PROMPT[:3]  # a shorter prompt: the prefill's shapes change again
    assert loop.generate(short, 5) == decode_loop.reference_tokens(reference[1], dec, short, 5)


def test_the_in_place_loop_in_cpp_on_the_core_gives_the_plain_loops_ids(reference):
    """bench/bench_decode_core.cc (bench_decode.py's C++ loop on the core's API, on onnxruntime's library): the plain
    loop's ids, in its second generation too (the prompt rebound over the first one's caches)."""
    sys.path.insert(0, os.path.join(ROOT, "bench"))
    import bench_decode

    if not os.access(bench_decode.CORE_LOOP, os.X_OK) or bench_decode.ort_library() is None:
        pytest.skip(f"{bench_decode.CORE_LOOP} is not built (CMake builds it), or onnxruntime has no library file")
    dec, _, tokens, _ = reference
    times, ids = bench_decode.core_steps(dec, decode_loop.PROMPT, TOKENS)
    assert ids == tokens and len(times) == TOKENS - 1


def test_the_cpp_loop_says_what_is_wrong_with_its_arguments(tmp_path):
    """bench_decode_core's two refusals: a wrong argument count (its usage, exit 2) and a library without ORT's entry
    point (exit 1, naming it)."""
    sys.path.insert(0, os.path.join(ROOT, "bench"))
    import bench_decode

    if not os.access(bench_decode.CORE_LOOP, os.X_OK):
        pytest.skip(f"{bench_decode.CORE_LOOP} is not built (CMake builds it)")
    usage = subprocess.run([bench_decode.CORE_LOOP], capture_output=True, text=True)
    assert usage.returncode == 2 and "usage:" in usage.stderr
    missing = str(tmp_path / "libnot_onnxruntime.so")
    out = subprocess.run([bench_decode.CORE_LOOP, missing, "m.onnx", *["1"] * 7], capture_output=True, text=True)
    assert out.returncode == 1 and f"no OrtGetApiBase in {missing}" in out.stderr
