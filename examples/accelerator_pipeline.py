#!/usr/bin/env python3
"""The accelerator pipeline: the usual path against ortdlpack, with what moves between host and device.

    python examples/accelerator_pipeline.py [--budget SECONDS] [--device auto|cuda|webgpu|virtual]

Runs on the best device here, in this order: an NVIDIA GPU (torch and onnxruntime-gpu see CUDA), the WebGPU EP
(onnxruntime-ep-webgpu: a hardware adapter where the machine has a GPU, else the software one, Mesa's lavapipe:
any Linux machine), the virtual accelerator plugin EP shipped with ortdlpack.

On CUDA and WebGPU, two workloads (models from scripts/make_models.py), each run three ways:

  image pipeline   images uint8[N,3,480,640] --preprocess--> x float32[N,3,224,224] --backbone-->
                   fmap float32[N,32,28,28] --pool_head--> logits float32[N,10]
                   The images come decoded on the host (uint8, channels first, as torchvision.io.decode_image gives
                   them); the logits are wanted on the host. The intermediates x and fmap are 60 % of the bytes the
                   usual path moves.
  memory-bound     y = (x + 1) * 0.5, run twice (x -> y1 -> y2), on 64 Ki and 1 Mi floats: next to no compute,
  chain            so moving data is much of the work. x and y2 on the host, and once more with x already on the
                   device (the middle of a device pipeline: an earlier stage left it there), and with x and y
                   on the device (the chain as one stage of a device pipeline; one read-back per 8 chains waits
                   for the device, whose runs return before their kernels finish).

  usual              onnxruntime.InferenceSession.run with numpy: every run copies its feeds to the device and its
                     outputs back, so each intermediate crosses twice
  ortdlpack.run      the same InferenceSessions through ortdlpack.run: intermediates stay in device memory; the last
                     output is written into the caller's numpy array
  ortdlpack.Session  the same with sessions created and run by ortdlpack's C++ core

Host<->device bytes and copies per iteration are counted by construction (the tensors that cross). Every path's
results are checked equal to the usual path's. On the virtual accelerator (which computes nothing itself) the
two-model pipeline with the images and logits in device memory runs instead, its copies counted by the device
(see virtual_demo). Under a minute on 2 cores.
"""

from __future__ import annotations

import argparse
import ctypes
import gc
import importlib.metadata
import os
import platform
import re
import subprocess
import sys
import tempfile

import numpy as np
import onnxruntime as ort
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [os.path.join(ROOT, "scripts"), os.path.join(ROOT, "bench")]
import harness  # noqa: E402  (the benchmarks' timing: paths alternating, median per iteration)
from make_models import IMAGE_HW, make_models  # noqa: E402

import ortdlpack  # noqa: E402
import ortdlpack.testing  # noqa: E402

sys.path.insert(0, os.path.join(ROOT, "examples"))
from pipeline_demo import torch_step  # noqa: E402  (the CPU demo's step)

BATCHES = (1, 64)
CHAIN_SIZES = (1 << 16, 1 << 20)
ON_DEVICE_CHAINS = 8  # chains per read-back in the device-resident rows
VD_EP = "VirtualDeviceEP"
VD_VENDOR = 0xD1A9
WEBGPU_EP = "WebGpuExecutionProvider"
SOFTWARE_ADAPTER = "ORT_WEBGPU_EP_ALLOW_SOFTWARE_ADAPTER"


def header(kind: str) -> str:
    """Prints and returns what ran where, with the versions (the benchmark's chart caption)."""
    return print_line(f"{kind}; onnxruntime {ort.__version__}, torch {torch.__version__}, "
                      f"ortdlpack {ortdlpack.__version__}, "
          f"{platform.machine()}, {os.cpu_count()} CPUs")


def print_line(text: str) -> str:
    print(text, flush=True)
    return text


def print_table(rows) -> None:
    """rows: (batch, path, seconds, base seconds, pipeline (bytes, copies), inside runs (bytes, copies) or None)."""
    print(f"{'batch':>5} | {'path':<9} | {'ms/iter':>8} | {'vs usual':>8} | {'pipeline host<->device':>26} | "
          f"{'inside runs':>22}")
    print("-" * 96)
    for n, name, t, base, (pb, pc), inside in rows:
        ins = f"{inside[0]:>12,} B {inside[1]:>3} cp" if inside else f"{'(not counted)':>22}"
        print(f"{n:>5} | {name:<9} | {t * 1e3:>8.3f} | {base / t:>7.2f}x | {pb:>15,} B {pc:>3} copies | {ins}")


# --- CUDA and WebGPU: the same workloads, three ways ---------------------------------------------------------------


class Target:
    """An EP's device the workloads run on: how to make the user's InferenceSession there, the name ortdlpack.Session
    takes, and the device intermediates live on."""

    def __init__(self, label: str, ep: str, device: ortdlpack.Device, make_session):
        self.label, self.ep, self.device, self._make_session = label, ep, device, make_session

    def inference_session(self, path: str) -> ort.InferenceSession:
        opts = ort.SessionOptions()
        opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
        return self._make_session(path, opts)

    def session(self, path: str) -> ortdlpack.Session:
        return ortdlpack.Session(path, ep=self.ep, config={"session.intra_op.allow_spinning": "0"})


def cuda_target() -> Target:
    providers = [("CUDAExecutionProvider", {"device_id": "0", "use_tf32": "0"})]
    return Target(f"GPU ({torch.cuda.get_device_name(0)}, CUDA EP)", "cuda", ortdlpack.Device("cuda:0"),
                  lambda path, opts: ort.InferenceSession(path, opts, providers=providers))


def _webgpu_works(env: dict) -> bool:
    """Whether the WebGPU EP allocates a tensor in a fresh process with environment `env` (the EP reads its
    software-adapter variable once, at registration: only a new process can try both ways)."""
    code = "import numpy, ortdlpack; ortdlpack.from_dlpack(numpy.ones(1, 'f'), device='webgpu:0')"
    env = dict(env, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, timeout=120).returncode == 0


def webgpu_target() -> Target | str:
    """The WebGPU EP on a hardware adapter if there is one, else on the software one; or why it cannot run."""
    try:
        version = importlib.metadata.version("onnxruntime-ep-webgpu")
    except importlib.metadata.PackageNotFoundError:
        return "onnxruntime-ep-webgpu is not installed (pip install onnxruntime-ep-webgpu)"
    release = tuple(int(v) for v in re.findall(r"\d+", ort.__version__)[:3])
    if release < (1, 24, 4) or release[:2] == (1, 26):
        return f"onnxruntime-ep-webgpu {version} does not run sessions on onnxruntime {ort.__version__}"
    set_here = False
    if SOFTWARE_ADAPTER not in os.environ:
        hardware = _webgpu_works({k: v for k, v in os.environ.items() if k != SOFTWARE_ADAPTER})
        if not hardware:
            # No GPU adapter: the software one. Set for this process only, before ortdlpack registers the EP; the
            # library never sets it (it makes the EP offer a CPU as its device).
            os.environ[SOFTWARE_ADAPTER] = "1"
            set_here = True
            ort.set_default_logger_severity(3)  # (ORT's warning that the variable is set: this demo said so)
    try:
        ortdlpack.from_dlpack(np.ones(1, np.float32), device="webgpu:0")
    except BufferError as e:
        return f"the WebGPU EP cannot run here: {e}"
    ep_device = next(d for d in ort.get_ep_devices() if d.ep_name == WEBGPU_EP)
    if ep_device.device.type == ort.OrtHardwareDeviceType.GPU:
        adapter = f"hardware adapter: {ep_device.device.vendor} GPU"
    else:
        origin = "set by accelerator_pipeline.py for its own process" if set_here else "from the environment"
        adapter = f"software adapter: Mesa's lavapipe on the {ep_device.device.vendor} CPU, {SOFTWARE_ADAPTER}=1 " + origin

    def make_session(path, opts):
        opts.add_provider_for_devices([ep_device], {})
        return ort.InferenceSession(path, opts)

    return Target(f"WebGPU EP ({adapter}; onnxruntime-ep-webgpu {version})", "webgpu", ortdlpack.Device(ep_device),
                  make_session)


def print_rows(case_title: str, rows) -> None:
    """rows: (case, path, seconds, base seconds, (bytes, copies) per iteration)."""
    print(f"{case_title:>8} | {'path':<18} | {'ms/iter':>9} | {'vs usual':>8} | {'host<->device bytes':>19} | copies")
    print("-" * 87)
    for case, path, t, base, (nbytes, copies) in rows:
        if t is None:
            print(f"{case:>8} | {path:<18} | {'n/a':>9} | {'':>8} | {'':>19} |")
            continue
        print(f"{case:>8} | {path:<18} | {t * 1e3:>9.3f} | {base / t:>7.2f}x | {nbytes:>19,} | {copies:>6}")


def three_ways(target: Target, names, out_name: str, feed: np.ndarray, out_shape):
    """The usual path, ortdlpack.run and ortdlpack.Session over the chain of models `names` (one input, one output
    each), host feed in, host output out; each returns the output array."""
    sessions = [target.inference_session(p) for p in names]
    natives = [target.session(p) for p in names]
    inputs = [s.get_inputs()[0].name for s in sessions]
    result = np.empty(out_shape, np.float32)

    def usual():
        v = feed
        for s, name in zip(sessions, inputs):
            v = s.run(None, {name: v})[0]
        return v

    def chain(run):
        v = feed
        for k, name in enumerate(inputs):
            last = k == len(inputs) - 1
            (v,) = run(k, {name: v}, {out_name: result} if last else None)
        return result

    def with_run():
        return chain(lambda k, feeds, outputs: ortdlpack.run(sessions[k], feeds, outputs=outputs))

    def with_session():
        return chain(lambda k, feeds, outputs: natives[k].run(feeds, outputs=outputs))

    return usual, with_run, with_session


def checked(paths, ref: np.ndarray, run_error: list, **tolerance):
    """`paths` whose results equal `ref` (each run once: also their warm-up); ortdlpack.run is left out where
    onnxruntime cannot bind this device's memory into its sessions (its message kept in run_error)."""
    kept = []
    for fn in paths:
        try:
            got = fn()
        except (BufferError, RuntimeError) as e:
            # onnxruntime cannot bind this memory into its sessions (BufferError); before 1.30 the WebGPU EP itself
            # refuses raw-bound buffers at run time (RuntimeError)
            if fn.__name__ != "with_run":
                raise
            run_error[:] = [str(e)]
            kept.append(None)
            continue
        np.testing.assert_allclose(got, ref, **tolerance)
        kept.append(fn)
    return kept


def image_pipeline(target: Target, models: dict, timer: harness.Runner, run_error: list, batches):
    """Rows of the image pipeline at each batch size."""
    rows = []
    rng = np.random.default_rng(7)
    for n in batches:
        images = rng.integers(0, 256, (n, 3, *IMAGE_HW), dtype=np.uint8)
        usual, with_run, with_session = three_ways(
            target, [models[m] for m in ("preprocess", "backbone", "pool_head")], "logits", images, (n, 10))
        ref = usual().copy()
        with_run, with_session = checked((with_run, with_session), ref, run_error, rtol=1e-4, atol=1e-4)
        paths = (("usual", usual), ("ortdlpack.run", with_run), ("ortdlpack.Session", with_session))
        times = timer.compare(f"image pipeline, batch {n}", [(path, f) for path, f in paths if f is not None])
        x, fmap, logits = n * 3 * 224 * 224 * 4, n * 32 * 28 * 28 * 4, n * 10 * 4
        base = times["usual"]
        rows.append((n, "usual", base, base, (images.nbytes + 2 * x + 2 * fmap + logits, 6)))
        for path in ("ortdlpack.run", "ortdlpack.Session"):
            rows.append((n, path, times.get(path), base, (images.nbytes + logits, 2)))
    return rows


def elementwise_chain(target: Target, models: dict, timer: harness.Runner, run_error: list):
    """Rows of the two-run memory-bound chain at each size."""
    rows = []
    for n in CHAIN_SIZES:
        x = np.random.default_rng(n).random(n, dtype=np.float32)
        usual, with_run, with_session = three_ways(target, [models["elementwise"]] * 2, "y", x, (n,))
        # The same two runs in the middle of a device pipeline: x was left on the device by an earlier stage.
        native, x_dev, y2 = target.session(models["elementwise"]), ortdlpack.from_dlpack(x, device=target.device), \
            np.empty_like(x)

        def x_on_device():
            (y1,) = native.run({"x": x_dev})
            native.run({"x": y1}, outputs={"y": y2})
            return y2

        # The two runs as one stage of a device pipeline, x and y on the device: a WebGPU run returns before its
        # kernels finish, so ON_DEVICE_CHAINS chains are followed by one read-back, which waits for all of them, and
        # the time is per chain.
        inference = target.inference_session(models["elementwise"])

        def on_device(run_once):
            def chains():
                for _ in range(ON_DEVICE_CHAINS):
                    y = run_once(run_once(x_dev))
                return y.to("cpu").numpy()
            return chains

        def run_on_device(v):
            return ortdlpack.run(inference, {"x": v}, device=target.device)[0]

        def session_on_device(v):
            return native.run({"x": v}, device=target.device)[0]

        run_dev, session_dev = on_device(run_on_device), on_device(session_on_device)
        run_dev.__name__ = "with_run"  # ortdlpack.run may be unavailable here, as above
        ref = usual().copy()
        with_run, with_session, x_on_device, run_dev, session_dev = checked(
            (with_run, with_session, x_on_device, run_dev, session_dev), ref, run_error, rtol=0, atol=0)
        label = f"{n >> 20} Mi" if n >= 1 << 20 else f"{n >> 10} Ki"
        paths = (("usual", usual), ("ortdlpack.run", with_run), ("ortdlpack.Session", with_session),
                 ("Session, x on dev", x_on_device), ("run, on device", run_dev), ("Session, on device", session_dev))
        times = timer.compare(f"memory-bound chain, {label}", [(path, f) for path, f in paths if f is not None])
        base = times["usual"]
        rows.append((label, "usual", base, base, (4 * x.nbytes, 4)))
        for path in ("ortdlpack.run", "ortdlpack.Session"):
            rows.append((label, path, times.get(path), base, (2 * x.nbytes, 2)))
        rows.append((label, "Session, x on dev", times["Session, x on dev"], base, (x.nbytes, 1)))
        read_back = (x.nbytes // ON_DEVICE_CHAINS, f"1/{ON_DEVICE_CHAINS}")
        for path in ("run, on device", "Session, on device"):
            t = times.get(path)
            rows.append((label, path, t / ON_DEVICE_CHAINS if t is not None else None, base, read_back))
    return rows


def cpu_reference(models: dict, timer: harness.Runner, batches) -> list:
    """The image pipeline's usual path on the CPU EP alone, ms per batch: what the software adapter is up against."""
    opts = ort.SessionOptions()
    opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
    sessions = [ort.InferenceSession(models[m], opts, providers=["CPUExecutionProvider"])
                for m in ("preprocess", "backbone", "pool_head")]
    out = []
    for n in batches:
        images = np.random.default_rng(7).integers(0, 256, (n, 3, *IMAGE_HW), dtype=np.uint8)

        def run():
            v = images
            for s in sessions:
                v = s.run(None, {s.get_inputs()[0].name: v})[0]

        out.append(timer.compare(f"CPU EP alone, batch {n}", [("usual", run)], budget=timer.budget / 4)["usual"])
    return out


def device_demo(target: Target, models: dict, timer: harness.Runner, batches=BATCHES, show_facts: bool = True):
    """Runs and prints both workloads on `target`; returns (caption, sections)."""
    caption = header(target.label)
    run_error: list = []
    sections = []
    print("\nimage pipeline: uint8 images 480x640 (host) -> preprocess -> backbone -> pool_head -> logits (host); "
          "results equal")
    rows = image_pipeline(target, models, timer, run_error, batches)
    print_rows("batch", rows)
    sections.append(("image pipeline", "batch", rows))
    if target.ep == "webgpu":
        cpu = cpu_reference(models, timer, batches)
        print("  (the same pipeline on the CPU EP alone, usual path: "
              + ", ".join(f"{t * 1e3:.1f} ms at batch {n}" for n, t in zip(batches, cpu))
              + ": a software adapter is a CPU running GPU code; its copies are memcpys)")
    print("\nmemory-bound chain: y = (x + 1) * 0.5 twice, x and y2 on the host ('x on dev': x already on the device, "
          f"left there by an earlier stage; 'on device': x and y on the device, one read-back per {ON_DEVICE_CHAINS} "
          "chains); results equal")
    rows = elementwise_chain(target, models, timer, run_error)
    print_rows("floats", rows)
    sections.append(("memory-bound chain", "floats", rows))
    if run_error:
        print(f"\nortdlpack.run: n/a here ({run_error[0]})")
    print("bytes and copies per iteration by construction: usual = every feed in and every output out of each run; "
          "ortdlpack = the first feed in, the last output out")
    if show_facts:
        device_facts(target, models, batches[-1])
    return caption, sections


def device_facts(target: Target, models: dict, n: int) -> None:
    """Where the intermediates of one batch-64 iteration live and what ORT wrote where."""
    pre, bb, head = (target.session(models[m]) for m in ("preprocess", "backbone", "pool_head"))
    images = np.zeros((n, 3, *IMAGE_HW), np.uint8)
    (x,) = pre.run({"images": images})
    fmap_dest = ortdlpack.from_dlpack(np.zeros((n, 32, 28, 28), np.float32), device=target.device)
    (fmap,) = bb.run({"x": x}, outputs={"fmap": fmap_dest})
    logits = np.empty((n, 10), np.float32)
    (out,) = head.run({"fmap": fmap}, outputs={"logits": logits})
    print(f"\nzero-copy facts (ortdlpack.Session, batch {n}):")
    print(f"  x (preprocess output) on {x.device}; fmap on {fmap.device}, ORT wrote it into the preallocated device "
          f"tensor: same handle {fmap.data_ptr == fmap_dest.data_ptr}; logits written into the caller's numpy "
          f"array: same pointer {out.data_ptr == logits.ctypes.data}")


# --- the virtual accelerator ------------------------------------------------------------------------------------


class VirtualAccelerator:
    """The plugin EP registered once, its device 0, and its copy counters."""

    def __init__(self):
        path = ortdlpack.testing.virtual_device_library()
        if not any(d.ep_name == VD_EP for d in ort.get_ep_devices()):
            try:
                ortdlpack.register_execution_provider_library("ortdlpack_virtual_device", path)
            except Exception as e:  # e.g. an onnxruntime older than the plugin's EP API (1.29): say so, no traceback
                raise SystemExit(f"the virtual accelerator is not available here: {e}") from None
        self.ep_device = next(d for d in ort.get_ep_devices() if d.ep_name == VD_EP and d.device.device_id == 0)
        self.lib = ortdlpack.testing.virtual_device_abi(path)  # the registered copy: the same counters
        # Stream work stays asynchronous (a worker thread runs each stream's queue) but without the artificial delay
        # the ordering tests give each queued copy: the usual path's copies take no stream and would pay none of it.
        self.lib.ortdlpack_vd_set_stream_delay_us.argtypes = [ctypes.c_uint64]
        self.lib.ortdlpack_vd_set_stream_delay_us(0)
        self.device = ortdlpack.Device(self.ep_device)

    def counters(self) -> ortdlpack.testing.VirtualDeviceCounters:
        c = ortdlpack.testing.VirtualDeviceCounters()
        self.lib.ortdlpack_vd_get_counters(ctypes.byref(c))
        return c

    def moved(self) -> tuple[int, int]:
        """Host<->device bytes and tensor copies so far."""
        c = self.counters()
        return c.bytes_h2d + c.bytes_d2h, c.copies

    def is_device_pointer(self, ptr: int, nbytes: int) -> bool:
        return bool(self.lib.ortdlpack_vd_is_device_pointer(ptr, nbytes))

    def session(self, path: str, threads: int) -> ort.InferenceSession:
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads
        opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
        opts.add_provider_for_devices([self.ep_device], {})
        return ort.InferenceSession(path, opts)

    def empty(self, shape) -> ort.OrtValue:
        return ort.OrtValue.ortvalue_from_shape_and_type(list(shape), np.float32, "npu", 0, VD_VENDOR)


class Split:
    """Host<->device traffic of one iteration, split into what session runs moved and what the pipeline moved."""

    def __init__(self, acc: VirtualAccelerator):
        self.acc = acc
        self.inside = [0, 0]
        self.start = acc.moved()

    def run(self, fn, *args, **kwargs):
        b0, c0 = self.acc.moved()
        out = fn(*args, **kwargs)
        b1, c1 = self.acc.moved()
        self.inside[0] += b1 - b0
        self.inside[1] += c1 - c0
        return out

    def result(self):
        b, c = self.acc.moved()
        total = (b - self.start[0], c - self.start[1])
        return (total[0] - self.inside[0], total[1] - self.inside[1]), tuple(self.inside)


def virtual_demo(models: dict, timer: harness.Runner, threads: int, show_facts: bool = True):
    """Runs and prints the comparison on the virtual accelerator; returns (caption, table rows)."""
    acc = VirtualAccelerator()
    caption = header(f"virtual accelerator ({VD_EP}, device 0: memory the host cannot read)")
    feature = acc.session(models["feature"], threads)  # usual path: InferenceSessions with the EP, IOBinding
    head = acc.session(models["head"], threads)
    config = {"session.intra_op.allow_spinning": "0"}
    feature_n, step_n, head_n = (ortdlpack.Session(models[m], ep=VD_EP, intra_op_num_threads=threads, config=config)
                                 for m in ("feature", "step", "head"))
    torch.set_num_threads(1)

    rows = []
    facts = None
    for n in BATCHES:
        x_host = torch.rand(n, 3, 64, 64, generator=torch.Generator().manual_seed(n)).numpy()
        images_ov = acc.empty(x_host.shape)  # the images live on the device (an OrtValue for the usual path)
        feat_dev, f_dev, logits_dev = acc.empty((n, 128)), acc.empty((n, 128)), acc.empty((n, 10))
        ort.copy_tensors([ort.OrtValue.ortvalue_from_numpy(x_host)], [images_ov], None)
        images = ortdlpack.from_dlpack(x_host, device=acc.device)  # the same images on the device, for ortdlpack
        # ortdlpack's device destinations: ORT writes every output straight into them.
        feat_o, f_o, logits = (ortdlpack.from_dlpack(np.zeros(s, np.float32), device=acc.device)
                               for s in ((n, 128), (n, 128), (n, 10)))
        io_f, io_h = feature.io_binding(), head.io_binding()

        def usual(split=None):
            run = split.run if split else (lambda fn: fn())

            def run_feature():  # (IOBinding copies a device feed at bind time: part of the run)
                io_f.bind_ortvalue_input("x", images_ov)
                io_f.bind_ortvalue_output("feat", feat_dev)
                feature.run_with_iobinding(io_f)

            def run_head():
                io_h.bind_ortvalue_input("feat", f_dev)
                io_h.bind_ortvalue_output("logits", logits_dev)
                head.run_with_iobinding(io_h)

            run(run_feature)
            f = torch_step(torch.from_numpy(feat_dev.numpy()))  # device -> host
            ort.copy_tensors([ort.OrtValue.ortvalue_from_numpy(f.numpy())], [f_dev], None)  # host -> device
            run(run_head)
            return logits_dev

        def with_ortdlpack(split=None):
            run = split.run if split else (lambda fn, *a, **k: fn(*a, **k))
            (feat,) = run(feature_n.run, {"x": images}, outputs={"feat": feat_o})
            (f,) = run(step_n.run, {"feat": feat}, outputs={"out": f_o})
            run(head_n.run, {"feat": f}, outputs={"logits": logits})
            return logits, feat, f

        # One metered iteration of each: results, and what moved.
        split_u = Split(acc)
        usual(split_u)
        usual_pipe, usual_in = split_u.result()
        ref = logits_dev.numpy()  # (read back after metering: this copy is the check's, not the pipeline's)
        split_o = Split(acc)
        _, feat, f = with_ortdlpack(split_o)
        ort_pipe, ort_in = split_o.result()
        np.testing.assert_allclose(logits.numpy(), ref, rtol=1e-4, atol=1e-5)
        if n == BATCHES[-1]:
            facts = (images, feat, f, logits)
        times = timer.compare(f"virtual accelerator, batch {n}", [("usual", usual), ("ortdlpack", with_ortdlpack)])
        rows.append((n, "usual", times["usual"], times["usual"], usual_pipe, usual_in))
        rows.append((n, "ortdlpack", times["ortdlpack"], times["usual"], ort_pipe, ort_in))
    print_table(rows)
    print("results equal (assert_allclose of the logits, read back outside the metered iteration).\n"
          "pipeline    = copies made between session runs (usual: OrtValue.numpy() of each feature output, "
          "copy_tensors of the torch step's result)\n"
          "inside runs = ORT moving a device session's inputs/outputs through the EP: this EP runs no kernel itself, "
          "that traffic stands for\n              the device's compute and would stay on a real device")

    if not show_facts:
        return caption, rows
    images, feat, f, logits = facts
    print("\nzero-copy facts (batch 64):")
    for name, t in (("images", images), ("feature output", feat), ("step output", f), ("logits", logits)):
        print(f"  {name:<15} {t.device}  data {t.data_ptr:#x}  in a live device allocation: "
              f"{acc.is_device_pointer(t.data_ptr, t.nbytes)}")
    before = logits.data_ptr
    head_n.run({"feat": f}, outputs={"logits": logits})
    print(f"  ORT wrote the logits into the preallocated device tensor: same pointer {before == logits.data_ptr}")
    del images, feat, f, logits, facts
    c0 = acc.counters()
    t = ortdlpack.from_dlpack(np.ones((64, 128), np.float32), device=acc.device)  # one device allocation
    views = [ortdlpack.from_dlpack(t) for _ in range(3)]  # DLPack export + import on the device: no allocation
    same = all(v.data_ptr == t.data_ptr for v in views)
    del t
    c1 = acc.counters()
    del views
    gc.collect()
    c2 = acc.counters()
    print(f"  a device tensor and 3 DLPack views of it: same pointer {same}, {c1.allocs - c0.allocs} allocation, "
          f"{c1.copies - c0.copies - 1} copies after the upload; frees: {c1.frees - c0.frees} while a view lives, "
          f"{c2.frees - c1.frees} after the last one (the deleter runs once)")
    x = torch.rand(64, 128)
    refs = sys.getrefcount(x)
    t = ortdlpack.from_dlpack(x)  # torch -> ORT -> torch on the host
    y = torch.from_dlpack(t)
    print(f"  torch -> ortdlpack -> torch: same pointer {y.data_ptr() == x.data_ptr()}; ", end="")
    del t, y
    gc.collect()
    print(f"torch's tensor referenced {refs} times before, {sys.getrefcount(x)} after both are dropped "
          f"(its DLPack deleter ran)")
    return caption, rows


# --- which device -----------------------------------------------------------------------------------------------


def arguments(description: str, argv, budget: float, options=None):
    """The command line; `options(parser)` adds a caller's own options."""
    parser = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    if options:
        options(parser)
    parser.add_argument("--budget", type=float, default=budget, help="seconds of timing per case")
    parser.add_argument("--device", choices=("auto", "cuda", "webgpu", "virtual"), default="auto")
    parser.add_argument("--batches", type=lambda v: tuple(int(b) for b in v.split(",")), default=BATCHES,
                        help="batch sizes of the image pipeline on CUDA / WebGPU (default 1,64)")
    parser.add_argument("--models", default=os.path.join(tempfile.gettempdir(), "ortdlpack-models"))
    return parser.parse_args(argv)


def timer_for(budget: float) -> harness.Runner:
    """Paths alternate until `budget` seconds per case are spent, at least 3 rounds (1 for a smoke run: budget under
    0.5 s)."""
    return harness.Runner(rounds=3 if budget >= 0.5 else 1, budget=budget)


def run_pipeline(args, timer: harness.Runner, show_facts: bool = True):
    """The comparison on the device --device names (auto: CUDA, else WebGPU, else the virtual accelerator), timed by
    `timer`; returns (caption, sections), sections = [(title, case title, rows)], or None when the device asked for
    is not here."""
    models = make_models(args.models, ["preprocess", "backbone", "pool_head", "elementwise", "feature", "step",
                                       "head"])
    if args.device in ("auto", "cuda"):
        if torch.cuda.is_available() and "CUDAExecutionProvider" in ort.get_available_providers():
            return device_demo(cuda_target(), models, timer, args.batches, show_facts)
        if args.device == "cuda":
            print("no CUDA: torch.cuda.is_available() and onnxruntime-gpu's CUDAExecutionProvider are both needed")
            return None
    if args.device in ("auto", "webgpu"):
        target = webgpu_target()
        if not isinstance(target, str):
            return device_demo(target, models, timer, args.batches, show_facts)
        print(f"no WebGPU: {target}")
        if args.device == "webgpu":
            return None
    caption, rows = virtual_demo(models, timer, min(2, os.cpu_count() or 1), show_facts)
    return caption, [("feature -> step -> head", "batch", rows)]


def main(argv=None) -> int:
    args = arguments(__doc__, argv, budget=1.5)
    return 0 if run_pipeline(args, timer_for(args.budget)) else 2


if __name__ == "__main__":
    sys.exit(main())
