"""feature model -> torch step -> head as Ray Serve deployments, with ortdlpack for zero-copy I/O in each replica.

    app = build_app(models_dir, replicas=2)     # then serve.run(app) (examples/serve/client.py does)

Each model deployment batches concurrent requests with @serve.batch, stacks them into one tensor, runs its ONNX
Runtime session through ortdlpack.run (the torch batch is read in place; the output is a torch view of ORT's
memory, no copy) and splits the batch again. Requests and answers travel between replicas as numpy arrays (Ray's
object store). The Pipeline ingress composes the three deployments through DeploymentHandles.
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


def _session(path: str) -> ort.InferenceSession:
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = THREADS
    opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])


class _OnnxModel:
    """One ONNX model; a batch of requests per session run."""

    input_name: str

    def __init__(self, path: str):
        torch.set_num_threads(THREADS)
        self.session = _session(path)
        self.input_name = self.session.get_inputs()[0].name

    @serve.batch(max_batch_size=MAX_BATCH, batch_wait_timeout_s=BATCH_WAIT_S)
    async def __call__(self, items: list[np.ndarray]) -> list[np.ndarray]:
        sizes = [len(x) for x in items]
        batch = torch.from_numpy(np.concatenate(items))  # one batch tensor; ORT reads it in place
        (out,) = ortdlpack.run(self.session, {self.input_name: batch})
        result = np.from_dlpack(out)  # a view of ORT's output: no copy until Ray serialises the parts
        return np.split(result, np.cumsum(sizes)[:-1])


@serve.deployment(ray_actor_options={"num_cpus": 0})
class FeatureModel(_OnnxModel):
    pass


@serve.deployment(ray_actor_options={"num_cpus": 0})
class HeadModel(_OnnxModel):
    pass


@serve.deployment(ray_actor_options={"num_cpus": 0})
class TorchStep:
    def __init__(self):
        torch.set_num_threads(THREADS)

    @serve.batch(max_batch_size=MAX_BATCH, batch_wait_timeout_s=BATCH_WAIT_S)
    async def __call__(self, items: list[np.ndarray]) -> list[np.ndarray]:
        sizes = [len(x) for x in items]
        out = torch_step(torch.from_numpy(np.concatenate(items))).numpy()  # torch views numpy memory: no copies
        return np.split(out, np.cumsum(sizes)[:-1])


@serve.deployment(ray_actor_options={"num_cpus": 0})
class Pipeline:
    """The ingress: images float32[n,3,64,64] -> logits float32[n,10]."""

    def __init__(self, feature, step, head):
        self.feature, self.step, self.head = feature, step, head

    async def __call__(self, images: np.ndarray) -> np.ndarray:
        feat = await self.feature.remote(images)
        f = await self.step.remote(feat)
        return await self.head.remote(f)


def build_app(models_dir: str, replicas: int = 1):
    """The application: every deployment with `replicas` replicas."""
    paths = {name: os.path.join(models_dir, f"{name}.onnx") for name in ("feature", "head")}
    return Pipeline.options(num_replicas=replicas).bind(
        FeatureModel.options(num_replicas=replicas).bind(paths["feature"]),
        TorchStep.options(num_replicas=replicas).bind(),
        HeadModel.options(num_replicas=replicas).bind(paths["head"]),
    )


def direct(models_dir: str, images: np.ndarray) -> np.ndarray:
    """The same pipeline in this process, without Ray: the reference answers."""
    feature = _session(os.path.join(models_dir, "feature.onnx"))
    head = _session(os.path.join(models_dir, "head.onnx"))
    (feat,) = ortdlpack.run(feature, {"x": torch.from_numpy(images)})
    f = torch_step(torch.from_dlpack(feat))
    (logits,) = ortdlpack.run(head, {"feat": f})
    return np.from_dlpack(logits).copy()
