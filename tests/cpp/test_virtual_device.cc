// Tests of the virtual device plugin EP (plugins/virtual_device) through the ONNX Runtime C API only.
// The plugin is registered in an OrtEnv from ORTDLPACK_VD_PATH; its counter ABI is reached with dlopen/dlsym on
// the same path (the same loaded object ORT uses), the way Python tests reach it with ctypes.
#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "onnxruntime_c_api.h"
#include "ortdlpack/virtual_device.h"

#ifndef ORTDLPACK_VD_PATH
#error "ORTDLPACK_VD_PATH (path of the ortdlpack_virtual_device library) must be defined"
#endif

namespace {

const OrtApi* g_api = nullptr;
OrtEnv* g_env = nullptr;
const OrtEpDevice* g_dev[ORTDLPACK_VD_NUM_DEVICES] = {};

// The counter ABI, resolved from the already-loaded plugin.
struct CounterAbi {
  decltype(&ortdlpack_vd_get_counters) get = nullptr;
  decltype(&ortdlpack_vd_reset_counters) reset = nullptr;
  decltype(&ortdlpack_vd_fail_alloc_at) fail_alloc_at = nullptr;
  decltype(&ortdlpack_vd_fail_copy_at) fail_copy_at = nullptr;
  decltype(&ortdlpack_vd_guard_enabled) guard_enabled = nullptr;
  decltype(&ortdlpack_vd_is_device_pointer) is_device_pointer = nullptr;
  decltype(&ortdlpack_vd_stream_create) stream_create = nullptr;
  decltype(&ortdlpack_vd_stream_destroy) stream_destroy = nullptr;
  decltype(&ortdlpack_vd_stream_write) stream_write = nullptr;
  decltype(&ortdlpack_vd_stream_wait) stream_wait = nullptr;
  decltype(&ortdlpack_vd_stream_synchronize) stream_synchronize = nullptr;
  decltype(&ortdlpack_vd_stream_pause) stream_pause = nullptr;
  decltype(&ortdlpack_vd_stream_resume) stream_resume = nullptr;
  decltype(&ortdlpack_ep_stream_launch_host_func) launch_host_func = nullptr;
  decltype(&ortdlpack_vd_set_host_funcs) set_host_funcs = nullptr;
} g_vd;

OrtdlpackVdCounters Counters() {
  OrtdlpackVdCounters c{};
  g_vd.get(&c);
  return c;
}

// Returns "" on success, else the error message (and releases the status).
std::string Err(OrtStatus* st, OrtErrorCode* code = nullptr) {
  if (st == nullptr) return {};
  std::string msg = g_api->GetErrorMessage(st);
  if (code != nullptr) *code = g_api->GetErrorCode(st);
  g_api->ReleaseStatus(st);
  return msg.empty() ? std::string("(error without message)") : msg;
}
#define ASSERT_ORT(expr) ASSERT_EQ(Err(expr), "") << #expr
#define EXPECT_ORT(expr) EXPECT_EQ(Err(expr), "") << #expr

struct ValueDeleter {
  void operator()(OrtValue* v) const { g_api->ReleaseValue(v); }
};
using Value = std::unique_ptr<OrtValue, ValueDeleter>;

class VdEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    g_api = OrtGetApiBase()->GetApi(ORT_API_VERSION);
    ASSERT_NE(g_api, nullptr);
    ASSERT_ORT(g_api->CreateEnv(ORT_LOGGING_LEVEL_WARNING, "test_virtual_device", &g_env));
    ASSERT_ORT(g_api->RegisterExecutionProviderLibrary(g_env, "vd", ORTDLPACK_VD_PATH));
    void* h = dlopen(ORTDLPACK_VD_PATH, RTLD_NOW | RTLD_NOLOAD);  // NOLOAD: must be the copy ORT loaded
    ASSERT_NE(h, nullptr) << dlerror();
    g_vd.get = reinterpret_cast<decltype(g_vd.get)>(dlsym(h, "ortdlpack_vd_get_counters"));
    g_vd.reset = reinterpret_cast<decltype(g_vd.reset)>(dlsym(h, "ortdlpack_vd_reset_counters"));
    g_vd.fail_alloc_at = reinterpret_cast<decltype(g_vd.fail_alloc_at)>(dlsym(h, "ortdlpack_vd_fail_alloc_at"));
    g_vd.fail_copy_at = reinterpret_cast<decltype(g_vd.fail_copy_at)>(dlsym(h, "ortdlpack_vd_fail_copy_at"));
    g_vd.guard_enabled = reinterpret_cast<decltype(g_vd.guard_enabled)>(dlsym(h, "ortdlpack_vd_guard_enabled"));
    g_vd.is_device_pointer =
        reinterpret_cast<decltype(g_vd.is_device_pointer)>(dlsym(h, "ortdlpack_vd_is_device_pointer"));
#define VD_SYM(field, name) g_vd.field = reinterpret_cast<decltype(g_vd.field)>(dlsym(h, name))
    VD_SYM(stream_create, "ortdlpack_vd_stream_create");
    VD_SYM(stream_destroy, "ortdlpack_vd_stream_destroy");
    VD_SYM(stream_write, "ortdlpack_vd_stream_write");
    VD_SYM(stream_wait, "ortdlpack_vd_stream_wait");
    VD_SYM(stream_synchronize, "ortdlpack_vd_stream_synchronize");
    VD_SYM(stream_pause, "ortdlpack_vd_stream_pause");
    VD_SYM(stream_resume, "ortdlpack_vd_stream_resume");
    VD_SYM(launch_host_func, "ortdlpack_ep_stream_launch_host_func");
    VD_SYM(set_host_funcs, "ortdlpack_vd_set_host_funcs");
#undef VD_SYM
    ASSERT_TRUE(g_vd.stream_create && g_vd.stream_destroy && g_vd.stream_write && g_vd.stream_wait &&
                g_vd.stream_synchronize && g_vd.stream_pause && g_vd.stream_resume && g_vd.launch_host_func &&
                g_vd.set_host_funcs);
    // h is deliberately never closed: the library then stays mapped after UnregisterExecutionProviderLibrary,
    // so the counters stay readable and sanitizer reports at exit can still symbolise its frames.
    ASSERT_TRUE(g_vd.get && g_vd.reset && g_vd.fail_alloc_at && g_vd.fail_copy_at && g_vd.guard_enabled &&
                g_vd.is_device_pointer);

    const OrtEpDevice* const* devs = nullptr;
    size_t n = 0;
    ASSERT_ORT(g_api->GetEpDevices(g_env, &devs, &n));
    for (size_t i = 0; i < n; ++i) {
      if (std::strcmp(g_api->EpDevice_EpName(devs[i]), ORTDLPACK_VD_EP_NAME) != 0) continue;
      const uint32_t id = g_api->HardwareDevice_DeviceId(g_api->EpDevice_Device(devs[i]));
      ASSERT_LT(id, static_cast<uint32_t>(ORTDLPACK_VD_NUM_DEVICES));
      g_dev[id] = devs[i];
    }
  }
  void TearDown() override {
    if (g_env == nullptr) return;
    EXPECT_ORT(g_api->UnregisterExecutionProviderLibrary(g_env, "vd"));
    g_api->ReleaseEnv(g_env);
    g_env = nullptr;
  }
};
const auto* const g_registered_env = ::testing::AddGlobalTestEnvironment(new VdEnvironment);

const OrtMemoryInfo* DeviceInfo(int id) { return g_api->EpDevice_MemoryInfo(g_dev[id], OrtDeviceMemoryType_DEFAULT); }
const OrtMemoryInfo* HostInfo(int id) {
  return g_api->EpDevice_MemoryInfo(g_dev[id], OrtDeviceMemoryType_HOST_ACCESSIBLE);
}

OrtAllocator* SharedAllocator(const OrtMemoryInfo* info) {
  OrtAllocator* a = nullptr;
  EXPECT_ORT(g_api->GetSharedAllocator(g_env, info, &a));
  return a;
}

Value NewTensor(OrtAllocator* a, const std::vector<int64_t>& shape,
                ONNXTensorElementDataType t = ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT) {
  OrtValue* v = nullptr;
  EXPECT_ORT(g_api->CreateTensorAsOrtValue(a, shape.data(), shape.size(), t, &v));
  return Value(v);
}

OrtAllocator* CpuAllocator() {
  OrtAllocator* a = nullptr;
  EXPECT_ORT(g_api->GetAllocatorWithDefaultOptions(&a));
  return a;
}

float* FloatData(OrtValue* v) {
  void* p = nullptr;
  EXPECT_ORT(g_api->GetTensorMutableData(v, &p));
  return static_cast<float*>(p);
}

OrtStatus* Copy(OrtValue* src, OrtValue* dst, OrtSyncStream* stream = nullptr) {
  const OrtValue* s[] = {src};
  OrtValue* d[] = {dst};
  return g_api->CopyTensors(g_env, s, d, stream, 1);
}

class VirtualDevice : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NE(g_env, nullptr);
    ASSERT_NE(g_dev[0], nullptr);
    ASSERT_NE(g_dev[1], nullptr);
    g_vd.fail_alloc_at(0);
    g_vd.fail_copy_at(0);
    g_vd.reset();
    base_ = Counters();
  }
  // Every test must give back all device and host-accessible memory it took.
  void TearDown() override {
    const OrtdlpackVdCounters c = Counters();
    EXPECT_EQ(c.allocs, c.frees);
    EXPECT_EQ(c.host_allocs, c.host_frees);
    EXPECT_EQ(c.live_allocs, base_.live_allocs);
    EXPECT_EQ(c.live_bytes, base_.live_bytes);
    EXPECT_EQ(c.host_live_bytes, base_.host_live_bytes);
  }
  OrtdlpackVdCounters base_{};
};

TEST_F(VirtualDevice, ListsTwoNpuDevicesWithMetadataAndMemoryInfos) {
  const OrtEpDevice* const* devs = nullptr;
  size_t n = 0;
  ASSERT_ORT(g_api->GetEpDevices(g_env, &devs, &n));
  size_t ours = 0;
  for (size_t i = 0; i < n; ++i) ours += std::strcmp(g_api->EpDevice_EpName(devs[i]), ORTDLPACK_VD_EP_NAME) == 0;
  EXPECT_EQ(ours, 2u);

  for (int id = 0; id < ORTDLPACK_VD_NUM_DEVICES; ++id) {
    SCOPED_TRACE(id);
    const OrtEpDevice* d = g_dev[id];
    EXPECT_STREQ(g_api->EpDevice_EpVendor(d), "ortdlpack");
    const OrtHardwareDevice* hw = g_api->EpDevice_Device(d);
    EXPECT_EQ(g_api->HardwareDevice_Type(hw), OrtHardwareDeviceType_NPU);
    EXPECT_EQ(g_api->HardwareDevice_VendorId(hw), static_cast<uint32_t>(ORTDLPACK_VD_VENDOR_ID));
    EXPECT_EQ(g_api->HardwareDevice_DeviceId(hw), static_cast<uint32_t>(id));

    const OrtKeyValuePairs* md = g_api->EpDevice_EpMetadata(d);
    ASSERT_NE(md, nullptr);
    const char* dl = g_api->GetKeyValue(md, ORTDLPACK_VD_DLPACK_DEVICE_TYPE_KEY);
    ASSERT_NE(dl, nullptr);
    EXPECT_STREQ(dl, "12");  // kDLExtDev

    struct Want {
      const OrtMemoryInfo* info;
      const char* name;
      OrtDeviceMemoryType mem;
    } wants[] = {{DeviceInfo(id), ORTDLPACK_VD_MEMINFO_DEVICE, OrtDeviceMemoryType_DEFAULT},
                 {HostInfo(id), ORTDLPACK_VD_MEMINFO_HOST, OrtDeviceMemoryType_HOST_ACCESSIBLE}};
    for (const Want& w : wants) {
      ASSERT_NE(w.info, nullptr);
      const char* name = nullptr;
      ASSERT_ORT(g_api->MemoryInfoGetName(w.info, &name));
      EXPECT_STREQ(name, w.name);
      OrtMemoryInfoDeviceType type{};
      g_api->MemoryInfoGetDeviceType(w.info, &type);
      EXPECT_EQ(type, OrtMemoryInfoDeviceType_NPU);
      EXPECT_EQ(g_api->MemoryInfoGetVendorId(w.info), static_cast<uint32_t>(ORTDLPACK_VD_VENDOR_ID));
      int dev_id = -1;
      ASSERT_ORT(g_api->MemoryInfoGetId(w.info, &dev_id));
      EXPECT_EQ(dev_id, id);
      EXPECT_EQ(g_api->MemoryInfoGetDeviceMemType(w.info), w.mem);
    }
  }
}

TEST_F(VirtualDevice, SharedAllocatorsExistAndAreDistinctPerDevice) {
  OrtAllocator* a0 = SharedAllocator(DeviceInfo(0));
  OrtAllocator* a1 = SharedAllocator(DeviceInfo(1));
  ASSERT_NE(a0, nullptr);
  ASSERT_NE(a1, nullptr);
  EXPECT_NE(a0, a1);
  EXPECT_NE(SharedAllocator(HostInfo(0)), nullptr);
  EXPECT_NE(SharedAllocator(HostInfo(1)), nullptr);
}

TEST_F(VirtualDevice, RoundTripCpuToDeviceToOtherDeviceToCpu) {
  constexpr int64_t kN = 3000;  // 12000 bytes: several pages
  constexpr uint64_t kBytes = kN * sizeof(float);
  Value src = NewTensor(CpuAllocator(), {kN});
  Value dst = NewTensor(CpuAllocator(), {kN});
  std::iota(FloatData(src.get()), FloatData(src.get()) + kN, 0.5f);
  std::memset(FloatData(dst.get()), 0, kBytes);

  Value d0 = NewTensor(SharedAllocator(DeviceInfo(0)), {kN});
  Value d1 = NewTensor(SharedAllocator(DeviceInfo(1)), {kN});
  ASSERT_TRUE(d0 && d1);
  OrtdlpackVdCounters c = Counters();
  EXPECT_EQ(c.allocs, 2u);
  EXPECT_EQ(c.live_bytes - base_.live_bytes, 2 * kBytes);
  EXPECT_EQ(g_vd.is_device_pointer(FloatData(d0.get()), kBytes), 1);
  EXPECT_EQ(g_vd.is_device_pointer(FloatData(src.get()), kBytes), 0);

  ASSERT_ORT(Copy(src.get(), d0.get()));
  ASSERT_ORT(Copy(d0.get(), d1.get()));
  ASSERT_ORT(Copy(d1.get(), dst.get()));
  EXPECT_EQ(std::memcmp(FloatData(src.get()), FloatData(dst.get()), kBytes), 0);

  c = Counters();
  EXPECT_EQ(c.copies, 3u);
  EXPECT_EQ(c.copy_calls, 3u);
  EXPECT_EQ(c.bytes_h2d, kBytes);
  EXPECT_EQ(c.bytes_d2d, kBytes);
  EXPECT_EQ(c.bytes_d2h, kBytes);
  EXPECT_EQ(c.failed_copies, 0u);

  d0.reset();
  d1.reset();
  c = Counters();
  EXPECT_EQ(c.frees, 2u);
  EXPECT_EQ(c.live_bytes, base_.live_bytes);
}

TEST_F(VirtualDevice, HostAccessibleMemoryIsHostMemoryAndCopiesBothWays) {
  constexpr int64_t kN = 64;
  constexpr uint64_t kBytes = kN * sizeof(float);
  Value pinned = NewTensor(SharedAllocator(HostInfo(1)), {kN});
  Value dev = NewTensor(SharedAllocator(DeviceInfo(1)), {kN});
  Value cpu = NewTensor(CpuAllocator(), {kN});
  ASSERT_TRUE(pinned && dev && cpu);
  EXPECT_EQ(Counters().host_allocs, 1u);
  EXPECT_EQ(Counters().host_live_bytes - base_.host_live_bytes, kBytes);
  std::iota(FloatData(pinned.get()), FloatData(pinned.get()) + kN, 1.0f);  // the host may write it directly

  ASSERT_ORT(Copy(pinned.get(), dev.get()));  // host-accessible -> device
  ASSERT_ORT(Copy(dev.get(), cpu.get()));     // device -> CPU
  EXPECT_EQ(std::memcmp(FloatData(pinned.get()), FloatData(cpu.get()), kBytes), 0);
  std::memset(FloatData(pinned.get()), 0, kBytes);
  ASSERT_ORT(Copy(dev.get(), pinned.get()));  // device -> host-accessible
  EXPECT_EQ(std::memcmp(FloatData(pinned.get()), FloatData(cpu.get()), kBytes), 0);
  std::memset(FloatData(pinned.get()), 0, kBytes);
  ASSERT_ORT(Copy(cpu.get(), pinned.get()));  // CPU -> host-accessible, through this EP's transfer
  EXPECT_EQ(std::memcmp(FloatData(pinned.get()), FloatData(cpu.get()), kBytes), 0);

  const OrtdlpackVdCounters c = Counters();
  EXPECT_EQ(c.bytes_h2d, kBytes);
  EXPECT_EQ(c.bytes_d2h, 2 * kBytes);
  EXPECT_EQ(c.bytes_h2h, kBytes);
  EXPECT_EQ(c.copies, 4u);
}

TEST_F(VirtualDevice, HundredTensorsInOneCopyTensorsCall) {
  constexpr size_t kCount = 100;
  std::vector<Value> cpu, dev, back;
  uint64_t total = 0;
  for (size_t i = 0; i < kCount; ++i) {
    const int64_t n = static_cast<int64_t>(i % 7 == 0 ? 0 : i * 13 + 1);  // some empty tensors too
    cpu.push_back(NewTensor(CpuAllocator(), {n}));
    dev.push_back(NewTensor(SharedAllocator(DeviceInfo(static_cast<int>(i % 2))), {n}));
    back.push_back(NewTensor(CpuAllocator(), {n}));
    float* p = FloatData(cpu.back().get());
    for (int64_t k = 0; k < n; ++k) p[k] = static_cast<float>(i) * 1000.0f + static_cast<float>(k);
    total += static_cast<uint64_t>(n) * sizeof(float);
  }
  // All sources of one CopyTensors call must share a device: copy to device 0 tensors only in the first call.
  std::vector<const OrtValue*> s;
  std::vector<OrtValue*> d;
  uint64_t to_dev0 = 0;
  for (size_t i = 0; i < kCount; i += 2) {
    s.push_back(cpu[i].get());
    d.push_back(dev[i].get());
    to_dev0 += static_cast<uint64_t>(i % 7 == 0 ? 0 : i * 13 + 1) * sizeof(float);
  }
  ASSERT_ORT(g_api->CopyTensors(g_env, s.data(), d.data(), nullptr, s.size()));
  s.clear();
  d.clear();
  for (size_t i = 1; i < kCount; i += 2) {
    s.push_back(cpu[i].get());
    d.push_back(dev[i].get());
  }
  ASSERT_ORT(g_api->CopyTensors(g_env, s.data(), d.data(), nullptr, s.size()));
  EXPECT_EQ(Counters().bytes_h2d, total);

  // Device 0 -> CPU, then device 1 -> CPU; then check the 100 results.
  for (int parity = 0; parity < 2; ++parity) {
    s.clear();
    d.clear();
    for (size_t i = static_cast<size_t>(parity); i < kCount; i += 2) {
      s.push_back(dev[i].get());
      d.push_back(back[i].get());
    }
    ASSERT_ORT(g_api->CopyTensors(g_env, s.data(), d.data(), nullptr, s.size()));
  }
  for (size_t i = 0; i < kCount; ++i) {
    size_t bytes = 0;
    ASSERT_ORT(g_api->GetTensorSizeInBytes(cpu[i].get(), &bytes));
    if (bytes == 0) continue;
    EXPECT_EQ(std::memcmp(FloatData(cpu[i].get()), FloatData(back[i].get()), bytes), 0) << i;
  }
  const OrtdlpackVdCounters c = Counters();
  EXPECT_EQ(c.copies, 2 * kCount);
  EXPECT_EQ(c.copy_calls, 4u);
  EXPECT_EQ(c.bytes_d2h, total);
  EXPECT_GT(to_dev0, 0u);

  // And 100 in a single call: one device -> one device, all on device 0.
  const OrtdlpackVdCounters before = Counters();
  std::vector<Value> d0_src, d0_dst;
  s.clear();
  d.clear();
  for (size_t i = 0; i < kCount; ++i) {
    d0_src.push_back(NewTensor(SharedAllocator(DeviceInfo(0)), {16}));
    d0_dst.push_back(NewTensor(SharedAllocator(DeviceInfo(0)), {16}));
    s.push_back(d0_src.back().get());
    d.push_back(d0_dst.back().get());
  }
  ASSERT_ORT(g_api->CopyTensors(g_env, s.data(), d.data(), nullptr, s.size()));
  const OrtdlpackVdCounters after = Counters();
  EXPECT_EQ(after.copies - before.copies, kCount);
  EXPECT_EQ(after.copy_calls - before.copy_calls, 1u);
  EXPECT_EQ(after.bytes_d2d - before.bytes_d2d, kCount * 16 * sizeof(float));
}

// Copies from many threads at once: the guard's open/copy/close must never let one copy close another's pages.
TEST_F(VirtualDevice, ConcurrentCopiesDoNotRaceTheGuard) {
  constexpr int kThreads = 8;
  constexpr int kRounds = 200;
  constexpr int64_t kN = 1500;  // 6000 bytes: two pages, so neighbouring copies share nothing but the mutex
  std::vector<std::string> errors(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t, &errors] {
      Value src = NewTensor(CpuAllocator(), {kN});
      Value back = NewTensor(CpuAllocator(), {kN});
      Value d0 = NewTensor(SharedAllocator(DeviceInfo(0)), {kN});
      Value d1 = NewTensor(SharedAllocator(DeviceInfo(1)), {kN});
      for (int r = 0; r < kRounds && errors[t].empty(); ++r) {
        float* p = FloatData(src.get());
        for (int64_t k = 0; k < kN; ++k) p[k] = static_cast<float>(t * 100000 + r * 10 + k % 10);
        errors[t] = Err(Copy(src.get(), d0.get()));
        if (errors[t].empty()) errors[t] = Err(Copy(d0.get(), d1.get()));
        if (errors[t].empty()) errors[t] = Err(Copy(d1.get(), back.get()));
        if (errors[t].empty() && std::memcmp(p, FloatData(back.get()), kN * sizeof(float)) != 0) {
          errors[t] = "data mismatch";
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(errors[t], "") << "thread " << t;
  EXPECT_EQ(Counters().copies, static_cast<uint64_t>(kThreads) * kRounds * 3);
}

TEST_F(VirtualDevice, ZeroByteAllocationsAreUniqueAndNonNull) {
  OrtAllocator* a = SharedAllocator(DeviceInfo(0));
  void* p = nullptr;
  void* q = nullptr;
  ASSERT_ORT(g_api->AllocatorAlloc(a, 0, &p));
  ASSERT_ORT(g_api->AllocatorAlloc(a, 0, &q));
  EXPECT_NE(p, nullptr);
  EXPECT_NE(q, nullptr);
  EXPECT_NE(p, q);
  EXPECT_EQ(g_vd.is_device_pointer(p, 0), 1);
  EXPECT_EQ(Counters().allocs, 2u);
  ASSERT_ORT(g_api->AllocatorFree(a, p));
  ASSERT_ORT(g_api->AllocatorFree(a, q));

  OrtAllocator* h = SharedAllocator(HostInfo(0));
  ASSERT_ORT(g_api->AllocatorAlloc(h, 0, &p));
  EXPECT_NE(p, nullptr);
  ASSERT_ORT(g_api->AllocatorFree(h, p));

  // An empty tensor on the device copies (nothing) without error.
  Value e = NewTensor(a, {0});
  Value c = NewTensor(CpuAllocator(), {0});
  ASSERT_ORT(Copy(e.get(), c.get()));
}

// A plugin allocator can only signal failure by returning NULL. ORT 1.29 does not check that: CreateTensorAsOrtValue
// then succeeds with a tensor whose data is NULL (and AllocatorAlloc returns OK with NULL). Callers must check the
// data pointer of non-empty tensors. The test accepts both that and a proper error status (a later ORT may add it).
TEST_F(VirtualDevice, InjectedAllocationFailureIsAnErrorAndLeaksNothing) {
  OrtAllocator* a = SharedAllocator(DeviceInfo(1));
  g_vd.fail_alloc_at(2);
  Value first = NewTensor(a, {8});
  ASSERT_TRUE(first);
  OrtValue* v = nullptr;
  const int64_t shape[] = {8};
  const std::string err = Err(g_api->CreateTensorAsOrtValue(a, shape, 1, ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, &v));
  Value failed(v);
  if (err.empty()) {
    ASSERT_NE(v, nullptr);
    EXPECT_EQ(FloatData(v), nullptr) << "a failed allocation must not yield usable memory";
    Value cpu = NewTensor(CpuAllocator(), {8});
    EXPECT_NE(Err(Copy(cpu.get(), v)), "");  // the data transfer refuses a NULL device pointer
  } else {
    EXPECT_EQ(v, nullptr);
  }
  failed.reset();

  void* p = nullptr;
  g_vd.fail_alloc_at(1);
  const std::string err2 = Err(g_api->AllocatorAlloc(a, 16, &p));
  EXPECT_TRUE(!err2.empty() || p == nullptr);

  Value third = NewTensor(a, {8});  // injection is one-shot
  ASSERT_TRUE(third);
  EXPECT_NE(FloatData(third.get()), nullptr);
  const OrtdlpackVdCounters c = Counters();
  EXPECT_EQ(c.allocs, 2u);
  EXPECT_EQ(c.failed_allocs, 2u);
  EXPECT_EQ(c.live_allocs - base_.live_allocs, 2u);
}

TEST_F(VirtualDevice, InjectedCopyFailureIsAnErrorAndLeaksNothing) {
  std::vector<Value> cpu, dev;
  std::vector<const OrtValue*> s;
  std::vector<OrtValue*> d;
  for (int i = 0; i < 5; ++i) {
    cpu.push_back(NewTensor(CpuAllocator(), {4}));
    dev.push_back(NewTensor(SharedAllocator(DeviceInfo(0)), {4}));
    s.push_back(cpu.back().get());
    d.push_back(dev.back().get());
  }
  g_vd.fail_copy_at(3);
  OrtErrorCode code = ORT_OK;
  const std::string err = Err(g_api->CopyTensors(g_env, s.data(), d.data(), nullptr, s.size()), &code);
  EXPECT_NE(err.find("injected copy failure"), std::string::npos) << err;
  EXPECT_EQ(code, ORT_FAIL);
  OrtdlpackVdCounters c = Counters();
  EXPECT_EQ(c.copies, 2u);  // the two before the failing one
  EXPECT_EQ(c.failed_copies, 1u);
  ASSERT_ORT(g_api->CopyTensors(g_env, s.data(), d.data(), nullptr, s.size()));  // one-shot
  EXPECT_EQ(Counters().copies, 7u);
}

TEST_F(VirtualDevice, RejectsHostPointerDressedAsDeviceMemory) {
  std::vector<float> host(16, 1.0f);
  const int64_t shape[] = {16};
  OrtValue* fake = nullptr;
  ASSERT_ORT(g_api->CreateTensorWithDataAsOrtValue(DeviceInfo(0), host.data(), host.size() * sizeof(float), shape, 1,
                                                   ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, &fake));
  Value fake_v(fake);
  Value cpu = NewTensor(CpuAllocator(), {16});
  OrtErrorCode code = ORT_OK;
  const std::string err = Err(Copy(fake_v.get(), cpu.get()), &code);
  EXPECT_NE(err.find("not inside a live virtual-device allocation"), std::string::npos) << err;
  EXPECT_EQ(Counters().failed_copies, 1u);
}

struct StreamDeleter {
  void operator()(OrtSyncStream* s) const { g_api->ReleaseSyncStream(s); }
};
using Stream = std::unique_ptr<OrtSyncStream, StreamDeleter>;
Stream NewStream(int device) {
  OrtSyncStream* s = nullptr;
  EXPECT_ORT(g_api->CreateSyncStreamForEpDevice(g_dev[device], nullptr, &s));
  return Stream(s);
}

// A stream is a queue: a copy on it is done when the queue reaches it, in order, and visible to the host only
// after the stream is synchronized. A paused stream makes "not yet" deterministic.
TEST_F(VirtualDevice, CopiesOnAStreamCompleteInOrderWhenTheQueueReachesThem) {
  Stream stream = NewStream(1);
  ASSERT_NE(stream, nullptr);
  void* handle = g_api->SyncStream_GetHandle(stream.get());
  ASSERT_NE(handle, nullptr);
  Value cpu = NewTensor(CpuAllocator(), {32});
  Value back = NewTensor(CpuAllocator(), {32});
  Value dev = NewTensor(SharedAllocator(DeviceInfo(1)), {32});
  std::iota(FloatData(cpu.get()), FloatData(cpu.get()) + 32, 3.0f);
  std::fill(FloatData(back.get()), FloatData(back.get()) + 32, -1.0f);
  ASSERT_EQ(g_vd.stream_pause(handle), 0);
  ASSERT_ORT(Copy(cpu.get(), dev.get(), stream.get()));
  FloatData(cpu.get())[0] = 100.0f;                       // the host source was taken when the copy was enqueued
  ASSERT_ORT(Copy(dev.get(), back.get(), stream.get()));  // in order: sees the previous copy
  EXPECT_EQ(FloatData(back.get())[5], -1.0f) << "the stream is paused: nothing ran yet";
  EXPECT_EQ(Counters().async_copies, 2u);
  ASSERT_EQ(g_vd.stream_resume(handle), 0);
  ASSERT_EQ(g_vd.stream_synchronize(handle), 0);
  for (int i = 0; i < 32; ++i) EXPECT_EQ(FloatData(back.get())[i], 3.0f + static_cast<float>(i));
  EXPECT_EQ(Counters().host_syncs, 1u);
}

TEST_F(VirtualDevice, CopiesWithoutAStreamAreSynchronousAndOrderedAfterNothing) {
  Stream stream = NewStream(0);
  void* handle = g_api->SyncStream_GetHandle(stream.get());
  Value cpu = NewTensor(CpuAllocator(), {4});
  Value back = NewTensor(CpuAllocator(), {4});
  Value dev = NewTensor(SharedAllocator(DeviceInfo(0)), {4});
  std::fill(FloatData(cpu.get()), FloatData(cpu.get()) + 4, 1.0f);
  ASSERT_ORT(Copy(cpu.get(), dev.get()));
  std::fill(FloatData(cpu.get()), FloatData(cpu.get()) + 4, 2.0f);
  ASSERT_EQ(g_vd.stream_pause(handle), 0);
  ASSERT_ORT(Copy(cpu.get(), dev.get(), stream.get()));  // queued behind the gate
  ASSERT_ORT(Copy(dev.get(), back.get()));               // no stream: now, before the queued write
  EXPECT_EQ(FloatData(back.get())[0], 1.0f);
  ASSERT_EQ(g_vd.stream_resume(handle), 0);
  ASSERT_EQ(g_vd.stream_synchronize(handle), 0);
  ASSERT_ORT(Copy(dev.get(), back.get()));
  EXPECT_EQ(FloatData(back.get())[0], 2.0f);
}

// A producer's own stream (the C ABI) writes device memory; another stream waits for it without blocking the host.
TEST_F(VirtualDevice, AStreamWaitsForAProducerStream) {
  void* producer = g_vd.stream_create(0);
  ASSERT_NE(producer, nullptr);
  Stream consumer = NewStream(0);
  void* handle = g_api->SyncStream_GetHandle(consumer.get());
  Value dev = NewTensor(SharedAllocator(DeviceInfo(0)), {8});
  Value back = NewTensor(CpuAllocator(), {8});
  const std::vector<float> data{1, 2, 3, 4, 5, 6, 7, 8};
  ASSERT_EQ(g_vd.stream_pause(producer), 0);
  ASSERT_EQ(g_vd.stream_write(producer, FloatData(dev.get()), data.data(), 32), 0);
  ASSERT_EQ(g_vd.stream_wait(handle, producer), 0);
  ASSERT_ORT(Copy(dev.get(), back.get(), consumer.get()));  // returns at once: the wait is on the device
  ASSERT_EQ(g_vd.stream_resume(producer), 0);
  ASSERT_EQ(g_vd.stream_synchronize(handle), 0);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(FloatData(back.get())[i], data[i]);
  EXPECT_EQ(Counters().stream_waits, 1u);
  EXPECT_EQ(g_vd.stream_destroy(producer), 0);
}

// The optional third function of the stream convention: a host function runs once the work before it has run.
TEST_F(VirtualDevice, AHostFunctionRunsWhenTheQueueReachesIt) {
  void* s = g_vd.stream_create(0);
  ASSERT_NE(s, nullptr);
  Value dev = NewTensor(SharedAllocator(DeviceInfo(0)), {8});
  const std::vector<float> data(8, 1.0f);
  std::atomic<int> calls{0};
  const auto count = [](void* n) { static_cast<std::atomic<int>*>(n)->fetch_add(1); };
  ASSERT_EQ(g_vd.stream_pause(s), 0);
  ASSERT_EQ(g_vd.stream_write(s, FloatData(dev.get()), data.data(), 32), 0);
  ASSERT_EQ(g_vd.launch_host_func(s, count, &calls), 0);
  EXPECT_EQ(calls.load(), 0) << "the write before it has not run";
  ASSERT_EQ(g_vd.stream_resume(s), 0);
  ASSERT_EQ(g_vd.stream_synchronize(s), 0);
  EXPECT_EQ(calls.load(), 1);
  g_vd.set_host_funcs(0);  // an EP with only the two required functions of the convention
  EXPECT_EQ(g_vd.launch_host_func(s, count, &calls), -1);
  g_vd.set_host_funcs(1);
  int not_a_stream = 0;
  EXPECT_EQ(g_vd.launch_host_func(&not_a_stream, count, &calls), -1);
  EXPECT_EQ(g_vd.launch_host_func(s, nullptr, &calls), -1);
  ASSERT_EQ(g_vd.stream_synchronize(s), 0);
  EXPECT_EQ(calls.load(), 1) << "a refused host function never runs";
  EXPECT_EQ(g_vd.stream_destroy(s), 0);
}

TEST_F(VirtualDevice, StreamAbiRejectsHandlesThatAreNotLiveStreams) {
  int not_a_stream = 0;
  void* dead = g_vd.stream_create(1);
  ASSERT_EQ(g_vd.stream_destroy(dead), 0);
  for (void* h : {static_cast<void*>(nullptr), static_cast<void*>(&not_a_stream), dead}) {
    EXPECT_EQ(g_vd.stream_synchronize(h), -1);
    EXPECT_EQ(g_vd.stream_pause(h), -1);
    EXPECT_EQ(g_vd.stream_destroy(h), -1);
  }
  EXPECT_EQ(g_vd.stream_create(ORTDLPACK_VD_NUM_DEVICES), nullptr);
  void* s = g_vd.stream_create(0);
  float host[4] = {};
  EXPECT_EQ(g_vd.stream_write(s, host, host, sizeof host), -1) << "a host pointer is not device memory";
  EXPECT_EQ(g_vd.stream_wait(s, &not_a_stream), -1);
  EXPECT_EQ(g_vd.stream_resume(s), -1) << "nothing is paused";
  EXPECT_EQ(g_vd.stream_destroy(s), 0);
}

// Freeing device memory waits for queued copies that use it (as cudaFree waits for the device): the worker never
// touches unmapped pages, and the copy's result is right.
TEST_F(VirtualDevice, FreeIsOrderedAfterQueuedCopiesOfThatMemory) {
  Stream stream = NewStream(0);
  void* handle = g_api->SyncStream_GetHandle(stream.get());
  Value cpu = NewTensor(CpuAllocator(), {16});
  Value back = NewTensor(CpuAllocator(), {16});
  Value dev = NewTensor(SharedAllocator(DeviceInfo(0)), {16});
  std::iota(FloatData(cpu.get()), FloatData(cpu.get()) + 16, 1.0f);
  ASSERT_ORT(Copy(cpu.get(), dev.get()));
  ASSERT_EQ(g_vd.stream_pause(handle), 0);
  ASSERT_ORT(Copy(dev.get(), back.get(), stream.get()));
  std::thread resume([&] { g_vd.stream_resume(handle); });
  dev.reset();  // blocks until the queued copy ran (the other thread opens the gate)
  resume.join();
  EXPECT_EQ(g_vd.stream_synchronize(handle), 0) << "no asynchronous copy failed";
  EXPECT_EQ(FloatData(back.get())[15], 16.0f);
  EXPECT_EQ(Counters().failed_copies, 0u);
}

// Reading or writing device memory from the host must crash, as on a real accelerator.
using VirtualDeviceDeathTest = VirtualDevice;
TEST_F(VirtualDeviceDeathTest, HostDereferenceOfDevicePointerCrashes) {
  if (!g_vd.guard_enabled()) GTEST_SKIP() << "ORTDLPACK_VD_GUARD=0";
  GTEST_FLAG_SET(death_test_style, "fast");  // fork only: the child inherits the env and the guarded mapping
  Value dev = NewTensor(SharedAllocator(DeviceInfo(0)), {8});
  float* p = FloatData(dev.get());
  EXPECT_DEATH(
      {
        volatile float x = p[0];
        (void)x;
      },
      "");
  EXPECT_DEATH({ *reinterpret_cast<volatile float*>(p + 7) = 1.0f; }, "");
  // The data transfer re-closes pages after a copy: still crashes afterwards.
  Value cpu = NewTensor(CpuAllocator(), {8});
  std::memset(FloatData(cpu.get()), 0, 8 * sizeof(float));
  ASSERT_ORT(Copy(cpu.get(), dev.get()));
  EXPECT_DEATH(
      {
        volatile float x = p[3];
        (void)x;
      },
      "");
}

// Add on float[8] built with the Model Editor API (no .onnx file, no protobuf). `ep_device` null: CPU only.
OrtSession* CreateAddSession(const OrtEpDevice* ep_device, std::string* error) {
  const OrtModelEditorApi* ed = g_api->GetModelEditorApi();
  if (ed == nullptr) {
    *error = "no Model Editor API";
    return nullptr;
  }
  const int64_t dims[] = {8};
  OrtTensorTypeAndShapeInfo* tsi = nullptr;
  OrtTypeInfo* ti = nullptr;
  OrtValueInfo* in[2] = {};
  OrtValueInfo* out[1] = {};
  OrtGraph* graph = nullptr;
  OrtNode* node = nullptr;
  OrtModel* model = nullptr;
  OrtSessionOptions* so = nullptr;
  OrtSession* session = nullptr;
  const char* node_in[] = {"A", "B"};
  const char* node_out[] = {"C"};
  const char* domains[] = {""};
  const int opsets[] = {18};
  auto step = [&](OrtStatus* st) { return error->empty() && (*error = Err(st)).empty(); };
  error->clear();
  // Each step runs only while all previous ones succeeded; ownership moves to ORT on success (see the header).
  if (step(g_api->CreateTensorTypeAndShapeInfo(&tsi)) &&
      step(g_api->SetTensorElementType(tsi, ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT)) &&
      step(g_api->SetDimensions(tsi, dims, 1)) && step(ed->CreateTensorTypeInfo(tsi, &ti)) &&
      step(ed->CreateValueInfo("A", ti, &in[0])) && step(ed->CreateValueInfo("B", ti, &in[1])) &&
      step(ed->CreateValueInfo("C", ti, &out[0])) && step(ed->CreateGraph(&graph)) &&
      step(ed->SetGraphInputs(graph, in, 2)) && step(ed->SetGraphOutputs(graph, out, 1)) &&
      step(ed->CreateNode("Add", "", "add0", node_in, 2, node_out, 1, nullptr, 0, &node)) &&
      step(ed->AddNodeToGraph(graph, node)) && (node = nullptr, true) &&
      step(ed->CreateModel(domains, opsets, 1, &model)) && step(ed->AddGraphToModel(model, graph)) &&
      (graph = nullptr, true) && step(g_api->CreateSessionOptions(&so)) &&
      step(g_api->SetIntraOpNumThreads(so, 1))) {  // no thread pool: safe inside fork()ed death tests
    if (ep_device == nullptr ||
        step(g_api->SessionOptionsAppendExecutionProvider_V2(so, g_env, &ep_device, 1, nullptr, nullptr, 0))) {
      step(ed->CreateSessionFromModel(g_env, model, so, &session));
    }
  }
  for (OrtValueInfo* vi : {in[0], in[1], out[0]}) {
    if (vi != nullptr) g_api->ReleaseValueInfo(vi);
  }
  if (node != nullptr) g_api->ReleaseNode(node);
  if (graph != nullptr) g_api->ReleaseGraph(graph);
  if (model != nullptr) g_api->ReleaseModel(model);
  if (so != nullptr) g_api->ReleaseSessionOptions(so);
  if (ti != nullptr) g_api->ReleaseTypeInfo(ti);
  if (tsi != nullptr) g_api->ReleaseTensorTypeAndShapeInfo(tsi);
  return session;
}

struct SessionDeleter {
  void operator()(OrtSession* s) const { g_api->ReleaseSession(s); }
};
using Session = std::unique_ptr<OrtSession, SessionDeleter>;

// A = 0..7 on virtual device 1, B = 100s on CPU.
void MakeAddInputs(Value* a_dev, Value* b) {
  Value a_cpu = NewTensor(CpuAllocator(), {8});
  *b = NewTensor(CpuAllocator(), {8});
  for (int i = 0; i < 8; ++i) {
    FloatData(a_cpu.get())[i] = static_cast<float>(i);
    FloatData(b->get())[i] = 100.0f;
  }
  *a_dev = NewTensor(SharedAllocator(DeviceInfo(1)), {8});
  EXPECT_ORT(Copy(a_cpu.get(), a_dev->get()));
}

OrtStatus* RunAdd(OrtSession* session, const OrtValue* a, const OrtValue* b, Value* c) {
  const char* in_names[] = {"A", "B"};
  const OrtValue* inputs[] = {a, b};
  const char* out_names[] = {"C"};
  OrtValue* result = nullptr;
  OrtStatus* st = g_api->Run(session, nullptr, in_names, inputs, 2, out_names, 1, &result);
  c->reset(result);
  return st;
}

// The EP claims no node, so a session that selects it runs every node on the CPU EP. Having a non-CPU EP in the
// session makes ORT check feed locations: a feed on the virtual device is copied to CPU through the EP's data
// transfer (exactly one device->host copy of its bytes), and the result is right. A feed on the *other* virtual
// device (not the one the session selected) is copied the same way.
TEST_F(VirtualDevice, SessionWithTheEpCopiesDeviceFeeds) {
  std::string err;
  Session session(CreateAddSession(g_dev[1], &err));
  ASSERT_NE(session, nullptr) << err;
  for (int feed_device : {1, 0}) {
    SCOPED_TRACE(feed_device);
    Value a_cpu = NewTensor(CpuAllocator(), {8});
    Value b = NewTensor(CpuAllocator(), {8});
    for (int i = 0; i < 8; ++i) {
      FloatData(a_cpu.get())[i] = static_cast<float>(i + feed_device);
      FloatData(b.get())[i] = 100.0f;
    }
    Value a_dev = NewTensor(SharedAllocator(DeviceInfo(feed_device)), {8});
    ASSERT_ORT(Copy(a_cpu.get(), a_dev.get()));
    const OrtdlpackVdCounters before = Counters();
    Value c;
    ASSERT_ORT(RunAdd(session.get(), a_dev.get(), b.get(), &c));
    const OrtdlpackVdCounters after = Counters();
    EXPECT_EQ(after.bytes_d2h - before.bytes_d2h, 8 * sizeof(float));
    EXPECT_EQ(after.copies - before.copies, 1u);
    EXPECT_EQ(after.bytes_h2d - before.bytes_h2d, 0u);
    EXPECT_EQ(after.bytes_d2d - before.bytes_d2d, 0u);
    EXPECT_EQ(after.allocs - before.allocs, 0u);  // the CPU copy of the feed is CPU memory
    const OrtMemoryInfo* out_info = nullptr;
    ASSERT_ORT(g_api->GetTensorMemoryInfo(c.get(), &out_info));
    OrtMemoryInfoDeviceType type{};
    g_api->MemoryInfoGetDeviceType(out_info, &type);
    EXPECT_EQ(type, OrtMemoryInfoDeviceType_CPU);  // outputs of plain Run stay where the CPU kernel wrote them
    for (int i = 0; i < 8; ++i) EXPECT_EQ(FloatData(c.get())[i], 100.0f + static_cast<float>(i + feed_device));
  }
}

struct IoBindingDeleter {
  void operator()(OrtIoBinding* b) const { g_api->ReleaseIoBinding(b); }
};
using IoBinding = std::unique_ptr<OrtIoBinding, IoBindingDeleter>;

// Runs Add with IoBinding: A and B bound as given, C bound to `out_info` (BindOutputToDevice). Returns C.
std::string RunAddBound(OrtSession* session, const OrtValue* a, const OrtValue* b, const OrtMemoryInfo* out_info,
                        Value* c) {
  OrtIoBinding* raw = nullptr;
  if (std::string e = Err(g_api->CreateIoBinding(session, &raw)); !e.empty()) return e;
  IoBinding binding(raw);
  std::string e = Err(g_api->BindInput(binding.get(), "A", a));
  if (e.empty()) e = Err(g_api->BindInput(binding.get(), "B", b));
  if (e.empty()) e = Err(g_api->BindOutputToDevice(binding.get(), "C", out_info));
  if (e.empty()) e = Err(g_api->RunWithBinding(session, nullptr, binding.get()));
  if (!e.empty()) return e;
  OrtValue** outs = nullptr;
  size_t n = 0;
  if (e = Err(g_api->GetBoundOutputValues(binding.get(), CpuAllocator(), &outs, &n)); !e.empty()) return e;
  if (n != 1) e = "expected one bound output, got " + std::to_string(n);
  for (size_t i = 0; i < n; ++i) {
    if (i == 0) {
      c->reset(outs[i]);
    } else {
      g_api->ReleaseValue(outs[i]);
    }
  }
  if (outs != nullptr) {
    EXPECT_ORT(g_api->AllocatorFree(CpuAllocator(), outs));
  }
  return e;
}

// An output bound to the virtual device (IoBinding BindOutputToDevice with the device's DEFAULT memory info): ORT
// allocates it with the EP's shared allocator and copies the CPU kernel's result host->device through the EP's data
// transfer. The feed on the device is copied device->host as in the test above.
TEST_F(VirtualDevice, SessionWithTheEpCopiesOutputsBoundToTheDevice) {
  std::string err;
  Session session(CreateAddSession(g_dev[1], &err));
  ASSERT_NE(session, nullptr) << err;
  Value a_dev, b, c;
  MakeAddInputs(&a_dev, &b);
  const OrtdlpackVdCounters before = Counters();
  ASSERT_EQ(RunAddBound(session.get(), a_dev.get(), b.get(), DeviceInfo(1), &c), "");
  const OrtdlpackVdCounters after = Counters();
  EXPECT_EQ(after.bytes_d2h - before.bytes_d2h, 8 * sizeof(float));
  EXPECT_EQ(after.bytes_h2d - before.bytes_h2d, 8 * sizeof(float));
  EXPECT_EQ(after.copies - before.copies, 2u);
  EXPECT_EQ(after.allocs - before.allocs, 1u);  // the device output
  const OrtMemoryInfo* out_info = nullptr;
  ASSERT_ORT(g_api->GetTensorMemoryInfo(c.get(), &out_info));
  EXPECT_EQ(g_api->MemoryInfoGetVendorId(out_info), static_cast<uint32_t>(ORTDLPACK_VD_VENDOR_ID));
  EXPECT_EQ(g_api->MemoryInfoGetDeviceMemType(out_info), OrtDeviceMemoryType_DEFAULT);
  int id = -1;
  ASSERT_ORT(g_api->MemoryInfoGetId(out_info, &id));
  EXPECT_EQ(id, 1);
  EXPECT_EQ(g_vd.is_device_pointer(FloatData(c.get()), 8 * sizeof(float)), 1);
  Value back = NewTensor(CpuAllocator(), {8});
  ASSERT_ORT(Copy(c.get(), back.get()));
  for (int i = 0; i < 8; ++i) EXPECT_EQ(FloatData(back.get())[i], 100.0f + static_cast<float>(i));
}

// ORT 1.29 pinned behaviour: a CPU-only session ignores the device of an output bound with BindOutputToDevice.
// RunWithBinding succeeds and hands back the CPU kernel's CPU tensor: no error, no allocation on the device, no copy
// through the EP's transfer. (Same root cause as the death test below: no copy checks with only the CPU EP.)
TEST_F(VirtualDevice, CpuOnlySessionIgnoresAnOutputBoundToTheDevice) {
  std::string err;
  Session session(CreateAddSession(nullptr, &err));
  ASSERT_NE(session, nullptr) << err;
  Value a_dev, b, c;
  MakeAddInputs(&a_dev, &b);
  Value a_cpu = NewTensor(CpuAllocator(), {8});
  ASSERT_ORT(Copy(a_dev.get(), a_cpu.get()));
  const OrtdlpackVdCounters before = Counters();
  ASSERT_EQ(RunAddBound(session.get(), a_cpu.get(), b.get(), DeviceInfo(1), &c), "");
  const OrtdlpackVdCounters after = Counters();
  EXPECT_EQ(after.bytes_h2d - before.bytes_h2d, 0u);
  EXPECT_EQ(after.allocs - before.allocs, 0u);
  const OrtMemoryInfo* out_info = nullptr;
  ASSERT_ORT(g_api->GetTensorMemoryInfo(c.get(), &out_info));
  OrtMemoryInfoDeviceType type{};
  g_api->MemoryInfoGetDeviceType(out_info, &type);
  EXPECT_EQ(type, OrtMemoryInfoDeviceType_CPU);
  EXPECT_EQ(g_vd.is_device_pointer(FloatData(c.get()), 8 * sizeof(float)), 0);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(FloatData(c.get())[i], 100.0f + static_cast<float>(i));
}

// ORT 1.29 pinned behaviour: unlike Run, IoBinding's BindInput checks the input's device against the session at once
// and, with only the CPU EP (whose session knows no transfer for this device), refuses it with a clear error.
TEST_F(VirtualDevice, CpuOnlySessionIoBindingRefusesADeviceInput) {
  std::string err;
  Session session(CreateAddSession(nullptr, &err));
  ASSERT_NE(session, nullptr) << err;
  Value a_dev, b;
  MakeAddInputs(&a_dev, &b);
  OrtIoBinding* raw = nullptr;
  ASSERT_ORT(g_api->CreateIoBinding(session.get(), &raw));
  IoBinding binding(raw);
  const uint64_t copies_before = Counters().copies;
  const std::string e = Err(g_api->BindInput(binding.get(), "A", a_dev.get()));
  EXPECT_NE(e.find("no data transfer registered"), std::string::npos) << e;
  EXPECT_EQ(Counters().copies, copies_before);
}

// What works: copy a device input to CPU with CopyTensors (the EP's transfer), then run the CPU session.
TEST_F(VirtualDevice, CpuSessionRunsOnDeviceInputCopiedToCpuFirst) {
  std::string err;
  Session session(CreateAddSession(nullptr, &err));
  ASSERT_NE(session, nullptr) << err;
  Value a_dev, b, c;
  MakeAddInputs(&a_dev, &b);
  const uint64_t d2h_before = Counters().bytes_d2h;
  Value a_cpu = NewTensor(CpuAllocator(), {8});
  ASSERT_ORT(Copy(a_dev.get(), a_cpu.get()));
  ASSERT_ORT(RunAdd(session.get(), a_cpu.get(), b.get(), &c));
  EXPECT_EQ(Counters().bytes_d2h - d2h_before, 8 * sizeof(float));
  for (int i = 0; i < 8; ++i) EXPECT_EQ(FloatData(c.get())[i], 100.0f + static_cast<float>(i));
}

// ORT 1.29 pinned behaviour: a CPU-only session does NOT copy a feed that lives on another device (it skips device
// copy checks when the CPU EP is the only EP) and hands the device pointer straight to the CPU kernel. The guard
// turns that into a crash instead of silently reading device memory; no copy goes through the EP's transfer.
using VirtualDeviceSessionDeathTest = VirtualDevice;
TEST_F(VirtualDeviceSessionDeathTest, CpuOnlySessionReadsADeviceFeedInPlace) {
  if (!g_vd.guard_enabled()) GTEST_SKIP() << "ORTDLPACK_VD_GUARD=0";
  GTEST_FLAG_SET(death_test_style, "fast");
  std::string err;
  Session session(CreateAddSession(nullptr, &err));
  ASSERT_NE(session, nullptr) << err;
  Value a_dev, b;
  MakeAddInputs(&a_dev, &b);
  EXPECT_DEATH(
      {
        Value c;
        Err(RunAdd(session.get(), a_dev.get(), b.get(), &c));
      },
      "");
}

}  // namespace
