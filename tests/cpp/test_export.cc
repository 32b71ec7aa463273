// Export (and the import it round-trips through): same pointer, same bytes, exact deleter counts.
#include "ortdlpack/export.h"

#include <gtest/gtest.h>

#include <cstring>
#include <limits>

#include "ortdlpack/dtype.h"
#include "ortdlpack/import.h"
#include "ortdlpack/transfer.h"
#include "support.h"

namespace ortdlpack {
namespace {

using test::Producer;

const std::vector<std::vector<int64_t>> kShapes = {{}, {0}, {2, 0, 3}, {1}, {3, 1, 4}, {2, 3}, {5}};

// export -> import -> export for every dtype and shape of the table.
TEST(Export, RoundTripEveryDtypeAndShape) {
  // Every ORT element type up to float4e2m1 (23), which ORT has from 1.24 on.
  const int last = ORT_API_VERSION >= 24 && ort_api_version() >= 24 ? 23 : 22;
  for (int t = 1; t <= last; ++t) {
    const auto type = static_cast<ONNXTensorElementDataType>(t);
    if (type == ONNX_TENSOR_ELEMENT_DATA_TYPE_STRING) continue;
    for (const auto& shape : kShapes) {
      SCOPED_TRACE(std::string(dtype_name(type)) + " ndim " + std::to_string(shape.size()));
      auto producer = Producer::make(to_dlpack_dtype(type), shape);
      Imported first;
      try {
        first = from_dlpack(&producer->versioned);
      } catch (const Error& e) {
        // ORT's refusal, not ours: ORT has no complex tensors (it says so in its C API header).
        const bool ort_lacks_type =
            type == ONNX_TENSOR_ELEMENT_DATA_TYPE_COMPLEX64 || type == ONNX_TENSOR_ELEMENT_DATA_TYPE_COMPLEX128;
        ASSERT_TRUE(ort_lacks_type) << e.what();
        EXPECT_EQ(producer->deletes, 0);
        continue;
      }
      EXPECT_FALSE(first.copied);
      DLManagedTensorVersioned* out = to_dlpack_versioned(first.tensor);
      first.tensor = Tensor();
      EXPECT_EQ(producer->deletes, 0) << "the export keeps the producer alive";
      EXPECT_EQ(out->version.major, DLPACK_MAJOR_VERSION);
      EXPECT_EQ(out->flags, 0u);
      const DLTensor& o = out->dl_tensor;
      if (producer->buffer->size() != 0) {
        EXPECT_EQ(o.data, producer->buffer->data());
      }
      EXPECT_EQ(o.device.device_type, kDLCPU);
      EXPECT_EQ(o.ndim, static_cast<int32_t>(shape.size()));
      EXPECT_EQ(o.byte_offset, 0u);
      EXPECT_EQ(o.dtype.code, producer->t().dtype.code);
      EXPECT_EQ(o.dtype.bits, producer->t().dtype.bits);
      if (o.ndim > 0) {
        ASSERT_NE(o.strides, nullptr) << "strides are always filled (DLPack 1.2)";
      }
      for (size_t i = 0; i < shape.size(); ++i) {
        EXPECT_EQ(o.shape[i], shape[i]);
        EXPECT_EQ(o.strides[i], producer->strides[i]);
      }
      Imported second = from_dlpack(out);  // the importer owns `out` now
      EXPECT_FALSE(second.copied);
      if (!producer->buffer->empty()) {
        EXPECT_EQ(second.tensor.data(), producer->buffer->data());
      }
      EXPECT_EQ(second.tensor.element_type(), type);
      EXPECT_EQ(second.tensor.shape(), shape);
      second.tensor = Tensor();
      EXPECT_EQ(producer->deletes, 1);
    }
  }
}

TEST(Export, LegacyRoundTrip) {
  auto producer = Producer::make(DLDataType{kDLFloat, 32, 1}, {4, 2});
  Imported in = from_dlpack(&producer->legacy);
  DLManagedTensor* out = to_dlpack_legacy(in.tensor);
  in.tensor = Tensor();
  EXPECT_EQ(out->dl_tensor.data, producer->buffer->data());
  EXPECT_EQ(out->dl_tensor.strides[0], 2);
  Imported back = from_dlpack(out);
  back.tensor = Tensor();
  EXPECT_EQ(producer->deletes, 1);
}

TEST(Export, LargeTensorIsShared) {
  const int64_t n = 64 * 1024 * 1024 / 4;  // 64 MiB of float32
  auto producer = Producer::make(DLDataType{kDLFloat, 32, 1}, {n});
  Imported in = from_dlpack(&producer->versioned);
  DLManagedTensorVersioned* out = to_dlpack_versioned(in.tensor);
  EXPECT_EQ(out->dl_tensor.data, producer->buffer->data());
  EXPECT_EQ(std::memcmp(out->dl_tensor.data, producer->buffer->data(), producer->buffer->size()), 0);
  out->deleter(out);
  EXPECT_EQ(producer->deletes, 0);
  in.tensor = Tensor();
  EXPECT_EQ(producer->deletes, 1);
}

TEST(Export, SharesOwnershipWithTheTensor) {
  auto producer = Producer::make(DLDataType{kDLInt, 64, 1}, {3});
  Tensor tensor = from_dlpack(&producer->versioned).tensor;
  EXPECT_EQ(tensor.use_count(), 1);
  DLManagedTensorVersioned* a = to_dlpack_versioned(tensor);
  DLManagedTensor* b = to_dlpack_legacy(tensor);
  EXPECT_EQ(tensor.use_count(), 3);
  a->deleter(a);
  b->deleter(b);
  EXPECT_EQ(tensor.use_count(), 1);
  EXPECT_EQ(producer->deletes, 0);
  tensor = Tensor();
  EXPECT_EQ(producer->deletes, 1);
}

TEST(Export, ReadOnlyTravelsAndLegacyRefusesIt) {
  auto producer = Producer::make(DLDataType{kDLFloat, 32, 1}, {2});
  producer->versioned.flags = DLPACK_FLAG_BITMASK_READ_ONLY;
  Tensor tensor = from_dlpack(&producer->versioned).tensor;
  EXPECT_TRUE(tensor.read_only());
  DLManagedTensorVersioned* out = to_dlpack_versioned(tensor, DLPACK_FLAG_BITMASK_IS_COPIED);
  EXPECT_EQ(out->flags, DLPACK_FLAG_BITMASK_READ_ONLY | DLPACK_FLAG_BITMASK_IS_COPIED);
  out->deleter(out);
  try {
    to_dlpack_legacy(tensor);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUnsupported);
    EXPECT_NE(std::string(e.what()).find("read-only"), std::string::npos);
  }
  tensor = Tensor();
  EXPECT_EQ(producer->deletes, 1);
}

TEST(Export, ReadOnlyByContractTravelsAndExportsAsLegacy) {
  // JAX and TensorFlow arrays: immutable by contract, flagless legacy capsules are how they hand out memory.
  auto producer = Producer::make(DLDataType{kDLFloat, 32, 1}, {2});
  ImportOptions immutable;
  immutable.read_only = true;
  Tensor tensor = from_dlpack(&producer->legacy, immutable).tensor;
  EXPECT_EQ(tensor.read_only_kind(), ReadOnly::kByContract);
  DLManagedTensorVersioned* out = to_dlpack_versioned(tensor);
  EXPECT_EQ(out->flags, DLPACK_FLAG_BITMASK_READ_ONLY);  // said where it can be said
  out->deleter(out);
  DLManagedTensor* legacy = to_dlpack_legacy(tensor);
  EXPECT_EQ(legacy->dl_tensor.data, tensor.data());
  legacy->deleter(legacy);
}

TEST(Export, SubByteNeedsVersionedDlpack) {
  auto producer = Producer::make(DLDataType{kDLInt, 4, 1}, {5});
  Tensor tensor = from_dlpack(&producer->versioned).tensor;
  EXPECT_EQ(tensor.byte_size(), 3u);
  EXPECT_THROW(to_dlpack_legacy(tensor), Error);
  DLManagedTensorVersioned* out = to_dlpack_versioned(tensor);
  EXPECT_EQ(out->dl_tensor.dtype.bits, 4);
  EXPECT_EQ(out->flags & DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED, 0u);
  out->deleter(out);
  tensor = Tensor();
  EXPECT_EQ(producer->deletes, 1);
}

TEST(Export, EmptyTensorIsAnError) { EXPECT_THROW(to_dlpack_versioned(Tensor()), Error); }

// An imported tensor as a session input, the session's output exported: numbers checked.
TEST(Export, SessionInputImportedOutputExported) {
  OrtSession* session = test::make_add_session(ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, {8});
  auto producer = Producer::make(DLDataType{kDLFloat, 32, 1}, {8});
  auto* x = reinterpret_cast<float*>(producer->buffer->data());
  for (int i = 0; i < 8; ++i) x[i] = static_cast<float>(i) * 1.5f;
  Tensor input = from_dlpack(&producer->versioned).tensor;
  const char* in_names[] = {"X"};
  const char* out_names[] = {"Y"};
  const OrtValue* inputs[] = {input.ort_value()};
  OrtValue* output = nullptr;
  test::ort_check(ort().Run(session, nullptr, in_names, inputs, 1, out_names, 1, &output));
  DLManagedTensorVersioned* y = to_dlpack_versioned(Tensor(output));
  ASSERT_EQ(y->dl_tensor.ndim, 1);
  EXPECT_EQ(y->dl_tensor.shape[0], 8);
  const auto* yd = static_cast<const float*>(y->dl_tensor.data);
  for (int i = 0; i < 8; ++i) EXPECT_FLOAT_EQ(yd[i], 2 * x[i]);
  y->deleter(y);
  input = Tensor();
  ort().ReleaseSession(session);
  EXPECT_EQ(producer->deletes, 1);
}

TEST(Export, LegacyViewSharesTheTensorAndDeletesItOnce) {
  const Tensor t = allocate(ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32, {2, 3}, DLDevice{kDLCPU, 0});
  const long before = t.use_count();
  DLManagedTensor* legacy = legacy_view(to_dlpack_versioned(t));
  EXPECT_EQ(legacy->dl_tensor.data, t.data());
  EXPECT_EQ(t.use_count(), before + 1);
  legacy->deleter(legacy);
  EXPECT_EQ(t.use_count(), before);
}

// A regression (found under UBSan): row-major strides of an empty tensor whose other dims multiply past int64
// overflowed.
TEST(Export, EmptyTensorWithHugeDimsExportsWithoutOverflow) {
  constexpr DLDataType kF32{kDLFloat, 32, 1};
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
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

}  // namespace
}  // namespace ortdlpack
