// The one placement decision (placement.h) on the host; plugin-device placement is exercised from Python
// (tests/python/test_devices.py) with the virtual device's counters.
#include "ortdlpack/placement.h"

#include <gtest/gtest.h>

#include <cstring>
#include <functional>

#include "ortdlpack/device.h"
#include "ortdlpack/dtype.h"
#include "ortdlpack/error.h"
#include "ortdlpack/export.h"
#include "ortdlpack/handle.h"
#include "ortdlpack/transfer.h"
#include "support.h"

namespace ortdlpack {
namespace {

Tensor host_tensor() {
  Tensor t = allocate(ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32, {2, 3}, DLDevice{kDLCPU, 0});
  for (int i = 0; i < 6; ++i) static_cast<int32_t*>(t.data())[i] = i;
  return t;
}

ErrorKind kind_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.kind();
  }
  ADD_FAILURE() << "no Error thrown";
  return ErrorKind::kRuntime;
}

TEST(Placement, ATensorAlreadyThereIsItselfUnlessACopyIsAskedFor) {
  const Tensor t = host_tensor();
  for (const Target& target : {Target::anywhere(), Target::host(), Target::on(DLDevice{kDLCPU, 0}),
                               Target::in(t.memory_info()), Target::in(memory_info(DLDevice{kDLCPU, 0}))}) {
    for (CopyMode mode : {CopyMode::kNever, CopyMode::kIfNeeded}) {
      const Placed p = place(t, target, mode, "test");
      EXPECT_FALSE(p.copied);
      EXPECT_EQ(p.tensor.ort_value(), t.ort_value());
      EXPECT_FALSE(copies(t, target, mode, "test"));
    }
    const Placed fresh = place(t, target, CopyMode::kAlways, "test");
    EXPECT_TRUE(fresh.copied);
    EXPECT_NE(fresh.tensor.data(), t.data());
    EXPECT_EQ(std::memcmp(fresh.tensor.data(), t.data(), t.byte_size()), 0);
    EXPECT_EQ(fresh.tensor.shape(), t.shape());
  }
}

TEST(Placement, ACopyThatIsNotAllowedIsCopyRequired) {
  const Tensor t = host_tensor();
  // No CUDA here: the decision (a copy is needed) comes before any destination memory is looked up.
  EXPECT_EQ(kind_of([&] { place(t, Target::on(DLDevice{kDLCUDA, 0}), CopyMode::kNever, "test"); }),
            ErrorKind::kCopyRequired);
  EXPECT_EQ(kind_of([&] { copies(t, Target::on(DLDevice{kDLCUDA, 0}), CopyMode::kNever, "test"); }),
            ErrorKind::kCopyRequired);
}

TEST(Placement, AnEmptyTensorIsAnInvalidArgument) {
  EXPECT_EQ(kind_of([] { place(Tensor(), Target::anywhere(), CopyMode::kIfNeeded, "test"); }),
            ErrorKind::kInvalidArgument);
}

TEST(Placement, ImportCopiesOnlyWhatPlacementDoesNot) {
  const DLDevice cpu{kDLCPU, 0};
  EXPECT_EQ(import_copy_mode(CopyMode::kNever, false, cpu, Target::on(cpu)), CopyMode::kNever);
  EXPECT_EQ(import_copy_mode(CopyMode::kIfNeeded, false, cpu, Target::anywhere()), CopyMode::kIfNeeded);
  EXPECT_EQ(import_copy_mode(CopyMode::kAlways, false, cpu, Target::anywhere()), CopyMode::kAlways);
  EXPECT_EQ(import_copy_mode(CopyMode::kAlways, true, cpu, Target::anywhere()), CopyMode::kIfNeeded);  // IS_COPIED
  EXPECT_EQ(import_copy_mode(CopyMode::kAlways, false, cpu, Target::host()), CopyMode::kAlways);
  EXPECT_EQ(placement_copy_mode(CopyMode::kAlways), CopyMode::kIfNeeded);
  EXPECT_EQ(placement_copy_mode(CopyMode::kNever), CopyMode::kNever);
}

TEST(Placement, TensorMetadataIsHeld) {
  const Tensor t = host_tensor();
  EXPECT_EQ(t.element_type(), ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32);
  EXPECT_EQ(t.shape(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(t.element_count(), 6u);
  EXPECT_EQ(t.byte_size(), 24u);
  EXPECT_TRUE(t.host_accessible());
  EXPECT_TRUE(t.has_device());
  const Tensor empty;
  EXPECT_EQ(empty.shape().size(), 0u);
  EXPECT_EQ(empty.data(), nullptr);
  EXPECT_EQ(empty.byte_size(), 0u);
}

TEST(Handle, OwnedReleasesItsHandle) {
  OrtMemoryInfo* raw = nullptr;
  ortdlpack::check(ort().CreateCpuMemoryInfo(OrtDeviceAllocator, OrtMemTypeDefault, &raw));
  Owned<OrtMemoryInfo> info(raw);  // released at scope exit (ASan/valgrind runs see a leak otherwise)
  EXPECT_TRUE(same_memory(info.get(), memory_info(DLDevice{kDLCPU, 0})));
}

TEST(DeviceNames, OneTableBothWays) {
  EXPECT_EQ(name_of(dl_device_from_name("cuda:1")), "cuda:1");
  EXPECT_EQ(name_of(dl_device_from_name("cpu")), "cpu");
  EXPECT_EQ(dl_device_from_name("ext_dev").device_type, kDLExtDev);
  EXPECT_STREQ(device_type_name(kDLROCMHost), "rocm_host");
  EXPECT_STREQ(onnxruntime_device_name(kDLROCM), "cuda");
  EXPECT_EQ(onnxruntime_device_name(kDLExtDev), nullptr);
  EXPECT_EQ(ort_device_type_from_name("npu"), OrtMemoryInfoDeviceType_NPU);
  EXPECT_EQ(memory_type_from_name("host_accessible"), OrtDeviceMemoryType_HOST_ACCESSIBLE);
  for (const char* bad : {"warp:0", "cuda:x", "cuda:-1", "cuda:", "cuda:99999999999"}) {
    EXPECT_EQ(kind_of([&] { dl_device_from_name(bad); }), ErrorKind::kInvalidArgument) << bad;
  }
  EXPECT_EQ(kind_of([] { ort_device_type_from_name("tpu"); }), ErrorKind::kInvalidArgument);
  EXPECT_EQ(kind_of([] { memory_type_from_name("pinned"); }), ErrorKind::kInvalidArgument);
}

TEST(Dtype, SubByteUnpacking) {
  const uint8_t packed[2] = {0x9F, 0x07};  // int4 elements (low nibble first): -1, -7, 7, 0
  uint8_t out[4] = {};
  unpack_sub_byte(ONNX_TENSOR_ELEMENT_DATA_TYPE_INT4, packed, 4, out);
  EXPECT_EQ(static_cast<int8_t>(out[0]), -1);
  EXPECT_EQ(static_cast<int8_t>(out[1]), -7);
  EXPECT_EQ(out[2], 7);
  EXPECT_EQ(out[3], 0);
  unpack_sub_byte(ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT4, packed, 2, out);
  EXPECT_EQ(out[0], 15);
  EXPECT_EQ(out[1], 9);
  EXPECT_EQ(kind_of([&] { unpack_sub_byte(ONNX_TENSOR_ELEMENT_DATA_TYPE_INT8, packed, 2, out); }),
            ErrorKind::kInvalidArgument);
}

TEST(DeviceNames, AnEpDeviceTheEnvDoesNotHaveIsAnInvalidArgument) {
  EXPECT_EQ(kind_of([] { find_ep_device(env(), "NoSuchEP", 0, 0, 0); }), ErrorKind::kInvalidArgument);
}

TEST(Streams, HostMemoryTakesNoStreamHandle) {
  // The consumer-stream rules (stream.h): None and -1 anywhere; a handle only on a device with streams.
  const Tensor t = host_tensor();
  order_for_consumer(t, std::nullopt);
  order_for_consumer(t, -1);
  EXPECT_EQ(kind_of([&] { order_for_consumer(t, 7); }), ErrorKind::kInvalidArgument);
}

TEST(Export, LegacyViewSharesTheTensorAndDeletesItOnce) {
  const Tensor t = host_tensor();
  const long before = t.use_count();
  DLManagedTensor* legacy = legacy_view(to_dlpack_versioned(t));
  EXPECT_EQ(legacy->dl_tensor.data, t.data());
  EXPECT_EQ(t.use_count(), before + 1);
  legacy->deleter(legacy);
  EXPECT_EQ(t.use_count(), before);
}

}  // namespace
}  // namespace ortdlpack
