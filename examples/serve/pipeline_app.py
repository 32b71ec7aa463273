"""feature model -> torch step -> head served with Ray Serve, two designs, ortdlpack for zero-copy I/O.

    app = build_app(models_dir, replicas=2)                      # whole-pipeline replicas (the design to use)
    app = build_app(models_dir, replicas=2, design="composed")   # one deployment per step (for comparison)
    # then serve.run(app) (examples/serve/client.py does)

"replica" (PipelineReplica): each replica holds the whole pipeline, both ONNX Runtime sessions and the torch step.
A batch of requests (@serve.batch) is stacked into one tensor, moved to the replica's device once, and goes
feature -> step -> head there: ortdlpack.run reads the torch batch in place and its outputs are torch views of ORT's
memory, so between the steps no tensor is copied and none leaves the device. Only the answers (logits) go back to
the caller, through Ray's object store. Ray Serve spreads requests over the replicas.

"composed" (Pipeline -> FeatureModel, TorchStep, HeadModel): every step is a deployment of its own and the ingress
composes them through DeploymentHandles, so every intermediate tensor travels through Ray's object store, which is
host memory: on a GPU node that is a device -> host -> device round trip per step (docs/serving.md).

`device`: "cpu", or "cuda" (sessions on the CUDA EP, the step on torch's GPU, each replica given a GPU).
"""

from __future__ import annotations

import os

import numpy as np
import onnxruntime as ort
import torch
from ray import serve

import ortdlpack
from pipeline_demo import torch_step  # the demos' step (examples/ is on the replicas' PYTHONPATH)

MAX_BATCH = 16
BATCH_WAIT_S = 0.005
# Each replica uses one thread: replicas, not threads, are what this app scales by (and CI has 2 cores).
THREADS = 1
DESIGNS = ("replica", "composed")


def _session(path: str, device: str = "cpu") -> ort.InferenceSession:
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = THREADS
    opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
    providers = ["CUDAExecutionProvider", "CPUExecutionProvider"] if device == "cuda" else ["CPUExecutionProvider"]
    return ort.InferenceSession(path, opts, providers=providers)


def _paths(models_dir: str) -> dict:
    return {name: os.path.join(models_dir, f"{name}.onnx") for name in ("feature", "head")}


def _split(batch: np.ndarray, items: list) -> list:
    return np.split(batch, np.cumsum([len(x) for x in items])[:-1])


def _actor_options(device: str) -> dict:
    # num_cpus 0: the replicas share the machine's cores (CI has 2); on GPU nodes each replica holds one GPU.
    return {"num_cpus": 0, "num_gpus": 1 if device == "cuda" else 0}


class Pipeline:
    """The whole pipeline in one process: images float32[n,3,64,64] (torch, on any device) -> logits (torch, same
    device). Nothing is copied between the steps."""

    def __init__(self, models_dir: str, device: str = "cpu"):
        torch.set_num_threads(THREADS)
        paths = _paths(models_dir)
        self.device = torch.device(device)
        self.feature = _session(paths["feature"], device)
        self.head = _session(paths["head"], device)

    def __call__(self, images: torch.Tensor) -> torch.Tensor:
        (feat,) = ortdlpack.run(self.feature, {"x": images})            # read in place; a Tensor on the device
        f = torch_step(torch.from_dlpack(feat))                         # a view of ORT's output
        (logits,) = ortdlpack.run(self.head, {"feat": f})
        return torch.from_dlpack(logits)


@serve.deployment
class PipelineReplica:
    """One replica, the whole pipeline: a batch of requests per pipeline run, on the replica's device."""

    def __init__(self, models_dir: str, device: str = "cpu"):
        self.pipeline = Pipeline(models_dir, device)

    @serve.batch(max_batch_size=MAX_BATCH, batch_wait_timeout_s=BATCH_WAIT_S)
    async def __call__(self, items: list[np.ndarray]) -> list[np.ndarray]:
        # The one host -> device copy of a batch (none on CPU: torch.from_numpy is a view) ...
        batch = torch.from_numpy(np.concatenate(items)).to(self.pipeline.device)
        logits = self.pipeline(batch)
        # ... and the one device -> host copy of its answers, which leave the replica (a view on CPU).
        return _split(logits.cpu().numpy(), items)


# --- the composed design: one deployment per step -----------------------------------------------------------------


class _OnnxStep:
    """One ONNX model; a batch of requests per session run. Requests and answers are numpy arrays (host memory):
    that is what travels between deployments."""

    def __init__(self, path: str, device: str = "cpu"):
        torch.set_num_threads(THREADS)
        self.device = torch.device(device)
        self.session = _session(path, device)
        self.input_name = self.session.get_inputs()[0].name

    @serve.batch(max_batch_size=MAX_BATCH, batch_wait_timeout_s=BATCH_WAIT_S)
    async def __call__(self, items: list[np.ndarray]) -> list[np.ndarray]:
        batch = torch.from_numpy(np.concatenate(items)).to(self.device)
        (out,) = ortdlpack.run(self.session, {self.input_name: batch})
        return _split(torch.from_dlpack(out).cpu().numpy(), items)  # to the host: it leaves the replica


@serve.deployment
class FeatureModel(_OnnxStep):
    pass


@serve.deployment
class HeadModel(_OnnxStep):
    pass


@serve.deployment
class TorchStep:
    def __init__(self, device: str = "cpu"):
        torch.set_num_threads(THREADS)
        self.device = torch.device(device)

    @serve.batch(max_batch_size=MAX_BATCH, batch_wait_timeout_s=BATCH_WAIT_S)
    async def __call__(self, items: list[np.ndarray]) -> list[np.ndarray]:
        out = torch_step(torch.from_numpy(np.concatenate(items)).to(self.device))
        return _split(out.cpu().numpy(), items)


@serve.deployment(ray_actor_options={"num_cpus": 0})
class ComposedPipeline:
    """The composed design's ingress: images float32[n,3,64,64] -> logits float32[n,10] through three deployments."""

    def __init__(self, feature, step, head):
        self.feature, self.step, self.head = feature, step, head

    async def __call__(self, images: np.ndarray) -> np.ndarray:
        feat = await self.feature.remote(images)
        f = await self.step.remote(feat)
        return await self.head.remote(f)


def build_app(models_dir: str, replicas: int = 1, design: str = "replica", device: str = "cpu"):
    """The application: `replicas` whole-pipeline replicas ("replica"), or every step with `replicas` replicas
    behind an ingress ("composed")."""
    actor = _actor_options(device)
    if design == "replica":
        return PipelineReplica.options(num_replicas=replicas, ray_actor_options=actor).bind(models_dir, device)
    if design != "composed":
        raise ValueError(f"design must be one of {DESIGNS}, not {design!r}")
    paths = _paths(models_dir)
    return ComposedPipeline.options(num_replicas=replicas).bind(
        FeatureModel.options(num_replicas=replicas, ray_actor_options=actor).bind(paths["feature"], device),
        TorchStep.options(num_replicas=replicas, ray_actor_options=actor).bind(device),
        HeadModel.options(num_replicas=replicas, ray_actor_options=actor).bind(paths["head"], device),
    )
