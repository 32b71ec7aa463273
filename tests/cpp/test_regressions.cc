// Regression tests for bugs found by the sanitized suite and the fuzzer (docs/reliability.md). Each was undefined
// behaviour or a partial write that the plain build did not show; run under ASan+UBSan (scripts/sanitize.sh) they
// abort on the old code.
#include <gtest/gtest.h>

#include <cstring>
#include <limits>

#include "support.h"

namespace ortdlpack {
namespace {

using test::Producer;
constexpr DLDataType kI8{kDLInt, 8, 1};
constexpr DLDataType kF32{kDLFloat, 32, 1};
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

// import.cc: the lowest addressed offset was negated as int64 (-INT64_MIN overflows).
TEST(Regression, StridesReachingExactlyInt64MinAreRejectedWithoutOverflow) {
  auto p = Producer::make(kI8, {2});
  p->strides = {kMin};  // (2 - 1) * INT64_MIN * 1 byte = INT64_MIN
  p->fill(kI8);
  for (CopyMode mode : {CopyMode::kNever, CopyMode::kIfNeeded, CopyMode::kAlways}) {
    try {
      from_dlpack(&p->versioned, ImportOptions{mode});
      ADD_FAILURE() << "accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument) << e.what();
    }
  }
  EXPECT_EQ(p->deletes, 0);
}

// export.cc: row-major strides of an empty tensor whose other dims multiply past int64 overflowed.
TEST(Regression, EmptyTensorWithHugeDimsExportsWithoutOverflow) {
  auto p = Producer::make(kF32, {0});
  p->shape = {0, int64_t{1} << 62, 3};
  p->strides = {1, 1, 1};
  p->fill(kF32);
  p->t().data = nullptr;
  p->versioned.dl_tensor = p->t();
  Imported in = from_dlpack(&p->versioned);
  EXPECT_EQ(in.tensor.element_count(), 0u);
  DLManagedTensorVersioned* out = to_dlpack_versioned(in.tensor);
  EXPECT_EQ(out->dl_tensor.strides[2], 1);
  EXPECT_EQ(out->dl_tensor.strides[1], 3);
  EXPECT_EQ(out->dl_tensor.strides[0], kMax) << "saturated: the product of the inner dims overflows";
  Imported again = from_dlpack(out);  // takes `out`
  EXPECT_EQ(again.tensor.shape(), (std::vector<int64_t>{0, int64_t{1} << 62, 3}));
  in = Imported{};
  again = Imported{};
  EXPECT_EQ(p->deletes, 1);
}

// strided_copy.cc: a size-1 dim may carry any stride; its byte step overflowed int64 and the source pointer was
// advanced past the last element (out of the address space) before the loop ended.
TEST(Regression, StridedCopyIgnoresTheStrideOfSizeOneDims) {
  auto p = Producer::make(kF32, {1, 3}, 5 * sizeof(float));
  p->strides = {kMax, 2};  // non-compact (stride 2) with an absurd stride on the size-1 dim
  p->fill(kF32);
  Imported in = from_dlpack(&p->versioned, ImportOptions{CopyMode::kIfNeeded});
  ASSERT_TRUE(in.copied);
  const auto* src = reinterpret_cast<const float*>(p->buffer->data());
  const auto* got = static_cast<const float*>(in.tensor.data());
  for (int i = 0; i < 3; ++i) EXPECT_EQ(std::memcmp(&got[i], &src[2 * i], sizeof(float)), 0) << i;
  EXPECT_EQ(p->deletes, 1);
}

// transfer.cc: copy() memcpy'd host pairs while validating, so a bad later pair left earlier destinations written.
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
