"""Stream ordering (docs/streams.md) on the asynchronous virtual device, one test per path.

A producer (tests/python/async_producer.py, which behaves like torch on CUDA) leaves a write queued on its own
stream; every copy on a virtual-device stream takes DELAY_US of device time. A path that reads the producer's tensor
without being ordered after that write reads the zeros of fresh device memory; a consumer on another stream that is
not ordered after ortdlpack's work reads zeros too. So each test fails without the ordering it names.
"""

from __future__ import annotations

import gc
import threading
import time

import numpy as np
import onnxruntime as ort
import pytest

import ortdlpack
from conftest import EP_NAME, cpu_session, tiny_input
from async_producer import AsyncProducer

DELAY_US = 20_000


@pytest.fixture
def producer(vd, counters):
    _, devices = vd
    p = AsyncProducer(devices[0])
    old = p.set_delay_us(DELAY_US)
    yield p
    p.set_delay_us(old)
    p.close()
    gc.collect()


def pending(producer, values):
    """A producer tensor holding `values` once the producer's stream gets there (not yet)."""
    x = producer.empty(np.shape(values))
    producer.write(x, values)
    return x


def test_import_then_use(producer, counters):
    data = np.arange(64, dtype=np.float32) + 1
    t = ortdlpack.from_dlpack(pending(producer, data))
    np.testing.assert_array_equal(t.numpy(), data)
    assert counters()["stream_waits"] >= 1  # ortdlpack's stream waited for the producer's, on the device


def test_copies(producer, vd):
    _, devices = vd
    data = np.arange(64, dtype=np.float32) + 2
    x = pending(producer, data)
    t = ortdlpack.from_dlpack(x, copy=True)  # device-to-device copy of the producer's tensor
    np.testing.assert_array_equal(np.asarray(t.to(devices[1])), data)
    data2 = data * 3
    producer.write(x, data2)
    np.testing.assert_array_equal(np.asarray(ortdlpack.from_dlpack(x).to("cpu")), data2)


# --- a queued copy keeps its source (rule 2) --------------------------------------------------------------------
# The producer reuses memory once its deleter ran (AsyncProducer.empty(reuse=...)). ortdlpack's stream is held
# behind a gate, so its copy is queued, not run, until the test opens it after everything the producer queued (its
# reuse of a released tensor included) has landed: the copy reads the producer's values only if the source was kept
# until the copy ran. Deterministic: no timing decides it.


@pytest.mark.parametrize("source", ["producer", "temporary ortdlpack.Tensor"])
def test_a_queued_copy_keeps_its_source_until_it_ran(producer, counters, source):
    data = np.arange(64, dtype=np.float32) + 7
    x = producer.empty((64,), reuse=np.full(64, -1, np.float32))
    producer.write(x, data)
    ours = producer.ortdlpack_stream()
    with producer.gate(ours) as gate:
        syncs = counters()["host_syncs"]
        if source == "producer":
            c = ortdlpack.from_dlpack(x, copy=True)  # ortdlpack copies (a 2022 producer does not)
        else:
            c = ortdlpack.from_dlpack(ortdlpack.from_dlpack(x), copy=True)  # the zero-copy import is dropped at once
        assert counters()["host_syncs"] == syncs, "the copy is left queued: no host wait"
        released_early = producer.releases
        producer.synchronize()
    assert released_early == 0, "the producer's tensor was released while ortdlpack's copy of it was queued"
    np.testing.assert_array_equal(c.numpy(), data)
    assert producer.releases == 1, "released once, when the host wait of numpy() saw the copy complete"
    assert not gate.timed_out, "something waited on the host behind ortdlpack's queued copy"


# --- a host wait in one thread, an export in another (rule 3) ---------------------------------------------------
# A thread reads t on the host (numpy()): its host wait on ortdlpack's stream lasts as long as the producer's write
# is held behind a gate. The test exports t to a consumer's stream meanwhile (once the virtual device counts the
# thread's host wait): that stream must wait for the producer's write, which the thread's wait has not seen complete.


def test_a_host_wait_in_another_thread_leaves_an_export_ordered(producer, vd, counters):
    _, devices = vd
    data = np.arange(64, dtype=np.float32) + 9
    x = producer.empty((64,))
    consumer = AsyncProducer(devices[0])
    try:
        with producer.gate() as gate:
            producer.write(x, data)
            t = ortdlpack.from_dlpack(x)
            syncs = counters()["host_syncs"]
            seen = {}
            reader = threading.Thread(target=lambda: seen.update(host=t.numpy()))
            reader.start()
            deadline = time.monotonic() + 10
            while counters()["host_syncs"] == syncs and time.monotonic() < deadline:
                time.sleep(0.001)
            assert counters()["host_syncs"] > syncs, "the thread never waited on the host"
            waits = counters()["stream_waits"]
            t.__dlpack__(stream=consumer.stream, max_version=(1, 0))  # the capsule itself is dropped at once
            ordered = counters()["stream_waits"] > waits
            out = consumer.read_async(t)
            if not ordered:
                consumer.synchronize()  # nothing holds the consumer's read: it runs now, before the write lands
        reader.join()
        consumer.synchronize()
    finally:
        consumer.close()
    assert ordered, "the consumer's stream was not made to wait: the other thread's host wait counted as done"
    np.testing.assert_array_equal(out, data)
    np.testing.assert_array_equal(seen["host"], data)
    assert not gate.timed_out


def test_export_to_a_consumer_on_another_stream(producer, vd):
    _, devices = vd
    data = np.arange(32, dtype=np.float32) + 5
    # Two copies queued on ortdlpack's stream (host -> device 0 -> device 0): twice the consumer's one copy. (Before
    # the ordering work ortdlpack's copies were synchronous; this guards the export rule now that they are queued.)
    # (The first is kept alive: freeing device memory waits for queued copies that use it, like cudaFree.)
    first = ortdlpack.from_dlpack(data, device=devices[0])
    t = ortdlpack.from_dlpack(first, copy=True)
    consumer = AsyncProducer(devices[0])
    try:
        capsule = t.__dlpack__(stream=consumer.stream, max_version=(1, 0))  # consumer's stream waits for ortdlpack's
        del capsule
        np.testing.assert_array_equal(consumer.read(t), data)
        # ortdlpack kept the source of its queued copy (`first`) until the copy ran: released at its next call on
        # the device, this host wait.
        np.testing.assert_array_equal(t.numpy(), data)
    finally:
        consumer.close()


def test_export_with_stream_none_waits_on_the_host(producer, vd, counters):
    _, devices = vd
    t = ortdlpack.from_dlpack(np.ones(8, np.float32), device=devices[1])
    before = counters()["host_syncs"]
    t.__dlpack__(stream=None, max_version=(1, 0))
    assert counters()["host_syncs"] == before + 1
    consumer = AsyncProducer(devices[1])
    try:
        np.testing.assert_array_equal(consumer.read(t), np.ones(8, np.float32))
    finally:
        consumer.close()


def test_ortdlpack_run(producer, models):
    x = tiny_input()
    expected = cpu_session(models["add_tiny"]).run(None, {"x": x})[0]
    (y,) = ortdlpack.run(cpu_session(models["add_tiny"]), {"x": pending(producer, x)})
    np.testing.assert_array_equal(np.asarray(y), expected)
    out = np.empty_like(expected)  # through IOBinding rather than session.run
    ortdlpack.run(cpu_session(models["add_tiny"]), {"x": pending(producer, x)}, outputs={"y": out})
    np.testing.assert_array_equal(out, expected)


def test_session_run_with_the_device_ep(producer, models):
    x = tiny_input()
    expected = cpu_session(models["add_tiny"]).run(None, {"x": x})[0]
    s = ortdlpack.Session(models["add_tiny"], ep=EP_NAME)
    (y,) = s.run({"x": pending(producer, x)})  # ORT copies the device feed itself, after ortdlpack's host wait
    np.testing.assert_array_equal(np.asarray(y.to("cpu")), expected)
    (y,) = ortdlpack.Session(models["add_tiny"]).run({"x": pending(producer, x)})  # CPU session: staged copy
    np.testing.assert_array_equal(np.asarray(y), expected)
    del s, y


def test_outputs_into_a_destination_with_a_pending_write(producer, models):
    # The producer still has writes of garbage queued on the destination: they must land before ORT's result.
    x = tiny_input()
    expected = cpu_session(models["add_tiny"]).run(None, {"x": x})[0]
    s = ortdlpack.Session(models["add_tiny"], ep=EP_NAME)
    s.run({"x": x})  # warm: the run below takes far less than the queued writes
    dst = producer.empty((1, 100))
    for _ in range(5):
        producer.write(dst, np.full((1, 100), -7.0, np.float32))
    (y,) = s.run({"x": x}, outputs={"y": dst})
    producer.synchronize()  # without the ordering, the garbage lands after ORT's result and replaces it
    np.testing.assert_array_equal(np.asarray(y.to("cpu")), expected)
    del s, y


def test_session_with_the_callers_stream_runs_after_its_queued_work(producer, models):
    # The caller computes on its own stream (the producer's) and hands ortdlpack its tensors themselves (no DLPack
    # exchange names a stream): Session(stream=) orders every run with that stream. The feed's write lands after
    # five garbage writes into the destination.
    x = tiny_input()
    expected = cpu_session(models["add_tiny"]).run(None, {"x": x})[0]

    def run(**stream):
        s = ortdlpack.Session(models["add_tiny"], ep=EP_NAME, ep_options={"device_id": "0"}, **stream)
        feed, dst = producer.empty(x.shape), producer.empty(expected.shape)
        for _ in range(5):
            producer.write(dst, np.full(expected.shape, -7.0, np.float32))
        producer.write(feed, x)
        (y,) = s.run({"x": feed.tensor}, outputs={"y": dst.tensor})
        return producer.read(y)  # on the caller's stream

    np.testing.assert_array_equal(run(stream=producer.stream), expected)
    assert not np.array_equal(run(), expected)  # the same without the stream: ORT reads and writes too early


def test_session_stream_values_are_checked(producer, models):
    with pytest.raises(ValueError, match="stream needs ep"):
        ortdlpack.Session(models["add_tiny"], stream=producer.stream)
    with pytest.raises(ValueError, match="device_id"):  # the virtual device EP has two devices
        ortdlpack.Session(models["add_tiny"], ep=EP_NAME, stream=producer.stream)
    with pytest.raises(ValueError, match="0 is only CUDA's default stream"):
        ortdlpack.Session(models["add_tiny"], ep=EP_NAME, ep_options={"device_id": "0"}, stream=0)
    with pytest.raises(ValueError, match="non-negative"):
        ortdlpack.Session(models["add_tiny"], ep=EP_NAME, ep_options={"device_id": "0"}, stream=-1)
    with pytest.raises(TypeError, match="stream"):
        ortdlpack.Session(models["add_tiny"], ep=EP_NAME, ep_options={"device_id": "0"}, stream="s")
    s = ortdlpack.Session(models["add_tiny"], ep=EP_NAME, ep_options={"device_id": "0"}, stream=12345)
    with pytest.raises(RuntimeError, match="waiting for the stream"):  # not a stream of the device
        s.run({"x": tiny_input()})


def test_bad_stream_values_on_a_device_tensor(producer, vd):
    _, devices = vd
    t = ortdlpack.from_dlpack(np.ones(4, np.float32), device=devices[0])
    with pytest.raises(ValueError, match="stream"):
        t.__dlpack__(stream=0)
    with pytest.raises(TypeError, match="stream"):
        t.__dlpack__(stream="s")
    t.__dlpack__(stream=-1)  # no synchronization asked


def test_a_device_producer_that_takes_no_stream_is_still_imported(vd):
    _, devices = vd
    inner = ortdlpack.from_dlpack(np.arange(4, dtype=np.float32), device=devices[0])

    class OldProducer:  # predates the `stream` keyword
        def __dlpack_device__(self):
            return inner.__dlpack_device__()

        def __dlpack__(self):
            return inner.__dlpack__()

    np.testing.assert_array_equal(ortdlpack.from_dlpack(OldProducer()).numpy(), np.arange(4, dtype=np.float32))


def _plugin_ep_session(models, ep_device):
    """A user's InferenceSession on the virtual device EP (and the CPU EP)."""
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.add_provider_for_devices([ep_device], {})
    return ort.InferenceSession(models["add_tiny"], opts)


def test_ortdlpack_run_on_a_plugin_ep_session(producer, vd, models):
    # Issue 17 item 3: ortdlpack.run binds device feeds and destinations of the session's EP; the producer's pending
    # writes land first (a pending feed and five garbage writes queued on the destination).
    _, devices = vd
    x = tiny_input()
    expected = cpu_session(models["add_tiny"]).run(None, {"x": x})[0]
    session = _plugin_ep_session(models, devices[0])
    ortdlpack.run(session, {"x": x})  # warm: the run below takes far less than the queued writes
    dst = producer.empty((1, 100))
    for _ in range(5):
        producer.write(dst, np.full((1, 100), -7.0, np.float32))
    (y,) = ortdlpack.run(session, {"x": pending(producer, x)}, outputs={"y": dst})
    producer.synchronize()  # without the ordering, the garbage lands after ORT's result and replaces it
    np.testing.assert_array_equal(np.asarray(y.to("cpu")), expected)
    (y,) = ortdlpack.run(session, {"x": pending(producer, x)}, device=devices[0])
    np.testing.assert_array_equal(np.asarray(y.to("cpu")), expected)
    del session, y, dst


def test_as_ortvalue_names_ortdlpack_s_stream_to_a_device_producer(producer, vd):
    # Suspected in issue 17: as_ortvalue asked a producer without __dlpack_c_exchange_api__ for __dlpack__() with no
    # stream before the ordered import, so a device producer (cupy on CUDA) was never asked to order its pending
    # work (streams.md rule 1). The virtual device's memory then cannot be an onnxruntime.OrtValue (BufferError);
    # what matters here is what the producer was asked.
    asked = []

    class Recording:
        def __init__(self, inner):
            self.inner = inner

        def __dlpack_device__(self):
            return self.inner.__dlpack_device__()

        def __dlpack__(self, **kwargs):
            asked.append(kwargs.get("stream"))
            return self.inner.__dlpack__(**kwargs)

    with pytest.raises(BufferError, match="cannot wrap"):
        ortdlpack.as_ortvalue(Recording(pending(producer, np.arange(8, dtype=np.float32))))
    assert asked and None not in asked, asked
