// Failure injection on the virtual device: for every public call that allocates or copies device memory, fail its
// N-th allocation and then its N-th tensor copy, for N = 1 .. (what the call does) + 1. Each injected failure must
// surface as the documented ortdlpack::Error (kRuntime, naming the device), leave no partial state (no result, no
// DLPack deleter run early, source untouched), and the plugin's live allocations must return to the baseline.
// N = count + 1 must succeed: the call really does only `count` of them, and the pending injection is then cleared.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "support.h"
#include "virtual_device_env.h"

namespace ortdlpack {
namespace {

// One public call under test. It returns what it produced (kept alive until the counters are read) and may use
// `held` for results it must keep.
struct Op {
  const char* name;
  std::function<std::vector<Tensor>()> run;
};

class FailureInjection : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    vd = test::VirtualDeviceEnv::load("ortdlpack_vd_fi");
    ASSERT_EQ(vd.devices.size(), 2u);
  }
  static void TearDownTestSuite() { vd.unload(); }
  void TearDown() override {
    vd.fail_alloc_at(0);
    vd.fail_copy_at(0);
  }

  static OrtdlpackVdCounters counters() { return vd.counters(); }
  static const OrtMemoryInfo* device(size_t i) { return vd.memory(i); }
  static const OrtMemoryInfo* host_accessible_memory(size_t i) {
    return vd.memory(i, OrtDeviceMemoryType_HOST_ACCESSIBLE);
  }
  static Tensor host_iota(size_t n, float start = 0.5f) { return test::host_iota(n, start); }
  static std::vector<float> read(const Tensor& t) {
    Tensor host = to(t, DLDevice{kDLCPU, 0});
    const auto* f = static_cast<const float*>(host.data());
    return std::vector<float>(f, f + host.element_count());
  }

  // Runs `op` once clean to learn how many allocations/copies it makes, then fails each of them in turn.
  // Returns the number of failure points injected.
  int inject_all(const Op& op) {
    SCOPED_TRACE(op.name);
    const OrtdlpackVdCounters base = counters();
    vd.reset_counters();
    {
      std::vector<Tensor> out = op.run();
      EXPECT_FALSE(out.empty());
    }
    const OrtdlpackVdCounters clean = counters();
    const uint64_t allocs = clean.allocs + clean.host_allocs;
    const uint64_t copies = clean.copies;
    EXPECT_EQ(clean.live_allocs, base.live_allocs);
    EXPECT_EQ(clean.live_bytes, base.live_bytes);
    EXPECT_EQ(clean.host_live_bytes, base.host_live_bytes);
    EXPECT_GT(allocs + copies, 0u) << "the operation touches the device";
    int points = 0;
    for (int kind = 0; kind < 2; ++kind) {
      const uint64_t count = kind == 0 ? allocs : copies;
      for (uint64_t n = 1; n <= count + 1; ++n) {
        SCOPED_TRACE(std::string(kind == 0 ? "allocation " : "copy ") + std::to_string(n) + " of " +
                     std::to_string(count));
        vd.reset_counters();
        (kind == 0 ? vd.fail_alloc_at : vd.fail_copy_at)(n);
        bool threw = false;
        try {
          std::vector<Tensor> out = op.run();
        } catch (const Error& e) {
          threw = true;
          EXPECT_EQ(e.kind(), ErrorKind::kRuntime) << e.what();
          EXPECT_NE(std::string(e.what()).find("VirtualDevice"), std::string::npos) << e.what();
        } catch (const std::exception& e) {
          ADD_FAILURE() << "not an ortdlpack::Error: " << e.what();
        }
        vd.fail_alloc_at(0);
        vd.fail_copy_at(0);
        EXPECT_EQ(threw, n <= count) << (threw ? "threw" : "succeeded");
        const OrtdlpackVdCounters c = counters();
        if (n <= count) {
          ++points;
          EXPECT_EQ(kind == 0 ? c.failed_allocs : c.failed_copies, 1u) << "the injection fired";
        }
        EXPECT_EQ(c.live_allocs, base.live_allocs) << "device allocations leaked";
        EXPECT_EQ(c.live_bytes, base.live_bytes);
        EXPECT_EQ(c.host_live_bytes, base.host_live_bytes) << "host-accessible allocations leaked";
      }
    }
    return points;
  }

  static inline test::VirtualDeviceEnv vd;
  static inline const std::vector<const OrtEpDevice*>& devices = vd.devices;
};

TEST_F(FailureInjection, Allocate) {
  EXPECT_EQ(
      inject_all({"allocate(device)",
                  [] { return std::vector<Tensor>{allocate(ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, {64}, device(0))}; }}),
      1);
  EXPECT_EQ(inject_all({"allocate(host-accessible)",
                        [] {
                          return std::vector<Tensor>{allocate(ONNX_TENSOR_ELEMENT_DATA_TYPE_INT8, {3, 5}, devices[1],
                                                              OrtDeviceMemoryType_HOST_ACCESSIBLE)};
                        }}),
            1);
}

TEST_F(FailureInjection, ToEveryDirection) {
  const Tensor host = host_iota(32);
  const std::vector<float> want = read(host);
  const Tensor on0 = to(host, device(0));
  int points = 0;
  points += inject_all({"to(host -> device)", [&] { return std::vector<Tensor>{to(host, device(1))}; }});
  points += inject_all({"to(device -> device)", [&] { return std::vector<Tensor>{to(on0, device(1))}; }});
  points += inject_all({"to(device -> host)", [&] { return std::vector<Tensor>{to(on0, DLDevice{kDLCPU, 0})}; }});
  points += inject_all(
      {"to(device -> host-accessible)", [&] { return std::vector<Tensor>{to(on0, host_accessible_memory(0))}; }});
  EXPECT_EQ(points, 2 + 2 + 1 + 2);  // alloc+copy, alloc+copy, copy (CPU memory is ORT's), alloc+copy
  EXPECT_EQ(read(host), want) << "sources are never written";
  EXPECT_EQ(read(on0), want);
}

TEST_F(FailureInjection, BatchedCopy) {
  std::vector<Tensor> src, dst;
  for (size_t i = 0; i < 6; ++i) {
    src.push_back(host_iota(8, static_cast<float>(10 * i)));
    dst.push_back(allocate(ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, {8}, device(i % 2)));  // two transfer calls
  }
  // Plus a host pair, which must not be written when a device pair fails (device transfers run first).
  Tensor host_src = host_iota(8, 99.0f), host_dst = host_iota(8, -1.0f);
  const std::vector<float> untouched = read(host_dst);
  std::vector<Tensor> all_src = src, all_dst = dst;
  all_src.push_back(host_src);
  all_dst.push_back(host_dst);
  const int points = inject_all({"copy(batch of 7)", [&] {
                                   copy(all_src, all_dst);
                                   return all_dst;
                                 }});
  EXPECT_EQ(points, 6);
  // The clean run and the N = 7 run copied everything.
  for (size_t i = 0; i < src.size(); ++i) EXPECT_EQ(read(dst[i]), read(src[i])) << i;
  EXPECT_EQ(read(host_dst), read(host_src));
  // A failing batch leaves the host pair alone.
  std::memcpy(host_dst.data(), untouched.data(), untouched.size() * sizeof(float));
  vd.fail_copy_at(1);
  EXPECT_THROW(copy(all_src, all_dst), Error);
  vd.fail_copy_at(0);
  EXPECT_EQ(read(host_dst), untouched);
}

TEST_F(FailureInjection, ImportWithCopyAlwaysOnDevice) {
  const Tensor on0 = to(host_iota(16), device(0));
  const std::vector<float> want = read(on0);
  int deleter_runs = 0;
  const int points = inject_all({"from_dlpack(kAlways, device)", [&] {
                                   DLManagedTensorVersioned* m = to_dlpack_versioned(on0);
                                   const long shares = on0.use_count();
                                   try {
                                     Imported in = from_dlpack(m, ImportOptions{CopyMode::kAlways});
                                     EXPECT_TRUE(in.copied);
                                     // The copy keeps its source until it ran (docs/streams.md rule 2).
                                     synchronize(device(0));
                                     EXPECT_EQ(on0.use_count(), shares - 1) << "the deleter ran once the copy ran";
                                     ++deleter_runs;
                                     return std::vector<Tensor>{in.tensor};
                                   } catch (const Error&) {
                                     // Ownership stays with the caller: the deleter has not run.
                                     EXPECT_EQ(on0.use_count(), shares);
                                     m->deleter(m);
                                     throw;
                                   }
                                 }});
  EXPECT_EQ(points, 2);  // one device allocation, one device-to-device copy
  EXPECT_EQ(deleter_runs, 3) << "the clean run and the two N = count + 1 runs";
  EXPECT_EQ(on0.use_count(), 1);
  EXPECT_EQ(read(on0), want);
}

TEST_F(FailureInjection, SessionStagingADeviceFeed) {
  OrtSession* raw = test::make_add_session(ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, {8});
  {
    Session session(raw);
    const Tensor feed = to(host_iota(8), device(0));
    const int points = inject_all({"Session::run(device feed)", [&] {
                                     std::vector<Tensor> out = session.run({{"X", feed}});
                                     const auto* y = static_cast<const float*>(out.at(0).data());
                                     EXPECT_EQ(y[7], 2 * 7.5f);
                                     return out;
                                   }});
    EXPECT_EQ(points, 1);  // the device-to-host staging copy
  }
  ort().ReleaseSession(raw);
}

}  // namespace
}  // namespace ortdlpack
