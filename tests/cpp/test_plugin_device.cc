// The core on a plugin EP's device: allocation through the env's shared allocator, copies through its data
// transfer, DLPack export/import of memory the host cannot touch (the virtual device keeps it PROT_NONE).
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "ortdlpack/ep.h"
#include "support.h"
#include "virtual_device_env.h"

namespace ortdlpack {
namespace {

using test::host_iota;

class PluginDevice : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { vd = test::VirtualDeviceEnv::load("ortdlpack_vd"); }
  static void TearDownTestSuite() { vd.unload(); }
  void SetUp() override {
    vd.reset_counters();
    baseline = vd.counters();
  }
  static OrtdlpackVdCounters counters() { return vd.counters(); }
  static const OrtMemoryInfo* device_memory(size_t i) { return vd.memory(i); }

  static inline test::VirtualDeviceEnv vd;
  static inline const std::vector<const OrtEpDevice*>& devices = vd.devices;
  OrtdlpackVdCounters baseline{};
};

TEST_F(PluginDevice, ListsTwoDevicesWithTheirMemory) {
  ASSERT_EQ(devices.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(ort().MemoryInfoGetVendorId(device_memory(i)), static_cast<uint32_t>(ORTDLPACK_VD_VENDOR_ID));
    EXPECT_NE(ort().EpDevice_MemoryInfo(devices[i], OrtDeviceMemoryType_HOST_ACCESSIBLE), nullptr);
  }
}

// The bug report's lines (show_config): every EP device of the env, the plugin's memory with the DLPack device it is
// exported as and its streams, the CPU EP on plain host memory.
TEST_F(PluginDevice, DescribesEveryEpDeviceOfTheEnv) {
  const std::vector<std::string> lines = describe_ep_devices();
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines[0].rfind("EP devices of the environment: ", 0), 0u) << lines[0];
  std::string all;
  for (const std::string& line : lines) all += line + "\n";
  EXPECT_NE(all.find("  CPUExecutionProvider ("), std::string::npos) << all;
  EXPECT_NE(all.find("    memory: host memory (DLPack cpu)"), std::string::npos) << all;
  EXPECT_NE(all.find("    default memory: "), std::string::npos) << all;
  EXPECT_NE(all.find(" -> DLPack ext_dev:1\n"), std::string::npos) << all;
  EXPECT_NE(all.find("    streams ortdlpack can order: yes"), std::string::npos) << all;
}

TEST_F(PluginDevice, AllocateCopyInAndOutWithExactCounters) {
  Tensor host = host_iota(256);
  {
    Tensor dev = allocate(ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, {256}, devices[0]);
    EXPECT_TRUE(vd.is_device_pointer(dev.data(), 1024));
    copy(host, dev);
    Tensor other = to(dev, device_memory(1));  // device 0 -> device 1
    Tensor back = to(other, DLDevice{kDLCPU, 0});
    EXPECT_EQ(std::memcmp(back.data(), host.data(), 1024), 0);
    const OrtdlpackVdCounters c = counters();
    EXPECT_EQ(c.allocs, 2u);
    EXPECT_EQ(c.copies, 3u);
    EXPECT_EQ(c.bytes_h2d, 1024u);
    EXPECT_EQ(c.bytes_d2d, 1024u);
    EXPECT_EQ(c.bytes_d2h, 1024u);
  }
  const OrtdlpackVdCounters c = counters();
  EXPECT_EQ(c.frees, 2u);
  EXPECT_EQ(c.live_allocs, baseline.live_allocs);
}

TEST_F(PluginDevice, AllocateByDlpackDeviceAndByMemoryInfo) {
  Tensor a = allocate(ONNX_TENSOR_ELEMENT_DATA_TYPE_INT8, {3, 5}, device_memory(1));
  const DLDevice d = a.device();  // the EP advertises kDLExtDev through its metadata
  EXPECT_EQ(d.device_type, kDLExtDev);
  EXPECT_EQ(d.device_id, 1);
  Tensor b = allocate(ONNX_TENSOR_ELEMENT_DATA_TYPE_INT8, {3, 5}, DLDevice{kDLExtDev, 1});
  EXPECT_TRUE(vd.is_device_pointer(b.data(), 15));
  EXPECT_EQ(counters().allocs, 2u);
}

TEST_F(PluginDevice, ExportAndImportDeviceMemoryWithoutTouchingIt) {
  Tensor dev = to(host_iota(16), device_memory(0));
  DLManagedTensorVersioned* out = to_dlpack_versioned(dev);
  EXPECT_EQ(out->dl_tensor.device.device_type, kDLExtDev);
  EXPECT_EQ(out->dl_tensor.data, dev.data());
  Imported back = from_dlpack(out);
  EXPECT_FALSE(back.copied);
  EXPECT_EQ(back.tensor.data(), dev.data());
  int diff = 1;
  check(ort().CompareMemoryInfo(back.tensor.memory_info(), device_memory(0), &diff));
  EXPECT_EQ(diff, 0);
  Tensor host = to(back.tensor, DLDevice{kDLCPU, 0});
  EXPECT_EQ(static_cast<float*>(host.data())[15], 15.25f);
  EXPECT_EQ(counters().copies, 2u) << "no hidden copies";
}

TEST_F(PluginDevice, CopyAlwaysOnDeviceGoesDeviceToDevice) {
  Tensor dev = to(host_iota(8), device_memory(0));
  DLManagedTensorVersioned* out = to_dlpack_versioned(dev);
  Imported copied = from_dlpack(out, ImportOptions{CopyMode::kAlways});
  EXPECT_TRUE(copied.copied);
  EXPECT_NE(copied.tensor.data(), dev.data());
  EXPECT_TRUE(vd.is_device_pointer(copied.tensor.data(), 32));
  EXPECT_EQ(counters().bytes_d2d, 32u);
}

TEST_F(PluginDevice, StridedDeviceTensorCannotBeCopiedOnTheHost) {
  Tensor dev = allocate(ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, {4, 2}, device_memory(0));
  DLManagedTensorVersioned* out = to_dlpack_versioned(dev);
  std::swap(out->dl_tensor.strides[0], out->dl_tensor.strides[1]);  // a transposed view
  std::swap(out->dl_tensor.shape[0], out->dl_tensor.shape[1]);
  try {
    from_dlpack(out, ImportOptions{CopyMode::kIfNeeded});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUnsupported);
    EXPECT_NE(std::string(e.what()).find("kDLExtDev:0"), std::string::npos) << e.what();
  }
  out->deleter(out);
}

TEST_F(PluginDevice, BatchOf100TensorsIsOneTransferCall) {
  std::vector<Tensor> host, dev;
  for (int i = 0; i < 100; ++i) {
    host.push_back(host_iota(4));
    dev.push_back(allocate(ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, {4}, device_memory(0)));
  }
  vd.reset_counters();
  copy(host, dev);
  OrtdlpackVdCounters c = counters();
  EXPECT_EQ(c.copy_calls, 1u);
  EXPECT_EQ(c.copies, 100u);
  EXPECT_EQ(c.bytes_h2d, 1600u);
  // Mixed destinations split into one call per (source memory, destination memory) pair.
  std::vector<Tensor> mixed;
  for (int i = 0; i < 100; ++i)
    mixed.push_back(allocate(ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, {4}, device_memory(i % 2)));
  vd.reset_counters();
  copy(dev, mixed);
  c = counters();
  EXPECT_EQ(c.copy_calls, 2u);
  EXPECT_EQ(c.bytes_d2d, 1600u);
}

TEST_F(PluginDevice, HostAccessibleMemoryIsExportedAsCpu) {
  Tensor pinned = allocate(ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, {4}, devices[0], OrtDeviceMemoryType_HOST_ACCESSIBLE);
  EXPECT_EQ(pinned.device().device_type, kDLCPU);
  static_cast<float*>(pinned.data())[0] = 1.0f;  // really host memory
  EXPECT_EQ(counters().host_allocs, 1u);
}

TEST_F(PluginDevice, InjectedAllocationFailureIsAnErrorAndLeaksNothing) {
  vd.fail_alloc_at(1);
  try {
    allocate(ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, {64}, devices[0]);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kRuntime);
    EXPECT_NE(std::string(e.what()).find("VirtualDevice:0"), std::string::npos) << e.what();
  }
  EXPECT_EQ(counters().live_allocs, baseline.live_allocs);
}

TEST_F(PluginDevice, InjectedCopyFailureIsAnErrorAndLeaksNothing) {
  Tensor host = host_iota(8);
  vd.fail_copy_at(1);
  try {
    to(host, device_memory(0));
    FAIL();
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("Cpu:0"), std::string::npos) << message;
    EXPECT_NE(message.find("VirtualDevice:0"), std::string::npos) << message;
  }
  EXPECT_EQ(counters().live_allocs, baseline.live_allocs) << "the half-made destination was released";
  EXPECT_EQ(counters().failed_copies, 1u);
}

TEST_F(PluginDevice, CopiesOnAnEpSyncStream) {
  // A stream-aware EP gets the stream with the copy; the virtual device's stream is in-order and completes copies
  // before CopyTensors returns (plugins/virtual_device/README.md), so the bytes are readable right after.
  OrtSyncStream* stream = nullptr;
  check(ort().CreateSyncStreamForEpDevice(devices[0], nullptr, &stream));
  ASSERT_NE(ort().SyncStream_GetHandle(stream), nullptr);
  {
    Tensor host = host_iota(64);
    Tensor dev = to(host, device_memory(0), stream);
    Tensor back = to(dev, DLDevice{kDLCPU, 0}, stream);
    EXPECT_EQ(std::memcmp(back.data(), host.data(), 256), 0);
    EXPECT_EQ(counters().bytes_h2d, 256u);
    EXPECT_EQ(counters().bytes_d2h, 256u);
  }
  ort().ReleaseSyncStream(stream);
}

TEST_F(PluginDevice, CpuSessionRunsOnAFeedInDeviceMemory) {
  // ORT itself would hand the device pointer to the CPU kernel; ortdlpack::Session stages it through the transfer.
  OrtSession* ort_session = test::make_add_session(ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, {8});
  {
    Session session(ort_session);
    Tensor x = to(host_iota(8), device_memory(0));
    vd.reset_counters();
    std::vector<Tensor> y = session.run({{"X", x}});
    ASSERT_EQ(y.size(), 1u);
    EXPECT_EQ(y[0].device().device_type, kDLCPU);
    for (int i = 0; i < 8; ++i) EXPECT_EQ(static_cast<float*>(y[0].data())[i], 2 * (static_cast<float>(i) + 0.25f));
    EXPECT_EQ(counters().bytes_d2h, 32u) << "one staging copy, nothing else";
  }
  ort().ReleaseSession(ort_session);
}

}  // namespace
}  // namespace ortdlpack
