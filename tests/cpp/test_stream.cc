// Stream ordering of the core (src/stream.cc) on the asynchronous virtual device: a producer with work still
// queued on its own stream, and consumers on other streams. Every test reads what it expects only if ortdlpack
// ordered its work after the producer's (or the consumer's after ortdlpack's): without the ordering the reads see
// the zeros of fresh device memory. Each copy on a virtual-device stream takes kDelayUs of device time.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "async_producer.h"
#include "support.h"
#include "virtual_device_env.h"

namespace ortdlpack {
namespace {

constexpr uint64_t kDelayUs = 20000;

std::vector<float> iota(size_t n, float start) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = start + static_cast<float>(i);
  return v;
}

std::vector<float> read(const Tensor& t) {
  const Tensor host = to(t, DLDevice{kDLCPU, 0});
  const auto* f = static_cast<const float*>(host.data());
  return std::vector<float>(f, f + host.element_count());
}

class StreamOrdering : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    vd = test::VirtualDeviceEnv::load("ortdlpack_vd_streams");
    abi = test::VdStreamAbi::load();
  }
  static void TearDownTestSuite() { vd.unload(); }
  void SetUp() override {
    saved_delay = abi.delay_us();
    abi.set_delay_us(kDelayUs);
  }
  void TearDown() override { abi.set_delay_us(saved_delay); }

  static Tensor device_tensor(size_t device, size_t n) {
    return allocate(ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, {static_cast<int64_t>(n)}, vd.memory(device));
  }
  // The producer's tensor, with a write of `values` still queued on its stream, imported the way ortdlpack's
  // Python from_dlpack does: the producer is told ortdlpack's stream for the device.
  static Tensor import_pending(const test::AsyncProducer& producer, const Tensor& buffer,
                               const std::vector<float>& values, const ImportOptions& options = {}) {
    producer.write(buffer, values);
    const uintptr_t s = claim_import_stream(buffer.device());
    EXPECT_NE(s, 0u) << "the virtual device offers the stream convention";
    return from_dlpack(producer.export_for(buffer, s), options).tensor;
  }

  static inline test::VirtualDeviceEnv vd;
  static inline test::VdStreamAbi abi;
  uint64_t saved_delay = 0;
};

TEST_F(StreamOrdering, ImportThenCopyToHostSeesTheProducersWrite) {
  test::AsyncProducer producer(abi, 0);
  const Tensor buffer = device_tensor(0, 64);
  const Tensor x = import_pending(producer, buffer, iota(64, 1.0f));
  EXPECT_EQ(read(x), iota(64, 1.0f));
}

// A tensor handed over unordered (a C exchange table's no_sync export): ortdlpack's stream adopts the work queued on
// the producer's stream so far, on the device; a 0 handle names no virtual-device stream and is refused, untouched.
TEST_F(StreamOrdering, AdoptingTheProducersWorkOrdersAnUnorderedImport) {
  test::AsyncProducer producer(abi, 0);
  const Tensor buffer = device_tensor(0, 64);
  producer.write(buffer, iota(64, 4.0f));
  EXPECT_FALSE(adopt_producer_work(buffer.device(), 0));
  EXPECT_FALSE(adopt_producer_work(DLDevice{kDLCPU, 0}, reinterpret_cast<uintptr_t>(producer.stream())));
  const uint64_t waits = vd.counters().stream_waits;
  const uint64_t syncs = vd.counters().host_syncs;
  ASSERT_TRUE(adopt_producer_work(buffer.device(), reinterpret_cast<uintptr_t>(producer.stream())));
  EXPECT_GT(vd.counters().stream_waits, waits) << "ortdlpack's stream waits on the device";
  EXPECT_EQ(vd.counters().host_syncs, syncs) << "the host did not wait";
  const Tensor x = from_dlpack(producer.export_for(buffer, 0)).tensor;  // the producer orders nothing itself
  EXPECT_EQ(read(x), iota(64, 4.0f));
}

TEST_F(StreamOrdering, ImportWithCopyAlwaysCopiesTheProducersWrite) {
  test::AsyncProducer producer(abi, 0);
  const Tensor buffer = device_tensor(0, 64);
  const Tensor x = import_pending(producer, buffer, iota(64, 2.0f), ImportOptions{CopyMode::kAlways});
  EXPECT_NE(x.data(), buffer.data());
  EXPECT_EQ(read(x), iota(64, 2.0f));
}

TEST_F(StreamOrdering, CopyToTheOtherDeviceSeesTheProducersWrite) {
  test::AsyncProducer producer(abi, 0);
  const Tensor buffer = device_tensor(0, 64);
  const Tensor x = import_pending(producer, buffer, iota(64, 3.0f));
  const Tensor on1 = to(x, vd.memory(1));
  EXPECT_EQ(read(on1), iota(64, 3.0f));
}

// --- a queued copy keeps its source (docs/streams.md rule 2) -------------------------------------------------------
// The producer reuses memory once its deleter ran (async_producer.h). ortdlpack's stream is held behind a gate, so
// its copy is queued, not run, until the test opens it after everything the producer queued (its reuse of a
// released tensor included) has landed: the copy reads the producer's values only if the source was kept until the
// copy ran. Deterministic: no timing decides it.

std::vector<float> filled(size_t n, float v) { return std::vector<float>(n, v); }

TEST_F(StreamOrdering, ImportWithCopyKeepsTheProducersTensorUntilTheCopyRan) {
  test::AsyncProducer producer(abi, 0);
  const Tensor buffer = device_tensor(0, 64);
  producer.write(buffer, iota(64, 1.0f));
  const uintptr_t ours = claim_import_stream(buffer.device());
  test::Gate gate(abi.pause, abi.resume, reinterpret_cast<void*>(ours));
  const uint64_t syncs = vd.counters().host_syncs;
  const Imported x =
      from_dlpack(producer.export_reusing(buffer, ours, filled(64, -1.0f)), ImportOptions{CopyMode::kAlways});
  ASSERT_TRUE(x.copied);
  EXPECT_EQ(vd.counters().host_syncs, syncs) << "the copy is left queued: no host wait";
  EXPECT_EQ(producer.releases(), 0) << "the producer's tensor was released while ortdlpack's copy of it was queued";
  producer.synchronize();
  gate.open();
  EXPECT_EQ(read(x.tensor), iota(64, 1.0f));
  EXPECT_EQ(producer.releases(), 1) << "released once, when the host wait of read() saw the copy complete";
  EXPECT_FALSE(gate.timed_out()) << "something waited on the host behind ortdlpack's queued copy";
}

TEST_F(StreamOrdering, CopyOfATensorReleasedAtOnceReadsItsContents) {
  test::AsyncProducer producer(abi, 0);
  const Tensor buffer = device_tensor(0, 64);
  producer.write(buffer, iota(64, 2.0f));
  const uintptr_t ours = claim_import_stream(buffer.device());
  test::Gate gate(abi.pause, abi.resume, reinterpret_cast<void*>(ours));
  Tensor copy;
  {
    const Imported view = from_dlpack(producer.export_reusing(buffer, ours, filled(64, -1.0f)));  // zero-copy
    ASSERT_FALSE(view.copied);
    copy = to(view.tensor, vd.memory(0));
  }  // the only Tensor over the producer's memory is gone: its deleter may run only once the copy has run
  EXPECT_EQ(producer.releases(), 0) << "the source of a queued copy was released";
  producer.synchronize();
  gate.open();
  EXPECT_EQ(read(copy), iota(64, 2.0f));
  EXPECT_EQ(producer.releases(), 1);
  EXPECT_FALSE(gate.timed_out());
}

// When the kept source is released: at ortdlpack's next call on the device once the device ran the copy (the EP's
// host function told it, stream convention), or, from an EP without host functions, at ortdlpack's next host wait
// of the stream. The test waits for ortdlpack's stream through the virtual device itself, so ortdlpack learns
// nothing from that wait.
TEST_F(StreamOrdering, AKeptSourceIsReleasedAtTheNextCallOnceTheDeviceRanTheCopy) {
  for (const bool host_funcs : {true, false}) {
    SCOPED_TRACE(host_funcs ? "the EP runs host functions" : "an EP without host functions");
    abi.set_host_funcs(host_funcs ? 1 : 0);
    test::AsyncProducer producer(abi, 0);
    const Tensor buffer = device_tensor(0, 16);
    producer.write(buffer, iota(16, 1.0f));
    const uintptr_t ours = claim_import_stream(buffer.device());
    const Imported x = [&] {
      test::Gate gate(abi.pause, abi.resume, reinterpret_cast<void*>(ours));
      const Imported in =
          from_dlpack(producer.export_reusing(buffer, ours, filled(16, -1.0f)), ImportOptions{CopyMode::kAlways});
      EXPECT_EQ(producer.releases(), 0);
      return in;
    }();
    ASSERT_EQ(abi.synchronize(reinterpret_cast<void*>(ours)), 0);  // the copy ran; ortdlpack was not told by a wait
    const uint64_t syncs = vd.counters().host_syncs;
    EXPECT_NE(device_stream(vd.memory(0)), nullptr);  // any call on the device
    EXPECT_EQ(producer.releases(), host_funcs ? 1 : 0);
    EXPECT_EQ(vd.counters().host_syncs, syncs) << "no host wait for that";
    synchronize(vd.memory(0));
    EXPECT_EQ(producer.releases(), 1) << "a host wait of the stream releases what it kept";
    EXPECT_EQ(read(x.tensor), iota(16, 1.0f));
  }
  abi.set_host_funcs(1);
}

// The bound on what a device stream keeps (DeviceStream::kMaxKept = 1024 sources, kMaxKeptBytes = 64 MiB; one source
// alone is kept whatever its size): one more makes the host wait, and the wait releases them all. Without host
// functions, so that nothing is released before a host wait.
TEST_F(StreamOrdering, KeptSourcesAreBoundedByAHostWait) {
  constexpr int kBound = 1024;
  abi.set_delay_us(0);  // (no timing decides anything here)
  abi.set_host_funcs(0);
  test::AsyncProducer producer(abi, 0);
  const Tensor buffer = device_tensor(0, 4);
  producer.write(buffer, iota(4, 1.0f));
  std::vector<Tensor> copies;
  const uint64_t syncs = vd.counters().host_syncs;
  const auto import_copy = [&] {
    const uintptr_t ours = claim_import_stream(buffer.device());
    copies.push_back(
        from_dlpack(producer.export_reusing(buffer, ours, iota(4, 1.0f)), ImportOptions{CopyMode::kAlways}).tensor);
  };
  for (int i = 0; i < kBound; ++i) import_copy();
  EXPECT_EQ(producer.releases(), 0);
  EXPECT_EQ(vd.counters().host_syncs, syncs);
  import_copy();
  EXPECT_EQ(producer.releases(), kBound + 1);
  EXPECT_EQ(vd.counters().host_syncs, syncs + 1);
  abi.set_host_funcs(1);
  producer.synchronize();
  EXPECT_EQ(read(copies.front()), iota(4, 1.0f));
  EXPECT_EQ(read(copies.back()), iota(4, 1.0f));
}

TEST_F(StreamOrdering, KeptBytesAreBoundedByAHostWait) {
  constexpr size_t kN = (size_t{40} << 20) / sizeof(float);  // 40 MiB: kept alone, not twice
  abi.set_delay_us(0);
  abi.set_host_funcs(0);
  const Tensor source = device_tensor(0, kN);
  const uint64_t syncs = vd.counters().host_syncs;
  const Tensor first = to(source, vd.memory(0));
  EXPECT_EQ(source.use_count(), 2) << "kept by the queued copy";
  EXPECT_EQ(vd.counters().host_syncs, syncs);
  const Tensor second = to(source, vd.memory(0));
  EXPECT_EQ(source.use_count(), 1) << "80 MiB kept: the host waited, and released both";
  EXPECT_EQ(vd.counters().host_syncs, syncs + 1);
  abi.set_host_funcs(1);
}

// --- a host wait in one thread, an export in another (rule 3) ------------------------------------------------------
// Thread 1 reads x on the host: its host wait on ortdlpack's stream lasts as long as the producer's write is held
// behind a gate. Thread 2 (the test) exports x to a consumer's stream meanwhile (once the virtual device counts thread
// 1's host wait): that stream must wait for the producer's write, which thread 1's wait has not seen complete.

TEST_F(StreamOrdering, AHostWaitInAnotherThreadLeavesAnExportOrdered) {
  test::AsyncProducer producer(abi, 0);
  test::AsyncProducer consumer(abi, 0);
  const Tensor buffer = device_tensor(0, 64);
  std::optional<test::Gate> gate;
  gate.emplace(abi.pause, abi.resume, producer.stream());
  const Tensor x = import_pending(producer, buffer, iota(64, 4.0f));
  const uint64_t syncs = vd.counters().host_syncs;
  std::vector<float> seen_by_thread_1;
  std::thread reader([&] { seen_by_thread_1 = read(x); });
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (vd.counters().host_syncs == syncs && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
  ASSERT_GT(vd.counters().host_syncs, syncs) << "thread 1 never waited on the host";

  const uint64_t waits = vd.counters().stream_waits;
  order_for_consumer(x, static_cast<int64_t>(reinterpret_cast<uintptr_t>(consumer.stream())));
  const bool ordered = vd.counters().stream_waits > waits;
  std::vector<float> seen_by_consumer;
  consumer.read(x, seen_by_consumer);
  if (!ordered) consumer.synchronize();  // nothing holds the consumer's read: it runs now, before the write lands
  gate->open();
  reader.join();
  consumer.synchronize();
  EXPECT_TRUE(ordered) << "the consumer's stream was not made to wait: thread 1's host wait counted as done";
  EXPECT_EQ(seen_by_consumer, iota(64, 4.0f));
  EXPECT_EQ(seen_by_thread_1, iota(64, 4.0f));
  EXPECT_FALSE(gate->timed_out());
}

// The TSan test of the stream state (scripts/sanitize.sh --tsan runs it): threads read on the host, export to their
// own consumer streams and copy from a producer that reuses released memory, all on one shared tensor with pending
// work at a time, and check every value.
TEST_F(StreamOrdering, ThreadsReadExportAndCopyAtOnce) {
  abi.set_delay_us(200);
  constexpr int kRounds = 12;
  constexpr size_t kN = 32;
  test::AsyncProducer producer(abi, 0);
  std::atomic<int> failures{0};
  for (int round = 0; round < kRounds; ++round) {
    const std::vector<float> values = iota(kN, 100.0f * static_cast<float>(round));
    const Tensor buffer = device_tensor(0, kN);
    const Tensor scratch = device_tensor(0, kN);
    const Tensor x = import_pending(producer, buffer, values);
    producer.write(scratch, values);
    const uintptr_t ours = claim_import_stream(scratch.device());
    DLManagedTensorVersioned* reusing = producer.export_reusing(scratch, ours, filled(kN, -1.0f));
    std::vector<std::thread> threads;
    for (int t = 0; t < 2; ++t) {
      threads.emplace_back([&] {
        if (read(x) != values) failures.fetch_add(1);
      });
      threads.emplace_back([&] {
        test::AsyncProducer own(abi, 0);
        order_for_consumer(x, static_cast<int64_t>(reinterpret_cast<uintptr_t>(own.stream())));
        std::vector<float> seen;
        own.read(x, seen);
        own.synchronize();
        if (seen != values) failures.fetch_add(1);
      });
    }
    threads.emplace_back([&] {
      const Imported c = from_dlpack(reusing, ImportOptions{CopyMode::kAlways});
      if (read(c.tensor) != values) failures.fetch_add(1);
    });
    for (std::thread& t : threads) t.join();
    producer.synchronize();
  }
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(producer.releases(), kRounds);
}

TEST_F(StreamOrdering, SessionRunOnAnImportedFeedSeesTheProducersWrite) {
  OrtSession* raw = test::make_add_session(ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, {8});
  {
    Session session(raw);
    test::AsyncProducer producer(abi, 0);
    const Tensor buffer = device_tensor(0, 8);
    const Tensor x = import_pending(producer, buffer, iota(8, 1.0f));
    const std::vector<Tensor> y = session.run({{"X", x}});
    std::vector<float> want = iota(8, 1.0f);
    for (float& v : want) v *= 2;
    EXPECT_EQ(read(y[0]), want);
  }
  ort().ReleaseSession(raw);
}

// A session run ordered with the caller's stream: the caller queues writes on its stream into a feed and a
// destination and hands ortdlpack the tensors themselves (no DLPack exchange names a stream). The run must come after
// all of it: the feed's write lands after five garbage writes into the destination. The stream is the session's
// (SessionConfig::stream, every run) or the run's (RunOptions::stream: XLA's stream in jax_function's handler); a
// Binding made with the run's is ordered on each of its runs.
TEST_F(StreamOrdering, ARunWithTheCallersStreamRunsAfterItsQueuedWork) {
  test::AsyncProducer caller(abi, 0);
  const std::string model = test::identity_model_bytes(8);
  SessionConfig config;
  config.ep = "VirtualDeviceEP";
  config.ep_options = {{"device_id", "0"}};
  const uintptr_t stream = reinterpret_cast<uintptr_t>(caller.stream());
  config.stream = stream;
  Session ordered(model.data(), model.size(), config);
  config.stream.reset();
  Session session(model.data(), model.size(), config);
  const Tensor feed = device_tensor(0, 8);
  const Tensor dst = device_tensor(0, 8);
  RunOptions options;
  options.destinations = {{"y", dst}};
  for (Session* s : {&ordered, &session}) {
    for (int i = 0; i < 5; ++i) caller.write(dst, std::vector<float>(8, -7.0f));
    caller.write(feed, iota(8, 1.0f));
    if (s == &session) options.stream = stream;
    EXPECT_EQ(s->run({{"x", feed}}, {}, options)[0].data(), dst.data());
    EXPECT_EQ(read(dst), iota(8, 1.0f));
  }
  Binding bound = session.bind({{"x", feed}}, {}, options);
  for (float start : {2.0f, 3.0f}) {
    caller.write(feed, iota(8, start));  // queued after bind(): each run of the Binding is ordered after it
    bound.run();
    EXPECT_EQ(read(dst), iota(8, start));
  }

  const auto expect_invalid = [](const std::function<void()>& f, const char* fragment) {
    try {
      f();
      ADD_FAILURE() << "no error for " << fragment;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument) << e.what();
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    }
  };
  RunOptions on_host;
  on_host.stream = options.stream;
  expect_invalid([&] { session.run({{"x", test::host_iota(8)}}, {}, on_host); }, "no feed or destination");
  expect_invalid([&] { ordered.run({{"x", feed}}, {}, options); }, "SessionConfig::stream, which orders every run");
  options.stream = 0;  // a handle check_caller_stream refuses here
  expect_invalid([&] { session.run({{"x", feed}}, {}, options); }, "0 is only CUDA's default stream");
}

TEST_F(StreamOrdering, SessionStreamsAreChecked) {
  const std::string model = test::identity_model_bytes(8);
  const auto expect_invalid = [&](SessionConfig config, const char* fragment) {
    try {
      Session(model.data(), model.size(), config);
      ADD_FAILURE() << "no error for " << fragment;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument) << e.what();
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    }
  };
  test::AsyncProducer caller(abi, 0);
  SessionConfig config;
  config.stream = reinterpret_cast<uintptr_t>(caller.stream());
  expect_invalid(config, "stream needs ep");
  config.ep = "CPUExecutionProvider";  // host memory: no stream to order with
  expect_invalid(config, "host memory has no streams");
  config.ep = "VirtualDeviceEP";  // two devices: which one the stream is on must be said
  expect_invalid(config, "pick one with ep_options device_id");
  config.ep_options = {{"device_id", "1"}};
  config.stream = 0;
  expect_invalid(config, "0 is only CUDA's default stream");
  config.stream.reset();
  Session no_stream(model.data(), model.size(), config);
}

TEST_F(StreamOrdering, ExportToAConsumerOnAnotherStreamIsComplete) {
  // Two copies queued on ortdlpack's stream (host -> device, device -> device): 2 * kDelayUs of device work.
  // (The first is kept alive: freeing device memory waits for queued copies that use it, like cudaFree.)
  const Tensor first = to(test::host_iota(64, 5.0f), vd.memory(0));
  const Tensor t = to(first, vd.memory(0));
  OrtSyncStream* consumer = nullptr;
  check(ort().CreateSyncStreamForEpDevice(vd.devices[0], nullptr, &consumer));
  void* handle = ort().SyncStream_GetHandle(consumer);
  order_for_consumer(t, static_cast<int64_t>(reinterpret_cast<uintptr_t>(handle)));
  // The consumer reads on its own stream (one copy, kDelayUs): right only if its stream waited for ortdlpack's.
  Tensor host = allocate(ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, {64}, DLDevice{kDLCPU, 0});
  const OrtValue* src[] = {t.ort_value()};
  OrtValue* dst[] = {host.ort_value()};
  check(ort().CopyTensors(env(), src, dst, consumer, 1));
  void* lib = dlopen(ORTDLPACK_VD_PATH, RTLD_NOW | RTLD_NOLOAD);
  auto sync = reinterpret_cast<int (*)(void*)>(dlsym(lib, "ortdlpack_vd_stream_synchronize"));
  dlclose(lib);
  ASSERT_EQ(sync(handle), 0);
  EXPECT_EQ(std::vector<float>(static_cast<float*>(host.data()), static_cast<float*>(host.data()) + 64),
            iota(64, 5.0f));
  ort().ReleaseSyncStream(consumer);
}

TEST_F(StreamOrdering, ExportWithStreamNoneWaitsOnTheHost) {
  const Tensor t = to(test::host_iota(16, 1.0f), vd.memory(1));
  const uint64_t before = vd.counters().host_syncs;
  order_for_consumer(t, std::nullopt);
  EXPECT_EQ(vd.counters().host_syncs, before + 1);
  order_for_consumer(t, std::nullopt);
  EXPECT_EQ(vd.counters().host_syncs, before + 1) << "nothing pending any more: no second wait";
}

TEST_F(StreamOrdering, StreamValuesAreChecked) {
  const Tensor cpu = test::host_iota(4);
  EXPECT_NO_THROW(order_for_consumer(cpu, std::nullopt));
  EXPECT_NO_THROW(order_for_consumer(cpu, -1));
  EXPECT_THROW(order_for_consumer(cpu, 7), Error);
  const Tensor dev = to(cpu, vd.memory(0));
  EXPECT_THROW(order_for_consumer(dev, 0), Error);
  EXPECT_THROW(order_for_consumer(dev, -5), Error);
  EXPECT_NO_THROW(order_for_consumer(dev, -1));
  // A handle the EP does not know cannot be made to wait: the host waits instead (always correct).
  int not_a_stream = 0;
  EXPECT_NO_THROW(order_for_consumer(dev, static_cast<int64_t>(reinterpret_cast<uintptr_t>(&not_a_stream))));
  EXPECT_EQ(read(dev), iota(4, 0.25f));
}

TEST_F(StreamOrdering, HostMemoryHasNoStream) {
  EXPECT_EQ(claim_import_stream(DLDevice{kDLCPU, 0}), 0u);
  EXPECT_EQ(device_stream(memory_info(DLDevice{kDLCPU, 0})), nullptr);
  EXPECT_EQ(device_stream(vd.memory(0, OrtDeviceMemoryType_HOST_ACCESSIBLE)), nullptr);
  EXPECT_NE(device_stream(vd.memory(0)), nullptr);
}

TEST(Streams, HostMemoryTakesNoStreamHandle) {
  // The consumer-stream rules (stream.h): None and -1 anywhere; a handle only on a device with streams.
  const Tensor t = allocate(ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32, {2, 3}, DLDevice{kDLCPU, 0});
  order_for_consumer(t, std::nullopt);
  order_for_consumer(t, -1);
  EXPECT_EQ(test::kind_of([&] { order_for_consumer(t, 7); }), ErrorKind::kInvalidArgument);
}

}  // namespace
}  // namespace ortdlpack
