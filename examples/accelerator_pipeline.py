#!/usr/bin/env python3
"""The two-model pipeline on an accelerator: the usual path against ortdlpack, with what moved between host and device.

    python examples/accelerator_pipeline.py [--budget SECONDS] [--device auto|cuda|virtual]

    images --[feature.onnx]--> feat --[step: normalise + ReLU]--> feat' --[head.onnx]--> logits

The images start in device memory and the logits are wanted there (the next stage runs on the device).

On a GPU (torch with CUDA and onnxruntime-gpu's CUDA EP present), the step is torch on the GPU:
  usual      x.cpu().numpy() -> session.run -> torch.from_numpy(...).to("cuda") -> step -> .cpu().numpy()
             -> session.run -> torch.from_numpy(...).to("cuda")
  ortdlpack  ortdlpack.run(feature, {"x": x}) -> torch.from_dlpack -> step -> ortdlpack.run(head, ..., outputs=)
             everything stays in GPU memory.

Without, on the virtual accelerator plugin EP shipped with ortdlpack (memory the host cannot read; counters of
every host<->device copy). Torch cannot read that memory, so:
  usual      what onnxruntime's own Python API offers for device data: each model runs on the device through
             IOBinding with device OrtValues; its output comes to the host with OrtValue.numpy(), the torch step runs
             on the host, and the result goes back to the device with onnxruntime.copy_tensors.
  ortdlpack  the step runs on the device too (step.onnx: the same normalisation in ONNX); ortdlpack.Session
             (sessions with the same EP, run by ortdlpack's C++ core) keeps every intermediate in device memory:
             ORT writes each output into a preallocated device tensor (outputs=). (ortdlpack.run on an
             InferenceSession cannot take plugin-device outputs yet: onnxruntime's OrtValue does not export them.)
The virtual EP computes nothing itself: ORT runs the nodes on the CPU and moves a device session's inputs and
outputs through the EP's transfer. Those copies stand for the device's own compute, so they are counted apart
("inside runs"); the copies the pipeline itself makes between runs are the ones the paths differ in.

Prints, for batch 1 and 64: time per iteration, host<->device bytes and copies per iteration, results checked
equal; then the zero-copy facts (same pointers, deleter/free counts). Under a minute on 2 cores.
"""

from __future__ import annotations

import argparse
import ctypes
import gc
import os
import platform
import sys
import tempfile

import numpy as np
import onnxruntime as ort
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
from make_models import make_models  # noqa: E402

import ortdlpack  # noqa: E402
import ortdlpack.testing  # noqa: E402

sys.path.insert(0, os.path.join(ROOT, "examples"))
from pipeline_demo import measure, torch_step  # noqa: E402  (the CPU demo's step and timing loop)

BATCHES = (1, 64)
VD_EP = "VirtualDeviceEP"
VD_VENDOR = 0xD1A9
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


def virtual_demo(models: dict, budget: float, threads: int, show_facts: bool = True):
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
        times, _ = measure([usual, with_ortdlpack], budget)
        rows.append((n, "usual", times[0], times[0], usual_pipe, usual_in))
        rows.append((n, "ortdlpack", times[1], times[0], ort_pipe, ort_in))
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


# --- a real GPU -------------------------------------------------------------------------------------------------


def cuda_demo(models: dict, budget: float, show_facts: bool = True):
    """Runs and prints the comparison on the GPU; returns (caption, table rows)."""
    caption = header(f"GPU ({torch.cuda.get_device_name(0)}, CUDA EP)")
    opts = ort.SessionOptions()
    providers = [("CUDAExecutionProvider", {"device_id": "0", "use_tf32": "0"})]
    feature = ort.InferenceSession(models["feature"], opts, providers=providers)
    head = ort.InferenceSession(models["head"], opts, providers=providers)
    dev = torch.device("cuda:0")
    rows = []
    for n in BATCHES:
        x = torch.rand(n, 3, 64, 64, generator=torch.Generator().manual_seed(n)).to(dev)
        logits = torch.empty(n, 10, device=dev)

        def usual():
            feat = torch.from_numpy(feature.run(None, {"x": x.cpu().numpy()})[0]).to(dev)
            f = torch_step(feat)
            return torch.from_numpy(head.run(None, {"feat": f.cpu().numpy()})[0]).to(dev)

        def with_ortdlpack():
            (feat,) = ortdlpack.run(feature, {"x": x})
            f = torch_step(torch.from_dlpack(feat))
            ortdlpack.run(head, {"feat": f}, outputs={"logits": logits})
            return logits

        ref = usual().cpu()
        got = with_ortdlpack().cpu()
        torch.testing.assert_close(got, ref, rtol=1e-4, atol=1e-5)
        times, _ = measure([lambda: (usual(), torch.cuda.synchronize()),
                            lambda: (with_ortdlpack(), torch.cuda.synchronize())], budget)
        # Copies of the usual path, by construction: .cpu() of x and of f, .to(dev) of feat and of the logits.
        n_x, n_f, n_l = x.nelement() * 4, n * 128 * 4, n * 10 * 4
        rows.append((n, "usual", times[0], times[0], (n_x + 2 * n_f + n_l, 4), None))
        rows.append((n, "ortdlpack", times[1], times[0], (0, 0), None))
    print_table(rows)
    print("results equal (assert_close). pipeline = the .cpu()/.to('cuda') copies around each session.run; inside "
          "runs onnxruntime also copies numpy feeds to the GPU and outputs back (not counted).")
    if show_facts:
        x = torch.rand(64, 128, device=dev)
        (y,) = ortdlpack.run(head, {"feat": x})
        t = ortdlpack.from_dlpack(x)
        print(f"\nzero-copy facts: torch CUDA tensor -> ortdlpack: same pointer {t.data_ptr == x.data_ptr()}, "
              f"device {t.device}; head output on {y.device}, torch view of it: same pointer "
              f"{torch.from_dlpack(y).data_ptr() == y.data_ptr}")
    return caption, rows


def arguments(description: str, argv, budget: float):
    parser = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--budget", type=float, default=budget, help="seconds of timing per batch size")
    parser.add_argument("--device", choices=("auto", "cuda", "virtual"), default="auto")
    parser.add_argument("--models", default=os.path.join(tempfile.gettempdir(), "ortdlpack-models"))
    return parser.parse_args(argv)


def run_pipeline(args, show_facts: bool = True):
    """The comparison on the GPU when there is one (or --device cuda), else on the virtual accelerator; returns
    (caption, rows), or None when --device cuda was asked for and there is no CUDA."""
    models = make_models(args.models, ["feature", "step", "head"])
    has_cuda = torch.cuda.is_available() and "CUDAExecutionProvider" in ort.get_available_providers()
    if args.device == "cuda" and not has_cuda:
        print("no CUDA: torch.cuda.is_available() and onnxruntime-gpu's CUDAExecutionProvider are both needed")
        return None
    if args.device == "cuda" or (args.device == "auto" and has_cuda):
        return cuda_demo(models, args.budget, show_facts)
    return virtual_demo(models, args.budget, min(2, os.cpu_count() or 1), show_facts)


def main(argv=None) -> int:
    return 0 if run_pipeline(arguments(__doc__, argv, budget=3.0)) else 2


if __name__ == "__main__":
    sys.exit(main())
