// The EP table (ep_table.h): every name users write, and which EP owns which memory.
#include "ep_table.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "ortdlpack/device.h"
#include "ortdlpack/ep.h"
#include "support.h"

namespace ortdlpack::detail {
namespace {

MemoryFields memory(const char* name, OrtMemoryInfoDeviceType type, uint32_t vendor, OrtDeviceMemoryType mem) {
  MemoryFields m;
  m.name = name;
  m.device_type = type;
  m.vendor_id = vendor;
  m.memory_type = mem;
  return m;
}

constexpr OrtMemoryInfoDeviceType kGpu = OrtMemoryInfoDeviceType_GPU;
constexpr OrtDeviceMemoryType kDefault = OrtDeviceMemoryType_DEFAULT;
constexpr OrtDeviceMemoryType kHost = OrtDeviceMemoryType_HOST_ACCESSIBLE;

TEST(EpTable, EveryNameUsersWriteFindsItsRow) {
  const std::pair<const char*, const char*> names[] = {
      {"cpu", "CPUExecutionProvider"},
      {"cuda", "CUDAExecutionProvider"},
      {"CUDA", "CUDAExecutionProvider"},
      {"trt", "TensorrtExecutionProvider"},
      {"tensorrt", "TensorrtExecutionProvider"},
      {"tensorrt_rtx", "NvTensorRTRTXExecutionProvider"},
      {"nv_tensorrt_rtx", "NvTensorRTRTXExecutionProvider"},
      {"migraphx", "MIGraphXExecutionProvider"},
      {"openvino", "OpenVINOExecutionProvider"},
      {"mlx", "MLXExecutionProvider"},
      {"webgpu", "WebGpuExecutionProvider"},
      {"WebGpuExecutionProvider", "WebGpuExecutionProvider"},
  };
  for (const auto& [alias, ep] : names) {
    ASSERT_NE(find_ep(alias), nullptr) << alias;
    EXPECT_STREQ(find_ep(alias)->ep_name, ep) << alias;
    EXPECT_EQ(canonical_ep_name(alias), ep) << alias;
  }
  EXPECT_EQ(find_ep("SomePluginEP"), nullptr);
  EXPECT_EQ(canonical_ep_name("SomePluginEP"), "SomePluginEP");
  EXPECT_EQ(find_ep(""), nullptr);
}

TEST(EpTable, NamesAreUniqueAndEveryRowSaysWhatToInstall) {
  std::set<std::string> seen;
  for (const EpRow& ep : ep_table()) {
    EXPECT_TRUE(seen.insert(ep.ep_name).second) << ep.ep_name;
    for (const char* alias : ep.aliases) {
      if (alias != nullptr) {
        EXPECT_TRUE(seen.insert(alias).second) << alias;
      }
    }
    ASSERT_NE(ep.aliases[0], nullptr) << ep.ep_name << " has no short name";
    const bool built_in = ep.ort_library == nullptr && ep.packages[0] == nullptr;
    EXPECT_EQ(built_in, std::string(ep.install).empty()) << ep.ep_name;
  }
}

TEST(EpTable, VendorMemoryIsMatchedByVendorWhateverItsName) {
  const MemoryRow* row = nullptr;
  const EpRow* ep = owner_of(memory("SomePluginCuda", kGpu, kVendorNvidia, kDefault), &row);
  ASSERT_NE(ep, nullptr);
  EXPECT_STREQ(ep->ep_name, "CUDAExecutionProvider");  // the first row owning NVIDIA memory
  EXPECT_EQ(row->dl_type, kDLCUDA);
  ASSERT_NE(owner_of(memory("x", OrtMemoryInfoDeviceType_CPU, kVendorNvidia, kHost), &row), nullptr);
  EXPECT_EQ(row->dl_type, kDLCUDAHost);  // pinned memory may be typed CPU
  EXPECT_EQ(owner_of(memory("Hip", kGpu, kVendorAmd, kDefault), &row)->vendor_id, kVendorAmd);
  EXPECT_EQ(row->dl_type, kDLROCM);
  // ORT builds without vendor ids: the name says it.
  ASSERT_NE(owner_of(memory("CudaPinned", kGpu, 0, kHost), &row), nullptr);
  EXPECT_EQ(row->dl_type, kDLCUDAHost);
  // Memory of a vendor no row has (the virtual device), and vendor-0 memory of an unknown name: nobody's.
  EXPECT_EQ(owner_of(memory("VirtualDevice", OrtMemoryInfoDeviceType_NPU, 0xD1A9, kDefault)), nullptr);
  EXPECT_EQ(owner_of(memory("Mystery", kGpu, 0, kDefault)), nullptr);
}

TEST(EpTable, WebGpuBuffersAreWebGpusWhateverVendorOrtReports) {
  const MemoryRow* row = nullptr;
  for (uint32_t vendor : {0u, kVendorNvidia}) {
    const EpRow* ep = owner_of(memory("WebGPU_Buf", kGpu, vendor, kDefault), &row);
    ASSERT_NE(ep, nullptr) << vendor;
    EXPECT_STREQ(ep->ep_name, "WebGpuExecutionProvider") << "a buffer handle must never be labelled CUDA";
    EXPECT_EQ(row->dl_type, kDLWebGPU);
  }
}

TEST(EpTable, EveryDlpackTypeOfARowMapsBackToIt) {
  for (const EpRow& ep : ep_table()) {
    for (const MemoryRow& row : ep.memory) {
      if (row.name == nullptr) break;
      const MemoryRow* back = nullptr;
      const EpRow* owner = owner_of(row.dl_type, &back);
      ASSERT_NE(owner, nullptr);
      // The reverse lookup gives the first owner; its row matches this memory too (e.g. CUDA for TensorRT RTX).
      EXPECT_TRUE(owns(*owner, memory(back->name, back->device_type, owner->vendor_id, back->memory_type)));
      EXPECT_EQ(back->dl_type, row.dl_type);
    }
  }
}

}  // namespace
}  // namespace ortdlpack::detail
