// Concurrency: kThreads threads export, import, copy (host and virtual device) and run sessions at once, on shared
// and on per-thread tensors, with every result checked. Meant for the tsan preset (scripts/sanitize.sh --tsan;
// docs/reliability.md), and run in every other build as a plain stress test.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "support.h"
#include "virtual_device_env.h"

namespace ortdlpack {
namespace {

constexpr int kThreads = 8;
constexpr int kIterations = 200;
constexpr int64_t kN = 8;  // elements of the Add model's tensors

struct Shared {
  Tensor host;       // read by everyone: exported, imported back, copied from
  Tensor device;     // on the virtual device, read by everyone
  Session* session;  // one Session (one OrtSession) run by every thread
  std::vector<const OrtEpDevice*> devices;
};

struct Failures {
  std::atomic<int> count{0};
  std::atomic<long> operations{0};
  void fail() { count.fetch_add(1, std::memory_order_relaxed); }
  void op(long n = 1) { operations.fetch_add(n, std::memory_order_relaxed); }
};

float value(int thread, int iteration, int64_t i) {
  return static_cast<float>(thread * 1000 + iteration) + 0.25f * static_cast<float>(i);
}

bool equal(const Tensor& t, const std::vector<float>& want) {
  if (t.element_count() != want.size()) return false;
  Tensor host = t.device().device_type == kDLCPU ? t : to(t, DLDevice{kDLCPU, 0});
  return std::memcmp(host.data(), want.data(), want.size() * sizeof(float)) == 0;
}

// A counting DLPack producer over a thread's own copy of `values`.
std::unique_ptr<test::Producer> producer_of(const std::vector<float>& values) {
  auto p = test::Producer::make(DLDataType{kDLFloat, 32, 1}, {static_cast<int64_t>(values.size())});
  std::memcpy(p->buffer->data(), values.data(), values.size() * sizeof(float));
  return p;
}

void worker(int id, const Shared& shared, Failures& f) {
  const std::vector<float> shared_values = [&] {
    const auto* p = static_cast<const float*>(shared.host.data());
    return std::vector<float>(p, p + kN);
  }();
  const OrtMemoryInfo* my_device = ort().EpDevice_MemoryInfo(
      shared.devices[static_cast<size_t>(id) % shared.devices.size()], OrtDeviceMemoryType_DEFAULT);
  for (int it = 0; it < kIterations; ++it) {
    try {
      // 1. Separate tensors: a producer's buffer imported zero-copy (versioned and legacy), exported, re-imported.
      std::vector<float> mine(kN);
      for (int64_t i = 0; i < kN; ++i) mine[static_cast<size_t>(i)] = value(id, it, i);
      {
        auto p = producer_of(mine);
        Imported a = from_dlpack(&p->versioned);
        Imported b = from_dlpack(&p->legacy, ImportOptions{CopyMode::kAlways});  // deleter runs at once
        if (a.copied || a.tensor.data() != p->buffer->data() || !b.copied || p->deletes != 1) f.fail();
        DLManagedTensorVersioned* out = to_dlpack_versioned(a.tensor);
        Imported c = from_dlpack(out);
        if (c.tensor.data() != p->buffer->data() || !equal(c.tensor, mine) || !equal(b.tensor, mine)) f.fail();
        a = Imported{};
        c = Imported{};
        if (p->deletes != 2) f.fail();
        f.op(5);
      }
      // 2. Shared tensors: everyone exports the same Tensor and drops the export (shared refcount traffic).
      {
        DLManagedTensorVersioned* v = to_dlpack_versioned(shared.host);
        DLManagedTensor* l = to_dlpack_legacy(shared.host);
        Imported back = from_dlpack(v);
        if (back.tensor.data() != shared.host.data()) f.fail();
        l->deleter(l);
        Tensor copy_of_handle = shared.host;  // Tensor copies across threads
        if (!equal(copy_of_handle, shared_values)) f.fail();
        f.op(4);
      }
      // 3. Host and device copies: shared sources, own destinations.
      {
        Tensor on_device = to(shared.host, my_device);              // host -> device
        Tensor from_shared_device = to(shared.device, my_device);   // device -> device
        Tensor host_copy = to(shared.device, DLDevice{kDLCPU, 0});  // device -> host
        Tensor host_dst = allocate(ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, {kN}, DLDevice{kDLCPU, 0});
        copy({shared.host, on_device}, {host_dst, from_shared_device});  // batched: host pair + device pair
        if (!equal(on_device, shared_values) || !equal(from_shared_device, shared_values) ||
            !equal(host_copy, shared_values) || !equal(host_dst, shared_values)) {
          f.fail();
        }
        // Device memory exported and imported back zero-copy.
        DLManagedTensorVersioned* dv = to_dlpack_versioned(on_device);
        Imported back = from_dlpack(dv);
        if (back.tensor.data() != on_device.data() || back.tensor.device().device_type != kDLExtDev) f.fail();
        f.op(7);
      }
      // 4. The shared session on own input (DLPack-imported), on the shared input, and on a device feed.
      {
        auto p = producer_of(mine);
        std::vector<Tensor> out = shared.session->run({{"X", from_dlpack(&p->versioned).tensor}});
        std::vector<float> twice(kN);
        for (size_t i = 0; i < twice.size(); ++i) twice[i] = 2 * mine[i];
        if (!equal(out.at(0), twice) || p->deletes != 1) f.fail();
        std::vector<Tensor> out2 = shared.session->run({{"X", shared.host}});
        std::vector<Tensor> out3 = shared.session->run({{"X", shared.device}});  // staged to the host
        for (size_t i = 0; i < twice.size(); ++i) twice[i] = 2 * shared_values[i];
        if (!equal(out2.at(0), twice) || !equal(out3.at(0), twice)) f.fail();
        f.op(3);
      }
      // 5. The device table from every thread (registry reads, memory-info cache).
      if (memory_info(DLDevice{kDLExtDev, id % 2}) == nullptr || to_dlpack_device(my_device).device_type != kDLExtDev) {
        f.fail();
      }
      f.op(2);
    } catch (const std::exception& e) {
      f.fail();
      std::fprintf(stderr, "thread %d iteration %d: %s\n", id, it, e.what());
    }
  }
}

TEST(Concurrency, ThreadsExportImportCopyAndRunAtOnce) {
  if (ort_api_version() < 29) {
    GTEST_SKIP() << "the virtual device plugin needs ORT C API 29 (ORT >= 1.29); this ORT offers " << ort_api_version();
  }
  test::VirtualDeviceEnv vd = test::VirtualDeviceEnv::load("ortdlpack_vd_mt");
  const OrtdlpackVdCounters before = vd.counters();
  Shared shared;
  shared.devices = vd.devices;
  ASSERT_EQ(shared.devices.size(), 2u);
  shared.host = allocate(ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, {kN}, DLDevice{kDLCPU, 0});
  for (int64_t i = 0; i < kN; ++i) static_cast<float*>(shared.host.data())[i] = 3.0f + static_cast<float>(i);
  shared.device = to(shared.host, ort().EpDevice_MemoryInfo(shared.devices[0], OrtDeviceMemoryType_DEFAULT));
  OrtSession* raw = test::make_add_session(ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, {kN});
  Failures failures;
  {
    Session session(raw);
    shared.session = &session;
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) threads.emplace_back(worker, t, std::cref(shared), std::ref(failures));
    for (std::thread& t : threads) t.join();
  }
  ort().ReleaseSession(raw);
  EXPECT_EQ(failures.count.load(), 0);
  EXPECT_EQ(shared.host.use_count(), 1) << "every export's share was dropped";
  EXPECT_EQ(shared.device.use_count(), 1);
  std::printf("[ stress   ] %d threads x %d iterations: %ld operations\n", kThreads, kIterations,
              failures.operations.load());
  RecordProperty("operations", std::to_string(failures.operations.load()));
  shared.device = Tensor();
  const OrtdlpackVdCounters after = vd.counters();
  EXPECT_EQ(after.live_allocs, before.live_allocs) << "device allocations leaked";
  EXPECT_EQ(after.live_bytes, before.live_bytes);
  vd.unload();
}

}  // namespace
}  // namespace ortdlpack
