#include "ortdlpack/device.h"

#include <gtest/gtest.h>

#include <memory>

#include "device_names.h"
#include "ep_table.h"
#include "ortdlpack/api.h"
#include "ortdlpack/error.h"
#include "support.h"

namespace ortdlpack {
namespace {

struct InfoDeleter {
  void operator()(OrtMemoryInfo* p) const { ort().ReleaseMemoryInfo(p); }
};
using detail::kVendorAmd;
using detail::kVendorApple;
using detail::kVendorIntel;
using detail::kVendorNvidia;
using InfoPtr = std::unique_ptr<OrtMemoryInfo, InfoDeleter>;

InfoPtr make_v2(const char* name, OrtMemoryInfoDeviceType type, uint32_t vendor, int id, OrtDeviceMemoryType mem) {
  OrtMemoryInfo* info = nullptr;
  check(ort().CreateMemoryInfo_V2(name, type, vendor, id, mem, 0, OrtDeviceAllocator, &info));
  return InfoPtr(info);
}

InfoPtr make_legacy(const char* name, OrtMemType mem_type, int id = 0) {
  OrtMemoryInfo* info = nullptr;
  check(ort().CreateMemoryInfo(name, OrtDeviceAllocator, id, mem_type, &info));
  return InfoPtr(info);
}

void expect_device(const OrtMemoryInfo* info, DLDeviceType type, int id) {
  const DLDevice d = to_dlpack_device(info);
  EXPECT_EQ(d.device_type, type) << describe_memory(info);
  EXPECT_EQ(d.device_id, id) << describe_memory(info);
}

TEST(Device, CpuForReal) {
  OrtMemoryInfo* cpu = nullptr;
  check(ort().CreateCpuMemoryInfo(OrtArenaAllocator, OrtMemTypeDefault, &cpu));
  expect_device(cpu, kDLCPU, 0);
  ort().ReleaseMemoryInfo(cpu);
  const OrtMemoryInfo* back = memory_info(DLDevice{kDLCPU, 0});
  expect_device(back, kDLCPU, 0);
  EXPECT_TRUE(host_accessible(back));
  EXPECT_EQ(back, memory_info(DLDevice{kDLCPU, 0})) << "memory infos are cached";
}

TEST(Device, VendorMemoryMapsToLowestLevelDevice) {
  expect_device(make_v2("Cuda", OrtMemoryInfoDeviceType_GPU, kVendorNvidia, 1, OrtDeviceMemoryType_DEFAULT).get(),
                kDLCUDA, 1);
  expect_device(
      make_v2("CudaPinned", OrtMemoryInfoDeviceType_GPU, kVendorNvidia, 0, OrtDeviceMemoryType_HOST_ACCESSIBLE).get(),
      kDLCUDAHost, 0);
  // A plugin EP's CUDA memory under another name is still CUDA: the vendor decides, not the name.
  expect_device(
      make_v2("SomePluginCuda", OrtMemoryInfoDeviceType_GPU, kVendorNvidia, 2, OrtDeviceMemoryType_DEFAULT).get(),
      kDLCUDA, 2);
  expect_device(make_v2("Hip", OrtMemoryInfoDeviceType_GPU, kVendorAmd, 3, OrtDeviceMemoryType_DEFAULT).get(), kDLROCM,
                3);
  expect_device(
      make_v2("HipPinned", OrtMemoryInfoDeviceType_GPU, kVendorAmd, 0, OrtDeviceMemoryType_HOST_ACCESSIBLE).get(),
      kDLROCMHost, 0);
  expect_device(make_v2("OneAPI", OrtMemoryInfoDeviceType_GPU, kVendorIntel, 0, OrtDeviceMemoryType_DEFAULT).get(),
                kDLOneAPI, 0);
  expect_device(make_v2("Metal", OrtMemoryInfoDeviceType_GPU, kVendorApple, 0, OrtDeviceMemoryType_DEFAULT).get(),
                kDLMetal, 0);
}

TEST(Device, LegacyNamesMapWithoutVendorIds) {
  expect_device(make_legacy("Cuda", OrtMemTypeDefault, 1).get(), kDLCUDA, 1);
  expect_device(make_legacy("CudaPinned", OrtMemTypeCPUOutput).get(), kDLCUDAHost, 0);
  expect_device(make_legacy("Hip", OrtMemTypeDefault).get(), kDLROCM, 0);
  expect_device(make_legacy("HipPinned", OrtMemTypeCPUOutput).get(), kDLROCMHost, 0);
  expect_device(make_legacy("Cpu", OrtMemTypeDefault).get(), kDLCPU, 0);
}

TEST(Device, HostAccessibleMemoryOfOtherVendorsIsHostMemory) {
  auto info = make_v2("NpuHost", OrtMemoryInfoDeviceType_NPU, 0x1234, 0, OrtDeviceMemoryType_HOST_ACCESSIBLE);
  expect_device(info.get(), kDLCPU, 0);
  EXPECT_TRUE(host_accessible(info.get()));
}

TEST(Device, DlpackDevicesMapBackToOrtMemory) {
  for (DLDeviceType type : {kDLCUDA, kDLCUDAHost, kDLROCM, kDLROCMHost, kDLOneAPI, kDLMetal}) {
    const DLDevice device{type, type == kDLCUDAHost || type == kDLROCMHost ? 0 : 1};
    const OrtMemoryInfo* info = memory_info(device);
    const DLDevice back = to_dlpack_device(info);
    EXPECT_EQ(back.device_type, device.device_type) << describe_device(device);
    EXPECT_EQ(back.device_id, device.device_id) << describe_device(device);
  }
  const OrtMemoryInfo* cuda = memory_info(DLDevice{kDLCUDA, 1});
  EXPECT_EQ(ort().MemoryInfoGetVendorId(cuda), kVendorNvidia);
  EXPECT_FALSE(host_accessible(cuda));
}

TEST(Device, CudaManagedMemoryIsHeldAsCudaMemory) {
  const OrtMemoryInfo* managed = memory_info(DLDevice{kDLCUDAManaged, 1});
  const DLDevice back = to_dlpack_device(managed);
  EXPECT_EQ(back.device_type, kDLCUDA);
  EXPECT_EQ(back.device_id, 1);
  EXPECT_FALSE(host_accessible(managed));
}

TEST(Device, UnknownMemoryIsAnErrorNamingTheDevice) {
  auto info = make_v2("MysteryNpu", OrtMemoryInfoDeviceType_NPU, 0xBEEF, 3, OrtDeviceMemoryType_DEFAULT);
  try {
    to_dlpack_device(info.get());
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUnsupported);
    const std::string message = e.what();
    EXPECT_NE(message.find("MysteryNpu:3"), std::string::npos) << message;
    EXPECT_NE(message.find("0xBEEF"), std::string::npos) << message;
    EXPECT_NE(message.find("NPU"), std::string::npos) << message;
  }
  // Never mislabelled as CUDA, whatever the device type.
  auto gpu = make_v2("MysteryGpu", OrtMemoryInfoDeviceType_GPU, 0xBEEF, 0, OrtDeviceMemoryType_DEFAULT);
  EXPECT_THROW(to_dlpack_device(gpu.get()), Error);
  try {
    memory_info(DLDevice{kDLExtDev, 0});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUnsupported);
    EXPECT_NE(std::string(e.what()).find("kDLExtDev:0"), std::string::npos) << e.what();
  }
}

TEST(Device, RegistrationMapsAPrivateDeviceBothWays) {
  const DeviceMapping mapping{"TestNpu", OrtMemoryInfoDeviceType_NPU, 0x7E57, OrtDeviceMemoryType_DEFAULT, kDLExtDev};
  register_device(mapping);
  register_device(mapping);  // the same row again is a no-op
  auto info = make_v2("TestNpu", OrtMemoryInfoDeviceType_NPU, 0x7E57, 2, OrtDeviceMemoryType_DEFAULT);
  expect_device(info.get(), kDLExtDev, 2);
  const OrtMemoryInfo* back = memory_info(DLDevice{kDLExtDev, 2});
  EXPECT_EQ(ort().MemoryInfoGetVendorId(back), 0x7E57u);
  int diff = 1;
  check(ort().CompareMemoryInfo(back, info.get(), &diff));
  EXPECT_EQ(diff, 0);

  // Conflicts: the same memory to another type, another memory to kDLExtDev, reserved and built-in rows.
  auto expect_invalid = [](const DeviceMapping& m) {
    try {
      register_device(m);
      FAIL() << m.name;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument) << e.what();
    }
  };
  expect_invalid({"TestNpu", OrtMemoryInfoDeviceType_NPU, 0x7E57, OrtDeviceMemoryType_DEFAULT, kDLHexagon});
  expect_invalid({"OtherNpu", OrtMemoryInfoDeviceType_NPU, 0x0123, OrtDeviceMemoryType_DEFAULT, kDLExtDev});
  expect_invalid({"FakeCuda", OrtMemoryInfoDeviceType_NPU, 0x0123, OrtDeviceMemoryType_DEFAULT, kDLCUDA});
  expect_invalid({"Cuda", OrtMemoryInfoDeviceType_GPU, kVendorNvidia, OrtDeviceMemoryType_DEFAULT, kDLExtDev});
  expect_invalid({"Cpu", OrtMemoryInfoDeviceType_CPU, 0, OrtDeviceMemoryType_DEFAULT, kDLExtDev});
  expect_invalid(
      {"Bad", OrtMemoryInfoDeviceType_NPU, 0x0123, OrtDeviceMemoryType_DEFAULT, static_cast<DLDeviceType>(99)});

  EXPECT_TRUE(unregister_device(OrtMemoryInfoDeviceType_NPU, 0x7E57, OrtDeviceMemoryType_DEFAULT));
  EXPECT_FALSE(unregister_device(OrtMemoryInfoDeviceType_NPU, 0x7E57, OrtDeviceMemoryType_DEFAULT));
  EXPECT_THROW(to_dlpack_device(info.get()), Error);
}

TEST(Device, DescribeNamesEverything) {
  auto info = make_v2("Cuda", OrtMemoryInfoDeviceType_GPU, kVendorNvidia, 1, OrtDeviceMemoryType_DEFAULT);
  EXPECT_EQ(describe_memory(info.get()), "Cuda:1 (GPU, vendor 0x10DE, DEFAULT memory)");
  EXPECT_EQ(describe_device(DLDevice{kDLCUDAHost, 0}), "kDLCUDAHost:0");
  EXPECT_EQ(describe_device(DLDevice{static_cast<DLDeviceType>(77), 2}), "device type 77:2");
}

TEST(DeviceNames, OneTableBothWays) {
  EXPECT_EQ(name_of(dl_device_from_name("cuda:1")), "cuda:1");
  EXPECT_EQ(name_of(dl_device_from_name("cpu")), "cpu");
  EXPECT_EQ(dl_device_from_name("ext_dev").device_type, kDLExtDev);
  EXPECT_STREQ(device_type_name(kDLROCMHost), "rocm_host");
  for (const char* bad : {"warp:0", "cuda:x", "cuda:-1", "cuda:", "cuda:99999999999"}) {
    EXPECT_EQ(test::kind_of([&] { dl_device_from_name(bad); }), ErrorKind::kInvalidArgument) << bad;
  }
}

TEST(Device, OrtDeviceAndMemoryTypesByName) {
  EXPECT_EQ(ort_device_type_from_name("npu"), OrtMemoryInfoDeviceType_NPU);
  EXPECT_EQ(memory_type_from_name("host_accessible"), OrtDeviceMemoryType_HOST_ACCESSIBLE);
  EXPECT_EQ(test::kind_of([] { ort_device_type_from_name("tpu"); }), ErrorKind::kInvalidArgument);
  EXPECT_EQ(test::kind_of([] { memory_type_from_name("pinned"); }), ErrorKind::kInvalidArgument);
}

TEST(Device, OrtDeviceAndMemoryTypeValuesAreCheckedAsNamesAre) {
  EXPECT_EQ(ort_device_type_from_value(3), OrtMemoryInfoDeviceType_NPU);
  EXPECT_EQ(memory_type_from_value(5), OrtDeviceMemoryType_HOST_ACCESSIBLE);
  EXPECT_EQ(test::kind_of([] { ort_device_type_from_value(99); }), ErrorKind::kInvalidArgument);
  EXPECT_EQ(test::kind_of([] { memory_type_from_value(1); }), ErrorKind::kInvalidArgument);
}

}  // namespace
}  // namespace ortdlpack
