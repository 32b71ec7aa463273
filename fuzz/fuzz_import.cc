// libFuzzer harness for DLPack import: bytes -> a DLManagedTensorVersioned or DLManagedTensor (every field fuzzed:
// ndim, shape, strides, dtype, device, flags, version, byte_offset, data), fed to ortdlpack::from_dlpack with every
// CopyMode. What imports is exported again (versioned and legacy), re-imported, and copied to the CPU with
// ortdlpack::to; the copy is compared with the harness's own gather of the producer's bytes.
//
// The library cannot know a foreign buffer's size (it checks only that addresses neither overflow nor wrap), so
// the harness decides what the producer really owns: a descriptor whose addressed bytes all lie inside the
// harness's buffer (and are few enough to copy) is "readable" and goes through every mode; any other descriptor is
// imported with CopyMode::kNever only and never read back, which is the one path that must not touch the memory.
//
// Invariants checked (abort on violation): only ortdlpack::Error escapes; the producer's deleter runs exactly once
// when an import succeeds (when its last Tensor goes, or at once for a copy) and never when it fails; readable
// imports and copies hold exactly the producer's elements in row-major order; re-imports are zero-copy.
#include <dlpack/dlpack.h>
#include <fuzzer/FuzzedDataProvider.h>
#include <onnxruntime_c_api.h>
#include <sanitizer/lsan_interface.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "canary.h"
#include "dlpack_layout.h"
#include "env_at_exit.h"
#include "ortdlpack/ortdlpack.h"
#include "placement_rules.h"

namespace {

constexpr size_t kBufferBytes = 4096;      // what the producer owns
constexpr size_t kMaxCopyBytes = 1 << 20;  // readable descriptors copy at most this much

alignas(64) unsigned char g_buffer[kBufferBytes];

const DLTensor* g_current = nullptr;  // the descriptor under test, printed on failure
uint64_t g_current_flags = 0;

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "fuzz_import: invariant violated: %s\n", what);
  if (const DLTensor* t = g_current) {
    std::fprintf(stderr, "  ndim %d dtype {%u,%u,%u} device {%d,%d} data %p (buffer %p) byte_offset %llu flags %llx\n",
                 t->ndim, t->dtype.code, t->dtype.bits, t->dtype.lanes, static_cast<int>(t->device.device_type),
                 t->device.device_id, t->data, static_cast<void*>(g_buffer),
                 static_cast<unsigned long long>(t->byte_offset), static_cast<unsigned long long>(g_current_flags));
    for (int32_t i = 0; t->shape != nullptr && i < t->ndim && i < 8; ++i) {
      std::fprintf(stderr, "  dim %d: shape %lld stride %lld\n", i, static_cast<long long>(t->shape[i]),
                   t->strides ? static_cast<long long>(t->strides[i]) : 0LL);
    }
  }
  std::abort();
}

struct Producer {
  int deletes = 0;
  DLManagedTensorVersioned versioned{};
  DLManagedTensor legacy{};
  std::vector<int64_t> shape, strides;
};

void versioned_deleter(DLManagedTensorVersioned* self) { ++static_cast<Producer*>(self->manager_ctx)->deletes; }
void legacy_deleter(DLManagedTensor* self) { ++static_cast<Producer*>(self->manager_ctx)->deletes; }

int64_t pick_extent(FuzzedDataProvider& in) {
  switch (in.ConsumeIntegralInRange<int>(0, 15)) {
    case 0:
      return in.ConsumeIntegral<int64_t>();
    case 1:
      return -in.ConsumeIntegralInRange<int64_t>(1, 3);
    case 2:
      return INT64_MAX - in.ConsumeIntegralInRange<int64_t>(0, 2);
    case 3:
      return int64_t{1} << in.ConsumeIntegralInRange<int>(16, 62);
    default:
      return in.ConsumeIntegralInRange<int64_t>(0, 6);
  }
}

int64_t pick_stride(FuzzedDataProvider& in) {
  switch (in.ConsumeIntegralInRange<int>(0, 15)) {
    case 0:
      return in.ConsumeIntegral<int64_t>();
    case 1:
      return INT64_MIN + in.ConsumeIntegralInRange<int64_t>(0, 2);
    case 2:
      return INT64_MAX - in.ConsumeIntegralInRange<int64_t>(0, 2);
    default:
      return in.ConsumeIntegralInRange<int64_t>(-8, 48);
  }
}

DLDataType pick_dtype(FuzzedDataProvider& in) {
  static constexpr DLDataType kValid[] = {
      {kDLFloat, 32, 1},        {kDLFloat, 16, 1},        {kDLFloat, 64, 1},
      {kDLInt, 8, 1},           {kDLInt, 16, 1},          {kDLInt, 32, 1},
      {kDLInt, 64, 1},          {kDLUInt, 8, 1},          {kDLUInt, 64, 1},
      {kDLBool, 8, 1},          {kDLBfloat, 16, 1},       {kDLComplex, 64, 1},
      {kDLComplex, 128, 1},     {kDLInt, 4, 1},           {kDLUInt, 4, 1},
      {kDLFloat4_e2m1fn, 4, 1}, {kDLFloat8_e4m3fn, 8, 1}, {kDLFloat8_e5m2fnuz, 8, 1},
  };
  if (in.ConsumeIntegralInRange<int>(0, 7) != 0) {
    return kValid[in.ConsumeIntegralInRange<size_t>(0, sizeof kValid / sizeof kValid[0] - 1)];
  }
  DLDataType t;
  t.code = in.ConsumeIntegral<uint8_t>();
  t.bits = in.ConsumeIntegral<uint8_t>();
  t.lanes = in.ConsumeIntegral<uint16_t>();
  return t;
}

DLDevice pick_device(FuzzedDataProvider& in) {
  // Only enumerator values: DLDeviceType is a C enum without a fixed underlying type, so in C++ any other value is
  // not a valid DLDeviceType and a producer handing one over is itself at fault (reading it is undefined).
  static constexpr DLDeviceType kTypes[] = {kDLCPU,    kDLCUDA,    kDLCUDAHost, kDLOpenCL, kDLVulkan,      kDLMetal,
                                            kDLVPI,    kDLROCM,    kDLROCMHost, kDLExtDev, kDLCUDAManaged, kDLOneAPI,
                                            kDLWebGPU, kDLHexagon, kDLMAIA,     kDLTrn};
  DLDevice d{kDLCPU, 0};
  if (in.ConsumeIntegralInRange<int>(0, 3) == 0) {
    d.device_type = kTypes[in.ConsumeIntegralInRange<size_t>(0, sizeof kTypes / sizeof kTypes[0] - 1)];
    d.device_id = in.ConsumeIntegralInRange<int>(0, 3) == 0 ? in.ConsumeIntegral<int32_t>() : 0;
  }
  return d;
}

// What the descriptor addresses, computed independently of the library (128-bit, no overflow).
struct Extent {
  bool valid_shape = true;  // all dims >= 0
  __int128 count = 1;
  __int128 lo = 0, hi = 0;  // byte range [lo, hi) relative to `data`
  bool compact = true;
};

// A padded sub-byte tensor (IS_SUBBYTE_TYPE_PADDED) holds one element per byte.
Extent extent_of(const DLTensor& t, bool padded) {
  Extent e;
  const __int128 elem_bits = padded && t.dtype.bits < 8 ? 8 : t.dtype.bits;
  const __int128 elem = (elem_bits + 7) / 8;
  constexpr __int128 kHuge = __int128{1} << 40;  // beyond any readable size; keeps all arithmetic in range
  bool huge = false;
  for (int32_t i = 0; i < t.ndim; ++i) {
    if (t.shape[i] < 0) {
      e.valid_shape = false;
      return e;
    }
  }
  for (int32_t i = 0; i < t.ndim; ++i) {
    if (t.shape[i] == 0) huge = false, e.count = 0;
    if (e.count == 0) continue;
    if (huge || t.shape[i] >= kHuge || e.count * t.shape[i] >= kHuge) {
      huge = true;
      e.count = kHuge;
    } else {
      e.count *= t.shape[i];
    }
  }
  for (int32_t i = 0; i < t.ndim; ++i) {
    if (t.shape[i] == 0) e.count = 0;  // a zero dim anywhere makes it empty
  }
  if (!e.valid_shape || e.count == 0 || e.count >= kHuge) return e;
  __int128 base = static_cast<__int128>(reinterpret_cast<uintptr_t>(t.data)) + t.byte_offset;
  if (t.strides == nullptr) {
    e.lo = base;
    e.hi = base + (e.count * elem_bits + 7) / 8;
    return e;
  }
  __int128 lo = 0, hi = 0, expected = 1;
  for (int32_t i = t.ndim - 1; i >= 0; --i) {
    if (t.shape[i] != 1 && t.strides[i] != expected) e.compact = false;
    expected *= t.shape[i];
    const __int128 reach = static_cast<__int128>(t.shape[i] - 1) * t.strides[i];
    (reach < 0 ? lo : hi) += reach;
  }
  if (e.compact) {
    e.lo = base;
    e.hi = base + (e.count * elem_bits + 7) / 8;
  } else {
    e.lo = base + lo * elem;
    e.hi = base + hi * elem + elem;
  }
  return e;
}

// The producer's elements in row-major order (bytes), for readable byte-sized-element descriptors.
std::vector<unsigned char> gather(const DLTensor& t, size_t elem) {
  std::vector<unsigned char> out;
  const char* base = static_cast<const char*>(t.data) + t.byte_offset;
  std::vector<int64_t> index(static_cast<size_t>(t.ndim), 0);
  size_t count = 1;
  for (int32_t i = 0; i < t.ndim; ++i) count *= static_cast<size_t>(t.shape[i]);
  out.reserve(count * elem);
  for (size_t n = 0; n < count; ++n) {
    int64_t offset = 0;
    if (t.strides != nullptr) {
      for (int32_t i = 0; i < t.ndim; ++i) offset += index[static_cast<size_t>(i)] * t.strides[i];
    } else {
      offset = static_cast<int64_t>(n);
    }
    const char* p = base + offset * static_cast<int64_t>(elem);
    out.insert(out.end(), p, p + elem);
    for (int32_t i = t.ndim - 1; i >= 0; --i) {
      if (++index[static_cast<size_t>(i)] < t.shape[i]) break;
      index[static_cast<size_t>(i)] = 0;
    }
  }
  return out;
}

bool same_bytes(const ortdlpack::Tensor& host, const std::vector<unsigned char>& expected) {
  if (host.byte_size() != expected.size()) return false;
  return expected.empty() || std::memcmp(host.data(), expected.data(), expected.size()) == 0;
}

// Export `tensor` both ways, re-import each (zero-copy), and drop everything; every exported deleter must run once.
void export_round_trip(const ortdlpack::Tensor& tensor) {
  const long before = tensor.use_count();
  const bool empty = tensor.element_count() == 0;  // an empty tensor's data pointer means nothing
  try {
    DLManagedTensorVersioned* v = ortdlpack::to_dlpack_versioned(tensor);
    if (tensor.use_count() != before + 1) fail("versioned export does not hold one share");
    if (v->dl_tensor.data != tensor.data()) fail("versioned export moved the data");
    ortdlpack::Imported again = ortdlpack::from_dlpack(v);  // owns v now
    if (again.copied || (!empty && again.tensor.data() != tensor.data()))
      fail("re-import of an export is not zero-copy");
    if (again.tensor.read_only() != tensor.read_only()) fail("read-only flag lost in a round trip");
  } catch (const ortdlpack::Error&) {
  }
  try {
    DLManagedTensor* l = ortdlpack::to_dlpack_legacy(tensor);
    if (tensor.read_only_kind() == ortdlpack::ReadOnly::kFlagged) fail("read-only tensor exported as legacy");
    ortdlpack::Imported again = ortdlpack::from_dlpack(l);
    if (again.copied || (!empty && again.tensor.data() != tensor.data())) fail("legacy re-import is not zero-copy");
  } catch (const ortdlpack::Error&) {
  }
  if (tensor.use_count() != before) fail("an exported DLPack tensor's share was not dropped");
}

void run_one(Producer& p, bool versioned, const ortdlpack::ImportOptions& options, bool readable,
             const std::vector<unsigned char>* expected) {
  p.deletes = 0;
  bool imported = false;
  const uint64_t flags = versioned ? p.versioned.flags : 0;
  // The producer's own copy (docs/reliability.md, "IS_COPIED"): the caller's alone and writable.
  const bool producer_copy =
      (flags & DLPACK_FLAG_BITMASK_IS_COPIED) != 0 && (flags & DLPACK_FLAG_BITMASK_READ_ONLY) == 0;
  try {
    ortdlpack::Imported in =
        versioned ? ortdlpack::from_dlpack(&p.versioned, options) : ortdlpack::from_dlpack(&p.legacy, options);
    imported = true;
    // An import that copies releases the producer's tensor at once; one that holds it, when its last Tensor goes.
    const bool made_copy = p.deletes == 1;
    if (p.deletes > 1) fail("the deleter ran more than once");
    if (options.copy == ortdlpack::CopyMode::kNever && made_copy) fail("kNever copied");
    if (options.copy == ortdlpack::CopyMode::kAlways && !made_copy && !producer_copy) fail("kAlways did not copy");
    if (in.copied != (made_copy || producer_copy)) fail("Imported::copied does not say whether the result is a copy");
    if (in.copied && in.tensor.read_only()) fail("a fresh copy is read-only");
    if (!made_copy && in.tensor.element_count() != 0 &&
        in.tensor.data() != static_cast<char*>(p.versioned.dl_tensor.data) + p.versioned.dl_tensor.byte_offset) {
      fail("a zero-copy import does not point at the producer's data");
    }
    if (!made_copy && in.tensor.read_only() != ((flags & DLPACK_FLAG_BITMASK_READ_ONLY) != 0 ||
                                                (options.read_only && (flags & DLPACK_FLAG_BITMASK_IS_COPIED) == 0))) {
      fail("a zero-copy import lost or invented read-only");
    }
    if (!ortdlpack::is_at(in.tensor, options.target)) fail("the import is not where the target asks");
    export_round_trip(in.tensor);
    if (readable) {
      if (expected != nullptr && in.tensor.device().device_type == kDLCPU && !same_bytes(in.tensor, *expected)) {
        fail("imported tensor does not hold the producer's elements");
      }
      try {
        ortdlpack::Tensor host = ortdlpack::to(in.tensor, DLDevice{kDLCPU, 0});
        if (expected != nullptr && !same_bytes(host, *expected)) fail("to(CPU) does not hold the producer's elements");
        if (host.read_only()) fail("to() returned a read-only tensor");
      } catch (const ortdlpack::Error&) {
        if (in.tensor.device().device_type == kDLCPU) fail("to(CPU) of a CPU tensor failed");
      }
    }
  } catch (const ortdlpack::Error& e) {
    if (imported) {
      std::fprintf(stderr, "fuzz_import: %s\n", e.what());
      fail("an imported tensor raised an error where none was expected");
    }
    if (p.deletes != 0) fail("a failed import ran the deleter (the caller still owns the tensor)");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fuzz_import: unexpected exception: %s\n", e.what());
    fail("an exception other than ortdlpack::Error escaped");
  }
  if (imported && p.deletes != 1) fail("deleter did not run exactly once after a successful import");
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // One-time ORT set-up. ORT 1.29 loses 14 bytes inside CreateEnv (see tests/sanitizer/lsan.supp); what ORT
  // allocates here is its process-wide state, not something an input can leak.
  __lsan_disable();
  ortdlpack::init(OrtGetApiBase());
  ortdlpack::env();
  (void)ortdlpack::memory_info(DLDevice{kDLCPU, 0});
  ortdlpack::fuzz::release_env_at_exit();
  __lsan_enable();
  for (size_t i = 0; i < kBufferBytes; ++i) g_buffer[i] = static_cast<unsigned char>(i * 131 + 7);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (ortdlpack::fuzz::is_canary(data, size)) fail("the self-test's canary input (a finding on purpose)");
  FuzzedDataProvider in(data, size);
  Producer p;
  const bool versioned = in.ConsumeBool();
  DLTensor t{};
  // ndim: mostly small, sometimes anything (negative, > kMaxNdim).
  t.ndim = in.ConsumeIntegralInRange<int>(0, 7) == 0 ? in.ConsumeIntegralInRange<int32_t>(-2, 70)
                                                     : in.ConsumeIntegralInRange<int32_t>(0, 4);
  const bool shape_null = t.ndim > 0 && in.ConsumeIntegralInRange<int>(0, 31) == 0;
  const bool strides_null = in.ConsumeIntegralInRange<int>(0, 3) == 0;
  const size_t dims = t.ndim > 0 ? static_cast<size_t>(t.ndim) : 0;
  for (size_t i = 0; i < dims; ++i) p.shape.push_back(pick_extent(in));
  for (size_t i = 0; i < dims; ++i) p.strides.push_back(pick_stride(in));
  // Often make the strides the compact row-major ones, so zero-copy paths are reached.
  if (!strides_null && in.ConsumeBool()) {
    int64_t s = 1;
    for (size_t i = dims; i-- > 0;) {
      p.strides[i] = s;
      if (p.shape[i] > 0 && p.shape[i] < 64 && s < (int64_t{1} << 40)) s *= p.shape[i];
    }
  }
  t.shape = shape_null || dims == 0 ? nullptr : p.shape.data();
  t.strides = strides_null || dims == 0 ? nullptr : p.strides.data();
  t.dtype = pick_dtype(in);
  t.device = pick_device(in);
  t.byte_offset = in.ConsumeIntegralInRange<int>(0, 7) == 0 ? in.ConsumeIntegral<uint64_t>()
                                                            : in.ConsumeIntegralInRange<uint64_t>(0, 64);
  switch (in.ConsumeIntegralInRange<int>(0, 9)) {
    case 0:
      t.data = nullptr;
      break;
    case 1:
      t.data = reinterpret_cast<void*>(in.ConsumeIntegral<uintptr_t>());
      break;  // never dereferenced
    default:
      t.data = g_buffer + in.ConsumeIntegralInRange<size_t>(0, kBufferBytes);
      break;
  }
  uint64_t flags = 0;
  if (in.ConsumeBool()) flags |= DLPACK_FLAG_BITMASK_READ_ONLY;
  if (in.ConsumeBool()) flags |= DLPACK_FLAG_BITMASK_IS_COPIED;
  if (in.ConsumeIntegralInRange<int>(0, 7) == 0) flags |= DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED;
  if (in.ConsumeIntegralInRange<int>(0, 15) == 0) flags |= in.ConsumeIntegral<uint64_t>();
  p.versioned.version = in.ConsumeIntegralInRange<int>(0, 15) == 0
                            ? DLPackVersion{in.ConsumeIntegral<uint32_t>(), in.ConsumeIntegral<uint32_t>()}
                            : DLPackVersion{1, in.ConsumeIntegralInRange<uint32_t>(0, 3)};
  p.versioned.flags = flags;
  p.versioned.manager_ctx = &p;
  p.versioned.deleter = versioned_deleter;
  p.versioned.dl_tensor = t;
  p.legacy.manager_ctx = &p;
  p.legacy.deleter = legacy_deleter;
  p.legacy.dl_tensor = t;
  const bool uint8_as_bool = in.ConsumeBool();
  // Values consumed after the descriptor (older seeds read them as 0: read-write, no target).
  const bool read_only_by_contract = in.ConsumeIntegralInRange<int>(0, 3) == 1;
  ortdlpack::Target target = ortdlpack::Target::anywhere();
  switch (in.ConsumeIntegralInRange<int>(0, 7)) {
    case 1:
      target = ortdlpack::Target::host();
      break;
    case 2:
      target = ortdlpack::Target::on(DLDevice{kDLCPU, 0});
      break;
    case 3:
      target = ortdlpack::Target::on(pick_device(in));  // mostly devices this build has no memory for
      break;
    default:
      break;
  }
  g_current = &p.versioned.dl_tensor;
  g_current_flags = versioned ? flags : 0;

  // Readable: a well-formed shape whose addressed bytes lie in g_buffer and are few enough to copy.
  bool readable = false;
  std::vector<unsigned char> expected;
  bool have_expected = false;
  if (t.ndim >= 0 && t.ndim <= ortdlpack::kMaxNdim && (t.ndim == 0 || t.shape != nullptr)) {
    // The legacy struct has no flags, so its sub-byte tensors are packed; the padded extent, larger, covers both.
    const Extent e = extent_of(t, (flags & DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED) != 0);
    const __int128 buf_lo = reinterpret_cast<uintptr_t>(g_buffer);
    const __int128 buf_hi = buf_lo + kBufferBytes;
    const __int128 elem = (t.dtype.bits + 7) / 8;
    if (e.valid_shape && e.count * (elem == 0 ? 1 : elem) <= static_cast<__int128>(kMaxCopyBytes)) {
      readable = e.count == 0 || (t.data != nullptr && e.lo >= buf_lo && e.hi <= buf_hi);
      // Expected elements: byte-sized element types with lanes 1 (sub-byte ones only when compact).
      if (readable && e.count != 0 && t.dtype.lanes == 1 && t.dtype.bits >= 8 && t.dtype.bits % 8 == 0) {
        expected = gather(t, static_cast<size_t>(t.dtype.bits / 8));
        have_expected = true;
      } else if (readable && e.count == 0) {
        have_expected = true;
      }
    }
  }
  // uint8-as-bool imports reinterpret bytes as bool: the bytes themselves must still arrive unchanged.
  static constexpr ortdlpack::CopyMode kModes[] = {ortdlpack::CopyMode::kNever, ortdlpack::CopyMode::kIfNeeded,
                                                   ortdlpack::CopyMode::kAlways};
  for (ortdlpack::CopyMode mode : kModes) {
    if (!readable && mode != ortdlpack::CopyMode::kNever) continue;
    ortdlpack::ImportOptions options;
    options.copy = mode;
    options.uint8_as_bool = uint8_as_bool;
    options.read_only = read_only_by_contract;
    options.target = target;
    run_one(p, versioned, options, readable, have_expected ? &expected : nullptr);
  }
  g_current = nullptr;  // `p` goes now
  return 0;
}
