// The strided gather of host layouts ORT cannot hold (strided_copy.h), directly and through an import.
#include "strided_copy.h"

#include <gtest/gtest.h>

#include <cstring>
#include <limits>

#include "support.h"

namespace ortdlpack {
namespace {

using test::Producer;
constexpr DLDataType kF32{kDLFloat, 32, 1};
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

TEST(StridedCopy, GathersTransposedNegativeAndBroadcastLayouts) {
  const int32_t src[6] = {0, 1, 2, 3, 4, 5};  // a 2x3 row-major array
  int32_t out[6] = {};
  const int64_t shape_t[2] = {3, 2}, strides_t[2] = {1, 3};  // its transpose
  detail::strided_copy(out, src, 2, shape_t, strides_t, sizeof(int32_t));
  EXPECT_EQ(std::vector<int32_t>(out, out + 6), (std::vector<int32_t>{0, 3, 1, 4, 2, 5}));
  const int64_t shape_r[1] = {6}, strides_r[1] = {-1};  // reversed, from the last element
  detail::strided_copy(out, src + 5, 1, shape_r, strides_r, sizeof(int32_t));
  EXPECT_EQ(std::vector<int32_t>(out, out + 6), (std::vector<int32_t>{5, 4, 3, 2, 1, 0}));
  const int64_t shape_b[2] = {2, 3}, strides_b[2] = {0, 1};  // the first row twice
  detail::strided_copy(out, src, 2, shape_b, strides_b, sizeof(int32_t));
  EXPECT_EQ(std::vector<int32_t>(out, out + 6), (std::vector<int32_t>{0, 1, 2, 0, 1, 2}));
  int32_t scalar = 0;
  detail::strided_copy(&scalar, src + 4, 0, nullptr, nullptr, sizeof(int32_t));
  EXPECT_EQ(scalar, 4);
}

// A regression (found under UBSan): the byte step of a size-1 dim's stride overflowed int64 and the source pointer
// was advanced past the last element (out of the address space) before the loop ended.
TEST(StridedCopy, IgnoresTheStrideOfSizeOneDims) {
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

}  // namespace
}  // namespace ortdlpack
