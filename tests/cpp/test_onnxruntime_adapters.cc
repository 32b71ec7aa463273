// The extension's adapter to onnxruntime's Python devices (python/src/onnxruntime_devices.h): its device names, the
// tensors its OrtValue reads, its EP devices. Plain C++: this test compiles it in.
#include "onnxruntime_devices.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "support.h"
#include "virtual_device_env.h"

namespace ortdlpack::py {
namespace {

using test::host_iota;
using test::kind_of;
using test::Producer;

constexpr ONNXTensorElementDataType kF32 = ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT;

struct SessionDeleter {
  void operator()(OrtSession* s) const noexcept { ort().ReleaseSession(s); }
};
using SessionPtr = std::unique_ptr<OrtSession, SessionDeleter>;

class OnnxruntimeAdaptersTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { vd = test::VirtualDeviceEnv::load("ortdlpack_vd_adapters"); }
  static void TearDownTestSuite() { vd.unload(); }
  void SetUp() override { vd.reset_counters(); }

  static inline test::VirtualDeviceEnv vd;
  SessionPtr add_{test::make_add_session(kF32, {8})};  // Y = X + X on float[8]
};

TEST(OnnxruntimeAdapters, OnnxruntimeNamesDevicesItsOwnWay) {
  EXPECT_STREQ(onnxruntime_device_name(kDLROCM), "cuda");
  EXPECT_EQ(onnxruntime_device_name(kDLExtDev), nullptr);
}

TEST(OnnxruntimeAdapters, AnEpDeviceTheEnvDoesNotHaveIsAnInvalidArgument) {
  EXPECT_EQ(kind_of([] { find_ep_device("NoSuchEP", 0, 0, 0); }), ErrorKind::kInvalidArgument);
}

TEST(OnnxruntimeAdapters, PlainTensorsAreWhatALegacyOnlyConsumerReads) {
  auto p = Producer::make(DLDataType{kDLFloat, 32, 1}, {3, 2}, 8);
  const DLTensor& t = p->versioned.dl_tensor;
  EXPECT_TRUE(is_plain(t));
  EXPECT_FALSE(is_plain(t, DLPACK_FLAG_BITMASK_READ_ONLY));
  p->versioned.dl_tensor.byte_offset = 4;  // a consumer that ignores byte_offset would read the wrong elements
  EXPECT_FALSE(is_plain(t));
  p->versioned.dl_tensor.byte_offset = 0;
  std::swap(p->strides[0], p->strides[1]);  // transposed
  EXPECT_FALSE(is_plain(t));
  std::swap(p->strides[0], p->strides[1]);
  p->versioned.dl_tensor.device = DLDevice{kDLExtDev, 0};  // memory onnxruntime's Python OrtValue cannot wrap
  EXPECT_FALSE(is_plain(t));
  p->versioned.dl_tensor.device = DLDevice{kDLCPU, 0};
  p->versioned.dl_tensor.dtype = DLDataType{kDLInt, 4, 1};  // packed sub-byte
  EXPECT_FALSE(is_plain(t));
  p->versioned.dl_tensor.ndim = -1;  // malformed: not plain, and no exception
  EXPECT_FALSE(is_plain(t));
}

}  // namespace
}  // namespace ortdlpack::py
