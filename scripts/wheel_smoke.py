"""Smoke test of an installed ortdlpack wheel, with nothing but onnxruntime and numpy next to it (scripts/ci_wheels.sh).
Uses a model that ships inside the onnxruntime wheel, so it needs no onnx package."""

import subprocess
import sys

import numpy as np
import onnxruntime as ort
from onnxruntime.datasets import get_example

import ortdlpack

assert "site-packages" in ortdlpack.__file__, f"not the installed wheel: {ortdlpack.__file__}"
quiet = subprocess.run([sys.executable, "-c", "import ortdlpack"], capture_output=True, text=True)
assert quiet.returncode == 0 and quiet.stderr == "", quiet.stderr

x = np.linspace(-3, 3, 3 * 4 * 5, dtype=np.float32).reshape(3, 4, 5)
t = ortdlpack.from_dlpack(x)
assert t.data_ptr == x.ctypes.data and t.shape == x.shape  # zero copy in
assert np.from_dlpack(t).ctypes.data == x.ctypes.data  # and out

session = ort.InferenceSession(get_example("sigmoid.onnx"), providers=["CPUExecutionProvider"])
expected = 1 / (1 + np.exp(-x))
for feed in (x, t, ortdlpack.as_ortvalue(x), ort.OrtValue.ortvalue_from_numpy(x)):
    (y,) = ortdlpack.run(session, {"x": feed})
    np.testing.assert_allclose(np.from_dlpack(y), expected, rtol=1e-5)  # ORT's sigmoid is approximated
out = np.empty_like(x)
(y,) = ortdlpack.run(session, {"x": x}, outputs={"y": out})
assert np.from_dlpack(y).ctypes.data == out.ctypes.data  # ORT wrote into the caller's buffer
flags = ortdlpack.from_dlpack(np.array([True, False]))
assert flags.ortvalue.data_type() == "tensor(bool)"
print(f"wheel smoke: ortdlpack {ortdlpack.__version__} with onnxruntime {ort.__version__}: ok")
