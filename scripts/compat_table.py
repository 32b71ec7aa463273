"""Writes docs/compatibility.md: which ortdlpack feature and which run path works with which onnxruntime release,
found by running the checks.

Each target is one distribution of the `onnxruntime` module at one version (onnxruntime, onnxruntime-gpu,
-openvino, -webgpu: they all install the same module, so each gets a venv of its own, never two in one). Its venv,
made under --venvs and reused when there, holds that distribution only, and the pinned numpy, pytest, onnx,
ml_dtypes, psutil, apache-tvm-ffi of requirements.txt. ortdlpack is built from this tree once (its own build dir,
--build-dir) into a --target directory (--site) that every venv puts first on PYTHONPATH. In each venv:
- the feature checks (CHECKS) run in a fresh interpreter each, without torch/jax/tensorflow;
- the run-path probes (PROBES) run in a fresh interpreter each, with .venv's site-packages (torch) appended to
  sys.path, behind the venv's own packages (what the .pth line of scripts/lib/ci_venv.sh does for the CI legs):
  .venv's onnxruntime never shadows the venv's own, which is verified (version and file) before the probes;
- with --pytest, the Python suite runs (no torch/jax/tensorflow) and its closing line is recorded.

--releases asks PyPI (https://pypi.org/pypi/<name>/json) for the newest patch of each onnxruntime minor from 1.23
on and the newest release of onnxruntime-gpu, -openvino and -webgpu, each with a cp311 manylinux x86_64 wheel.
--ci: the oldest and the newest of those onnxruntime releases, the probes only, the docs untouched; exit 1 when a
probe is not "yes" (scripts/ci_releases.sh).

    .venv/bin/python scripts/compat_table.py --releases --versions 1.22.1 [--pytest]    # the table in the docs
    .venv/bin/python scripts/compat_table.py --versions 1.23.2 onnxruntime-gpu==1.31.1 [--out FILE]
    .venv/bin/python scripts/compat_table.py --ci
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ORT = "onnxruntime"
# The distributions of the onnxruntime module whose newest release --releases adds (onnxruntime itself: every minor).
OTHER_DISTRIBUTIONS = ["onnxruntime-gpu", "onnxruntime-openvino", "onnxruntime-webgpu"]
OLDEST_MINOR = (1, 23)  # the oldest onnxruntime ortdlpack supports
PYTHON_TAG = f"cp{sys.version_info.major}{sys.version_info.minor}"  # the venvs' Python is this one's

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

# The run-path probes: one per way a user runs a model, each after PROBE_PRELUDE (torch from .venv; MODEL: y = a + b
# of two float[2,3] inputs; feeds: torch tensors a, b; want: a + b). A probe prints nothing and passes ("yes"; --ci
# fails on anything else) or raises: the first line of its message goes into the table. A probe in PROBE_INFO prints
# its cell instead and never fails --ci. To check a new API on every release, add a row here.
PROBE_PRELUDE = """
import sys, warnings
sys.path.append(DOTVENV_SITE)  # .venv's torch, behind the venv's own packages (its onnxruntime first)
import ortdlpack as od, numpy as np, onnxruntime as ort, torch
# A run path that falls back (onnxruntime's own run, where ortdlpack cannot reach the session) warns: a failure here.
warnings.filterwarnings("error", message="ortdlpack")
from onnx import TensorProto, helper

def add_model(shape=(2, 3)):
    io = lambda name: helper.make_tensor_value_info(name, TensorProto.FLOAT, list(shape))
    graph = helper.make_graph([helper.make_node("Add", ["a", "b"], ["y"])], "add", [io("a"), io("b")], [io("y")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8).SerializeToString()

MODEL, CPU = add_model(), ["CPUExecutionProvider"]
a, b = torch.rand(2, 3), torch.rand(2, 3)
feeds, want = {"a": a, "b": b}, a + b
"""
PROBES = {
    "drop-in InferenceSession.run, numpy feeds": """
(y,) = od.InferenceSession(MODEL, providers=CPU).run(None, {"a": a.numpy(), "b": b.numpy()})
assert type(y) is np.ndarray and np.array_equal(y, want.numpy()), f"got {type(y).__name__} {y}" """,
    "drop-in InferenceSession.run, torch feeds": """
(y,) = od.InferenceSession(MODEL, providers=CPU).run(None, feeds)
assert isinstance(y, torch.Tensor) and torch.equal(y, want), f"got {type(y).__name__} {y}" """,
    "ortdlpack.run(onnxruntime.InferenceSession), torch feeds": """
s = ort.InferenceSession(MODEL, providers=CPU)
(t,) = od.run(s, feeds)
assert isinstance(t, od.Tensor) and torch.equal(torch.from_dlpack(t), want), f"got {type(t).__name__}"
(y,) = od.run(s, feeds, output_type="torch")
assert isinstance(y, torch.Tensor) and torch.equal(y, want), f"got {type(y).__name__}" """,
    "destinations: outputs= (drop-in run, ortdlpack.run)": """
out = torch.empty(2, 3)
od.InferenceSession(MODEL, providers=CPU).run(None, feeds, outputs={"y": out})
assert torch.equal(out, want), "drop-in run: the destination is not the sum"
out = torch.empty(2, 3)
od.run(ort.InferenceSession(MODEL, providers=CPU), feeds, outputs={"y": out})
assert torch.equal(out, want), "ortdlpack.run: the destination is not the sum" """,
    "InferenceSession.bind() + Binding.run()": """
binding = od.InferenceSession(MODEL, providers=CPU).bind(feeds)
(y,) = binding.run()
assert torch.equal(torch.from_dlpack(y), want), "first run"
a.add_(1)  # new contents, same tensor: the binding reads them
(y,) = binding.run()
assert torch.equal(torch.from_dlpack(y), a + b), "second run: the changed feed not read" """,
    "ortdlpack.Session.run and .bind": """
s = od.Session(MODEL, providers=CPU)
(t,) = s.run(feeds)
assert torch.equal(torch.from_dlpack(t), want), "run"
(y,) = s.bind(feeds, output_type="torch").run()
assert isinstance(y, torch.Tensor) and torch.equal(y, want), "bind" """,
    "torch_module, eager call": """
y = od.torch_module(MODEL)(a, b)
assert isinstance(y, torch.Tensor) and torch.equal(y, want), f"got {type(y).__name__}" """,
    "session borrow (the OrtSession of an InferenceSession)": """
s = ort.InferenceSession(MODEL, providers=CPU)
status = getattr(od._ortdlpack, "_borrow_status", None)  # where ortdlpack says whether it reaches the OrtSession
assert status is None or status(s) == "reached", status(s)
out = torch.empty(2, 3)  # a destination needs the OrtSession: no fallback to onnxruntime's own run serves it
od.run(s, feeds, outputs={"y": out})
assert torch.equal(out, want)""",
    "session borrow, as show_config reports it": """
import io
text = io.StringIO()
od.show_config(file=text)
found = [line.strip() for line in text.getvalue().splitlines() if "borrow" in line.lower()]
print("; ".join(found) or "—", end="")""",
}
PROBE_INFO = {"session borrow, as show_config reports it"}
PYTEST_ROW = "Python suite (no torch/jax/tf)"
PROBE_HEADER = "*run paths (torch of .venv)*"


def sh(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def log(message: str) -> None:
    print(f"compat_table: {message}", file=sys.stderr, flush=True)


def pins() -> dict[str, str]:
    out = {}
    with open(os.path.join(ROOT, "requirements.txt")) as f:
        for line in f:
            m = re.match(r"^([A-Za-z0-9_.-]+)==(\S+)", line)
            if m:
                out[m.group(1)] = line.strip()
    return out


def parse_target(text: str) -> tuple[str, str]:
    """'1.23.2' (onnxruntime) or 'onnxruntime-gpu==1.31.1' -> (distribution, version)."""
    dist, _, version = text.rpartition("==")
    return (dist or ORT), version


def label(target: tuple[str, str]) -> str:
    return f"{target[0]} {target[1]}"


def key(target: tuple[str, str]) -> str:
    return f"{target[0]}=={target[1]}"


# --- PyPI ---

def _release(version: str) -> tuple[int, ...] | None:
    """A final release's version as a tuple (pre-, dev- and post-releases: None)."""
    return tuple(int(p) for p in version.split(".")) if re.fullmatch(r"\d+(\.\d+)*", version) else None


def _has_wheel(files: list[dict]) -> bool:
    """A cp311 (this Python's) manylinux x86_64 wheel that is not yanked."""
    for f in files:
        m = re.fullmatch(r"[^-]+-[^-]+(?:-\d[^-]*)?-([^-]+)-([^-]+)-([^-]+)\.whl", f["filename"])
        if not m or f.get("yanked"):
            continue
        python, abi, platforms = (part.split(".") for part in m.groups())
        if (PYTHON_TAG in python or "abi3" in abi) and any(p.startswith("manylinux") and p.endswith("_x86_64")
                                                           for p in platforms):
            return True
    return False


def _pypi(dist: str) -> dict[str, list[dict]]:
    with urllib.request.urlopen(f"https://pypi.org/pypi/{dist}/json", timeout=60) as r:
        return json.load(r)["releases"]


def discover(cache: str) -> tuple[list[tuple[str, str]], list[str]]:
    """The releases to check: the newest patch of each onnxruntime minor >= OLDEST_MINOR, then the newest release of
    each of OTHER_DISTRIBUTIONS, each with a wheel for this Python; notes on what was skipped. The answer is kept in
    `cache` and used when PyPI cannot be reached."""
    targets, notes = [], []
    try:
        for dist in [ORT] + OTHER_DISTRIBUTIONS:
            try:
                releases = _pypi(dist)
            except urllib.error.HTTPError as e:
                if e.code != 404:
                    raise
                notes.append(f"{dist}: not on PyPI")
                continue
            finals = sorted((v, s) for s, files in releases.items() if (v := _release(s)) and files)
            wheel = [(v, s) for v, s in finals if _has_wheel(releases[s])]
            for v, s in finals:
                if (v, s) not in wheel and v[:2] >= OLDEST_MINOR:
                    notes.append(f"{dist} {s}: no {PYTHON_TAG} manylinux x86_64 wheel, skipped")
            if dist == ORT:
                newest = {}
                for v, s in wheel:
                    if v[:2] >= OLDEST_MINOR:
                        newest[v[:2]] = s  # sorted: the last one of a minor is its newest patch
                targets += [(dist, s) for s in newest.values()]
            elif wheel:
                targets.append((dist, wheel[-1][1]))
            else:
                notes.append(f"{dist}: no release with a {PYTHON_TAG} manylinux x86_64 wheel, skipped")
    except (OSError, ValueError) as e:
        if not os.path.exists(cache):
            raise SystemExit(f"compat_table: PyPI cannot be reached ({e}) and no earlier answer is kept in {cache}")
        with open(cache) as f:
            kept = json.load(f)
        log(f"PyPI cannot be reached ({e}): using the releases found on {kept['date']} ({cache})")
        return [tuple(t) for t in kept["targets"]], kept["notes"]
    os.makedirs(os.path.dirname(cache), exist_ok=True)
    with open(cache, "w") as f:
        json.dump({"date": time.strftime("%Y-%m-%d"), "targets": targets, "notes": notes}, f, indent=1)
    return targets, notes


# --- venvs and the ortdlpack install ---

def dotvenv_site() -> str:
    py = os.path.join(ROOT, ".venv", "bin", "python")
    return sh([py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], check=True).stdout.strip()


def venv_for(target: tuple[str, str], where: str) -> str:
    """The venv of one distribution at one version (ort-1.23.2, ort-gpu-1.31.1, ...): made when missing or when it
    holds anything else."""
    dist, version = target
    prefix = os.path.join(where, "ort" + dist[len(ORT):] + "-" + version)
    py = os.path.join(prefix, "bin", "python")
    probe = f"import importlib.metadata as m, onnxruntime; print(m.version({dist!r}))"
    if os.path.exists(py) and sh([py, "-c", probe]).stdout.strip() == version:
        return py
    log(f"making a venv with {dist}=={version} ({prefix})")
    shutil.rmtree(prefix, ignore_errors=True)
    subprocess.run([sys.executable, "-m", "venv", prefix], check=True)
    p = pins()
    subprocess.run([py, "-m", "pip", "install", "-q", "--progress-bar", "off", f"{dist}=={version}"] +
                   [p[n] for n in ("numpy", "pytest", "onnx", "ml_dtypes", "psutil", "apache-tvm-ffi")], check=True)
    return py


def install_site(site: str, build_dir: str) -> None:
    """ortdlpack from this tree, with the test entry points, into `site` (the build dir is kept: a rebuild compiles
    what changed)."""
    log(f"installing ortdlpack into {site} (build dir {build_dir})")
    new = site + ".new"  # the site is replaced once the build succeeded
    shutil.rmtree(new, ignore_errors=True)
    r = subprocess.run([os.path.join(ROOT, ".venv", "bin", "python"), "-m", "pip", "install", "-q",
                        "--no-build-isolation", "--no-deps", "--target", new, f"-Cbuild-dir={build_dir}",
                        "-Ccmake.define.ORTDLPACK_PYTHON_TESTING=ON", "."], cwd=ROOT)
    if r.returncode != 0:
        raise SystemExit(f"compat_table: ortdlpack did not build (pip: exit {r.returncode}; its output above)")
    shutil.rmtree(site, ignore_errors=True)
    os.rename(new, site)


def verify_environment(py: str, target: tuple[str, str], env: dict) -> str:
    """The probes' interpreter imports the venv's own onnxruntime (not .venv's), this tree's ortdlpack and .venv's
    torch; SystemExit otherwise. Returns a line saying what it found."""
    code = PROBE_PRELUDE.split("import ortdlpack")[0] + """
import importlib.metadata as m, json, onnxruntime, torch
print(json.dumps([onnxruntime.__version__, onnxruntime.__file__, m.version(DIST), torch.__version__, torch.__file__,
                  sys.prefix]))
import ortdlpack
print(json.dumps(ortdlpack.__file__))"""
    r = sh([py, "-c", f"DOTVENV_SITE, DIST = {env['DOTVENV']!r}, {target[0]!r}\n" + code], env=env)
    lines = r.stdout.splitlines()
    if not lines:
        raise SystemExit(f"compat_table: {label(target)}: the probes' environment does not import: {r.stderr[-2000:]}")
    version, ort_file, dist_version, torch_version, torch_file, prefix = json.loads(lines[0])
    problems = []
    if dist_version != target[1] or not version.startswith(target[1].split("+")[0]):
        problems.append(f"onnxruntime {version} ({target[0]} {dist_version}) is not {target[1]}")
    if not os.path.realpath(ort_file).startswith(os.path.realpath(prefix) + os.sep):
        problems.append(f"onnxruntime comes from {ort_file}, not from the venv {prefix}")
    if not torch_file.startswith(env["DOTVENV"]):
        problems.append(f"torch comes from {torch_file}, not from .venv")
    if len(lines) > 1 and not json.loads(lines[1]).startswith(env["SITE"]):
        problems.append(f"ortdlpack comes from {json.loads(lines[1])}, not from {env['SITE']}")
    if problems:
        raise SystemExit(f"compat_table: {label(target)}: " + "; ".join(problems))
    return f"onnxruntime {version} at {os.path.dirname(ort_file)}, torch {torch_version} of .venv"


# --- the checks ---

def shorten(message: str) -> str:
    """The gist of an error message, for a table cell."""
    message = re.sub(r"^(\w+\.)*\w*(Error|Exception|NotImplemented|Fail): ", "", message)  # the class, qualified or not
    message = re.sub(r"\[ONNXRuntimeError\] : \d+ : \w+ : ", "", message)
    message = re.split(r" \(|; ", message)[0]
    return message.replace("|", "/")[:100]


# Runs a check (argv[1]) in a fresh interpreter; what it raises ends stderr as one line: its class and the first line
# of its message (the traceback before it).
RUNNER = """
import sys, traceback
try:
    exec(compile(sys.argv[1], "<check>", "exec"), {"__name__": "__main__"})
except BaseException as e:
    traceback.print_exc()
    first = (str(e).strip().splitlines() or [""])[0]
    print(f"{type(e).__name__}: {first}" if first else type(e).__name__, file=sys.stderr)
    sys.exit(1)
"""


def run_cell(py: str, code: str, env: dict) -> str:
    r = sh([py, "-c", RUNNER, code], env=env)
    if r.returncode == 0:
        return r.stdout.strip().replace("|", "/") or "yes"
    if r.returncode < 0:
        return f"no: crash: signal {-r.returncode} ({signal.Signals(-r.returncode).name})"
    return "no: " + (r.stderr.strip().splitlines() or [f"exit {r.returncode}"])[-1]  # table() shortens it


def check_target(py: str, target: tuple[str, str], site: str, checks: bool, probes: bool,
                 run_pytest: bool) -> dict[str, str]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([site, os.path.join(ROOT, "tests", "python")]))
    row = {}
    r = sh([py, "-c", "import ortdlpack"], env=env)
    if r.returncode != 0:
        msg = (r.stderr.strip().splitlines() or ["?"])[-1]
        return {"import, silent": "no: " + msg}
    row["import, silent"] = "yes" if not r.stderr else f"prints {len(r.stderr.splitlines())} lines on stderr"
    if checks:
        for name, code in CHECKS.items():
            if code is not None:
                row[name] = run_cell(py, "import ortdlpack as od, numpy as np, onnxruntime as ort\n" + code, env)
    if probes:
        penv = dict(env, DOTVENV=dotvenv_site(), SITE=site)
        log(verify_environment(py, target, penv))
        prelude = f"DOTVENV_SITE = {penv['DOTVENV']!r}\n" + PROBE_PRELUDE
        for name, code in PROBES.items():
            row[name] = run_cell(py, prelude + code, penv)
    if run_pytest:
        t0 = time.time()
        r = sh([py, "-m", "pytest", os.path.join(ROOT, "tests", "python"), "-q", "-p", "no:cacheprovider"],
               env=dict(env, PYTHONPATH=site), cwd=ROOT)
        tail = (r.stdout.strip().splitlines() or ["?"])[-1].strip("= ")
        row[PYTEST_ROW] = re.sub(r" in [0-9.]+s.*", "", tail) + f" ({time.time() - t0:.0f} s)"
    return row


def failures(rows: dict[str, dict[str, str]]) -> list[str]:
    """Probe cells that are not "yes" (PROBE_INFO rows aside); an import that fails, once."""
    found = []
    for k, r in rows.items():
        if r.get("import, silent", "yes").startswith("no"):
            found.append(f"{label(parse_target(k))}: import: {r['import, silent']}")
            continue
        found += [f"{label(parse_target(k))}: {name}: {r.get(name, '— (not run)')}" for name in PROBES
                  if name not in PROBE_INFO and r.get(name) != "yes"]
    return found


def cell(text: str) -> str:
    return "no: " + shorten(text[4:]) if text.startswith("no: ") else text


def table(rows: dict[str, dict[str, str]]) -> str:
    targets = [parse_target(k) for k in rows]
    names = [f for f in CHECKS if any(f in r for r in rows.values())]
    probes = [f for f in PROBES if any(f in r for r in rows.values())]
    if probes:
        names += [PROBE_HEADER] + probes
    names += [f for f in [PYTEST_ROW] if any(f in r for r in rows.values())]
    lines = ["| feature | " + " | ".join(label(t) for t in targets) + " |", "|---|" + "---|" * len(targets)]
    for f in names:
        cells = ["" if f == PROBE_HEADER else cell(rows[key(t)].get(f, "—")) for t in targets]
        lines.append(f"| {f} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--versions", nargs="+", default=[],
                    help="versions of onnxruntime (1.23.2) or of another distribution (onnxruntime-gpu==1.31.1)")
    ap.add_argument("--releases", action="store_true",
                    help=f"add what PyPI has: the newest patch of each onnxruntime minor >= {OLDEST_MINOR[0]}."
                         f"{OLDEST_MINOR[1]}, the newest {', '.join(OTHER_DISTRIBUTIONS)}")
    ap.add_argument("--ci", action="store_true", help="the oldest and the newest onnxruntime release (or --versions), "
                    "the run-path probes only, no docs written; exit 1 when a probe is not 'yes'")
    ap.add_argument("--venvs", default=os.path.join(ROOT, "build", "compat"), help="where the per-version venvs live")
    ap.add_argument("--site", default=os.path.join(ROOT, "build", "compat", "site"), help="ortdlpack install target")
    ap.add_argument("--build-dir", default=os.path.join("build", "compat-ext"), help="ortdlpack's build dir (kept)")
    ap.add_argument("--no-install", action="store_true", help="use the ortdlpack already in --site")
    ap.add_argument("--no-probes", action="store_true", help="the feature checks only")
    ap.add_argument("--pytest", action="store_true", help="also run the Python suite in each venv")
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "compatibility.md"))
    ap.add_argument("--rows", help="write the table from the JSON an earlier run printed on stderr (no checks run)")
    args = ap.parse_args()
    args.venvs, args.site = os.path.abspath(args.venvs), os.path.abspath(args.site)
    t_start = time.time()

    if args.rows:  # an earlier run's results, formatted again
        with open(args.rows) as f:
            text = f.read()
        start = re.search(r"^\{$", text, re.M).start()  # the JSON after the log lines
        rows = {key(parse_target(v)): r for v, r in json.JSONDecoder().raw_decode(text, start)[0].items()}
    else:
        targets = [parse_target(v) for v in args.versions]
        if args.releases or not targets:  # nothing named: what PyPI has
            found, notes = discover(os.path.join(args.venvs, "releases.json"))
            if args.ci:  # the oldest and the newest onnxruntime release
                found = [t for t in found if t[0] == ORT]
                found = [found[0], found[-1]]
            for note in notes:
                log(note)
            log("releases: " + ", ".join(label(t) for t in found))
            targets += [t for t in found if t not in targets]
        if not args.no_install or not os.path.isdir(os.path.join(args.site, "ortdlpack")):
            t0 = time.time()
            install_site(args.site, args.build_dir)
            log(f"ortdlpack installed in {time.time() - t0:.0f} s")
        rows = {}
        for target in targets:
            t0 = time.time()
            log(f"checking {label(target)}")
            try:
                py = venv_for(target, args.venvs)
            except subprocess.CalledProcessError as e:  # pip's output is above
                rows[key(target)] = {"import, silent": f"no: not installable (pip: exit {e.returncode})"}
                continue
            rows[key(target)] = check_target(py, target, args.site, checks=not args.ci,
                                             probes=not args.no_probes, run_pytest=args.pytest and not args.ci)
            log(f"{label(target)}: {time.time() - t0:.0f} s")

    out = table(rows)
    print(out)
    print(json.dumps(rows, indent=1, ensure_ascii=False), file=sys.stderr)
    if args.ci:
        failed = failures(rows)
        for f in failed:
            log("FAILED " + f)
        log(f"{'FAILED' if failed else 'every probe passed'} ({len(rows)} releases) in {time.time() - t_start:.0f} s")
        sys.exit(1 if failed else 0)
    with open(args.out) as f:
        doc = f.read()
    begin, end = "<!-- compat_table.py: begin -->", "<!-- compat_table.py: end -->"
    doc = doc[: doc.index(begin) + len(begin)] + "\n" + out + "\n" + doc[doc.index(end):]
    with open(args.out, "w") as f:
        f.write(doc)
    log(f"table written to {os.path.relpath(args.out, ROOT)} in {time.time() - t_start:.0f} s")


if __name__ == "__main__":
    main()
