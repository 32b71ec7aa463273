#!/usr/bin/env python3
"""Serves the pipeline on a local Ray instance in both designs of pipeline_app.py (whole-pipeline replicas, and the
composed one-deployment-per-step design) with 1, then 2, replicas, sends the same requests to each, prints
throughput and latency percentiles per design and replica count (all measured in this one run), and checks every
answer against the pipeline run directly.

    python examples/serve/client.py [--requests N] [--concurrency C] [--replicas 1 2] [--designs replica composed]
                                    [--device cpu|cuda] [--models DIR]

Loopback only: Ray's single-machine mode (every server on 127.0.0.1), no dashboard, no HTTP proxy (requests go
through a DeploymentHandle), no usage reporting. Ray is shut down at the end, also on errors. On a Ray cluster the same application runs unchanged
(docs/serving.md).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
# The replicas import pipeline_app by name (Ray pickles the deployments by reference): the workers Ray starts
# inherit this environment.
_paths = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
os.environ["PYTHONPATH"] = os.pathsep.join([HERE, os.path.dirname(HERE), *_paths])
os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
# Single-machine mode: the node address is 127.0.0.1 and every Ray server (GCS, raylet, workers, agents) listens on
# loopback only. (ray.init(_node_ip_address="127.0.0.1") is not enough: Ray 2.60 replaces a loopback address by the
# machine's external one, and its gRPC servers then listen on every interface.)
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
# A loaded 2-core machine answers queue-length probes slower than Serve's 0.1 s default (a warning each time).
os.environ.setdefault("RAY_SERVE_QUEUE_LENGTH_RESPONSE_DEADLINE_S", "1.0")
sys.path[:0] = [HERE, os.path.dirname(HERE), os.path.join(ROOT, "scripts")]

import logging  # noqa: E402

import numpy as np  # noqa: E402
import ray  # noqa: E402
import torch  # noqa: E402
from ray import serve  # noqa: E402

from make_models import make_models  # noqa: E402
from pipeline_app import DESIGNS, Pipeline, build_app  # noqa: E402


async def send(handle, requests: list, concurrency: int):
    """Sends every request, at most `concurrency` in flight; returns (answers, latencies in s, wall seconds)."""
    answers = [None] * len(requests)
    latencies = [0.0] * len(requests)
    gate = asyncio.Semaphore(concurrency)

    async def one(i):
        async with gate:
            t0 = time.perf_counter()
            answers[i] = await handle.remote(requests[i])
            latencies[i] = time.perf_counter() - t0

    t0 = time.perf_counter()
    await asyncio.gather(*(one(i) for i in range(len(requests))))
    return answers, latencies, time.perf_counter() - t0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--replicas", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--designs", nargs="+", choices=DESIGNS, default=list(DESIGNS))
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    parser.add_argument("--models", default=os.path.join(tempfile.gettempdir(), "ortdlpack-models"))
    args = parser.parse_args(argv)

    make_models(args.models, ["feature", "head"])
    rng = np.random.default_rng(0)
    requests = [rng.random((int(rng.integers(1, 5)), 3, 64, 64), dtype=np.float32) for _ in range(args.requests)]
    reference = Pipeline(args.models)  # on the host: the answers any device must give
    expected = [reference(torch.from_numpy(r)).numpy().copy() for r in requests]
    del reference

    t0 = time.perf_counter()
    ray.init(include_dashboard=False, num_cpus=os.cpu_count(), log_to_driver=False, configure_logging=False)
    try:
        serve.start(http_options={"location": "NoServer"})  # handles only: no HTTP port opened
        logging.getLogger("ray.serve").setLevel(logging.WARNING)  # the table, not Serve's progress lines
        print(f"ray {ray.__version__} up in {time.perf_counter() - t0:.1f} s on node {ray.util.get_node_ip_address()}; "
              f"{args.requests} requests of 1-4 images, {args.concurrency} in flight, device {args.device}")
        print(f"| {'design':<8} | {'replicas':>8} | {'req/s':>7} | {'images/s':>8} | {'p50 ms':>7} | {'p90 ms':>7} | "
              f"{'p99 ms':>7} | {'ready s':>7} | answers")
        print("|---|---:|---:|---:|---:|---:|---:|---:|---|")
        images = sum(len(r) for r in requests)
        rates = {}
        for design in args.designs:
            for replicas in args.replicas:
                # One application per design: Serve updates it in place (a second run only adds the new replicas).
                t_deploy = time.perf_counter()
                handle = serve.run(build_app(args.models, replicas, design, args.device), name=design,
                                   route_prefix=None)
                asyncio.run(send(handle, requests[: min(8, len(requests))], args.concurrency))  # warm-up
                t_deploy = time.perf_counter() - t_deploy
                answers, lat, wall = asyncio.run(send(handle, requests, args.concurrency))
                for got, want in zip(answers, expected):
                    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
                p50, p90, p99 = np.percentile(np.array(lat) * 1e3, [50, 90, 99])
                rates[(design, replicas)] = (len(requests) / wall, p99)
                print(f"| {design:<8} | {replicas:>8} | {len(requests) / wall:>7.1f} | {images / wall:>8.1f} | "
                      f"{p50:>7.1f} | {p90:>7.1f} | {p99:>7.1f} | {t_deploy:>7.1f} | equal to the direct pipeline |",
                      flush=True)
            serve.delete(design)  # its replicas go before the next design is measured
        for replicas in args.replicas:
            if ("replica", replicas) in rates and ("composed", replicas) in rates:
                (r_rate, r_p99), (c_rate, c_p99) = rates[("replica", replicas)], rates[("composed", replicas)]
                print(f"{replicas} replica(s): whole-pipeline replicas {r_rate / c_rate:.2f}x the composed design's "
                      f"req/s, p99 {r_p99 / c_p99:.2f}x")
    finally:
        t0 = time.perf_counter()
        serve.shutdown()
        ray.shutdown()
        print(f"ray shut down in {time.perf_counter() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
