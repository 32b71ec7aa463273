"""Writes docs/compatibility.md: which ortdlpack feature works with which onnxruntime, found by running the checks.

For each onnxruntime version a venv with that wheel (and the pinned numpy, pytest, onnx, ml_dtypes, psutil of
requirements.txt; no torch/jax/tensorflow) is made under --venvs (reused when there), ortdlpack is installed once
into a --target directory with the .venv's build tools, and in each venv:
- the feature checks below run in a fresh interpreter (each prints one JSON line),
- with --pytest, the Python suite runs and its closing line is recorded.

    .venv/bin/python scripts/compat_table.py [--pytest] [--versions 1.23.2 1.26.0 ...] [--out docs/compatibility.md]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VERSIONS = ["1.22.1", "1.23.2", "1.24.4", "1.26.0", "1.29.0", "1.31.1", "1.32.0"]

# One check per feature: each runs after `import ortdlpack as od, numpy as np, onnxruntime as ort` and either
# passes (prints nothing), or raises: the first line of its message goes into the table.
CHECKS = {
    "import, silent": None,  # measured by the driver (stderr of the import)
    "C API version used": "print(od._ortdlpack._ort_api_version(), end='')",
    "numpy ⇄ Tensor, zero copy": """
x = np.arange(6, dtype=np.float32)
t = od.from_dlpack(x)
assert t.data_ptr == x.ctypes.data and np.from_dlpack(t).ctypes.data == x.ctypes.data""",
    "Tensor.ortvalue / as_ortvalue": """
x = np.arange(6, dtype=np.float32)
v = od.as_ortvalue(x)
assert v.data_ptr() == x.ctypes.data""",
    "from_dlpack(OrtValue)": """
v = ort.OrtValue.ortvalue_from_numpy(np.arange(6, dtype=np.float32))
assert od.from_dlpack(v).data_ptr == v.data_ptr()""",
    "bool through OrtValue, both ways": """
v = od.from_dlpack(np.array([True, False])).ortvalue
assert v.data_type() == "tensor(bool)", v.data_type()
t = od.from_dlpack(ort.OrtValue.ortvalue_from_numpy(np.array([True, False])))
assert t.dtype == "bool", t.dtype""",
    "run() with an OrtValue feed": """
from onnxruntime.datasets import get_example
s = ort.InferenceSession(get_example("sigmoid.onnx"), providers=["CPUExecutionProvider"])
x = np.zeros((3, 4, 5), np.float32)
ys = [od.run(s, {"x": ort.OrtValue.ortvalue_from_numpy(x + k)})[0] for k in range(4)]
for k, y in enumerate(ys):
    assert np.allclose(np.from_dlpack(y), 1 / (1 + np.exp(-(x + k))))""",
    "float4e2m1 tensors": """
from conftest import raw_producer  # tests/python: a DLPack producer of any dtype
assert od.from_dlpack(raw_producer(17, 4)).dtype == 'float4_e2m1fn'""",
    "plugin EP devices (virtual device)": """
import ortdlpack.testing
od.register_execution_provider_library("vd", ortdlpack.testing.virtual_device_library())
t = od.from_dlpack(np.arange(4, dtype=np.float32), device=[d for d in ort.get_ep_devices() if d.ep_name == "VirtualDeviceEP"][0])
assert np.array_equal(np.asarray(t.to("cpu")), np.arange(4, dtype=np.float32))""",
    "upstream OrtValue.__dlpack__ (not needed)": """
print("yes" if hasattr(ort.OrtValue, "__dlpack__") else "no (ortdlpack reads OrtValues without it)", end="")""",
}


def sh(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def pins() -> dict[str, str]:
    out = {}
    with open(os.path.join(ROOT, "requirements.txt")) as f:
        for line in f:
            m = re.match(r"^([A-Za-z0-9_.-]+)==(\S+)", line)
            if m:
                out[m.group(1)] = line.strip()
    return out


def venv_for(version: str, where: str) -> str:
    py = os.path.join(where, f"ort-{version}", "bin", "python")
    if not os.path.exists(py) or sh([py, "-c", "import onnxruntime"]).returncode != 0:
        print(f"compat_table: making a venv with onnxruntime {version}", file=sys.stderr)
        subprocess.run([sys.executable, "-m", "venv", os.path.dirname(os.path.dirname(py))], check=True)
        p = pins()
        subprocess.run([py, "-m", "pip", "install", "-q", f"onnxruntime=={version}"] +
                       [p[n] for n in ("numpy", "pytest", "onnx", "ml_dtypes", "psutil", "apache-tvm-ffi")], check=True)
    return py


def shorten(message: str) -> str:
    """The gist of an error message, for a table cell."""
    message = re.sub(r"^\w+(Error|Exception|NotImplemented): ", "", message)
    message = re.sub(r"\[ONNXRuntimeError\] : \d+ : \w+ : ", "", message)
    message = re.split(r" \(|; ", message)[0]
    return message.replace("|", "/")[:100]


def check_version(py: str, site: str, run_pytest: bool) -> dict[str, str]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([site, os.path.join(ROOT, "tests", "python")]))
    row = {}
    r = sh([py, "-c", "import ortdlpack"], env=env)
    if r.returncode != 0:
        msg = (r.stderr.strip().splitlines() or ["?"])[-1]
        return {"import, silent": "no: " + shorten(msg)}
    row["import, silent"] = "yes" if not r.stderr else f"prints {len(r.stderr.splitlines())} lines on stderr"
    for name, code in CHECKS.items():
        if code is None:
            continue
        r = sh([py, "-c", "import ortdlpack as od, numpy as np, onnxruntime as ort\n" + code], env=env)
        if r.returncode == 0:
            row[name] = r.stdout.strip() or "yes"
        else:
            lines = r.stderr.strip().splitlines() or [f"exit {r.returncode}"]
            msg = lines[-1] if r.returncode > 0 else f"crash (signal {-r.returncode})"
            row[name] = "no: " + shorten(msg)
    if run_pytest:
        t0 = time.time()
        r = sh([py, "-m", "pytest", os.path.join(ROOT, "tests", "python"), "-q", "-p", "no:cacheprovider"],
               env=dict(env, PYTHONPATH=site), cwd=ROOT)
        tail = (r.stdout.strip().splitlines() or ["?"])[-1].strip("= ")
        row["Python suite (no torch/jax/tf)"] = re.sub(r" in [0-9.]+s.*", "", tail) + f" ({time.time() - t0:.0f} s)"
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--versions", nargs="+", default=VERSIONS)
    ap.add_argument("--venvs", default=os.path.join(ROOT, "build", "compat"), help="where the per-version venvs live")
    ap.add_argument("--site", default=os.path.join(ROOT, "build", "compat", "site"), help="ortdlpack install target")
    ap.add_argument("--pytest", action="store_true", help="also run the Python suite in each venv")
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "compatibility.md"))
    ap.add_argument("--rows", help="write the table from the JSON an earlier run printed on stderr (no checks run)")
    args = ap.parse_args()

    if args.rows:  # an earlier run's results, formatted again
        with open(args.rows) as f:
            text = f.read()
        rows = {v: {k: "no: " + shorten(c[4:]) if c.startswith("no: ") else c for k, c in r.items()}
                for v, r in json.loads(text[text.index("{"):]).items()}
    else:
        if not os.path.isdir(os.path.join(args.site, "ortdlpack")):
            subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-build-isolation", "--no-deps",
                            "--target", args.site, "-Cbuild-dir=build/python", "."], cwd=ROOT, check=True)
        rows = {}
        for v in args.versions:
            print(f"compat_table: checking onnxruntime {v}", file=sys.stderr)
            rows[v] = check_version(venv_for(v, args.venvs), args.site, args.pytest)
    args.versions = list(rows)
    features = [f for f in list(CHECKS) + ["Python suite (no torch/jax/tf)"] if any(f in r for r in rows.values())]
    lines = ["| feature | " + " | ".join(f"onnxruntime {v}" for v in args.versions) + " |",
             "|---|" + "---|" * len(args.versions)]
    for f in features:
        lines.append(f"| {f} | " + " | ".join(rows[v].get(f, "—") for v in args.versions) + " |")
    table = "\n".join(lines)
    with open(args.out) as f:
        doc = f.read()
    begin, end = "<!-- compat_table.py: begin -->", "<!-- compat_table.py: end -->"
    doc = doc[: doc.index(begin) + len(begin)] + "\n" + table + "\n" + doc[doc.index(end):]
    with open(args.out, "w") as f:
        f.write(doc)
    print(table)
    print(json.dumps(rows, indent=1), file=sys.stderr)


if __name__ == "__main__":
    main()
