// Owned<T> (handle.h): the one RAII owner of ORT handles.
#include "ortdlpack/handle.h"

#include <gtest/gtest.h>

#include "ort.h"
#include "ortdlpack/device.h"
#include "support.h"

namespace ortdlpack {
namespace {

TEST(Handle, OwnedReleasesItsHandle) {
  OrtMemoryInfo* raw = nullptr;
  ortdlpack::check(ort().CreateCpuMemoryInfo(OrtDeviceAllocator, OrtMemTypeDefault, &raw));
  Owned<OrtMemoryInfo> info(raw);  // released at scope exit (ASan/valgrind runs see a leak otherwise)
  EXPECT_TRUE(detail::same_memory(info.get(), memory_info(DLDevice{kDLCPU, 0})));
}

}  // namespace
}  // namespace ortdlpack
