#!/usr/bin/env python3
"""A greedy decode loop, every way, against onnxruntime-genai's own loop (issue 41).

    python bench/bench_decode.py [--quick] [--sizes small,large] [--tokens 256,1024] [--prompt 3,4,5,6,7,8,9,10]
                                 [--threads 1] [--models DIR] [--rounds N] [--json FILE] [--markdown FILE]

The models are random-weight Llama-style decoders (scripts/make_decoders.py: transformers' LlamaForCausalLM, GQA 8
query / 4 KV heads, context 2,048), converted by onnxruntime-genai's model builder (`-p fp32 -e cpu`): every way runs
the same model.onnx, on the CPU EP with the same intra-op thread count (--threads, default 1), greedy, from the same
prompt (8 token ids), N new tokens: a prefill of the prompt, then N - 1 steps of one token. Ways:
  onnxruntime-genai          og.Generator: append_tokens(prompt), then generate_next_token() N times (genai's C++
                             loop: KV buffers of the maximum length, bound as past and present: GroupQueryAttention's
                             past/present share-buffer mode; a new Generator, so new buffers, per generation)
  onnxruntime numpy loop     InferenceSession.run with numpy, present.N.* fed back as past_key_values.N.*, argmax in
                             numpy (examples/decode_loop.py reference_tokens)
  onnxruntime IOBinding      the share-buffer loop by hand: max-length numpy KV buffers bound by pointer as past and
                             present once, input_ids/logits in numpy buffers, the mask rebound per step (IOBindingLoop)
  ortdlpack drop-in          ortdlpack.InferenceSession.run with torch tensors, torch argmax, present fed back
  ortdlpack in_place=        InferenceSession.bind(..., in_place={present: past}) once, run(feeds=) per step: torch
                             KV buffers of the maximum length written in place (InPlaceLoop; skipped, saying so,
                             where this ortdlpack's bind has no in_place=)
Before timing, every way's ids are checked equal to the numpy loop's, and the KV caches the share-buffer ways wrote
in place equal to its last presents. tok/s: generated tokens after the first per second (the decode phase, measured
inside each generation; median over the calls); the ratios are per-token times against onnxruntime-genai's and the
numpy loop's (lower is better). The harness times whole generations (prefill + N - 1 steps), interleaved rounds
(bench/harness.py): its medians are the second table and the --json file. The third compares onnxruntime-genai's
and the in_place= loop's step itself, the machine's interruptions left out: each step timed alone, the fastest of
the rounds at every step position (genai_steps, in_place_steps; their ids checked too), and beside them the same
loop written in C++ on the core's API (bench/bench_decode_core.cc, where CMake built it: core_steps), on the ORT
library of the onnxruntime package, the one onnxruntime-genai runs on: what a step costs when no Python runs.

onnxruntime-genai, transformers and the builder's other needs are benchmark-only dependencies
(requirements-bench.txt): a full run without them installs them first with scripts/bench_env.sh into .venv-bench (a
venv that sees .venv's packages: onnxruntime, torch and ortdlpack stay .venv's) and runs again there; --quick uses
.venv-bench when it is there and otherwise says there is nothing to measure. The models are built once into --models
(default: <tmp>/ortdlpack-decoders). --quick: the small model, 16 tokens.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
BENCH_VENV = os.path.join(ROOT, ".venv-bench")
REEXEC = "ORTDLPACK_BENCH_DECODE_REEXEC"

GENAI = "onnxruntime-genai"
NUMPY = "onnxruntime numpy loop"
IOBINDING = "onnxruntime IOBinding"
DROPIN = "ortdlpack drop-in"
INPLACE = "ortdlpack in_place="
CORE = "the same loop in C++"


def have_bench_packages() -> bool:
    return all(importlib.util.find_spec(m) is not None for m in ("onnxruntime_genai", "transformers", "tokenizers"))


def bench_python() -> str:
    return os.path.join(BENCH_VENV, "bin", "python")


def into_bench_venv(argv: list, quick: bool) -> str | None:
    """Runs this benchmark again in .venv-bench when this interpreter lacks the benchmark's packages (a full run
    makes .venv-bench first: scripts/bench_env.sh). Returns why there is nothing to measure, or None to go on."""
    if have_bench_packages():
        return None
    if os.environ.get(REEXEC) != "1":
        if not os.path.exists(bench_python()) and not quick:
            print("bench_decode: onnxruntime-genai and transformers are not installed here: scripts/bench_env.sh "
                  "installs requirements-bench.txt into .venv-bench", flush=True)
            subprocess.run(["bash", os.path.join(ROOT, "scripts", "bench_env.sh")], check=True)
        if os.path.exists(bench_python()):
            print(f"bench_decode: running in {BENCH_VENV}", flush=True)
            env = dict(os.environ, **{REEXEC: "1"})
            sys.stdout.flush()
            os.execve(bench_python(), [bench_python(), os.path.abspath(__file__), *argv], env)
    return ("onnxruntime-genai, transformers and tokenizers are not installed (requirements-bench.txt; "
            "scripts/bench_env.sh installs them into .venv-bench)")


def build_models(models_dir: str, sizes: list) -> dict:
    """{size: builder output folder}, built once by scripts/make_decoders.py (a subprocess: transformers stays out of
    this process)."""
    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    from make_decoders import built

    paths = {}
    for size in sizes:
        path = os.path.join(models_dir, size)
        if not built(path):
            t0 = time.perf_counter()
            subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "make_decoders.py"), models_dir, "--size",
                            size], check=True, stdout=subprocess.DEVNULL)
            print(f"bench_decode: built {path} ({time.perf_counter() - t0:.0f} s)", flush=True)
        paths[size] = path
    return paths


class Way:
    """One way of generating: generate(n) -> ids; every call's decode-phase seconds (after the first id) kept."""

    def __init__(self, loop, prompt):
        self.loop, self.prompt = loop, list(prompt)
        self.decode_seconds: list = []

    def __call__(self, n: int) -> list:
        tokens = self.loop.generate(self.prompt, n)
        self.decode_seconds.append(time.perf_counter() - self.loop.first_token_time)
        return tokens


def genai_steps(loop: "GenaiLoop", prompt, n: int) -> tuple:
    """(seconds of each of genai's n - 1 decode steps (generate_next_token() after the first id), one by one; the
    n ids)."""
    gen, clock, times = loop.first_token(prompt), time.perf_counter, []
    for _ in range(n - 1):
        t0 = clock()
        gen.generate_next_token()
        times.append(clock() - t0)
    return times, [int(t) for t in gen.get_sequence(0)[len(prompt):]]


def in_place_steps(loop, prompt, n: int) -> tuple:
    """(seconds of each of InPlaceLoop's n - 1 decode steps (InPlaceLoop.step), one by one, over its bound KV
    buffers; the n ids)."""
    ids, clock, times = loop.generate(prompt, 1), time.perf_counter, []  # binds (the first time), the prefill
    for i in range(1, n):
        t0 = clock()
        ids.append(int(loop.step(len(prompt) + i)))
        times.append(clock() - t0)
    return times, ids


CORE_LOOP = os.path.join(ROOT, "build", "bench", "bench_decode_core")  # bench/bench_decode_core.cc (CMake builds it)
CORE_PROMPT = [3, 4, 5, 6, 7, 8, 9, 10]  # the prompt it runs


def ort_library() -> str | None:
    """The ONNX Runtime library of the onnxruntime package (the one onnxruntime-genai runs on), or None."""
    import glob

    import onnxruntime

    found = sorted(glob.glob(os.path.join(os.path.dirname(onnxruntime.__file__), "capi", "libonnxruntime.so*")))
    return found[-1] if found else None


def core_steps(dec, prompt, n: int) -> tuple:
    """(seconds of each of bench_decode_core's n - 1 decode steps: the in-place loop in C++ on the core's API, in a
    process of its own on onnxruntime's library, its second generation (the first warms it up, as the in-process
    ways are warm); the n ids)."""
    out = subprocess.run([CORE_LOOP, ort_library(), dec.path, str(dec.layers), str(dec.kv_heads), str(dec.head_size),
                          str(dec.max_length), str(dec.vocab), str(n), "2"], check=True, capture_output=True,
                         text=True).stdout.splitlines()
    return [float(t) for t in out[1].split()], [int(t) for t in out[2].split()[1:]]


class GenaiLoop:
    """onnxruntime-genai's loop: a Generator per generation (its KV buffers of search.max_length allocated and zeroed
    by it), append_tokens(prompt) (the prefill), generate_next_token() n times."""

    def __init__(self, model_dir: str, threads: int, max_length: int):
        import json

        import onnxruntime_genai as og

        self.og, self.max_length = og, max_length
        config = og.Config(model_dir)
        config.overlay(json.dumps({"model": {"decoder": {"session_options": {"intra_op_num_threads": threads}}}}))
        self.model = og.Model(config)

    def first_token(self, prompt):
        """A new Generator after the prefill and the first id."""
        import numpy as np

        params = self.og.GeneratorParams(self.model)
        params.set_search_options(do_sample=False, max_length=self.max_length)
        gen = self.og.Generator(self.model, params)
        gen.append_tokens(np.array([prompt], dtype=np.int32))
        gen.generate_next_token()
        return gen

    def generate(self, prompt, n: int) -> list:
        gen = self.first_token(prompt)
        self.first_token_time = time.perf_counter()
        for _ in range(n - 1):
            gen.generate_next_token()
        return [int(t) for t in gen.get_sequence(0)[len(prompt):]]


class NumpyLoop:
    def __init__(self, sess, dec):
        self.sess, self.dec = sess, dec

    def generate(self, prompt, n: int) -> list:
        from decode_loop import reference_tokens

        info = {}
        tokens = reference_tokens(self.sess, self.dec, prompt, n, info)
        self.first_token_time, self.presents = info["first"], info["presents"]
        return tokens


class DropinLoop:
    """ortdlpack.InferenceSession.run with torch tensors: present fed back as past, torch argmax."""

    def __init__(self, sess, dec):
        import torch

        self.sess, self.dec, self.torch = sess, dec, torch
        self.mask = torch.ones((1, dec.max_length), dtype=torch.int64)
        self.empty = {name: torch.zeros(dec.kv_shape(0)) for name in dec.pasts}
        self.names = [dec.logits, *dec.presents]

    def generate(self, prompt, n: int) -> list:
        torch, dec = self.torch, self.dec
        ids = torch.tensor([prompt], dtype=torch.int64)
        past = self.empty
        tokens = []  # each step's ids tensor, new each step: kept, not copied (torch ops are dear between steps)
        for i in range(n):
            logits, *presents = self.sess.run(self.names, {dec.input_ids: ids,
                                                           dec.attention_mask: self.mask[:, :len(prompt) + i], **past})
            ids = logits.argmax(-1) if i else logits[:, -1].argmax(-1, keepdim=True)  # [1, 1]
            tokens.append(ids)
            if i == 0:
                self.first_token_time = time.perf_counter()
            past = dict(zip(dec.pasts, presents))
        self.presents = past
        return torch.cat(tokens, 1)[0].tolist()


def check(ways: dict, dec, n: int, prompt) -> list:
    """Every way's ids equal to the numpy loop's; the caches written in place (and the drop-in's last presents)
    equal to the numpy loop's last presents, every row the generation wrote. Returns the ids."""
    import numpy as np

    expected = ways[NUMPY](n)
    rows = len(prompt) + n - 1
    for label, way in ways.items():
        got = way(n)
        if got != expected:
            raise SystemExit(f"{label}: ids differ from the numpy loop's: {got[:16]} ... against {expected[:16]} ...")
        loop = way.loop
        caches = getattr(loop, "kv", None) or getattr(loop, "presents", None)
        if caches is None or label == NUMPY:
            continue
        for name in dec.pasts:
            got_kv = np.asarray(caches[name])[:, :, :rows]
            if not np.array_equal(got_kv, ways[NUMPY].loop.presents[name]):
                raise SystemExit(f"{label}: the KV cache {name} differs from the numpy loop's presents")
    return expected


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    sys.path[:0] = [HERE, os.path.join(ROOT, "examples")]
    import harness

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    harness.add_options(parser)
    parser.add_argument("--sizes", default=None, help="model sizes (scripts/make_decoders.py; default small,large; "
                        "--quick: small)")
    parser.add_argument("--tokens", default=None, help="new tokens per generation, comma-separated (default "
                        "256,1024; --quick: 16)")
    parser.add_argument("--prompt", default="3,4,5,6,7,8,9,10", help="prompt token ids, comma-separated")
    parser.add_argument("--threads", type=int, default=1, help="intra-op threads of every way (default 1)")
    parser.add_argument("--models", default=os.path.join(tempfile.gettempdir(), "ortdlpack-decoders"))
    args = parser.parse_args(argv)
    sizes = (args.sizes or ("small" if args.quick else "small,large")).split(",")
    counts = [int(t) for t in (args.tokens or ("16" if args.quick else "256,1024")).split(",")]
    prompt = [int(t) for t in args.prompt.split(",")]

    missing = into_bench_venv(argv, args.quick)
    if missing:
        print(f"nothing to measure: {missing}")
        return 0

    import onnxruntime as ort
    import onnxruntime_genai as og
    import torch

    import ortdlpack
    from decode_loop import InPlaceLoop, IOBindingLoop, has_in_place, read_decoder, session_options

    torch.set_num_threads(args.threads)
    runner = harness.Runner.from_args(args, rounds=10)
    t_start = time.perf_counter()
    paths = build_models(args.models, sizes)
    runner.header(f"onnxruntime {ort.__version__}", f"onnxruntime-genai {og.__version__}",
                  f"torch {torch.__version__}", f"ortdlpack {ortdlpack.__version__}",
                  f"{args.threads} intra-op thread{'s' if args.threads > 1 else ''}")
    in_place = has_in_place()
    core_loop = os.access(CORE_LOOP, os.X_OK) and ort_library() is not None and prompt == CORE_PROMPT
    rates, gen_times, labels, step_sums = {}, {}, [], {}
    for size, path in paths.items():
        dec = read_decoder(path)
        if len(prompt) + max(counts) > dec.max_length:
            raise SystemExit(f"{size}: {len(prompt)} + {max(counts)} tokens exceed the maximum length {dec.max_length}")
        opts = session_options(args.threads)
        sess = ort.InferenceSession(dec.path, opts, providers=["CPUExecutionProvider"])
        dropin = ortdlpack.InferenceSession(dec.path, opts, providers=["CPUExecutionProvider"])
        loops = {GENAI: GenaiLoop(path, args.threads, dec.max_length), NUMPY: NumpyLoop(sess, dec),
                 IOBINDING: IOBindingLoop(sess, dec), DROPIN: DropinLoop(dropin, dec)}
        if in_place:
            loops[INPLACE] = InPlaceLoop(dropin, dec)
        for n in counts:
            ways = {label: Way(loop, prompt) for label, loop in loops.items()}
            expected = check(ways, dec, n, prompt)
            for way in ways.values():
                way.decode_seconds.clear()
            case = f"{size}, {n} tokens"
            medians = runner.compare(case, [(label, lambda w=way, n=n: w(n)) for label, way in ways.items()])
            for label, way in ways.items():
                if label not in labels:
                    labels.append(label)
                decode = statistics.median(way.decode_seconds[1:] or way.decode_seconds)
                rates[(size, n, label)] = (n - 1) / decode
                gen_times[(size, n, label)] = medians[label]
            if in_place:  # per step, the fastest of `rounds` interleaved generations at each position
                timed_ways = [(GENAI, lambda: genai_steps(loops[GENAI], prompt, n)),
                              (INPLACE, lambda: in_place_steps(loops[INPLACE], prompt, n))]
                if core_loop:
                    timed_ways.append((CORE, lambda: core_steps(dec, prompt, n)))
                fastest = {label: [float("inf")] * (n - 1) for label, _ in timed_ways}
                for _ in range(runner.rounds):
                    for label, timed in timed_ways:
                        times, ids = timed()
                        if ids != expected:
                            raise SystemExit(f"{label}, timed per step: ids differ from the numpy loop's")
                        fastest[label] = list(map(min, fastest[label], times))
                step_sums[(size, n)] = {label: sum(t) for label, t in fastest.items()}
        del loops, sess, dropin

    for size in paths:
        header, rows = ["way"], []
        for n in counts:
            header += [f"{n} tok/s", "÷ genai", "÷ numpy"]
        for label in labels:
            row = [label]
            for n in counts:
                r = rates[(size, n, label)]
                row += [f"{r:,.0f}", harness.ratio(rates[(size, n, GENAI)] / r),
                        harness.ratio(rates[(size, n, NUMPY)] / r)]
            rows.append(row)
        dec = read_decoder(paths[size])
        runner.table(header, rows, title=f"{size} ({dec.layers} layers, hidden {dec.num_heads * dec.head_size}, "
                     f"vocab {dec.vocab}): generated tokens after the first per second; per-token time against "
                     "onnxruntime-genai's and the numpy loop's (lower is better):")
    cases = [(size, n) for size in paths for n in counts]
    runner.table(["way"] + [f"{s} {n} ms" for s, n in cases],
                 [[label] + [harness.ms(gen_times[(s, n, label)]) for s, n in cases] for label in labels],
                 title="Whole generations (prefill + N - 1 steps; genai: with its Generator), median ms per call:")
    if step_sums:
        header, rows = ["case", "genai µs/step", "in_place= µs/step", "÷ genai"], []
        if core_loop:
            header += ["C++ loop on the core µs/step", "÷ genai"]
        for (s, n), t in step_sums.items():
            row = [f"{s} {n}", harness.us(t[GENAI] / (n - 1)), harness.us(t[INPLACE] / (n - 1)),
                   harness.ratio(t[INPLACE] / t[GENAI])]
            if core_loop:
                row += [harness.us(t[CORE] / (n - 1)), harness.ratio(t[CORE] / t[GENAI])]
            rows.append(row)
        runner.table(header, rows, title="Per decode step without the machine's interruptions: at each step position "
                     f"the fastest of {runner.rounds} interleaved generations (each step timed alone), averaged over "
                     "the positions; the C++ loop is bench/bench_decode_core.cc, examples/decode_loop.py's in-place "
                     "loop on the core's C++ API, on onnxruntime's library:")
        if not core_loop:
            runner.note()
            runner.note(f"The C++ loop not measured: {CORE_LOOP} is not built (CMake builds it), or the prompt is not "
                        f"{CORE_PROMPT}.")
    if not in_place:
        runner.note()
        runner.note(f"'{INPLACE}' not measured: this ortdlpack's InferenceSession.bind has no in_place= (the API "
                    "examples/decode_loop.py is written against).")
    runner.note()
    runner.note(f"ids checked equal across the ways before timing ({', '.join(map(str, counts))} tokens, prompt "
                f"{prompt}); the run took {time.perf_counter() - t_start:.0f} s")
    return runner.finish()


if __name__ == "__main__":
    sys.exit(main())
