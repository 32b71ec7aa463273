"""ortdlpack on CUDA with onnxruntime-gpu and torch: copies and allocations through the env's CUDA EP, sessions on
the EP by the names users know, pinned and managed memory, strided views (issue 9, items 2-4 and 6)."""

from __future__ import annotations

import numpy as np
import pytest

import ortdlpack
from conftest import cpu_session, cuda_session, torch


def test_cuda_tensor_to_numpy_and_back():
    x = torch.arange(12, dtype=torch.float32, device="cuda").reshape(3, 4)
    t = ortdlpack.from_dlpack(x)
    assert t.__dlpack_device__() == (2, 0) and t.data_ptr == x.data_ptr()
    np.testing.assert_array_equal(t.numpy(), x.cpu().numpy())
    np.testing.assert_array_equal(np.asarray(t), x.cpu().numpy())
    host = t.to("cpu")
    assert host.__dlpack_device__() == (1, 0)
    back = ortdlpack.from_dlpack(host.numpy()).to("cuda:0")
    assert back.__dlpack_device__() == (2, 0)
    assert torch.equal(torch.from_dlpack(back), x)


def test_copy_true_on_cuda_is_a_new_cuda_tensor():
    x = torch.arange(8, dtype=torch.float32, device="cuda")
    c = ortdlpack.from_dlpack(x, copy=True)
    assert c.__dlpack_device__() == (2, 0) and c.data_ptr != x.data_ptr()
    assert torch.equal(torch.from_dlpack(c), x)


def test_cuda_feed_for_a_cpu_session_is_staged(models):
    s = cpu_session(models["add_tiny"])
    x = torch.rand(1, 100, device="cuda")
    (y,) = ortdlpack.run(s, {"x": x})
    np.testing.assert_allclose(y.numpy(), s.run(None, {"x": x.cpu().numpy()})[0])


@pytest.mark.parametrize("ep", ["cuda", "CUDA", "CUDAExecutionProvider"])
def test_session_on_the_cuda_ep_by_the_names_users_know(models, ep):
    s = ortdlpack.Session(models["add_tiny"], ep=ep, ep_options={"device_id": "0", "use_tf32": "0"})
    x = torch.rand(1, 100, device="cuda")
    (y,) = s.run({"x": x})
    assert y.__dlpack_device__() == (2, 0)
    np.testing.assert_allclose(torch.from_dlpack(y).cpu().numpy(),
                               cpu_session(models["add_tiny"]).run(None, {"x": x.cpu().numpy()})[0], rtol=1e-6)


def test_pinned_outputs_are_cuda_host_memory(models):
    s = cuda_session(models["add_tiny"])
    x = torch.rand(1, 100, device="cuda")
    (y,) = ortdlpack.run(s, {"x": x}, device=(3, 0))
    assert y.__dlpack_device__() == (3, 0)
    np.testing.assert_allclose(y.numpy(), cpu_session(models["add_tiny"]).run(None, {"x": x.cpu().numpy()})[0],
                               rtol=1e-6)
    p = ortdlpack.from_dlpack(np.ones(4, np.float32), device=(3, 0))
    assert p.__dlpack_device__() == (3, 0)
    np.testing.assert_array_equal(p.numpy(), np.ones(4, np.float32))


def test_cupy_managed_memory_is_imported():
    cp = pytest.importorskip("cupy")
    pool = cp.cuda.MemoryPool(cp.cuda.malloc_managed)
    with cp.cuda.using_allocator(pool.malloc):
        x = cp.arange(6, dtype=cp.float32)
    t = ortdlpack.from_dlpack(x)
    assert t.__dlpack_device__() == (2, 0) and t.data_ptr == x.data.ptr
    np.testing.assert_array_equal(t.numpy(), cp.asnumpy(x))


def test_jax_and_cupy_round_trips_share_memory():
    cp = pytest.importorskip("cupy")
    x = cp.arange(6, dtype=cp.float32)
    t = ortdlpack.from_dlpack(x)
    assert t.data_ptr == x.data.ptr
    assert cp.from_dlpack(t).data.ptr == x.data.ptr
    jax = pytest.importorskip("jax")
    gpus = [d for d in jax.devices() if d.platform == "gpu"]
    if not gpus:
        pytest.skip("jax has no GPU backend")
    j = jax.device_put(np.arange(6, dtype=np.float32), gpus[0])
    tj = ortdlpack.from_dlpack(j)
    assert tj.__dlpack_device__() == (2, 0)
    np.testing.assert_array_equal(tj.numpy(), np.arange(6, dtype=np.float32))


def test_strided_cuda_views_are_refused_clearly():
    x = torch.rand(3, 4, device="cuda")
    with pytest.raises(BufferError, match="compact"):
        ortdlpack.from_dlpack(x.T)


def test_cuda_destinations_that_share_memory_are_refused(models):
    # Device memory too (issue 34): a destination over a feed's CUDA memory, or two destinations over one buffer, are
    # refused before ORT runs, naming both, nothing written.
    s = cuda_session(models["add_tiny"])
    x = torch.rand(1, 100, device="cuda")
    before = x.clone()
    for run in (lambda: ortdlpack.run(s, {"x": x}, outputs={"y": x}),
                lambda: ortdlpack.Session(models["add_tiny"], ep="cuda").run({"x": x}, outputs={"y": x})):
        with pytest.raises(ValueError, match=r"output destination 'y' overlaps input 'x'"):
            run()
    assert torch.equal(x, before)
    # A destination elsewhere in the same allocation is no overlap.
    big = torch.zeros(2, 100, device="cuda")
    (y,) = ortdlpack.run(s, {"x": big[0:1]}, outputs={"y": big[1:2]})
    assert torch.from_dlpack(y).data_ptr() == big[1:2].data_ptr()
