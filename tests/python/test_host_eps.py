"""Plugin EPs whose tensors live in host memory, from their own PyPI packages: Qualcomm's QNN EP (onnxruntime-qnn,
its HTP backend a simulator on x86_64), the ggml EP (onnxruntime-ggml) and Intel's OpenVINO EP (onnxruntime-ep-openvino,
Intel CPUs only). Each is found through its installed distribution, registered once under its own EP name and used
by every name a user writes; sessions run both ways (ortdlpack.Session, ortdlpack.run on the user's InferenceSession)
on torch tensors without a copy in or out, chained, with outputs that outlive their session. scripts/setup.sh
installs the pinned packages where they install; each test skips, saying why, where its EP cannot run."""

from __future__ import annotations

import dataclasses
import gc
import importlib.metadata as metadata
import io
import os

import numpy as np
import onnxruntime as ort
import pytest

import ortdlpack as od
from ortdlpack import _ep_packages  # the finder the core registers a package's library from
from conftest import ORT_RELEASE, SANITIZER, entry_points, ep_device_library, library_is_loaded
from conftest import helper, TensorProto, torch  # optional: tests using one skip without it



@dataclasses.dataclass(frozen=True)
class HostEp:
    key: str
    distribution: str
    ep_name: str
    names: tuple  # every name a user may write for it
    since: tuple  # the oldest onnxruntime the pinned package runs on (older ones refuse it; tested below)
    under_asan: bool = True  # whether its library runs in scripts/sanitize.sh's ASan-preloaded Python leg
    options: tuple = ()  # (key, value) pairs a user's own onnxruntime session needs (QNN cannot choose a backend)


HOST_EPS = {
    "qnn": HostEp("qnn", "onnxruntime-qnn", "QNNExecutionProvider", ("qnn", "QNN", "QNNExecutionProvider"), (1, 24),
                  options=(("backend_type", "htp"),)),
    "ggml": HostEp("ggml", "onnxruntime-ggml", "ggml", ("ggml", "GGML"), (1, 29)),
    # Registering its library with the ASan runtime preloaded aborts the process on an Intel CPU (docs/reliability.md,
    # section 1): scripts/sanitize.sh's leg never registers it.
    "openvino": HostEp("openvino", "onnxruntime-ep-openvino", "OpenVINOExecutionProvider",
                       ("openvino", "OpenVINO", "OpenVINOExecutionProvider"), (1, 23), under_asan=False),
}


def _cpu_vendor() -> str:
    """The CPU's vendor as ORT reads it (CPUID), which is what OpenVINO's factory matches: "Intel", "AMD", ... (also
    under an emulated CPU, where /proc/cpuinfo tells the host's: scripts/ci_other_cpu.sh)."""
    cpu = [d for d in ort.get_ep_devices() if d.ep_name == "CPUExecutionProvider"]
    return cpu[0].device.vendor if cpu else "unknown"


def _installed(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def _sanitizer_reason(ep: HostEp) -> str | None:
    """Why the EP's library is not registered in this process at all: scripts/sanitize.sh's leg, for a library that
    cannot run with the ASan runtime preloaded (checked before anything registers it)."""
    if SANITIZER == "asan" and not ep.under_asan:
        return (f"ORTDLPACK_SANITIZER=asan (scripts/sanitize.sh): {ep.distribution}'s library, not built with ASan, "
                f"aborts the process when registered with the ASan runtime preloaded (on Intel CPUs), so this leg "
                f"never registers it; the plain legs test it (docs/reliability.md)")
    return None


def _skip_reason(ep: HostEp) -> str | None:
    version = _installed(ep.distribution)
    if version is None:
        return f"{ep.distribution} is not installed (scripts/setup.sh installs the pinned one where it installs)"
    if _sanitizer_reason(ep):
        return _sanitizer_reason(ep)
    if ep.key == "openvino" and _cpu_vendor() != "Intel":
        return (f"{ep.distribution} lists devices on Intel CPUs only (its factory matches CPU vendor 0x8086); this "
                f"CPU is {_cpu_vendor()}")
    if ORT_RELEASE[:2] < ep.since:
        return (f"{ep.distribution} {version} needs onnxruntime >= {'.'.join(map(str, ep.since))}; this is "
                f"{ort.__version__} (test_a_package_this_onnxruntime_cannot_host_is_refused checks the refusal)")
    return None


@pytest.fixture(params=list(HOST_EPS))
def host_ep(request) -> HostEp:
    ep = HOST_EPS[request.param]
    reason = _skip_reason(ep)
    if reason:
        pytest.skip(reason)
    od.Device(ep.names[0])  # registers the package's library, once (resolve_provider, as every path names an EP)
    assert [d for d in ort.get_ep_devices() if d.ep_name == ep.ep_name]
    return ep


def _model(nodes, inputs, outputs, initializers=()) -> bytes:
    """Float32 [4, 8] tensors: fixed shapes, which every EP here compiles (QNN's HTP needs them)."""
    vi = lambda n: helper.make_tensor_value_info(n, TensorProto.FLOAT, [4, 8])  # noqa: E731
    m = helper.make_model(helper.make_graph(nodes, "m", [vi(n) for n in inputs], [vi(n) for n in outputs],
                                            list(initializers)),
                          opset_imports=[helper.make_opsetid("", 18)])
    m.ir_version = 9
    return m.SerializeToString()


def addmul_model() -> bytes:
    """w = (x + y) * y."""
    return _model([helper.make_node("Add", ["x", "y"], ["s"]), helper.make_node("Mul", ["s", "y"], ["w"])],
                  ["x", "y"], ["w"])


def affine_model() -> bytes:
    """y = x * 0.5 + 1: one input and one output of the same shape, so that runs chain."""
    half = helper.make_tensor("half", TensorProto.FLOAT, [4, 8], [0.5] * 32)
    one = helper.make_tensor("one", TensorProto.FLOAT, [4, 8], [1.0] * 32)
    return _model([helper.make_node("Mul", ["x", "half"], ["h"]), helper.make_node("Add", ["h", "one"], ["y"])],
                  ["x"], ["y"], [half, one])


def inference_session(ep: HostEp, model: bytes) -> ort.InferenceSession:
    """The user's own onnxruntime session on the EP: its EP devices with the options it needs
    (add_provider_for_devices; onnxruntime 1.32's providers=["QNNExecutionProvider"] silently runs on the CPU EP)."""
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.add_session_config_entry("session.record_ep_graph_assignment_info", "1")
    devices = [d for d in ort.get_ep_devices() if d.ep_name == ep.ep_name]
    so.add_provider_for_devices(devices, dict(ep.options))
    return ort.InferenceSession(model, so)


def runner(ep: HostEp, way: str, model: bytes):
    if way == "Session":
        s = od.Session(model, ep=ep.names[0], intra_op_num_threads=1)
        assert s.get_providers()[0] == ep.ep_name
        return lambda feeds, **kw: s.run(feeds, **kw)
    s = inference_session(ep, model)
    assert s.get_providers()[0] == ep.ep_name
    return lambda feeds, **kw: od.run(s, feeds, **kw)


def feeds():
    x = torch.arange(32, dtype=torch.float32).reshape(4, 8) / 4
    y = torch.full((4, 8), 3.0)
    return x, y


# --- found by its own name --------------------------------------------------------------------------------------


def test_every_name_finds_the_package_registered_under_the_eps_own_name(host_ep):
    for name in host_ep.names:
        assert entry_points().resolve_provider(name) == host_ep.ep_name
    devices = [d for d in ort.get_ep_devices() if d.ep_name == host_ep.ep_name]
    assert devices
    # The library registered is the package's own: the one its module names, inside its installed folder.
    ((_, _, folder, library, _),) = _ep_packages.find(host_ep.distribution)
    assert library.startswith(folder + os.sep)
    libraries = {ep_device_library(d) for d in devices}
    if libraries == {None}:
        # onnxruntime 1.23 names no library in a plugin EP's devices (ep_device_library): which library a device
        # came from cannot be asked there, only that the package's library is loaded while its devices are listed.
        assert library_is_loaded(library), f"onnxruntime {ort.__version__}: {library} is not loaded"
    else:
        assert libraries == {library}
    if ORT_RELEASE[:2] >= (1, 32):  # onnxruntime knows it by that name too: 1.32 lists plugin EPs there; 1.23 and
        assert host_ep.ep_name in ort.get_available_providers()  # 1.24 list built-in EPs only (onnxruntime#27832)
    assert od.Device(f"{host_ep.names[0]}:0") == od.Device("cpu")  # its tensors are host memory


def test_ortdlpack_sessions_take_every_name_in_providers(host_ep):
    x, y = feeds()
    for name in host_ep.names:
        for providers in ([name], [(name, {})], [name, "CPUExecutionProvider"]):
            s = od.Session(addmul_model(), providers=providers)
            assert s.get_providers() == [host_ep.ep_name, "CPUExecutionProvider"]
    (w,) = s.run({"x": x, "y": y})
    assert np.array_equal(np.from_dlpack(w), ((x + y) * y).numpy())


def test_the_drop_in_takes_every_name_in_providers(host_ep):
    # ortdlpack.InferenceSession (onnxruntime's session): the names users write, the package registered under the
    # EP's own name, the EP selected by its devices (by name onnxruntime 1.32 silently leaves QNN out), the EP's nodes
    # on it (graph assignment), its options' defaults added (QNN's htp backend).
    x, y = feeds()
    for name in host_ep.names:
        for providers in ([name], [(name, {})], [name, "CPUExecutionProvider"]):
            s = od.InferenceSession(addmul_model(), providers=providers)
            assert s.get_providers() == [host_ep.ep_name, "CPUExecutionProvider"], providers
    s = od.InferenceSession(addmul_model(), ep=host_ep.names[0])
    assert s.get_providers()[0] == host_ep.ep_name
    (w,) = s.run(None, {"x": x, "y": y})
    assert isinstance(w, torch.Tensor) and torch.equal(w, (x + y) * y)
    so = ort.SessionOptions()
    so.add_session_config_entry("session.record_ep_graph_assignment_info", "1")
    # With the caller's SessionOptions (which cannot be copied, so ortdlpack adds no EP devices to them) the EP goes
    # to onnxruntime by its name, as onnxruntime takes names.
    s = od.InferenceSession(addmul_model(), so, providers=[host_ep.names[0]])
    assert s.get_providers() == ort.InferenceSession(addmul_model(), so, providers=[host_ep.ep_name]).get_providers()


def test_the_drop_in_s_provider_arguments_onnxruntime_refuses_stay_onnxruntime_s_to_refuse():
    with pytest.raises(ValueError, match="'providers' values must be either strings or"):
        od.InferenceSession(addmul_model(), providers=[3], enable_fallback=0)
    with pytest.raises(ValueError, match="set ep or providers, not both"):
        od.InferenceSession(addmul_model(), providers=["CPUExecutionProvider"], ep="cpu")
    with pytest.raises(ValueError, match="ep_options needs ep"):  # the core's rule, as ortdlpack.Session's
        od.InferenceSession(addmul_model(), ep_options={"device_id": "0"})


def test_onnxruntime_finds_ggml_by_its_name():
    ep = HOST_EPS["ggml"]
    if _skip_reason(ep):
        pytest.skip(_skip_reason(ep))
    entry_points().resolve_provider("ggml")
    s = ort.InferenceSession(addmul_model(), providers=["ggml"])  # a plain onnxruntime session, by the EP's name
    assert s.get_providers()[0] == "ggml"


def test_qnn_gets_its_htp_backend_by_default():
    """QNN cannot choose a backend by itself on every host ("Could not determine default backend path"): ortdlpack's
    sessions default to backend_type=htp (docs/devices.md) unless the caller names a backend."""
    assert entry_points().provider_options("QNNExecutionProvider", {}) == {"backend_type": "htp"}
    assert entry_points().provider_options("QNNExecutionProvider", {"backend_type": "gpu"}) == {"backend_type": "gpu"}
    assert entry_points().provider_options("QNNExecutionProvider", {"backend_path": "libQnnHtp.so"}) == {
        "backend_path": "libQnnHtp.so"}
    assert entry_points().provider_options("ggml", {"device": "cpu"}) == {"device": "cpu"}
    ep = HOST_EPS["qnn"]
    if _skip_reason(ep):
        pytest.skip(_skip_reason(ep))
    x, y = feeds()
    s = od.Session(addmul_model(), ep="qnn")  # no options: without the default this session fails
    assert s.get_providers()[0] == "QNNExecutionProvider"
    (w,) = s.run({"x": x, "y": y})
    assert np.array_equal(np.from_dlpack(w), ((x + y) * y).numpy())


def test_show_config_lists_the_package(host_ep):
    out = io.StringIO()
    od.show_config(file=out)
    assert f"  {host_ep.distribution} {metadata.version(host_ep.distribution)}: {host_ep.ep_name} (" in out.getvalue()


# --- sessions both ways, without a copy -------------------------------------------------------------------------


@pytest.mark.parametrize("way", ["Session", "run"])
def test_torch_in_and_out_without_a_copy(host_ep, way):
    run = runner(host_ep, way, addmul_model())
    x, y = feeds()
    want = ((x + y) * y).numpy()
    tx = od.from_dlpack(x)
    assert tx.data_ptr == x.data_ptr()  # the feed ORT reads is torch's memory
    (w,) = run({"x": tx, "y": y})
    assert np.array_equal(np.from_dlpack(w), want)
    assert torch.from_dlpack(w).data_ptr() == w.data_ptr  # the output handed to torch is ORT's memory
    dest = torch.empty(4, 8)
    (w,) = run({"x": x, "y": y}, outputs={"w": dest})  # ORT writes into torch's tensor
    assert w.data_ptr == dest.data_ptr() and np.array_equal(dest.numpy(), want)
    (t,) = run({"x": x, "y": y}, output_type="torch")
    assert isinstance(t, torch.Tensor) and np.array_equal(t.numpy(), want)


@pytest.mark.parametrize("way", ["Session", "run"])
def test_chained_runs_hand_the_output_on_as_it_is(host_ep, way):
    run = runner(host_ep, way, affine_model())
    x, _ = feeds()
    (y1,) = run({"x": x})
    (y2,) = run({"x": y1})
    d1, d2 = torch.empty(4, 8), torch.empty(4, 8)
    (z1,) = run({"x": x}, outputs={"y": d1})
    (z2,) = run({"x": z1}, outputs={"y": d2})
    assert (z1.data_ptr, z2.data_ptr) == (d1.data_ptr(), d2.data_ptr())
    want = (x * 0.5 + 1) * 0.5 + 1
    assert np.allclose(np.from_dlpack(y2), want.numpy()) and np.allclose(d2.numpy(), want.numpy())


@pytest.mark.parametrize("way", ["Session", "run"])
def test_an_output_outlives_its_session(host_ep, way):
    run = runner(host_ep, way, affine_model())
    x, _ = feeds()
    (y,) = run({"x": x})
    t = torch.from_dlpack(y)
    del run, y
    gc.collect()
    assert np.allclose(t.numpy(), (x * 0.5 + 1).numpy())
    (z,) = runner(host_ep, way, affine_model())({"x": t})  # another session, fed the orphan
    assert np.allclose(np.from_dlpack(z), ((x * 0.5 + 1) * 0.5 + 1).numpy())


# --- errors -------------------------------------------------------------------------------------------------------


def test_errors_name_the_device_the_option_or_the_name(host_ep):
    with pytest.raises(ValueError, match=rf"'{host_ep.ep_name}' has devices 0\.\.0"):
        od.Device(f"{host_ep.names[0]}:3")
    with pytest.raises(ValueError, match="invalid device id"):
        od.Device(f"{host_ep.names[0]}:x")
    with pytest.raises(ValueError, match=f"no execution provider named '{host_ep.names[0]}x'"):
        od.Session(addmul_model(), ep=f"{host_ep.names[0]}x")
    with pytest.raises(ValueError, match="name is empty"):
        entry_points().resolve_provider("")


def test_a_package_whose_ep_lists_no_device_here_is_not_registered():
    """onnxruntime-ep-openvino on a CPU that is not Intel's: it registers, lists no device, and is unregistered again;
    asking for it says what the EP needs and names both versions."""
    ep = HOST_EPS["openvino"]
    version = _installed(ep.distribution)
    if version is None:
        pytest.skip(f"{ep.distribution} is not installed (scripts/setup.sh installs the pinned one where it installs)")
    if _sanitizer_reason(ep):  # this test registers the library too
        pytest.skip(_sanitizer_reason(ep))
    if _cpu_vendor() == "Intel":
        pytest.skip("this Intel CPU gets OpenVINO devices: the tests above run on them")
    with pytest.raises(BufferError, match="Intel hardware only") as e:
        entry_points().resolve_provider("openvino")
    assert f"{ep.distribution} {version} on ONNX Runtime {ort.__version__}" in str(e.value)
    assert "unregistered again" in str(e.value)
    assert not [d for d in ort.get_ep_devices() if d.ep_name == ep.ep_name]


def test_a_qnn_backend_that_is_not_there_is_onnxruntimes_error():
    """QNN logs a backend it cannot load and claims no node; the session then fails where the CPU EP may not take
    over (as onnxruntime does): ORT's own message."""
    ep = HOST_EPS["qnn"]
    if _skip_reason(ep):
        pytest.skip(_skip_reason(ep))
    with pytest.raises(ort.capi.onnxruntime_pybind11_state.Fail, match=r"^\[ONNXRuntimeError\] : 1 : FAIL : "):
        od.Session(addmul_model(), ep="qnn", ep_options={"backend_path": "/nonexistent/libQnnNothing.so"},
                   config={"session.disable_cpu_ep_fallback": "1"})


@pytest.mark.parametrize("key", ["qnn", "ggml"])
def test_a_package_this_onnxruntime_cannot_host_is_refused(key):
    """An EP package built for a newer onnxruntime than the one running: not registered, and asking for it says why,
    with both versions (ci_oldest_ort.sh runs this on onnxruntime 1.23)."""
    ep = HOST_EPS[key]
    version = _installed(ep.distribution)
    if version is None:
        pytest.skip(f"{ep.distribution} is not installed")
    if ORT_RELEASE[:2] >= ep.since:
        pytest.skip(f"onnxruntime {ort.__version__} hosts {ep.distribution} {version}")
    with pytest.raises(BufferError) as first:
        entry_points().resolve_provider(ep.names[0])
    assert f"{ep.distribution} {version} on ONNX Runtime {ort.__version__}" in str(first.value)
    assert not [d for d in ort.get_ep_devices() if d.ep_name == ep.ep_name]
    with pytest.raises(BufferError) as again:  # decided once: not registered again
        od.Session(addmul_model(), ep=ep.names[0])
    assert str(first.value) in str(again.value)
