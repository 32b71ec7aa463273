// The test CUDA runtime (cuda_sim/, libcudart.so.13 of the test build) against the CUDA Runtime API reference, so
// that the tests of ortdlpack's CUDA paths (test_cuda_streams.cc, tests/cuda_sim) stand on CUDA's documented
// semantics, not on ours. Each test quotes the reference (CUDA Runtime API, CUDA 13, docs.nvidia.com/cuda/
// cuda-runtime-api): "Stream synchronization behavior", and the function descriptions of cudaSetDevice,
// cudaStreamWaitEvent, cudaEventRecord, cudaEventCreate, cudaEventDestroy, cudaLaunchHostFunc, cudaStreamSynchronize.
// Work on the simulated device is queued on the virtual device's streams and completes later (its delay); fresh device
// memory reads as zeros, so a read that is not ordered after a write reads zeros.
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
int cudaGetDeviceCount(int*);
int cudaGetDevice(int*);
int cudaSetDevice(int);
int cudaStreamCreate(void**);
int cudaStreamCreateWithFlags(void**, unsigned);
int cudaStreamDestroy(void*);
int cudaStreamSynchronize(void*);
int cudaStreamQuery(void*);
int cudaStreamWaitEvent(void*, void*, unsigned);
int cudaEventCreate(void**);
int cudaEventCreateWithFlags(void**, unsigned);
int cudaEventRecord(void*, void*);
int cudaEventSynchronize(void*);
int cudaEventQuery(void*);
int cudaEventDestroy(void*);
int cudaLaunchHostFunc(void*, void (*)(void*), void*);
int cudaMemcpyAsync(void*, const void*, size_t, int, void*);
}

namespace ortdlpack {
namespace {

constexpr int kH2D = 1, kD2H = 2;
void* const kLegacy = reinterpret_cast<void*>(uintptr_t{1});
void* const kPerThread = reinterpret_cast<void*>(uintptr_t{2});

class CudaSim : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    check(ort().RegisterExecutionProviderLibrary(env(), ORTDLPACK_VD_CUDA_EP_NAME, ORTDLPACK_VD_CUDA_PATH));
    for (const OrtEpDevice* d : EpDevices())
      memory.push_back(ort().EpDevice_MemoryInfo(d, OrtDeviceMemoryType_DEFAULT));
    ASSERT_EQ(memory.size(), 2u);
  }
  static void TearDownTestSuite() {
    memory.clear();
    check(ort().UnregisterExecutionProviderLibrary(env(), ORTDLPACK_VD_CUDA_EP_NAME));
  }
  void SetUp() override {
    ortdlpack_cuda_sim_reset();
    saved_delay = ortdlpack_vd_stream_delay_us();
    ortdlpack_vd_set_stream_delay_us(20000);
    ASSERT_EQ(cudaSetDevice(0), 0);
  }
  void TearDown() override {
    ortdlpack_vd_set_stream_delay_us(saved_delay);
    cudaSetDevice(0);
  }

  static std::vector<const OrtEpDevice*> EpDevices() {
    std::vector<const OrtEpDevice*> mine;
    const OrtEpDevice* const* all = nullptr;
    size_t n = 0;
    check(ort().GetEpDevices(env(), &all, &n));
    for (size_t i = 0; i < n; ++i) {
      if (std::strcmp(ort().EpDevice_EpName(all[i]), ORTDLPACK_VD_CUDA_EP_NAME) == 0) mine.push_back(all[i]);
    }
    return mine;
  }
  // Device memory of `device` (zeros), through the env's shared allocator.
  static Tensor buffer(int device, size_t n = 16) {
    return allocate(ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, {static_cast<int64_t>(n)}, memory.at(device));
  }
  // Reads `t` on `stream` (queued), then waits for `stream`.
  static std::vector<float> read_on(void* stream, const Tensor& t) {
    std::vector<float> out(t.element_count(), -1.0f);
    EXPECT_EQ(cudaMemcpyAsync(out.data(), t.data(), out.size() * sizeof(float), kD2H, stream), 0);
    EXPECT_EQ(cudaStreamSynchronize(stream), 0);
    return out;
  }
  static void write_on(void* stream, const Tensor& t, float value) {
    const std::vector<float> v(t.element_count(), value);
    ASSERT_EQ(cudaMemcpyAsync(t.data(), v.data(), v.size() * sizeof(float), kH2D, stream), 0);
  }

  static inline std::vector<const OrtMemoryInfo*> memory;
  uint64_t saved_delay = 0;
};

std::vector<float> filled(size_t n, float v) { return std::vector<float>(n, v); }

// cudaSetDevice: "Sets device as the current device for the calling host thread. Valid device id's are 0 to
// (cudaGetDeviceCount() - 1)." Returns cudaErrorInvalidDevice otherwise.
TEST_F(CudaSim, TheCurrentDeviceBelongsToTheCallingHostThread) {
  int count = 0, device = -1;
  ASSERT_EQ(cudaGetDeviceCount(&count), 0);
  EXPECT_EQ(count, 2);
  ASSERT_EQ(cudaSetDevice(1), 0);
  std::thread([] {
    int other = -1;
    EXPECT_EQ(cudaGetDevice(&other), 0);
    EXPECT_EQ(other, 0);  // a new thread starts on device 0
  }).join();
  ASSERT_EQ(cudaGetDevice(&device), 0);
  EXPECT_EQ(device, 1);
  EXPECT_EQ(cudaSetDevice(2), kCudaSimErrorInvalidDevice);
  EXPECT_EQ(cudaSetDevice(-1), kCudaSimErrorInvalidDevice);
  EXPECT_EQ(cudaGetDevice(nullptr), kCudaSimErrorInvalidValue);
}

// cudaStreamWaitEvent: "Makes all future work submitted to stream wait for all work captured in event ... The
// synchronization will be performed efficiently on the device" — the host does not block.
TEST_F(CudaSim, AStreamWaitsForAnEventRecordedOnAnother) {
  void *producer = nullptr, *consumer = nullptr, *event = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&producer, 1), 0);
  ASSERT_EQ(cudaStreamCreateWithFlags(&consumer, 1), 0);
  ASSERT_EQ(cudaEventCreateWithFlags(&event, 2), 0);
  const Tensor t = buffer(0);
  {
    test::Gate gate(ortdlpack_vd_stream_pause, ortdlpack_vd_stream_resume, producer, std::chrono::milliseconds(10000));
    write_on(producer, t, 4.0f);
    EXPECT_EQ(read_on(consumer, t), filled(16, 0.0f)) << "without a wait the consumer reads first";
    ASSERT_EQ(cudaEventRecord(event, producer), 0);
    EXPECT_EQ(cudaStreamQuery(producer), kCudaSimErrorNotReady);
    EXPECT_EQ(cudaEventQuery(event), kCudaSimErrorNotReady);
    ASSERT_EQ(cudaStreamWaitEvent(consumer, event, 0), 0);
    EXPECT_FALSE(gate.timed_out()) << "the host blocked in cudaStreamWaitEvent";
  }
  EXPECT_EQ(read_on(consumer, t), filled(16, 4.0f));
  EXPECT_EQ(cudaEventQuery(event), 0);
  EXPECT_EQ(cudaEventDestroy(event), 0);
  EXPECT_EQ(cudaStreamDestroy(producer), 0);
  EXPECT_EQ(cudaStreamDestroy(consumer), 0);
}

// cudaStreamWaitEvent: "If cudaEventRecord() has not been called on event, this call acts as if the record has
// already completed"; "stream will wait only for the completion of the most recent host call to cudaEventRecord()
// on event. Once this call has returned, any functions (including cudaEventRecord() and cudaEventDestroy()) may be
// called on event again, and the subsequent calls will not have any effect on stream."
TEST_F(CudaSim, AWaitCapturesTheLatestRecordAtTheTimeOfTheCall) {
  void *producer = nullptr, *consumer = nullptr, *event = nullptr;
  ASSERT_EQ(cudaStreamCreate(&producer), 0);
  ASSERT_EQ(cudaStreamCreateWithFlags(&consumer, 1), 0);
  ASSERT_EQ(cudaEventCreate(&event), 0);
  ASSERT_EQ(cudaStreamWaitEvent(consumer, event, 0), 0);  // never recorded: nothing to wait for
  EXPECT_EQ(cudaStreamSynchronize(consumer), 0);
  const Tensor t = buffer(0);
  write_on(producer, t, 1.0f);
  ASSERT_EQ(cudaEventRecord(event, producer), 0);
  ASSERT_EQ(cudaStreamWaitEvent(consumer, event, 0), 0);
  {
    test::Gate gate(ortdlpack_vd_stream_pause, ortdlpack_vd_stream_resume, producer,
                    std::chrono::milliseconds(10000));  // later producer work is held back
    ASSERT_EQ(cudaEventRecord(event, producer), 0);     // re-recorded behind the gate: no effect on the consumer
    EXPECT_EQ(read_on(consumer, t), filled(16, 1.0f));  // and it completes: it waited for the first record only
    EXPECT_EQ(cudaEventQuery(event), kCudaSimErrorNotReady);
    EXPECT_FALSE(gate.timed_out());
  }
  EXPECT_EQ(cudaEventSynchronize(event), 0);
  EXPECT_EQ(cudaEventDestroy(event), 0);
  EXPECT_EQ(cudaStreamDestroy(producer), 0);
  EXPECT_EQ(cudaStreamDestroy(consumer), 0);
}

// cudaEventCreate: "Creates an event object for the current device"; cudaEventRecord: "event and stream must be on
// the same CUDA context" (cudaErrorInvalidResourceHandle otherwise); cudaStreamWaitEvent: "The event may be from a
// different device than stream."
TEST_F(CudaSim, EventsBelongToTheDeviceCurrentAtTheirCreation) {
  void *on0 = nullptr, *on1 = nullptr, *event = nullptr;
  ASSERT_EQ(cudaStreamCreate(&on0), 0);
  ASSERT_EQ(cudaSetDevice(1), 0);
  ASSERT_EQ(cudaStreamCreate(&on1), 0);
  EXPECT_EQ(ortdlpack_vd_stream_device(on1), 1);
  ASSERT_EQ(cudaSetDevice(0), 0);
  ASSERT_EQ(cudaEventCreate(&event), 0);  // device 0
  EXPECT_EQ(cudaEventRecord(event, on1), kCudaSimErrorInvalidResourceHandle);
  ASSERT_EQ(cudaEventRecord(event, on0), 0);
  EXPECT_EQ(cudaStreamWaitEvent(on1, event, 0), 0);
  EXPECT_EQ(cudaStreamSynchronize(on1), 0);
  EXPECT_EQ(cudaEventDestroy(event), 0);
  EXPECT_EQ(cudaStreamDestroy(on0), 0);
  EXPECT_EQ(cudaStreamDestroy(on1), 0);
}

// "Stream synchronization behavior": "When an action is taken in the legacy stream such as a kernel launch or
// cudaStreamWaitEvent(), the legacy stream first waits on all blocking streams, the action is queued in the legacy
// stream, and then all blocking streams wait on the legacy stream." "Non-blocking streams which do not synchronize
// with the legacy stream can be created using the cudaStreamNonBlocking flag". 0 is the legacy default stream when
// code is not compiled for per-thread default streams; cudaStreamLegacy (0x1) names it explicitly.
TEST_F(CudaSim, TheLegacyDefaultStreamSynchronizesWithBlockingStreamsOnly) {
  void *blocking = nullptr, *non_blocking = nullptr;
  ASSERT_EQ(cudaStreamCreate(&blocking), 0);
  ASSERT_EQ(cudaStreamCreateWithFlags(&non_blocking, 1), 0);
  EXPECT_EQ(ortdlpack_cuda_sim_stream(nullptr), ortdlpack_cuda_sim_stream(kLegacy));
  const Tensor a = buffer(0), b = buffer(0), c = buffer(0);
  {
    test::Gate held_back(ortdlpack_vd_stream_pause, ortdlpack_vd_stream_resume, non_blocking,
                         std::chrono::milliseconds(10000));  // its write cannot complete while the gate is closed
    write_on(blocking, a, 7.0f);
    write_on(non_blocking, b, 8.0f);
    EXPECT_EQ(read_on(kLegacy, a), filled(16, 7.0f)) << "the legacy stream waits for the blocking stream";
    EXPECT_EQ(read_on(kLegacy, b), filled(16, 0.0f)) << "but not for the non-blocking one";
    EXPECT_FALSE(held_back.timed_out());
  }
  EXPECT_EQ(cudaStreamSynchronize(non_blocking), 0);
  {
    // ... and blocking streams wait for the legacy stream: a read on one completes only after the legacy write,
    // which the gate holds until the watchdog opens it.
    test::Gate legacy(ortdlpack_vd_stream_pause, ortdlpack_vd_stream_resume, ortdlpack_cuda_sim_stream(kLegacy),
                      std::chrono::milliseconds(200));
    write_on(nullptr, c, 9.0f);
    EXPECT_EQ(read_on(blocking, c), filled(16, 9.0f));
    EXPECT_TRUE(legacy.timed_out());
  }
  EXPECT_EQ(cudaStreamDestroy(blocking), 0);
  EXPECT_EQ(cudaStreamDestroy(non_blocking), 0);
}

// "The per-thread default stream is an implicit stream local to both the thread and the CUcontext ... The per-thread
// default stream is not a non-blocking stream and will synchronize with the legacy default stream if both are used
// in a program." cudaStreamPerThread (0x2) names it.
TEST_F(CudaSim, ThePerThreadDefaultStreamIsOneStreamPerThreadAndDevice) {
  void* mine = ortdlpack_cuda_sim_stream(kPerThread);
  ASSERT_NE(mine, nullptr);
  EXPECT_EQ(ortdlpack_cuda_sim_stream(kPerThread), mine);
  EXPECT_NE(mine, ortdlpack_cuda_sim_stream(kLegacy));
  void* other_thread = nullptr;
  std::thread([&] { other_thread = ortdlpack_cuda_sim_stream(kPerThread); }).join();
  EXPECT_NE(other_thread, mine);
  ASSERT_EQ(cudaSetDevice(1), 0);
  EXPECT_NE(ortdlpack_cuda_sim_stream(kPerThread), mine);
  EXPECT_EQ(ortdlpack_vd_stream_device(ortdlpack_cuda_sim_stream(kPerThread)), 1);
  ASSERT_EQ(cudaSetDevice(0), 0);
  const Tensor t = buffer(0);
  test::Gate gate(ortdlpack_vd_stream_pause, ortdlpack_vd_stream_resume, mine, std::chrono::milliseconds(200));
  write_on(kPerThread, t, 2.0f);
  EXPECT_EQ(read_on(kLegacy, t), filled(16, 2.0f)) << "it synchronizes with the legacy default stream";
  EXPECT_TRUE(gate.timed_out());
}

// cudaLaunchHostFunc: "The host function will be called after currently enqueued work and will block work added
// after it." "The host function must not make any CUDA API calls. Attempting to use a CUDA API may result in
// cudaErrorNotPermitted".
TEST_F(CudaSim, AHostFunctionRunsInStreamOrderAndMayNotCallTheRuntime) {
  void* stream = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, 1), 0);
  struct Seen {
    std::atomic<int> runs{0};
    std::atomic<int> runtime_answer{-1};
  } seen;
  test::Gate gate(ortdlpack_vd_stream_pause, ortdlpack_vd_stream_resume, stream, std::chrono::milliseconds(10000));
  ASSERT_EQ(cudaLaunchHostFunc(
                stream,
                [](void* p) {
                  auto* s = static_cast<Seen*>(p);
                  int device = 0;
                  s->runtime_answer = cudaGetDevice(&device);
                  s->runs.fetch_add(1);
                },
                &seen),
            0);
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  EXPECT_EQ(seen.runs.load(), 0) << "it ran before the work enqueued ahead of it";
  gate.open();
  ASSERT_EQ(cudaStreamSynchronize(stream), 0);
  EXPECT_EQ(seen.runs.load(), 1);
  EXPECT_EQ(seen.runtime_answer.load(), kCudaSimErrorNotPermitted);
  EXPECT_EQ(ortdlpack_cuda_sim_calls_from_host_functions(), 1u);
  EXPECT_EQ(cudaLaunchHostFunc(stream, nullptr, nullptr), kCudaSimErrorInvalidValue);
  EXPECT_EQ(cudaStreamDestroy(stream), 0);
}

// cudaEventDestroy: "In case event has been recorded but has not yet been completed when cudaEventDestroy() is
// called, the function will return immediately and the resources associated with event will be released
// automatically once the device has completed event."
TEST_F(CudaSim, AnEventMayBeDestroyedWhileItsRecordIsPending) {
  void *stream = nullptr, *waiter = nullptr, *event = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, 1), 0);
  ASSERT_EQ(cudaStreamCreateWithFlags(&waiter, 1), 0);
  ASSERT_EQ(cudaEventCreate(&event), 0);
  const Tensor t = buffer(1);
  ASSERT_EQ(cudaSetDevice(1), 0);
  void* on1 = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&on1, 1), 0);
  void* event1 = nullptr;
  ASSERT_EQ(cudaEventCreate(&event1), 0);
  write_on(on1, t, 6.0f);
  ASSERT_EQ(cudaEventRecord(event1, on1), 0);
  ASSERT_EQ(cudaStreamWaitEvent(waiter, event1, 0), 0);  // a stream of device 0 waits for device 1's work
  ASSERT_EQ(cudaEventDestroy(event1), 0);                // still pending: allowed
  EXPECT_EQ(read_on(waiter, t), filled(16, 6.0f));
  EXPECT_EQ(cudaEventDestroy(event1), kCudaSimErrorInvalidResourceHandle) << "destroyed twice";
  EXPECT_EQ(cudaStreamDestroy(on1), 0);
  ASSERT_EQ(cudaSetDevice(0), 0);
  EXPECT_EQ(cudaEventDestroy(event), 0);
  EXPECT_EQ(cudaStreamDestroy(stream), 0);
  EXPECT_EQ(cudaStreamDestroy(waiter), 0);
}

// Flags and handles the reference rules out: cudaStreamWaitEvent's flags are cudaEventWaitDefault or
// cudaEventWaitExternal; cudaEventCreateWithFlags: "cudaEventInterprocess ... must be specified along with
// cudaEventDisableTiming"; cudaErrorInvalidResourceHandle "indicates that a resource handle passed to the API call
// was not valid" (a real runtime may crash on a stale handle; the simulation reports it).
TEST_F(CudaSim, BadFlagsAndHandlesAreErrors) {
  void* event = nullptr;
  EXPECT_EQ(cudaEventCreateWithFlags(&event, 4), kCudaSimErrorInvalidValue);
  EXPECT_EQ(cudaEventCreateWithFlags(&event, 0x40), kCudaSimErrorInvalidValue);
  EXPECT_EQ(cudaStreamCreateWithFlags(&event, 0x8), kCudaSimErrorInvalidValue);
  ASSERT_EQ(cudaEventCreateWithFlags(&event, 4 | 2), 0);
  EXPECT_EQ(cudaStreamWaitEvent(nullptr, event, 0x4), kCudaSimErrorInvalidValue);
  int not_a_handle = 0;
  EXPECT_EQ(cudaStreamSynchronize(&not_a_handle), kCudaSimErrorInvalidResourceHandle);
  EXPECT_EQ(cudaEventRecord(&not_a_handle, nullptr), kCudaSimErrorInvalidResourceHandle);
  EXPECT_EQ(cudaStreamWaitEvent(&not_a_handle, event, 0), kCudaSimErrorInvalidResourceHandle);
  EXPECT_EQ(cudaStreamDestroy(ortdlpack_cuda_sim_stream(kLegacy)), kCudaSimErrorInvalidResourceHandle)
      << "only streams of cudaStreamCreate are destroyed";
  EXPECT_EQ(cudaEventDestroy(event), 0);
}

// The test ABI: the n-th call of a function fails once with the injected error, and calls are counted.
TEST_F(CudaSim, FaultsAreInjectedIntoTheNthCallOnce) {
  int device = 0;
  ortdlpack_cuda_sim_fail("cudaGetDevice", kCudaSimErrorIllegalAddress, 2);
  EXPECT_EQ(cudaGetDevice(&device), 0);
  EXPECT_EQ(cudaGetDevice(&device), kCudaSimErrorIllegalAddress);
  EXPECT_EQ(cudaGetDevice(&device), 0);
  EXPECT_EQ(ortdlpack_cuda_sim_calls("cudaGetDevice"), 3u);
  ortdlpack_cuda_sim_fail("cudaSetDevice", kCudaSimErrorInvalidDevice, 1);
  ortdlpack_cuda_sim_fail("cudaSetDevice", 0, 0);  // withdrawn
  EXPECT_EQ(cudaSetDevice(1), 0);
}

}  // namespace
}  // namespace ortdlpack
