"""Protocol conformance: __dlpack__ (Array API standard 2024.12), capsules, from_dlpack arguments."""

import numpy as np
import pytest

import ortdlpack as od
from conftest import IS_COPIED, READ_ONLY, FakeProducer, capsule_name, read_legacy, read_versioned
from conftest import torch  # optional: tests using one skip without it


@pytest.fixture
def t():
    return od.from_dlpack(np.arange(6, dtype=np.float32).reshape(2, 3))


@pytest.mark.parametrize("max_version,name", [(None, "dltensor"), ((0, 8), "dltensor"), ((1, 0), "dltensor_versioned"),
                                              ((1, 3), "dltensor_versioned"), ((2, 0), "dltensor_versioned")])
def test_max_version_negotiation(t, max_version, name):
    cap = t.__dlpack__(max_version=max_version)
    assert capsule_name(cap) == name
    if name == "dltensor_versioned":
        m = read_versioned(cap)
        assert (m.version.major, m.version.minor) == (1, 3)
        assert m.flags == 0
    else:
        m = read_legacy(cap)
    assert m.dl_tensor.ndim == 2
    assert [m.dl_tensor.shape[i] for i in range(2)] == [2, 3]
    assert [m.dl_tensor.strides[i] for i in range(2)] == [3, 1]
    assert m.dl_tensor.byte_offset == 0


@pytest.mark.parametrize("bad", [(1,), "1.0", 1, (1, 0, 0), ("a", 0)])
def test_bad_max_version_is_type_error(t, bad):
    with pytest.raises(TypeError):
        t.__dlpack__(max_version=bad)


def test_positional_arguments_are_rejected(t):
    with pytest.raises(TypeError):
        t.__dlpack__(None)
    with pytest.raises(TypeError, match="unexpected keyword argument 'device'"):
        t.__dlpack__(device=(1, 0))
    with pytest.raises(TypeError):
        t.__dlpack_device__(1)


@pytest.mark.parametrize("versioned", [True, False])
def test_consumed_capsule_is_renamed_and_cannot_be_consumed_twice(t, versioned):
    cap = t.__dlpack__(max_version=(1, 0) if versioned else None)
    od.from_dlpack(cap)
    assert capsule_name(cap) == ("used_dltensor_versioned" if versioned else "used_dltensor")
    with pytest.raises(ValueError, match="already consumed"):
        od.from_dlpack(cap)


def test_foreign_consumers_rename_our_capsules(t):
    cap = t.__dlpack__(max_version=(1, 0))
    torch.from_dlpack(cap)
    assert capsule_name(cap) == "used_dltensor_versioned"


@pytest.mark.parametrize("stream", [None, -1])
def test_cpu_streams_accepted(t, stream):
    assert capsule_name(t.__dlpack__(stream=stream, max_version=(1, 0))) == "dltensor_versioned"


@pytest.mark.parametrize("stream", [0, 1, 2, 12345])
def test_cpu_streams_rejected(t, stream):
    with pytest.raises(ValueError):
        t.__dlpack__(stream=stream)


def test_stream_of_wrong_type(t):
    with pytest.raises(TypeError):
        t.__dlpack__(stream="default")


def test_dlpack_device(t):
    assert t.__dlpack_device__() == (1, 0)
    assert t.device == "cpu"
    assert t.device == (1, 0)
    assert t.device == od.Device("cpu:0")
    assert str(t.device) == "cpu"


@pytest.mark.parametrize("dl_device", [None, (1, 0)])
@pytest.mark.parametrize("copy", [None, False, True])
def test_dl_device_and_copy_combinations_on_cpu(dl_device, copy):
    a = np.arange(4, dtype=np.int32)
    t = od.from_dlpack(a)
    cap = t.__dlpack__(max_version=(1, 3), dl_device=dl_device, copy=copy)
    m = read_versioned(cap)
    copied = m.dl_tensor.data != a.ctypes.data
    assert copied == bool(copy)
    assert bool(m.flags & IS_COPIED) == bool(copy)
    b = np.from_dlpack(od.from_dlpack(cap))
    np.testing.assert_array_equal(a, b)


def test_dl_device_elsewhere_without_copy_is_buffer_error(t):
    with pytest.raises(BufferError):
        t.__dlpack__(max_version=(1, 3), dl_device=(12, 0), copy=False)


def test_dl_device_without_mapping_is_buffer_error(t):
    with pytest.raises(BufferError):
        t.__dlpack__(max_version=(1, 3), dl_device=(9, 0))  # kDLVPI: no ORT memory for it


def test_array_dtype_conversion_with_copy_false_is_value_error():
    # numpy 2's __array__(dtype, copy) contract: copy=False and a copy needed -> ValueError.
    t = od.from_dlpack(np.arange(4, dtype=np.int32))
    with pytest.raises(ValueError, match="int32 to float64"):
        np.asarray(t, dtype=np.float64, copy=False)
    assert np.asarray(t, dtype=np.float64).dtype == np.float64
    same = np.asarray(t, dtype=np.int32, copy=False)
    assert same.ctypes.data == t.data_ptr
    assert np.asarray(t, copy=True).ctypes.data != t.data_ptr


def test_bad_copy_type(t):
    with pytest.raises(TypeError):
        t.__dlpack__(copy="yes")
    with pytest.raises(TypeError):
        od.from_dlpack(t, copy=1)


def test_legacy_producer_fallback():
    a = np.arange(5, dtype=np.float64)
    p = FakeProducer(a, versioned=False, old_protocol=True)
    t = od.from_dlpack(p)
    assert p.calls == [{}]  # asked once with keywords (TypeError), then plainly
    np.testing.assert_array_equal(t.numpy(), a)


def test_a_producer_whose_dlpack_returns_no_capsule_is_type_error():
    class NoCapsule:
        def __dlpack__(self, **kw):
            return np.arange(3)

    for call in (od.from_dlpack, od.as_ortvalue):
        with pytest.raises(TypeError, match=r"__dlpack__\(\) did not return a PyCapsule"):
            call(NoCapsule())


def test_producer_is_asked_for_the_newest_version():
    p = FakeProducer(np.arange(3, dtype=np.int8))
    od.from_dlpack(p)
    assert p.calls == [{"max_version": (1, 3)}]
    od.from_dlpack(p, copy=False, device="cpu")
    assert p.calls[-1] == {"max_version": (1, 3), "dl_device": (1, 0), "copy": False}


def test_copy_true_honours_is_copied_flag():
    a = np.arange(4, dtype=np.float32)
    p = FakeProducer(a, flags=IS_COPIED)
    t = od.from_dlpack(p, copy=True)
    assert np.from_dlpack(t).ctypes.data == a.ctypes.data  # the producer copied already: no second copy
    assert not t.read_only
    p2 = FakeProducer(a)
    t2 = od.from_dlpack(p2, copy=True)
    assert np.from_dlpack(t2).ctypes.data != a.ctypes.data


def test_copy_true_copies_a_read_only_producer_copy_again():
    # IS_COPIED says the memory is the consumer's alone; READ_ONLY on it means it is not the writable array copy=True
    # gives (numpy, torch): it is copied once more.
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    p = FakeProducer(a, flags=IS_COPIED | READ_ONLY)
    t = od.from_dlpack(p, copy=True)
    assert not t.read_only
    b = np.from_dlpack(t)
    assert b.flags.writeable and b.ctypes.data != a.ctypes.data
    np.testing.assert_array_equal(b, a)
    assert p.deleted == 1  # the copy no longer reads the producer's memory
    shared = od.from_dlpack(FakeProducer(a, flags=IS_COPIED | READ_ONLY))  # copy=None: held where it is, read-only
    assert shared.read_only and np.from_dlpack(shared).ctypes.data == a.ctypes.data


def test_read_only_producer():
    a = np.arange(4, dtype=np.float32)
    a.flags.writeable = False
    t = od.from_dlpack(a)
    assert t.read_only
    m = read_versioned(t.__dlpack__(max_version=(1, 0)))
    assert m.flags & READ_ONLY
    with pytest.raises(BufferError):
        t.__dlpack__()  # legacy capsules cannot say read-only
    assert capsule_name(t.__dlpack__(copy=True)) == "dltensor"  # a copy is writable
    b = t.numpy()
    assert not b.flags.writeable
    assert b.ctypes.data == a.ctypes.data


def test_from_dlpack_of_a_tensor_shares_it(t):
    assert od.from_dlpack(t) is t
    c = od.from_dlpack(t, copy=True)
    assert c is not t
    assert np.from_dlpack(c).ctypes.data != np.from_dlpack(t).ctypes.data


def test_from_dlpack_device_argument_forms(t):
    for device in ["cpu", "cpu:0", (1, 0), od.Device("cpu"), t.device]:
        assert od.from_dlpack(np.zeros(2), device=device).device == "cpu"


def test_every_cpu_device_id_is_the_cpu():
    # Found by the fuzzer: (kDLCPU, 3) is the one CPU memory; copy=False raised CopyRequiredError and copy=None copied.
    a = np.arange(3.0)
    for copy in (False, None):
        assert np.from_dlpack(od.from_dlpack(a, device=(1, 3), copy=copy)).ctypes.data == a.ctypes.data
    t = od.from_dlpack(a)
    assert read_versioned(t.__dlpack__(max_version=(1, 3), dl_device=(1, 2), copy=False)).dl_tensor.data == a.ctypes.data


@pytest.mark.parametrize("bad", ["gpu", "cuda:x", "cuda:-1", (1,), (0, 0), 3.5])
def test_bad_devices(bad):
    with pytest.raises((TypeError, ValueError)):
        od.Device(bad)


def test_device_names():
    assert od.Device("cuda:1").__dlpack_device__() == (2, 1)
    assert od.Device("ext_dev").type == 12
    assert repr(od.Device((2, 3))) == "Device('cuda:3')"
    assert od.Device("cuda:1") != od.Device("cuda:0")
    assert len({od.Device("cpu"), od.Device((1, 0))}) == 1


@pytest.mark.parametrize("name,onnxruntime", [("cpu", "cpu"), ("cuda:1", "cuda"), ("cuda_host", "cpu"), ("rocm", "cuda"),
                                              ("ext_dev", None), ("vulkan", None)])
def test_onnxruntime_device_names_come_from_the_core_table(name, onnxruntime):
    assert od.Device(name).onnxruntime_name == onnxruntime


def test_from_dlpack_to_unmapped_device_is_buffer_error():
    with pytest.raises(BufferError):
        od.from_dlpack(np.zeros(2), device="vpi:0")


def test_capsule_with_versioned_major_2_is_buffer_error(collect):
    p = FakeProducer(np.arange(3, dtype=np.int8), version=(2, 0))
    with pytest.raises(BufferError):
        od.from_dlpack(p)
    collect()
    assert p.deleted == 1


def test_repr_and_properties(t):
    assert repr(t) == "ortdlpack.Tensor(shape=(2, 3), dtype=float32, device=cpu)"
    assert (t.ndim, t.size, t.nbytes) == (2, 6, 24)
    assert t.to("cpu") is t
