// Lazy registration of EP libraries bundled with ORT (src/ep_library.cc). The CPU-only ORT of CI ships none, so
// these tests cover the "not there" paths; tests/gpu/ covers onnxruntime-gpu.
#include <gtest/gtest.h>

#include <string>

#include "ortdlpack/ortdlpack.h"

namespace ortdlpack {
namespace {

TEST(EpLibrary, UnknownVendorHasNoBundledLibrary) {
  EXPECT_FALSE(register_bundled_ep_library(0xBEEF));
  EXPECT_EQ(bundled_ep_hint(0xBEEF), "");
}

TEST(EpLibrary, MissingCudaLibraryIsTriedOnceAndTheErrorSaysWhatToInstall) {
  const OrtEpDevice* const* devs = nullptr;
  size_t n = 0;
  check(ort().GetEpDevices(env(), &devs, &n));
  for (size_t i = 0; i < n; ++i) {
    const OrtMemoryInfo* m = ort().EpDevice_MemoryInfo(devs[i], OrtDeviceMemoryType_DEFAULT);
    if (m != nullptr && ort().MemoryInfoGetVendorId(m) == kVendorNvidia) GTEST_SKIP() << "this ORT has a CUDA EP device";
  }
  EXPECT_NE(bundled_ep_hint(kVendorNvidia).find("onnxruntime-gpu"), std::string::npos);
  try {
    allocate(ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, {4}, DLDevice{kDLCUDA, 0});
    FAIL() << "allocated CUDA memory without a CUDA EP";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUnsupported);
    EXPECT_NE(std::string(e.what()).find("install onnxruntime-gpu"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(register_bundled_ep_library(kVendorNvidia)) << "tried once per process";
  EXPECT_EQ(device_stream(memory_info(DLDevice{kDLCUDA, 0})), nullptr);
}

}  // namespace
}  // namespace ortdlpack
