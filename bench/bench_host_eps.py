#!/usr/bin/env python3
"""Per-run cost of torch tensors in and out of a session on a host-memory plugin EP (QNN, ggml, OpenVINO; the CPU
EP for reference), measured in one run.

    python bench/bench_host_eps.py [--quick] [--rounds N] [--min-time S] [--json FILE]

On each EP that runs here (scripts/setup.sh installs the packages; OpenVINO lists devices on Intel CPUs only), a small
model w = (x + y) * y on float32 [1, 1024] and [64, 1024], the user's own onnxruntime.InferenceSession on the EP's
devices, torch in and torch out every way:
  session.run + numpy    [torch.from_numpy(o) for o in sess.run(None, {"x": x.numpy(), "y": y.numpy()})] (baseline)
  ortdlpack.run          ortdlpack.run(sess, {"x": x, "y": y}, output_type="torch")
  Session.run            ortdlpack.Session(model, ep=...).run({"x": x, "y": y}, output_type="torch")
Median microseconds per run, rounds interleaved (bench/harness.py); the ratio to the baseline (issue 25's target:
ortdlpack.run <= 1.0x).
"""

from __future__ import annotations

import argparse
import os
import sys

os.environ.setdefault("ORT_GGML_LOG", "warn")

import numpy as np  # noqa: E402
import onnxruntime as ort  # noqa: E402
import torch  # noqa: E402
from onnx import TensorProto, helper  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

import ortdlpack  # noqa: E402

# (title, the name ortdlpack takes, the provider options the user's own session needs: QNN cannot choose a backend)
EPS = (("CPU EP", "cpu", {}), ("QNN (HTP simulator)", "qnn", {"backend_type": "htp"}), ("ggml", "ggml", {}),
       ("OpenVINO", "openvino", {}))
BASE, RUN, SESSION = "session.run + numpy", "ortdlpack.run", "Session.run"


def model(shape) -> bytes:
    vi = lambda n: helper.make_tensor_value_info(n, TensorProto.FLOAT, list(shape))  # noqa: E731
    m = helper.make_model(helper.make_graph([helper.make_node("Add", ["x", "y"], ["s"]),
                                             helper.make_node("Mul", ["s", "y"], ["w"])], "addmul",
                                            [vi("x"), vi("y")], [vi("w")]),
                          opset_imports=[helper.make_opsetid("", 18)])
    m.ir_version = 9
    return m.SerializeToString()


def inference_session(ep_name: str, options: dict, data: bytes) -> ort.InferenceSession:
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.add_session_config_entry("session.intra_op.allow_spinning", "0")
    if ep_name == "CPUExecutionProvider":
        return ort.InferenceSession(data, so, providers=["CPUExecutionProvider"])
    devices = [d for d in ort.get_ep_devices() if d.ep_name == ep_name]
    so.add_provider_for_devices(devices, options)
    return ort.InferenceSession(data, so)


def ways(ep: str, ep_name: str, options: dict, data: bytes, x: torch.Tensor, y: torch.Tensor) -> list:
    sess = inference_session(ep_name, options, data)
    native = ortdlpack.Session(data, ep=ep, intra_op_num_threads=1, config={"session.intra_op.allow_spinning": "0"})
    feeds = {"x": x, "y": y}
    table = [
        (BASE, lambda: [torch.from_numpy(o) for o in sess.run(None, {"x": x.numpy(), "y": y.numpy()})]),
        (RUN, lambda: ortdlpack.run(sess, feeds, output_type="torch")),
        (SESSION, lambda: native.run(feeds, output_type="torch")),
    ]
    want = (x + y) * y
    for label, fn in table:
        torch.testing.assert_close(fn()[0], want, msg=lambda m, label=label: f"{label}: {m}")
    return table


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    args = harness.add_options(parser).parse_args(argv)
    runner = harness.Runner.from_args(args)
    torch.set_num_threads(1)
    runner.header(f"onnxruntime {ort.__version__}", f"torch {torch.__version__}", f"ortdlpack {ortdlpack.__version__}")
    shapes = (("[1,1024]", (1, 1024)), ("[64,1024]", (64, 1024)))
    rows, skipped = [], []
    for title, ep, options in EPS:
        try:  # a session on the EP registers its package's library first, or says why it cannot
            ep_name = ortdlpack.Session(model((1, 1)), ep=ep).get_providers()[0]
        except Exception as e:  # not installed, no device here, or this onnxruntime cannot host it
            skipped.append(f"{title}: {str(e).splitlines()[0][:200]}")
            continue
        for label, shape in shapes:
            x = torch.rand(shape)
            y = torch.rand(shape)
            t = runner.compare(f"{title} {label}", ways(ep, ep_name, options, model(shape), x, y))
            base = t[BASE]
            rows.append((title, label, harness.us(base), harness.us(t[RUN]), harness.ratio(t[RUN] / base),
                         harness.us(t[SESSION]), harness.ratio(t[SESSION] / base),
                         "met" if t[RUN] <= base else "not met"))
    runner.table(["EP", "shape", f"{BASE} us", f"{RUN} us", "ratio", f"ortdlpack.{SESSION} us", "ratio",
                   f"target: {RUN} <= 1.0x"], rows, align="llrrrrrl",
                  title=f"Median us per run (torch in, torch out), ratio to '{BASE}' (lower is better):")
    for line in skipped:
        runner.note(f"skipped {line}")
    return runner.finish()


if __name__ == "__main__":
    sys.exit(main())
