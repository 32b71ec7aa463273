#!/usr/bin/env python3
"""A torch model with an ONNX sub-model, compiled whole with torch.compile(fullgraph=True).

    python examples/torch_compile_onnx.py

The ONNX feature extractor (scripts/make_models.py "feature": convolutions, [N,3,64,64] -> [N,128]) becomes a
torch.nn.Module with ortdlpack.torch_module: an operator torch.compile traces through (no graph break), with
output shapes from the model (the batch stays symbolic: one graph for every batch size). torch's own preprocessing
and head around it are compiled by inductor; ORT runs the sub-model on torch's tensors without a copy.
"""

import os
import sys
import tempfile

import onnxruntime as ort
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "scripts"))
from make_models import make_models  # noqa: E402

import ortdlpack  # noqa: E402


class Classifier(torch.nn.Module):
    def __init__(self, features: torch.nn.Module):
        super().__init__()
        self.features = features  # the ONNX model
        self.head = torch.nn.Linear(128, 10)

    def forward(self, images_uint8):
        x = images_uint8.float() / 255.0
        x = (x - 0.5) / 0.25
        return torch.softmax(self.head(torch.relu(self.features(x))), dim=1)


def main() -> int:
    path = make_models(os.path.join(tempfile.gettempdir(), "ortdlpack-models"), ["feature"])["feature"]
    torch.manual_seed(0)
    model = Classifier(ortdlpack.torch_module(path, intra_op_num_threads=2)).eval()
    images = torch.randint(0, 256, (4, 3, 64, 64), dtype=torch.uint8)

    explain = torch._dynamo.explain(model)(images)
    print(f"graph breaks: {explain.graph_break_count}")
    torch._dynamo.utils.counters.clear()  # count the graphs of the compile below only
    compiled = torch.compile(model, fullgraph=True)

    # The same computation eager, with the ONNX model through ortdlpack.run on an onnxruntime session.
    session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])

    def eager(images):
        x = (images.float() / 255.0 - 0.5) / 0.25
        (feat,) = ortdlpack.run(session, {"x": x}, output_type="torch")
        return torch.softmax(model.head(torch.relu(feat)), dim=1)

    ok = explain.graph_break_count == 0
    with torch.no_grad():
        for batch in (4, 6, 9):
            x = torch.randint(0, 256, (batch, 3, 64, 64), dtype=torch.uint8)
            torch._dynamo.mark_dynamic(x, 0)
            got, want = compiled(x), eager(x)
            same = torch.allclose(got, want, atol=1e-5)
            print(f"batch {batch}: {tuple(got.shape)}, equal to eager ortdlpack.run: {same}")
            ok = ok and same
    graphs = torch._dynamo.utils.counters["stats"]["unique_graphs"]
    print(f"graphs compiled for 3 batch sizes: {graphs}")
    ok = ok and graphs == 1
    print("results equal" if ok else "MISMATCH")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
