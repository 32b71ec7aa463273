// Tensor (tensor.h): a shared owner of an OrtValue whose metadata is read once.
#include "ortdlpack/tensor.h"

#include <gtest/gtest.h>

#include "ortdlpack/api.h"
#include "ortdlpack/error.h"
#include "ortdlpack/transfer.h"
#include "support.h"

namespace ortdlpack {
namespace {

using test::host_int32_2x3;

TEST(Tensor, MetadataIsHeld) {
  const Tensor t = host_int32_2x3();
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

TEST(Tensor, CopiesShareOneOrtValue) {
  Tensor a = host_int32_2x3();
  EXPECT_EQ(a.use_count(), 1);
  {
    const Tensor b = a;
    EXPECT_EQ(b.ort_value(), a.ort_value());
    EXPECT_EQ(a.use_count(), 2);
  }
  EXPECT_EQ(a.use_count(), 1);
}

TEST(Tensor, ANullOrNonTensorValueIsAnInvalidArgument) {
  EXPECT_EQ(test::kind_of([] { Tensor(nullptr); }), ErrorKind::kInvalidArgument);
  // A sequence of one tensor: a value, but not a tensor (the Tensor releases it).
  const Tensor item = host_int32_2x3();
  OrtValue* seq = nullptr;
  const OrtValue* items[] = {item.ort_value()};
  check(ort().CreateValue(items, 1, ONNX_TYPE_SEQUENCE, &seq));
  EXPECT_EQ(test::kind_of([&] { Tensor{seq}; }), ErrorKind::kInvalidArgument);
}

TEST(Tensor, ShapeViewComparesWithVectors) {
  const int64_t dims[] = {2, 3};
  const ShapeView v(dims, 2);
  EXPECT_EQ(v, (std::vector<int64_t>{2, 3}));
  EXPECT_NE(v, ShapeView(dims, 1));
  EXPECT_EQ(std::vector<int64_t>(v), (std::vector<int64_t>{2, 3}));
  EXPECT_TRUE(ShapeView().empty());
}

}  // namespace
}  // namespace ortdlpack
