// Import: zero-copy views, layouts that need a copy, and every validation error (the caller keeps ownership).
#include "ortdlpack/import.h"

#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <utility>

#include "ortdlpack/dtype.h"
#include "ortdlpack/export.h"
#include "support.h"

namespace ortdlpack {
namespace {

using test::Producer;
constexpr DLDataType kF32{kDLFloat, 32, 1};

float at(const Tensor& t, size_t i) { return static_cast<const float*>(t.data())[i]; }

void fill_iota(Producer& p) {
  auto* f = reinterpret_cast<float*>(p.buffer->data());
  for (size_t i = 0; i < p.buffer->size() / 4; ++i) f[i] = static_cast<float>(i);
}

TEST(Import, HonoursByteOffset) {
  auto p = Producer::make(kF32, {4}, 16);
  fill_iota(*p);
  p->t().byte_offset = 8;  // a view starting at element 2
  Imported in = from_dlpack(&p->versioned);
  EXPECT_EQ(in.tensor.data(), p->buffer->data() + 8);
  EXPECT_EQ(at(in.tensor, 0), 2.0f);
  DLManagedTensorVersioned* out = to_dlpack_versioned(in.tensor);
  EXPECT_EQ(out->dl_tensor.data, p->buffer->data() + 8);
  EXPECT_EQ(out->dl_tensor.byte_offset, 0u);
  out->deleter(out);
  in.tensor = Tensor();
  EXPECT_EQ(p->deletes, 1);
}

TEST(Import, AnyStrideOnSizeOneDimsAndNullStridesAreCompact) {
  auto p = Producer::make(kF32, {3, 1, 4});
  p->strides = {4, 12345, 1};
  p->t().strides = p->strides.data();
  Imported a = from_dlpack(&p->versioned);
  EXPECT_FALSE(a.copied);
  a.tensor = Tensor();
  p->t().strides = nullptr;
  Imported b = from_dlpack(&p->versioned);
  EXPECT_FALSE(b.copied);
  b.tensor = Tensor();
  EXPECT_EQ(p->deletes, 2);
}

TEST(Import, ZeroSizeAcceptsNullData) {
  auto p = Producer::make(kF32, {0, 5});
  p->t().data = nullptr;
  Imported in = from_dlpack(&p->versioned);
  EXPECT_EQ(in.tensor.element_count(), 0u);
  EXPECT_EQ(in.tensor.shape(), (std::vector<int64_t>{0, 5}));
  in.tensor = Tensor();
  EXPECT_EQ(p->deletes, 1);
}

TEST(Import, NonCompactNeedsPermissionThenCopies) {
  auto p = Producer::make(kF32, {3, 4});
  fill_iota(*p);
  p->shape = {4, 3};  // the transpose: strides (1, 4)
  p->strides = {1, 4};
  p->t().shape = p->shape.data();
  p->t().strides = p->strides.data();
  try {
    from_dlpack(&p->versioned);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kCopyRequired);
    EXPECT_NE(std::string(e.what()).find("not compact"), std::string::npos) << e.what();
  }
  EXPECT_EQ(p->deletes, 0) << "on failure the caller keeps ownership";
  Imported in = from_dlpack(&p->versioned, ImportOptions{CopyMode::kIfNeeded});
  EXPECT_TRUE(in.copied);
  EXPECT_EQ(p->deletes, 1) << "a copy releases the producer at once";
  EXPECT_NE(in.tensor.data(), p->buffer->data());
  for (int i = 0; i < 4; ++i) {
    for (int j = 0; j < 3; ++j) EXPECT_EQ(at(in.tensor, static_cast<size_t>(i * 3 + j)), static_cast<float>(j * 4 + i));
  }
}

TEST(Import, PaddedSubByteElementsArePackedIntoACopy) {
  // One int4 per byte (ml_dtypes' layout, DLPack's IS_SUBBYTE_TYPE_PADDED): ORT holds int4 packed, two per byte.
  auto p = Producer::make(DLDataType{kDLUInt, 8, 1}, {3, 2});
  const uint8_t values[6] = {0x1, 0xF, 0x7, 0x8, 0x0, 0x3};  // -1 is 0xF in int4's low bits (ml_dtypes keeps them)
  std::memcpy(p->buffer->data(), values, 6);
  p->t().dtype = DLDataType{kDLInt, 4, 1};
  p->versioned.flags = DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED;
  try {
    from_dlpack(&p->versioned);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kCopyRequired);
    EXPECT_NE(std::string(e.what()).find("padded"), std::string::npos) << e.what();
  }
  EXPECT_EQ(p->deletes, 0) << "on failure the caller keeps ownership";
  Imported in = from_dlpack(&p->versioned, ImportOptions{CopyMode::kIfNeeded});
  EXPECT_TRUE(in.copied);
  EXPECT_EQ(p->deletes, 1);
  EXPECT_EQ(in.tensor.element_type(), ONNX_TENSOR_ELEMENT_DATA_TYPE_INT4);
  EXPECT_EQ(in.tensor.byte_size(), 3u);
  const auto* packed = static_cast<const uint8_t*>(in.tensor.data());
  EXPECT_EQ(packed[0], 0xF1);
  EXPECT_EQ(packed[1], 0x87);
  EXPECT_EQ(packed[2], 0x30);
  uint8_t back[6];
  unpack_sub_byte(ONNX_TENSOR_ELEMENT_DATA_TYPE_INT4, packed, 6, back);  // sign-extended: -1 comes back as 0xFF
  EXPECT_EQ(back[1], 0xFF);
  EXPECT_EQ(back[3], 0xF8);
  EXPECT_EQ(back[2], 0x7);
}

TEST(Import, NegativeStridesAreCopied) {
  auto p = Producer::make(kF32, {5});
  fill_iota(*p);
  p->strides = {-1};
  p->t().strides = p->strides.data();
  p->t().byte_offset = 16;  // data points at the last element, walking backwards
  EXPECT_THROW(from_dlpack(&p->versioned), Error);
  Imported in = from_dlpack(&p->versioned, ImportOptions{CopyMode::kIfNeeded});
  EXPECT_TRUE(in.copied);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(at(in.tensor, static_cast<size_t>(i)), static_cast<float>(4 - i));
  EXPECT_EQ(p->deletes, 1);
}

TEST(Import, MisalignedDataIsCopiedOnlyWhenAllowed) {
  auto p = Producer::make(kF32, {2}, 4);
  p->t().byte_offset = 1;
  try {
    from_dlpack(&p->versioned);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kCopyRequired);
    EXPECT_NE(std::string(e.what()).find("aligned"), std::string::npos) << e.what();
  }
  Imported in = from_dlpack(&p->versioned, ImportOptions{CopyMode::kIfNeeded});
  EXPECT_TRUE(in.copied);
  EXPECT_EQ(std::memcmp(in.tensor.data(), p->buffer->data() + 1, 8), 0);
}

TEST(Import, CopyAlwaysCopiesCompactTensors) {
  auto p = Producer::make(kF32, {6});
  fill_iota(*p);
  Imported in = from_dlpack(&p->versioned, ImportOptions{CopyMode::kAlways});
  EXPECT_TRUE(in.copied);
  EXPECT_NE(in.tensor.data(), p->buffer->data());
  EXPECT_EQ(at(in.tensor, 5), 5.0f);
  EXPECT_EQ(p->deletes, 1);
}

TEST(Import, Uint8AsBoolWhenAsked) {
  auto p = Producer::make(DLDataType{kDLUInt, 8, 1}, {3});
  ImportOptions as_bool;
  as_bool.uint8_as_bool = true;
  Imported in = from_dlpack(&p->legacy, as_bool);
  EXPECT_EQ(in.tensor.element_type(), ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL);
}

TEST(Import, AnElementTypeOrtHoldsAsAnotherIsRefusedAndTheCallerKeepsTheTensor) {
  // float8e8m0: ORT 1.29 (the pinned C SDK) holds a C-API FLOAT8E8M0 tensor as INT2; a newer ORT as asked. Either the
  // import is what was handed over, or it is refused saying why, and the producer's tensor stays the caller's.
  auto p = Producer::make(DLDataType{kDLFloat8_e8m0fnu, 8, 1}, {8});
  try {
    Imported in = from_dlpack(&p->versioned);
    EXPECT_EQ(in.tensor.element_type(), ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT8E8M0);
    EXPECT_EQ(in.tensor.byte_size(), 8u);
    in = Imported{};
    EXPECT_EQ(p->deletes, 1);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUnsupported);
    EXPECT_NE(
        std::string(e.what()).find("DLPack import: ONNX Runtime " + std::string(ort_version()) +
                                   " holds float8e8m0 tensors as C element type 25, so it cannot carry float8e8m0"),
        std::string::npos)
        << e.what();
    EXPECT_EQ(p->deletes, 0);
  }
}

// Every malformed field: the documented error kind, a message naming the field, and no deleter call.
struct BadCase {
  const char* name;
  void (*corrupt)(Producer&);
  ErrorKind kind;
  const char* fragment;
};

const BadCase kBadCases[] = {
    {"negative ndim", [](Producer& p) { p.t().ndim = -1; }, ErrorKind::kInvalidArgument, "ndim"},
    {"huge ndim", [](Producer& p) { p.t().ndim = 65; }, ErrorKind::kInvalidArgument, "ndim"},
    {"NULL shape", [](Producer& p) { p.t().shape = nullptr; }, ErrorKind::kInvalidArgument, "shape is NULL"},
    {"negative dim", [](Producer& p) { p.shape[1] = -2; }, ErrorKind::kInvalidArgument, "shape[1]"},
    {"count overflow",
     [](Producer& p) {
       p.shape[0] = int64_t{1} << 40;
       p.shape[1] = int64_t{1} << 40;
     },
     ErrorKind::kInvalidArgument, "element count overflows"},
    {"byte overflow", [](Producer& p) { p.shape[0] = int64_t{1} << 61; }, ErrorKind::kInvalidArgument,
     "byte size overflows"},
    {"lanes", [](Producer& p) { p.t().dtype.lanes = 4; }, ErrorKind::kUnsupported, "lanes"},
    {"bits vs code", [](Producer& p) { p.t().dtype.bits = 24; }, ErrorKind::kUnsupported, "bits"},
    {"unknown code", [](Producer& p) { p.t().dtype.code = 99; }, ErrorKind::kUnsupported, "no ONNX element type"},
    {"NULL data", [](Producer& p) { p.t().data = nullptr; }, ErrorKind::kInvalidArgument, "data is NULL"},
    {"byte_offset overflow", [](Producer& p) { p.t().byte_offset = std::numeric_limits<uint64_t>::max(); },
     ErrorKind::kInvalidArgument, "byte_offset"},
    {"stride overflow", [](Producer& p) { p.strides[0] = std::numeric_limits<int64_t>::max() / 2; },
     ErrorKind::kInvalidArgument, "strides[0]"},
    {"stride below address 0", [](Producer& p) { p.strides[0] = -(int64_t{1} << 60); }, ErrorKind::kInvalidArgument,
     "strides"},
    {"negative device id", [](Producer& p) { p.t().device = DLDevice{kDLCUDA, -1}; }, ErrorKind::kInvalidArgument,
     "device_id -1"},
    {"unknown device", [](Producer& p) { p.t().device = DLDevice{kDLExtDev, 0}; }, ErrorKind::kUnsupported,
     "kDLExtDev:0"},
    {"device type out of range", [](Producer& p) { p.t().device = DLDevice{static_cast<DLDeviceType>(1234), 0}; },
     ErrorKind::kUnsupported, "device type 1234"},
    {"major version", [](Producer& p) { p.versioned.version.major = 2; }, ErrorKind::kUnsupported, "version 2"},
    {"strided padded sub-byte",
     [](Producer& p) {
       p.t().dtype = DLDataType{kDLInt, 4, 1};
       p.versioned.flags = DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED;
       p.strides[0] = 7;
     },
     ErrorKind::kUnsupported, "strided padded"},
    {"strided sub-byte",
     [](Producer& p) {
       p.t().dtype = DLDataType{kDLUInt, 4, 1};
       p.strides[0] = 7;
     },
     ErrorKind::kUnsupported, "sub-byte"},
};

TEST(Import, EveryValidationErrorLeavesOwnershipWithTheCaller) {
  for (const BadCase& c : kBadCases) {
    SCOPED_TRACE(c.name);
    auto p = Producer::make(kF32, {3, 2});
    c.corrupt(*p);
    for (CopyMode mode : {CopyMode::kNever, CopyMode::kIfNeeded}) {
      try {
        from_dlpack(&p->versioned, ImportOptions{mode});
        ADD_FAILURE() << "accepted";
      } catch (const Error& e) {
        EXPECT_EQ(e.kind(), c.kind) << e.what();
        EXPECT_NE(std::string(e.what()).find(c.fragment), std::string::npos) << e.what();
      }
    }
    EXPECT_EQ(p->deletes, 0);
  }
}

TEST(Import, NullManagedTensor) {
  EXPECT_THROW(from_dlpack(static_cast<DLManagedTensorVersioned*>(nullptr)), Error);
  EXPECT_THROW(from_dlpack(static_cast<DLManagedTensor*>(nullptr)), Error);
}

TEST(Import, NullDeleterIsAllowed) {
  auto p = Producer::make(kF32, {2});
  p->versioned.deleter = nullptr;
  Imported in = from_dlpack(&p->versioned);
  in.tensor = Tensor();
  EXPECT_EQ(p->deletes, 0);
}

// A regression (found under UBSan): the lowest addressed offset was negated as int64 (-INT64_MIN overflows).
TEST(Import, StridesReachingExactlyInt64MinAreRejectedWithoutOverflow) {
  constexpr DLDataType kI8{kDLInt, 8, 1};
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
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

// copy=kAlways asks for one fresh copy: the producer's (IS_COPIED) or the import's own for a layout ORT cannot hold
// satisfies it, so no second one is made; otherwise the placement makes it.
TEST(Import, CopyAlwaysMakesExactlyOneCopy) {
  ImportOptions always;
  always.copy = CopyMode::kAlways;
  auto copied = Producer::make(kF32, {4});
  copied->versioned.flags |= DLPACK_FLAG_BITMASK_IS_COPIED;
  Imported a = from_dlpack(&copied->versioned, always);
  EXPECT_TRUE(a.copied);                               // the result is a fresh copy, the producer's
  EXPECT_EQ(a.tensor.data(), copied->buffer->data());  // the producer's copy is that copy
  EXPECT_FALSE(a.tensor.read_only());
  EXPECT_EQ(copied->deletes, 0);  // held, not copied: released with the tensor

  auto fresh = Producer::make(kF32, {4});
  Imported b = from_dlpack(&fresh->versioned, always);
  EXPECT_TRUE(b.copied);
  EXPECT_NE(b.tensor.data(), fresh->buffer->data());
  EXPECT_EQ(fresh->deletes, 1);

  auto strided = Producer::make(kF32, {2, 2}, 4 * sizeof(float));
  strided->strides = {4, 2};  // not compact: the import copies, and that copy is the fresh one
  strided->fill(kF32);
  always.target = Target::host();
  Imported c = from_dlpack(&strided->versioned, always);
  EXPECT_TRUE(c.copied);
  EXPECT_EQ(strided->deletes, 1);
  const auto* src = reinterpret_cast<const float*>(strided->buffer->data());
  EXPECT_EQ(std::memcmp(static_cast<const float*>(c.tensor.data()) + 1, &src[2], sizeof(float)), 0)
      << "element [0, 1] is the source's [2]";
}

// A producer's IS_COPIED tensor is the caller's alone; READ_ONLY on it means it is not the writable memory copy=kAlways
// promises (numpy and torch give a writable array for copy=True): it is copied once more, into writable memory.
TEST(Import, CopyAlwaysCopiesAReadOnlyProducerCopyAgain) {
  ImportOptions always;
  always.copy = CopyMode::kAlways;
  auto p = Producer::make(kF32, {2, 3});
  p->versioned.flags = DLPACK_FLAG_BITMASK_READ_ONLY | DLPACK_FLAG_BITMASK_IS_COPIED;
  Imported in = from_dlpack(&p->versioned, always);
  EXPECT_TRUE(in.copied);
  EXPECT_NE(in.tensor.data(), p->buffer->data());
  EXPECT_FALSE(in.tensor.read_only());
  EXPECT_EQ(p->deletes, 1);  // the copy no longer reads the producer's memory
  EXPECT_EQ(std::memcmp(in.tensor.data(), p->buffer->data(), 6 * sizeof(float)), 0);
}

// Imported::copied says what the result is, whoever copied: the producer's writable IS_COPIED tensor is a fresh copy
// under every mode (imported where it is: kNever forbids ortdlpack's copies, not the producer's); a read-only one,
// and one without the flag, are the producer's memory.
TEST(Import, CopiedReportsAProducersWritableCopyInEveryMode) {
  for (CopyMode mode : {CopyMode::kNever, CopyMode::kIfNeeded}) {
    for (uint64_t flags : {uint64_t{0}, uint64_t{DLPACK_FLAG_BITMASK_IS_COPIED},
                           uint64_t{DLPACK_FLAG_BITMASK_IS_COPIED | DLPACK_FLAG_BITMASK_READ_ONLY}}) {
      auto p = Producer::make(kF32, {4});
      p->versioned.flags = flags;
      ImportOptions options;
      options.copy = mode;
      Imported in = from_dlpack(&p->versioned, options);
      EXPECT_EQ(in.tensor.data(), p->buffer->data());
      EXPECT_EQ(in.copied, flags == DLPACK_FLAG_BITMASK_IS_COPIED) << "flags " << flags;
      EXPECT_EQ(in.tensor.read_only(), (flags & DLPACK_FLAG_BITMASK_READ_ONLY) != 0);
    }
  }
}

TEST(Import, AFailedPlacementLeavesTheProducersTensorWithTheCaller) {
  auto p = Producer::make(kF32, {4});
  ImportOptions to_cuda;
  to_cuda.copy = CopyMode::kNever;
  to_cuda.target = Target::on(DLDevice{kDLCUDA, 0});
  EXPECT_EQ(test::kind_of([&] { from_dlpack(&p->versioned, to_cuda); }), ErrorKind::kCopyRequired);
  EXPECT_EQ(p->deletes, 0);  // the caller still owns it, as on every failure
  p->versioned.deleter(&p->versioned);
  EXPECT_EQ(p->deletes, 1);
}

TEST(Import, ImmutableProducersImportReadOnly) {
  auto p = Producer::make(kF32, {4});
  ImportOptions immutable;
  immutable.read_only = true;
  const Imported in = from_dlpack(&p->versioned, immutable);
  EXPECT_TRUE(in.tensor.read_only());
  EXPECT_EQ(in.tensor.read_only_kind(), ReadOnly::kByContract);  // the flag, when there is one, wins: kFlagged
}

}  // namespace
}  // namespace ortdlpack
