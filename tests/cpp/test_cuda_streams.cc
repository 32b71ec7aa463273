// ortdlpack's CUDA paths on a simulated CUDA device: the virtual device's CUDA flavor registered as a plugin EP
// ("CUDAExecutionProvider", NVIDIA memory named "Cuda"/"CudaPinned", cudaStream_t handles) and the test CUDA
// runtime (cuda_sim/libcudart.so.13, linked into this binary: the runtime ortdlpack finds already loaded, as it finds
// torch's or the CUDA EP's). The runtime follows the CUDA Runtime API reference (test_cuda_sim.cc checks it against
// the quoted text); what is checked here is ortdlpack: NVIDIA memory of any plugin EP is kDLCUDA / kDLCUDAHost,
// allocations and copies go through the env, ordering uses the EP's sync stream through the CUDA runtime, DLPack's
// CUDA stream values (DLPack's __dlpack__ and the Array API: None the legacy default stream's consumer, 1 the legacy
// default stream, 2 the per-thread default stream, 0 disallowed "due to its ambiguity", -1 no synchronization), the
// current device set for a wait on another device and restored, and what happens when a runtime call fails.
// A stand-in, not proof: tests/gpu on a real GPU remains the judge.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "cuda_sim.h"
#include "gate.h"
#include "ortdlpack/ortdlpack.h"
#include "ortdlpack/virtual_device.h"
#include "support.h"

extern "C" {
int cudaGetDevice(int*);
int cudaSetDevice(int);
int cudaStreamCreate(void**);
int cudaStreamDestroy(void*);
int cudaStreamSynchronize(void*);
int cudaStreamWaitEvent(void*, void*, unsigned);
int cudaEventCreate(void**);
int cudaEventRecord(void*, void*);
int cudaEventDestroy(void*);
int cudaMemcpyAsync(void*, const void*, size_t, int, void*);
}

namespace ortdlpack {
namespace {

constexpr int kH2D = 1, kD2H = 2;
constexpr uint64_t kDelayUs = 20000;

std::vector<float> iota(size_t n, float start) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = start + static_cast<float>(i);
  return v;
}

Tensor host_iota(size_t n, float start) {
  Tensor t = allocate(ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, {static_cast<int64_t>(n)}, DLDevice{kDLCPU, 0});
  const std::vector<float> v = iota(n, start);
  std::memcpy(t.data(), v.data(), n * sizeof(float));
  return t;
}

std::vector<float> values(const Tensor& host) {
  const auto* f = static_cast<const float*>(host.data());
  return std::vector<float>(f, f + host.element_count());
}

class CudaStreams : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    // Registered under the EP's own name, as ortdlpack registers EP packages (and as upstream's CUDA plugin is).
    check(ort().RegisterExecutionProviderLibrary(env(), ORTDLPACK_VD_CUDA_EP_NAME, ORTDLPACK_VD_CUDA_PATH));
    const OrtEpDevice* const* all = nullptr;
    size_t n = 0;
    check(ort().GetEpDevices(env(), &all, &n));
    for (size_t i = 0; i < n; ++i) {
      if (std::strcmp(ort().EpDevice_EpName(all[i]), ORTDLPACK_VD_CUDA_EP_NAME) == 0) devices.push_back(all[i]);
    }
    ASSERT_EQ(devices.size(), 2u);
  }
  static void TearDownTestSuite() { devices.clear(); }  // streams ortdlpack keeps outlive it: stays registered
  void SetUp() override {
    ortdlpack_cuda_sim_reset();
    saved_delay = ortdlpack_vd_stream_delay_us();
    ortdlpack_vd_set_stream_delay_us(kDelayUs);
    ASSERT_EQ(cudaSetDevice(0), 0);
  }
  void TearDown() override {
    ortdlpack_vd_set_stream_delay_us(saved_delay);
    cudaSetDevice(0);
    EXPECT_EQ(ortdlpack_cuda_sim_calls_from_host_functions(), 0u) << "a host function called the CUDA runtime";
  }

  static const OrtMemoryInfo* memory(size_t device, OrtDeviceMemoryType type = OrtDeviceMemoryType_DEFAULT) {
    return ort().EpDevice_MemoryInfo(devices.at(device), type);
  }
  // A device tensor whose contents are still being copied on ortdlpack's stream of its device (a host -> device copy
  // ortdlpack leaves queued: docs/streams.md rule 2).
  static Tensor pending(size_t device, float start, size_t n = 64) { return to(host_iota(n, start), memory(device)); }
  // Reads `t` with a copy queued on the CUDA stream `stream` of the tensor's device, as a consumer does.
  static std::vector<float> read_on(uintptr_t stream, const Tensor& t) {
    int previous = 0;
    EXPECT_EQ(cudaGetDevice(&previous), 0);
    EXPECT_EQ(cudaSetDevice(t.device().device_id), 0);
    std::vector<float> out(t.element_count(), -1.0f);
    void* s = reinterpret_cast<void*>(stream);
    EXPECT_EQ(cudaMemcpyAsync(out.data(), t.data(), out.size() * sizeof(float), kD2H, s), 0);
    EXPECT_EQ(cudaStreamSynchronize(s), 0);
    EXPECT_EQ(cudaSetDevice(previous), 0);
    return out;
  }

  static inline std::vector<const OrtEpDevice*> devices;
  uint64_t saved_delay = 0;
};

TEST_F(CudaStreams, NvidiaMemoryOfAPluginEpIsCudaMemory) {
  // A plugin EP under the CUDA EP's name: ortdlpack uses it as it is (no library of an ORT distribution needed).
  EXPECT_EQ(ensure_ep("cuda"), "CUDAExecutionProvider");
  EXPECT_EQ(resolve_provider("CUDA"), std::optional<std::string>("CUDAExecutionProvider"));
  const DLDevice d1 = to_dlpack_device(memory(1));
  EXPECT_EQ(d1.device_type, kDLCUDA);
  EXPECT_EQ(d1.device_id, 1);
  const DLDevice pinned = to_dlpack_device(memory(0, OrtDeviceMemoryType_HOST_ACCESSIBLE));
  EXPECT_EQ(pinned.device_type, kDLCUDAHost);
  // Allocations on kDLCUDA go through the env's shared allocator of the EP.
  OrtdlpackVdCounters before{}, after{};
  ortdlpack_vd_get_counters(&before);
  const Tensor t = allocate(ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, {8}, DLDevice{kDLCUDA, 1});
  ortdlpack_vd_get_counters(&after);
  EXPECT_EQ(after.allocs, before.allocs + 1);
  EXPECT_EQ(ortdlpack_vd_is_device_pointer(t.data(), 32), 1);
  // ortdlpack's stream of the device is an OrtSyncStream of the EP, its handle a cudaStream_t of that device.
  OrtSyncStream* s = device_stream(memory(1));
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(ortdlpack_vd_stream_device(ort().SyncStream_GetHandle(s)), 1);
  EXPECT_EQ(device_stream(memory(1, OrtDeviceMemoryType_HOST_ACCESSIBLE)), nullptr) << "pinned memory is host memory";
}

TEST_F(CudaStreams, ExportAndImportKeepTheDevicePointer) {
  for (const OrtMemoryInfo* m : {memory(1), memory(0, OrtDeviceMemoryType_HOST_ACCESSIBLE)}) {
    const Tensor t = to(host_iota(8, 2.0f), m);
    DLManagedTensorVersioned* out = to_dlpack_versioned(t);
    const DLDevice want = to_dlpack_device(m);
    EXPECT_EQ(out->dl_tensor.device.device_type, want.device_type);
    EXPECT_EQ(out->dl_tensor.device.device_id, want.device_id);
    EXPECT_EQ(out->dl_tensor.data, t.data());
    const Imported back = from_dlpack(out);  // takes ownership of `out`
    EXPECT_EQ(back.tensor.data(), t.data());
    EXPECT_EQ(to_dlpack_device(back.tensor.memory_info()).device_type, want.device_type);
    EXPECT_EQ(values(to(back.tensor, DLDevice{kDLCPU, 0})), iota(8, 2.0f));
  }
}

// DLPack's stream value 1: the consumer reads on the legacy default stream; 2: on its thread's default stream. The
// stream named waits on the device (an event recorded on ortdlpack's stream), the host never.
TEST_F(CudaStreams, LegacyAndPerThreadDefaultStreamsWaitOnTheDevice) {
  for (int64_t consumer : {1, 2}) {
    ortdlpack_cuda_sim_reset();
    const Tensor t = pending(0, 10.0f);
    order_for_consumer(t, consumer);
    EXPECT_EQ(ortdlpack_cuda_sim_calls("cudaStreamSynchronize"), 0u) << "the host waited, stream " << consumer;
    EXPECT_EQ(ortdlpack_cuda_sim_calls("cudaStreamWaitEvent"), 1u);
    EXPECT_EQ(read_on(static_cast<uintptr_t>(consumer), t), iota(64, 10.0f)) << "stream " << consumer;
  }
}

TEST_F(CudaStreams, StreamZeroIsRefusedAndMinusOneOrdersNothing) {
  const Tensor t = pending(1, 3.0f);
  try {
    order_for_consumer(t, 0);  // "0 is disallowed due to its ambiguity" (DLPack)
    ADD_FAILURE() << "stream 0 accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("> 0 on CUDA"), std::string::npos) << e.what();
  }
  ortdlpack_cuda_sim_reset();
  order_for_consumer(t, -1);
  EXPECT_EQ(ortdlpack_cuda_sim_calls("cudaStreamWaitEvent") + ortdlpack_cuda_sim_calls("cudaStreamSynchronize") +
                ortdlpack_cuda_sim_calls("cudaEventRecord"),
            0u);
  order_for_consumer(t, std::nullopt);  // None: the host waits
  EXPECT_EQ(ortdlpack_cuda_sim_calls("cudaStreamSynchronize"), 1u);
  order_for_consumer(t, std::nullopt);
  EXPECT_EQ(ortdlpack_cuda_sim_calls("cudaStreamSynchronize"), 1u) << "nothing pending any more";
}

// A tensor of device 1 waited for from a thread whose current device is 0: the event must be created on device 1
// (cudaEventRecord refuses an event of another device than the stream's, and ortdlpack would then wait on the
// host), and the legacy stream named by 1 is device 1's. The current device is restored afterwards.
TEST_F(CudaStreams, AWaitOnAnotherDeviceSetsAndRestoresTheCurrentDevice) {
  const Tensor t = pending(1, 20.0f);
  const uint64_t set_before = ortdlpack_cuda_sim_calls("cudaSetDevice");
  order_for_consumer(t, 1);
  int device = -1;
  ASSERT_EQ(cudaGetDevice(&device), 0);
  EXPECT_EQ(device, 0);
  EXPECT_EQ(ortdlpack_cuda_sim_calls("cudaSetDevice") - set_before, 2u);  // to 1, back to 0
  EXPECT_EQ(ortdlpack_cuda_sim_calls("cudaStreamSynchronize"), 0u) << "the record failed: the host waited";
  EXPECT_EQ(read_on(1, t), iota(64, 20.0f));
  // Already on the tensor's device: nothing to set.
  ASSERT_EQ(cudaSetDevice(1), 0);
  ortdlpack_cuda_sim_reset();
  order_for_consumer(pending(1, 1.0f), 1);
  EXPECT_EQ(ortdlpack_cuda_sim_calls("cudaSetDevice"), 0u);
}

// Import: the producer is told ortdlpack's stream (claim_import_stream, a cudaStream_t of the device) and orders its
// pending work before it with an event, as torch's __dlpack__(stream=) does; every later reader sees the write.
TEST_F(CudaStreams, ImportSeesTheProducersPendingWrite) {
  ASSERT_EQ(cudaSetDevice(1), 0);  // the producer's device
  void *producer = nullptr, *event = nullptr;
  ASSERT_EQ(cudaStreamCreate(&producer), 0);
  ASSERT_EQ(cudaEventCreate(&event), 0);
  const Tensor buffer = allocate(ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, {64}, DLDevice{kDLCUDA, 1});
  const std::vector<float> want = iota(64, 7.0f);
  Tensor imported;
  {
    test::Gate held_back(ortdlpack_vd_stream_pause, ortdlpack_vd_stream_resume, producer,
                         std::chrono::milliseconds(200));  // the write lands only after ortdlpack asked for the stream
    ASSERT_EQ(cudaMemcpyAsync(buffer.data(), want.data(), 64 * sizeof(float), kH2D, producer), 0);
    const uintptr_t consumer = claim_import_stream(DLDevice{kDLCUDA, 1});
    ASSERT_NE(consumer, 0u);
    ASSERT_EQ(cudaEventRecord(event, producer), 0);
    ASSERT_EQ(cudaStreamWaitEvent(reinterpret_cast<void*>(consumer), event, 0), 0);
    ASSERT_EQ(cudaSetDevice(0), 0);  // ortdlpack's caller may be on any device
    imported = from_dlpack(to_dlpack_versioned(buffer)).tensor;
    EXPECT_EQ(values(to(imported, DLDevice{kDLCPU, 0})), want);
    EXPECT_TRUE(held_back.timed_out());
  }
  ASSERT_EQ(cudaEventDestroy(event), 0);
  ASSERT_EQ(cudaStreamDestroy(producer), 0);
}

// An unordered import (torch's C exchange table: no_sync, its current stream from current_work_stream): ortdlpack's
// stream adopts the producer's pending work with an event, on the device; 0 is CUDA's legacy default stream, which
// torch's current stream is by default.
TEST_F(CudaStreams, AdoptingTheProducersStreamOrdersAnUnorderedImport) {
  ASSERT_EQ(cudaSetDevice(1), 0);
  void* producer = nullptr;
  ASSERT_EQ(cudaStreamCreate(&producer), 0);
  const Tensor buffer = allocate(ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, {64}, DLDevice{kDLCUDA, 1});
  const std::vector<float> want = iota(64, 9.0f);
  Tensor imported;
  {
    test::Gate held_back(ortdlpack_vd_stream_pause, ortdlpack_vd_stream_resume, producer,
                         std::chrono::milliseconds(200));  // the write lands only after ortdlpack adopted it
    ASSERT_EQ(cudaMemcpyAsync(buffer.data(), want.data(), 64 * sizeof(float), kH2D, producer), 0);
    ortdlpack_cuda_sim_reset();
    ASSERT_TRUE(adopt_producer_work(DLDevice{kDLCUDA, 1}, reinterpret_cast<uintptr_t>(producer)));
    EXPECT_GT(ortdlpack_cuda_sim_calls("cudaStreamWaitEvent"), 0u) << "ordered on the device";
    EXPECT_EQ(ortdlpack_cuda_sim_calls("cudaStreamSynchronize"), 0u) << "the host did not wait";
    imported = from_dlpack(to_dlpack_versioned(buffer)).tensor;
    EXPECT_EQ(values(to(imported, DLDevice{kDLCPU, 0})), want);
    EXPECT_TRUE(held_back.timed_out());
  }
  EXPECT_TRUE(adopt_producer_work(DLDevice{kDLCUDA, 1}, 0));  // the legacy default stream
  ASSERT_EQ(cudaStreamDestroy(producer), 0);
}

// Copies that leave device memory queued keep their source until the device ran them, learnt from a host function
// (cudaLaunchHostFunc), which must not call the runtime (TearDown checks it never did).
TEST_F(CudaStreams, QueuedCopiesBetweenDevicesAreOrdered) {
  const Tensor a = pending(0, 5.0f);
  const Tensor b = to(a, memory(1));
  const Tensor c = to(b, memory(0));
  EXPECT_EQ(values(to(c, DLDevice{kDLCPU, 0})), iota(64, 5.0f));
  EXPECT_GT(ortdlpack_cuda_sim_calls("cudaLaunchHostFunc") + ortdlpack_cuda_sim_calls("cudaStreamSynchronize"), 0u);
}

// A runtime call that fails: a device-side wait that cannot be made becomes a host wait (always correct); a host
// wait that fails is an error naming the device and CUDA's error code.
TEST_F(CudaStreams, FailedRuntimeCallsFallBackToTheHostOrSayWhat) {
  for (const char* call : {"cudaStreamWaitEvent", "cudaEventRecord", "cudaEventCreateWithFlags", "cudaGetDevice"}) {
    ortdlpack_cuda_sim_reset();
    const Tensor t = pending(1, 2.0f);
    ortdlpack_cuda_sim_fail(call, kCudaSimErrorIllegalAddress, 1);
    order_for_consumer(t, 1);
    EXPECT_EQ(ortdlpack_cuda_sim_calls("cudaStreamSynchronize"), 1u) << call << " failed: the host waits instead";
    EXPECT_EQ(read_on(1, t), iota(64, 2.0f)) << call;
  }
  const Tensor t = pending(1, 2.0f);
  ortdlpack_cuda_sim_fail("cudaStreamSynchronize", kCudaSimErrorIllegalAddress, 1);
  try {
    order_for_consumer(t, std::nullopt);
    ADD_FAILURE() << "a failed host wait was not reported";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kRuntime);
    EXPECT_NE(std::string(e.what()).find("CUDAExecutionProvider device 1 failed (error 700)"), std::string::npos)
        << e.what();
  }
  order_for_consumer(t, std::nullopt);  // the next wait succeeds
  ortdlpack_cuda_sim_fail("cudaLaunchHostFunc", kCudaSimErrorIllegalAddress, 1);
  const Tensor copied = to(pending(0, 4.0f), memory(1));  // no host function: the kept source waits for a host wait
  EXPECT_EQ(values(to(copied, DLDevice{kDLCPU, 0})), iota(64, 4.0f));
}

// A session on the CUDA plugin EP: device feeds, outputs in the EP's memory (kDLCUDA) through the env's allocator.
TEST_F(CudaStreams, ASessionOnTheCudaPluginEpReadsAndWritesCudaMemory) {
  const std::string model = test::identity_model_bytes(8);
  SessionConfig config;
  config.ep = "cuda";
  config.ep_options = {{"device_id", "1"}};
  Session session(model.data(), model.size(), config);
  EXPECT_EQ(session.providers().front(), "CUDAExecutionProvider");
  const Tensor x = pending(1, 1.0f, 8);
  RunOptions options;
  options.output_target = Target::in(memory(1));
  const std::vector<Tensor> y = session.run({{"x", x}}, {}, options);
  EXPECT_EQ(to_dlpack_device(y[0].memory_info()).device_type, kDLCUDA);
  EXPECT_EQ(ortdlpack_vd_is_device_pointer(y[0].data(), 32), 1);
  EXPECT_EQ(values(to(y[0], DLDevice{kDLCPU, 0})), iota(8, 1.0f));
}

// A caller's stream 0 (CUDA's default stream, SessionConfig::stream) for a session on device 1, from a thread whose
// current device is 0: the caller's queued write is on device 1's legacy default stream. When ortdlpack cannot make
// its stream wait for it on the device, the host waits for that stream: device 1's, not the current device's.
TEST_F(CudaStreams, ACallersDefaultStreamIsWaitedForOnItsDevice) {
  const std::string model = test::identity_model_bytes(8);
  SessionConfig config;
  config.ep = "cuda";
  config.ep_options = {{"device_id", "1"}};
  config.stream = 0;
  Session session(model.data(), model.size(), config);
  const Tensor x = allocate(ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, {8}, DLDevice{kDLCUDA, 1});
  const std::vector<float> want = iota(8, 3.0f);
  ASSERT_EQ(cudaSetDevice(1), 0);
  void* legacy1 = ortdlpack_cuda_sim_stream(nullptr);
  {
    test::Gate held_back(ortdlpack_vd_stream_pause, ortdlpack_vd_stream_resume, legacy1,
                         std::chrono::milliseconds(200));
    ASSERT_EQ(cudaMemcpyAsync(x.data(), want.data(), 8 * sizeof(float), kH2D, nullptr), 0);
    ASSERT_EQ(cudaSetDevice(0), 0);
    ortdlpack_cuda_sim_fail("cudaStreamWaitEvent", kCudaSimErrorIllegalAddress, 1);
    const std::vector<Tensor> y = session.run({{"x", x}});
    EXPECT_EQ(values(to(y[0], DLDevice{kDLCPU, 0})), want);
    EXPECT_TRUE(held_back.timed_out());
  }
}

}  // namespace
}  // namespace ortdlpack
