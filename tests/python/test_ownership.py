"""Memory is shared, producers stay alive while used, deleters run exactly once."""

import gc
import weakref

import numpy as np

import ortdlpack as od
from conftest import FakeProducer, entry_points
from conftest import torch  # optional: tests using one skip without it


def test_write_through_both_sides_numpy():
    a = np.zeros(4, np.float32)
    t = od.from_dlpack(a)
    b = np.from_dlpack(t)
    a[1] = 5
    assert b[1] == 5
    b[2] = 7
    assert a[2] == 7


def test_write_through_torch_and_ortvalue():
    x = torch.zeros(3)
    t = od.from_dlpack(x)
    v = t.ortvalue
    x[0] = 9
    assert v.numpy()[0] == 9
    y = torch.from_dlpack(t)
    y[2] = 4
    assert x[2] == 4


def test_producer_kept_alive_after_user_drops_it(collect):
    a = np.arange(1000, dtype=np.float64)
    ref = weakref.ref(a)
    t = od.from_dlpack(a)
    del a
    collect()
    assert ref() is not None  # the Tensor keeps its producer alive
    np.testing.assert_array_equal(t.numpy(), np.arange(1000))
    del t
    collect()
    assert ref() is None  # and lets it go with the last user
    x = torch.arange(10.0)
    ref = weakref.ref(x)
    t2 = od.from_dlpack(x)
    del x
    collect()
    assert ref() is not None
    assert torch.equal(torch.from_dlpack(t2), torch.arange(10.0))
    del t2
    collect()
    assert ref() is None


def test_deleter_called_exactly_once_after_last_user(collect):
    p = FakeProducer(np.arange(6, dtype=np.int32))
    t = od.from_dlpack(p)
    n = np.from_dlpack(t)  # numpy holds a share through our export
    y = torch.from_dlpack(t)
    v = t.ortvalue
    del t
    collect()
    assert p.deleted == 0
    del n, y
    collect()
    assert p.deleted == 0
    del v
    collect()
    assert p.deleted == 1


def test_unconsumed_capsule_frees_once(collect):
    p = FakeProducer(np.arange(3, dtype=np.int8))
    cap = p.__dlpack__()
    del cap
    collect()
    assert p.deleted == 1


def test_our_unconsumed_capsules_free_once(collect):
    p = FakeProducer(np.arange(3, dtype=np.int8))
    t = od.from_dlpack(p)
    caps = [t.__dlpack__(), t.__dlpack__(max_version=(1, 0)), entry_points().legacy_capsule(t)]
    del t
    collect()
    assert p.deleted == 0
    del caps
    collect()
    assert p.deleted == 1


def test_copy_releases_the_producer_at_once(collect):
    p = FakeProducer(np.arange(8, dtype=np.float32).reshape(2, 4), strides=(1, 2), shape=(4, 2))
    t = od.from_dlpack(p)  # strided: imported as a copy
    collect()
    assert p.deleted == 1
    assert t.shape == (4, 2)


def test_legacy_deleter_once(collect):
    p = FakeProducer(np.arange(4, dtype=np.uint16), versioned=False)
    t = od.from_dlpack(p)
    j = torch.from_dlpack(t)
    del t
    collect()
    assert p.deleted == 0
    del j
    collect()
    assert p.deleted == 1


def test_many_round_trips_do_not_leak(collect):
    a = np.arange(1024, dtype=np.float32)
    before = len(gc.get_objects())
    for _ in range(2000):
        np.from_dlpack(od.from_dlpack(torch.from_dlpack(od.from_dlpack(a))))
    collect()
    assert len(gc.get_objects()) - before < 100
    import sys

    assert sys.getrefcount(a) == 2
