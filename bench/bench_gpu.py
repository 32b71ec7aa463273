#!/usr/bin/env python3
"""The feature -> torch -> head pipeline on a CUDA GPU, per iteration (two session runs and the torch step).

    python bench/bench_gpu.py [--quick] [--rounds N] [--min-time S] [--json FILE] [--models DIR]

Paths compared (issue 9, item 5), batch 1 and 64, each ending with torch.cuda.synchronize():
  usual copy path     session.run on numpy: .cpu().numpy() before each run, torch.from_numpy().cuda() after
  ortdlpack.run       ortdlpack.run on onnxruntime.InferenceSessions (CUDA EP), head writes into a torch tensor
  ortdlpack.Session   the same with sessions created and run by ortdlpack's C++ core (ep="cuda")
  Session, stream=    those sessions on torch's side stream (Session(stream=)): ORT computes on it, the iteration
                      ends with that stream's synchronize()
  hand IOBinding      hand-written IOBinding by data_ptr() + OrtValue.__dlpack__ (the baseline)
Ordering is on (ortdlpack's default). Rounds interleaved (bench/harness.py); prints median ms per iteration and the
ratio to hand IOBinding (targets: ortdlpack.run <= 1.05x, ortdlpack.Session <= 1.0x). Without CUDA or the CUDA EP it
says so and exits 0.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile

import numpy as np

try:
    import torch  # before onnxruntime: onnxruntime-gpu then uses the CUDA libraries torch loaded
except ImportError:
    torch = None
import onnxruntime as ort

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path[:0] = [HERE, os.path.join(ROOT, "scripts")]
import harness  # noqa: E402
from make_models import make_models  # noqa: E402

BASE = "hand IOBinding"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    harness.add_options(parser)
    parser.add_argument("--models", default=os.path.join(tempfile.gettempdir(), "ortdlpack-models"))
    args = parser.parse_args(argv)
    if torch is None:
        print("bench_gpu: torch is not installed: nothing to measure")
        return 0
    cuda_lib = os.path.join(os.path.dirname(ort.__file__), "capi", "libonnxruntime_providers_cuda.so")
    if not torch.cuda.is_available() or not os.path.exists(cuda_lib):
        print("bench_gpu: needs a CUDA device and onnxruntime-gpu (CUDA EP): nothing to measure here")
        return 0
    if hasattr(ort, "preload_dlls"):
        ort.preload_dlls()
    import ortdlpack

    paths = make_models(args.models, ["feature", "head"])
    providers = [("CUDAExecutionProvider", {"use_tf32": "0"})]
    feature = ort.InferenceSession(paths["feature"], providers=providers)
    head = ort.InferenceSession(paths["head"], providers=providers)
    nfeature = ortdlpack.Session(paths["feature"], ep="cuda", ep_options={"use_tf32": "0"})
    nhead = ortdlpack.Session(paths["head"], ep="cuda", ep_options={"use_tf32": "0"})
    # The same on torch's stream (Session(stream=): ORT computes on it, nothing waits on the host until the end).
    side = torch.cuda.Stream()
    on_stream = {"ep": "cuda", "ep_options": {"use_tf32": "0", "device_id": "0"}, "stream": side.cuda_stream}
    sfeature = ortdlpack.Session(paths["feature"], **on_stream)
    shead = ortdlpack.Session(paths["head"], **on_stream)
    step = lambda f: torch.relu(torch.nn.functional.normalize(f))  # noqa: E731

    runner = harness.Runner.from_args(args)
    runner.header(f"onnxruntime {ort.__version__}", f"torch {torch.__version__}", torch.cuda.get_device_name(0))
    rows = []
    for batch in (1, 64):
        images = torch.rand(batch, 3, 64, 64, device="cuda")
        logits = torch.empty(batch, 10, device="cuda")

        def usual():
            feat = feature.run(None, {"x": images.cpu().numpy()})[0]
            f = step(torch.from_numpy(feat).cuda())
            out = torch.from_numpy(head.run(None, {"feat": f.cpu().numpy()})[0]).cuda()
            torch.cuda.synchronize()
            return out

        def via_run():
            (feat,) = ortdlpack.run(feature, {"x": images})
            ortdlpack.run(head, {"feat": step(torch.from_dlpack(feat))}, outputs={"logits": logits})
            torch.cuda.synchronize()
            return logits

        def via_session():
            (feat,) = nfeature.run({"x": images})
            nhead.run({"feat": step(torch.from_dlpack(feat))}, outputs={"logits": logits})
            torch.cuda.synchronize()
            return logits

        def via_stream():
            with torch.cuda.stream(side):
                (feat,) = sfeature.run({"x": images})
                shead.run({"feat": step(torch.from_dlpack(feat))}, outputs={"logits": logits})
            side.synchronize()
            return logits

        fb, hb = feature.io_binding(), head.io_binding()

        def hand():
            torch.cuda.synchronize()  # the hand-written path must order itself after torch's queued work
            fb.bind_input("x", "cuda", 0, np.float32, tuple(images.shape), images.data_ptr())
            fb.bind_output("feat", "cuda", 0)
            feature.run_with_iobinding(fb)
            f = step(torch.from_dlpack(fb.get_outputs()[0]))
            torch.cuda.synchronize()
            hb.bind_input("feat", "cuda", 0, np.float32, tuple(f.shape), f.data_ptr())
            hb.bind_output("logits", "cuda", 0, np.float32, tuple(logits.shape), logits.data_ptr())
            head.run_with_iobinding(hb)
            torch.cuda.synchronize()
            return logits

        ref = usual().cpu().numpy()
        for fn in (via_run, via_session, via_stream, hand):
            np.testing.assert_allclose(fn().cpu().numpy(), ref, rtol=1e-4, atol=1e-5)
        times = runner.compare(f"batch {batch}", [("usual copy path", usual), ("ortdlpack.run", via_run),
                                                  ("ortdlpack.Session", via_session), ("Session, stream=", via_stream),
                                                  (BASE, hand)])
        rows += [(batch, name, harness.ms(t), harness.ratio(t / times[BASE])) for name, t in times.items()]
    runner.table(["batch", "path", "ms/iter", f"vs {BASE}"], rows, align="rlrr",
                  title=f"Median ms per iteration, ratio to '{BASE}' (targets: ortdlpack.run <= 1.05x, "
                        "ortdlpack.Session <= 1.0x):")
    return runner.finish()


if __name__ == "__main__":
    sys.exit(main())
