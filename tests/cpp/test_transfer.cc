// Allocation and copies on the host (plugin-device copies are in test_virtual_device.cc).
#include "ortdlpack/transfer.h"

#include <gtest/gtest.h>

#include <cstring>

#include "ortdlpack/device.h"
#include "ortdlpack/import.h"
#include "support.h"

namespace ortdlpack {
namespace {

TEST(Transfer, AllocateOnCpuAndCopyHostToHost) {
  const std::vector<int64_t> shape{2, 3};
  Tensor a = allocate(ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE, shape, DLDevice{kDLCPU, 0});
  EXPECT_EQ(a.shape(), shape);
  EXPECT_EQ(a.byte_size(), 48u);
  auto* d = static_cast<double*>(a.data());
  for (int i = 0; i < 6; ++i) d[i] = i * 0.5;
  Tensor b = to(a, DLDevice{kDLCPU, 0});
  EXPECT_NE(b.data(), a.data());
  EXPECT_EQ(std::memcmp(a.data(), b.data(), 48), 0);
}

TEST(Transfer, BatchedHostCopies) {
  std::vector<Tensor> src, dst;
  for (int i = 0; i < 100; ++i) {
    src.push_back(allocate(ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32, {4}, DLDevice{kDLCPU, 0}));
    static_cast<int32_t*>(src.back().data())[3] = i;
    dst.push_back(allocate(ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32, {4}, DLDevice{kDLCPU, 0}));
  }
  copy(src, dst);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(static_cast<int32_t*>(dst[static_cast<size_t>(i)].data())[3], i);
}

TEST(Transfer, CopyChecksItsArguments) {
  Tensor a = allocate(ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, {4}, DLDevice{kDLCPU, 0});
  Tensor b = allocate(ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, {5}, DLDevice{kDLCPU, 0});
  Tensor c = allocate(ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32, {4}, DLDevice{kDLCPU, 0});
  EXPECT_THROW(copy(a, b), Error);
  EXPECT_THROW(copy(a, c), Error);
  EXPECT_THROW(copy(std::vector<Tensor>{a}, std::vector<Tensor>{}), Error);
  EXPECT_THROW(copy(a, Tensor()), Error);
  auto p = test::Producer::make(DLDataType{kDLFloat, 32, 1}, {4});
  p->versioned.flags = DLPACK_FLAG_BITMASK_READ_ONLY;
  Tensor read_only = from_dlpack(&p->versioned).tensor;
  try {
    copy(a, read_only);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("read-only"), std::string::npos);
  }
}

TEST(Transfer, NoSharedAllocatorIsAClearError) {
  // CUDA memory in a process without a CUDA EP: the env has no allocator for it.
  try {
    allocate(ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, {4}, DLDevice{kDLCUDA, 0});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUnsupported);
    EXPECT_NE(std::string(e.what()).find("no execution provider serving Cuda:0"), std::string::npos) << e.what();
  }
}

TEST(Transfer, NoDataTransferNamesBothDevices) {
  // A CUDA tensor over host bytes we own (never dereferenced as CUDA): ORT has no transfer to CPU for it here.
  static float fake_device_memory[4];
  OrtValue* value = nullptr;
  const int64_t shape[] = {4};
  check(ort().CreateTensorWithDataAsOrtValue(memory_info(DLDevice{kDLCUDA, 0}), fake_device_memory,
                                             sizeof fake_device_memory, shape, 1, ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT,
                                             &value));
  Tensor cuda(value);
  try {
    to(cuda, DLDevice{kDLCPU, 0});
    FAIL();
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("Cuda:0"), std::string::npos) << message;
    EXPECT_NE(message.find("Cpu:0"), std::string::npos) << message;
  }
}

TEST(Transfer, AllocateRejectsBadShapesAndTypes) {
  EXPECT_THROW(allocate(ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, {-1}, DLDevice{kDLCPU, 0}), Error);
  EXPECT_THROW(allocate(ONNX_TENSOR_ELEMENT_DATA_TYPE_STRING, {1}, DLDevice{kDLCPU, 0}), Error);
  EXPECT_THROW(allocate(ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, {1}, static_cast<const OrtMemoryInfo*>(nullptr)), Error);
}

// transfer.cc: copy() memcpy'd host pairs while validating, so a bad later pair left earlier destinations written.
TEST(Transfer, AnElementTypeOrtHoldsAsAnotherIsRefused) {
  // float8e8m0: ORT 1.29 (the pinned C SDK) creates a C-API FLOAT8E8M0 tensor as INT2, four elements a byte; a newer
  // ORT holds it as asked. Either the tensor is what was asked for, one byte an element, or allocate says why not.
  for (int64_t n : {1, 4, 7}) {
    try {
      const Tensor t = allocate(ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT8E8M0, {n}, DLDevice{kDLCPU, 0});
      EXPECT_EQ(t.element_type(), ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT8E8M0);
      EXPECT_EQ(t.byte_size(), static_cast<size_t>(n));
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kUnsupported);
      EXPECT_NE(
          std::string(e.what()).find("allocate: ONNX Runtime " + std::string(ort_version()) +
                                     " holds float8e8m0 tensors as C element type 25, so it cannot carry float8e8m0"),
          std::string::npos)
          << e.what();
    }
  }
}

TEST(Regression, BatchedCopyValidatesEveryPairBeforeWriting) {
  const DLDevice cpu{kDLCPU, 0};
  Tensor a = allocate(ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, {4}, cpu);
  Tensor b = allocate(ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, {4}, cpu);
  Tensor da = allocate(ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, {4}, cpu);
  Tensor bad = allocate(ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, {5}, cpu);  // shape mismatch
  std::memset(a.data(), 0x11, a.byte_size());
  std::memset(da.data(), 0x22, da.byte_size());
  try {
    copy({a, b}, {da, bad});
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument) << e.what();
  }
  const auto* bytes = static_cast<const unsigned char*>(da.data());
  for (size_t i = 0; i < da.byte_size(); ++i) ASSERT_EQ(bytes[i], 0x22) << "destination 0 was written at byte " << i;
}

}  // namespace
}  // namespace ortdlpack
