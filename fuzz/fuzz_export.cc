// libFuzzer harness for the export path: bytes -> a tensor (any ONNX element type, shape, read-only kind, memory:
// CPU, the virtual device's guarded DEFAULT memory on two devices and its HOST_ACCESSIBLE memory, memory nothing
// allocates, a non-tensor OrtValue), then a fuzzed sequence of what a consumer does with it: to_dlpack_versioned
// (any extra flags), to_dlpack_legacy, legacy_view, the re-import of each, place() under every CopyMode and target,
// to() and copy() (matching and mismatched pairs).
//
// Invariants checked (abort on violation): only ortdlpack::Error escapes; an export describes the tensor exactly
// (data, device, dtype, shape, row-major strides, byte_offset 0, version, flags = extra | READ_ONLY when read-only)
// and holds one share of it until its deleter runs, once; what cannot be exported (strings, types DLPack lacks,
// read-only or sub-byte as legacy) is an error, not an export; re-imports of exports are zero-copy; a placement is
// where its target asks, copies exactly when it must, and a copy holds the source's bytes, is writable and leaves
// the source alone; a failed copy() writes no host destination. Device bytes are compared after a copy back to the
// CPU. Allocations stay small (1 MiB) or overflow int64, which must be an error before anything is allocated.
#include <dlpack/dlpack.h>
#include <fuzzer/FuzzedDataProvider.h>
#include <onnxruntime_c_api.h>
#include <sanitizer/lsan_interface.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "canary.h"
#include "env_at_exit.h"
#include "ortdlpack/ortdlpack.h"
#include "placement_rules.h"
#include "virtual_device_env.h"

namespace {

using ortdlpack::CopyMode;
using ortdlpack::Error;
using ortdlpack::ErrorKind;
using ortdlpack::ReadOnly;
using ortdlpack::Target;
using ortdlpack::Tensor;

std::string g_context;  // what the input made, printed on failure

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "fuzz_export: invariant violated: %s\n  %s\n", what, g_context.c_str());
  std::abort();
}

constexpr size_t kMaxBytes = 1 << 20;

// The memories a tensor can live in. Filled once: CPU, the virtual device's memories (when the plugin is built),
// CUDA pinned memory (no allocator without CUDA: an error path), and a GPU memory no EP serves.
struct Memories {
  std::vector<const OrtMemoryInfo*> all;
  std::vector<DLDevice> devices;  // DLPack devices a target may name
};
Memories g_memories;

const OrtMemoryInfo* pick_memory(FuzzedDataProvider& in) {
  return g_memories.all[in.ConsumeIntegralInRange<size_t>(0, g_memories.all.size() - 1)];
}

DLDevice pick_device(FuzzedDataProvider& in) {
  DLDevice d = g_memories.devices[in.ConsumeIntegralInRange<size_t>(0, g_memories.devices.size() - 1)];
  if (in.ConsumeIntegralInRange<int>(0, 15) == 0) d.device_id = in.ConsumeIntegralInRange<int32_t>(-1, 3);
  return d;
}

// Every value ONNXTensorElementDataType can hold (0..31: a C enum without a fixed type holds the values of its
// enumerators' bit width; any other value is the caller's undefined behaviour, as for DLDeviceType in fuzz_import),
// named or not, UNDEFINED and STRING included.
// Waits for the copies ortdlpack queued on device streams: they hold shares of their sources until they ran
// (transfer.cc), so share counts are compared only when nothing is queued.
void settle() {
  for (const OrtMemoryInfo* m : g_memories.all) ortdlpack::synchronize(m);
}

ONNXTensorElementDataType pick_type(FuzzedDataProvider& in) {
  return static_cast<ONNXTensorElementDataType>(in.ConsumeIntegralInRange<int>(0, 31));
}

// A shape: small dims, zero dims next to huge ones, or dims whose product overflows int64.
std::vector<int64_t> pick_shape(FuzzedDataProvider& in) {
  std::vector<int64_t> shape(in.ConsumeIntegralInRange<size_t>(0, 5));
  for (int64_t& d : shape) {
    switch (in.ConsumeIntegralInRange<int>(0, 15)) {
      case 0:
        d = int64_t{1} << in.ConsumeIntegralInRange<int>(20, 62);
        break;
      case 1:
        d = -in.ConsumeIntegralInRange<int64_t>(1, 2);
        break;
      case 2:
        d = 0;
        break;
      default:
        d = in.ConsumeIntegralInRange<int64_t>(1, 5);
        break;
    }
  }
  return shape;
}

// Whether asking ORT for this tensor is safe under the fuzzer's memory limit: small, empty, or with an element
// count that overflows int64 (refused before anything is allocated; a count that fits is allocated, however large).
bool allocatable(const std::vector<int64_t>& shape) {
  __int128 count = 1;
  for (int64_t d : shape) {
    if (d < 0) return true;  // refused before allocating
    if (d == 0) return true;
    if (count < (__int128{1} << 64)) count *= d;
  }
  return count <= static_cast<__int128>(kMaxBytes / 8) || count > INT64_MAX;
}

// The tensor's bytes as the host sees them (a device tensor is copied to the CPU first).
std::vector<unsigned char> bytes_of(const Tensor& t) {
  if (t.byte_size() == 0) return {};
  if (t.host_accessible()) {
    const auto* p = static_cast<const unsigned char*>(t.data());
    return {p, p + t.byte_size()};
  }
  const Tensor host = ortdlpack::to(t, DLDevice{kDLCPU, 0});
  if (!host.host_accessible() || host.byte_size() != t.byte_size()) fail("to(CPU) of a device tensor");
  const auto* p = static_cast<const unsigned char*>(host.data());
  return {p, p + host.byte_size()};
}

// Fills a tensor with a pattern (through a CPU tensor for device memory).
void fill(const Tensor& t, unsigned char seed) {
  if (t.byte_size() == 0) return;
  Tensor host = t.host_accessible() ? t : ortdlpack::allocate(t.element_type(), t.shape(), DLDevice{kDLCPU, 0});
  auto* p = static_cast<unsigned char*>(host.data());
  for (size_t i = 0; i < host.byte_size(); ++i) p[i] = static_cast<unsigned char>(i * 37 + seed);
  if (!t.host_accessible()) ortdlpack::copy(host, t);
}

bool same_device(DLDevice a, DLDevice b) { return a.device_type == b.device_type && a.device_id == b.device_id; }

// The DLTensor an export made, against the tensor it exports.
void check_export(const DLTensor& d, const Tensor& t) {
  if (d.data != t.data()) fail("an export moved the data");
  if (!same_device(d.device, t.device())) fail("an export's device is not the tensor's");
  const DLDataType dtype = ortdlpack::to_dlpack_dtype(t.element_type());
  if (d.dtype.code != dtype.code || d.dtype.bits != dtype.bits || d.dtype.lanes != 1) fail("an export's dtype");
  if (d.byte_offset != 0) fail("an export's byte_offset is not 0");
  const ortdlpack::ShapeView shape = t.shape();
  if (d.ndim != static_cast<int32_t>(shape.size())) fail("an export's ndim");
  if (d.ndim == 0) {
    if (d.shape != nullptr || d.strides != nullptr) fail("a 0-d export has shape or strides");
    return;
  }
  if (d.shape == nullptr || d.strides == nullptr) fail("an export has no shape or no strides (DLPack 1.2)");
  const bool empty = t.element_count() == 0;
  __int128 stride = 1;
  for (int32_t i = d.ndim - 1; i >= 0; --i) {
    if (d.shape[i] != shape[static_cast<size_t>(i)]) fail("an export's shape");
    // Row-major; size-0/1 dims keep nonzero strides; an empty tensor's strides may saturate at INT64_MAX.
    if (!empty && d.strides[i] != stride) fail("an export's strides are not row-major");
    if (empty && d.strides[i] <= 0) fail("an empty export has a stride <= 0");
    stride *= d.shape[i] > 1 ? d.shape[i] : 1;
    if (stride > INT64_MAX) stride = INT64_MAX;
  }
}

// Whether the running ORT creates tensors of `type` as that type (ORT 1.29 creates a C-API FLOAT8E8M0 tensor as INT2,
// which import and allocate refuse, although the FLOAT8E8M0 tensors ORT makes itself export): asked once per type.
bool ort_creates(ONNXTensorElementDataType type) {
  static int known[64] = {};  // 0 unknown, 1 yes, 2 no
  const size_t i = static_cast<size_t>(type) & 63;
  if (known[i] == 0) {
    try {
      ortdlpack::allocate(type, {1}, DLDevice{kDLCPU, 0});
      known[i] = 1;
    } catch (const Error&) {
      known[i] = 2;
    }
  }
  return known[i] == 1;
}

// Re-imports an export (owning it) and checks it is the same memory, without a copy.
template <class Managed>
void reimport(Managed* m, const Tensor& t, uint64_t flags) {
  const bool empty = t.element_count() == 0;
  const bool producer_copy =
      (flags & DLPACK_FLAG_BITMASK_IS_COPIED) != 0 && (flags & DLPACK_FLAG_BITMASK_READ_ONLY) == 0;
  try {
    ortdlpack::Imported again = ortdlpack::from_dlpack(m);  // kNever, where it is
    if (!empty && again.tensor.data() != t.data()) fail("the re-import of an export is not zero-copy");
    if (again.copied != producer_copy) fail("a re-import's copied flag is not the export's writable IS_COPIED");
    if (again.tensor.element_type() != t.element_type() || again.tensor.shape() != t.shape()) {
      fail("a re-import's type or shape differs");
    }
    if (again.tensor.read_only() != ((flags & DLPACK_FLAG_BITMASK_READ_ONLY) != 0)) fail("a re-import's read-only");
  } catch (const Error& e) {
    // Only what the export's own extra flags made unimportable (a padded sub-byte flag on a packed type), or a type
    // this ORT cannot create (refused as kUnsupported, saying so).
    const bool padded =
        (flags & DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED) != 0 && ortdlpack::dtype_bits(t.element_type()) < 8;
    if (!padded && !(e.kind() == ErrorKind::kUnsupported && !ort_creates(t.element_type()))) {
      std::fprintf(stderr, "fuzz_export: %s\n", e.what());
      fail("an export does not import again");
    }
    m->deleter(m);  // a failed import leaves the tensor with the caller
  }
}

void export_versioned(FuzzedDataProvider& in, const Tensor& t) {
  uint64_t extra = 0;
  switch (in.ConsumeIntegralInRange<int>(0, 3)) {
    case 1:
      extra = DLPACK_FLAG_BITMASK_IS_COPIED;
      break;
    case 2:
      extra = in.ConsumeIntegral<uint64_t>();
      break;
    default:
      break;
  }
  const long before = t.use_count();
  DLManagedTensorVersioned* m = nullptr;
  try {
    m = ortdlpack::to_dlpack_versioned(t, extra);
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::kUnsupported) fail("a versioned export failed with another kind than kUnsupported");
    if (t.use_count() != before) fail("a failed export kept a share");
    return;
  }
  if (t.use_count() != before + 1) fail("an export does not hold exactly one share");
  if (m->version.major != DLPACK_MAJOR_VERSION || m->version.minor != DLPACK_MINOR_VERSION) fail("export version");
  if (m->flags != (extra | (t.read_only() ? DLPACK_FLAG_BITMASK_READ_ONLY : 0))) fail("an export's flags");
  check_export(m->dl_tensor, t);
  switch (in.ConsumeIntegralInRange<int>(0, 2)) {
    case 0:
      m->deleter(m);
      break;
    case 1: {
      DLManagedTensor* l = ortdlpack::legacy_view(m);  // owns m
      if (std::memcmp(&l->dl_tensor, &m->dl_tensor, sizeof(DLTensor)) != 0) fail("legacy_view changed the tensor");
      reimport(l, t, 0);
      break;
    }
    default:
      reimport(m, t, m->flags);
      break;
  }
  if (t.use_count() != before) fail("an export's share was not dropped");
}

void export_legacy(FuzzedDataProvider& in, const Tensor& t) {
  const long before = t.use_count();
  DLManagedTensor* m = nullptr;
  try {
    m = ortdlpack::to_dlpack_legacy(t);
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::kUnsupported) fail("a legacy export failed with another kind than kUnsupported");
    if (t.use_count() != before) fail("a failed export kept a share");
    return;
  }
  if (t.read_only_kind() == ReadOnly::kFlagged) fail("a flagged read-only tensor was exported as legacy");
  if (ortdlpack::dtype_bits(t.element_type()) < 8) fail("a packed sub-byte tensor was exported as legacy");
  check_export(m->dl_tensor, t);
  if (in.ConsumeBool()) {
    m->deleter(m);
  } else {
    reimport(m, t, 0);
  }
  if (t.use_count() != before) fail("an export's share was not dropped");
}

Target pick_target(FuzzedDataProvider& in) {
  switch (in.ConsumeIntegralInRange<int>(0, 3)) {
    case 0:
      return Target::anywhere();
    case 1:
      return Target::host();
    case 2:
      return Target::on(pick_device(in));
    default:
      return Target::in(pick_memory(in));
  }
}

void check_copy_of(const Tensor& copy, const Tensor& source, const std::vector<unsigned char>& source_bytes) {
  if (copy.read_only()) fail("a copy is read-only");
  if (copy.element_type() != source.element_type() || copy.shape() != source.shape()) fail("a copy's type or shape");
  if (copy.byte_size() != 0 && copy.data() == source.data()) fail("a copy shares the source's memory");
  if (bytes_of(copy) != source_bytes) fail("a copy does not hold the source's bytes");
}

void place_one(FuzzedDataProvider& in, const Tensor& t, const std::vector<unsigned char>& bytes) {
  static constexpr CopyMode kModes[] = {CopyMode::kNever, CopyMode::kIfNeeded, CopyMode::kAlways};
  const CopyMode mode = kModes[in.ConsumeIntegralInRange<int>(0, 2)];
  const Target target = pick_target(in);
  bool there = false;
  try {
    there = ortdlpack::is_at(t, target);
  } catch (const Error&) {
    fail("is_at threw");
  }
  try {
    const ortdlpack::Placed p = ortdlpack::place(t, target, mode, "fuzz");
    if (!ortdlpack::is_at(p.tensor, target)) fail("a placement is not where its target asks");
    if (p.copied != (mode == CopyMode::kAlways || !there)) fail("a placement copied when it need not, or did not");
    if (mode == CopyMode::kNever && p.copied) fail("kNever copied");
    if (p.copied) {
      check_copy_of(p.tensor, t, bytes);
    } else if (p.tensor.ort_value() != t.ort_value()) {
      fail("a placement without a copy is not the tensor itself");
    }
  } catch (const Error& e) {
    if (mode != CopyMode::kAlways && there) {
      std::fprintf(stderr, "fuzz_export: %s\n", e.what());
      fail("a placement where the tensor already is failed");
    }
    if (mode == CopyMode::kNever && e.kind() != ErrorKind::kCopyRequired) fail("kNever elsewhere is not kCopyRequired");
  }
  if (bytes_of(t) != bytes) fail("a placement changed its source");
}

void copy_pair(FuzzedDataProvider& in, const Tensor& t, const std::vector<unsigned char>& bytes) {
  // A destination like the source, or differing in type or shape, possibly read-only, in any memory.
  const ONNXTensorElementDataType type = in.ConsumeIntegralInRange<int>(0, 5) == 0 ? pick_type(in) : t.element_type();
  std::vector<int64_t> shape = t.shape();
  if (in.ConsumeIntegralInRange<int>(0, 5) == 0) shape = pick_shape(in);
  if (!allocatable(shape)) return;
  Tensor dst;
  try {
    dst = ortdlpack::allocate(type, shape, pick_memory(in));
  } catch (const Error&) {
    return;
  }
  const bool matches = type == t.element_type() && dst.shape() == t.shape();
  fill(dst, 0x5a);
  const std::vector<unsigned char> before = bytes_of(dst);
  const bool read_only = in.ConsumeIntegralInRange<int>(0, 7) == 0;
  if (read_only) {
    // The same memory, flagged read-only: a destination ortdlpack must refuse.
    OrtValue* view = nullptr;
    ortdlpack::check(ortdlpack::ort().CreateTensorWithDataAsOrtValue(dst.memory_info(), dst.data(), dst.byte_size(),
                                                                     dst.shape().data(), dst.shape().size(),
                                                                     dst.element_type(), &view));
    Tensor keep = dst;
    dst = Tensor(view, ReadOnly::kFlagged);
    try {
      ortdlpack::copy(t, dst);
      fail("copy() into a read-only destination succeeded");
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::kInvalidArgument) fail("a read-only destination is not kInvalidArgument");
    }
    if (bytes_of(keep) != before) fail("a refused copy() wrote its destination");
    return;
  }
  try {
    ortdlpack::copy(t, dst);
    if (!matches) fail("copy() of mismatched tensors succeeded");
    if (bytes_of(dst) != bytes) fail("copy() did not copy the bytes");
  } catch (const Error& e) {
    if (matches && t.byte_size() != 0 && e.kind() == ErrorKind::kInvalidArgument) {
      std::fprintf(stderr, "fuzz_export: %s\n", e.what());
      fail("copy() of a matching pair was refused as invalid");
    }
    if (!matches && e.kind() != ErrorKind::kInvalidArgument) fail("a mismatched copy() is not kInvalidArgument");
    if (dst.host_accessible() && bytes_of(dst) != before) fail("a failed copy() wrote its host destination");
  }
  if (bytes_of(t) != bytes) fail("copy() changed its source");
}

// The tensor under test: allocated by ortdlpack, or an OrtValue made here and taken by a Tensor with a read-only
// kind (a non-tensor value must be refused and released).
Tensor make_tensor(FuzzedDataProvider& in) {
  const ONNXTensorElementDataType type = pick_type(in);
  const std::vector<int64_t> shape = pick_shape(in);
  const OrtMemoryInfo* memory = pick_memory(in);
  const int how = in.ConsumeIntegralInRange<int>(0, 7);
  g_context = "type " + std::to_string(type) + " shape [";
  for (int64_t d : shape) g_context += std::to_string(d) + ",";
  g_context += "] memory " + ortdlpack::describe_memory(memory) + " how " + std::to_string(how);
  if (!allocatable(shape)) return {};
  if (how == 0) {  // a sequence of one small float tensor: not a tensor
    OrtValue* element = nullptr;
    OrtAllocator* a = nullptr;
    ortdlpack::check(ortdlpack::ort().GetAllocatorWithDefaultOptions(&a));
    const int64_t dims[] = {2};
    ortdlpack::check(
        ortdlpack::ort().CreateTensorAsOrtValue(a, dims, 1, ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, &element));
    OrtValue* sequence = nullptr;
    const OrtValue* elements[] = {element};
    OrtStatus* s = ortdlpack::ort().CreateValue(elements, 1, ONNX_TYPE_SEQUENCE, &sequence);
    ortdlpack::ort().ReleaseValue(element);
    if (s != nullptr) {
      ortdlpack::ort().ReleaseStatus(s);
      return {};
    }
    try {
      Tensor t(sequence);
      fail("a sequence became a Tensor");
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::kInvalidArgument) fail("a sequence is not kInvalidArgument");
    }
    return {};
  }
  if (how <= 2) {  // straight from ORT, any type ORT has (strings too), with a read-only kind
    OrtAllocator* a = nullptr;
    ortdlpack::check(ortdlpack::ort().GetAllocatorWithDefaultOptions(&a));
    OrtValue* value = nullptr;
    if (OrtStatus* s = ortdlpack::ort().CreateTensorAsOrtValue(a, shape.data(), shape.size(), type, &value)) {
      ortdlpack::ort().ReleaseStatus(s);
      return {};
    }
    return Tensor(value, how == 1 ? ReadOnly::kFlagged : ReadOnly::kByContract);
  }
  try {
    return ortdlpack::allocate(type, shape, memory);
  } catch (const Error&) {
    return {};
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // One-time set-up: ORT's env (ORT 1.29 loses 14 bytes inside CreateEnv, see tests/sanitizer/lsan.supp) and the
  // virtual device; what ORT allocates here is process-wide state, not something an input can leak.
  __lsan_disable();
  ortdlpack::init(OrtGetApiBase());
  std::vector<const OrtMemoryInfo*>& m = g_memories.all;
  m.push_back(ortdlpack::memory_info(DLDevice{kDLCPU, 0}));
  g_memories.devices = {{kDLCPU, 0}, {kDLCUDA, 0}, {kDLCUDAHost, 0}, {kDLVulkan, 0}};
#ifdef ORTDLPACK_VD_PATH
  setenv(ORTDLPACK_VD_STREAM_DELAY_ENV, "20", 1);  // queued copies stay asynchronous, briefly
  const auto vd = ortdlpack::test::VirtualDeviceEnv::load("fuzz_export_vd");
  for (size_t i = 0; i < vd.devices.size(); ++i) m.push_back(vd.memory(i));
  m.push_back(vd.memory(0, OrtDeviceMemoryType_HOST_ACCESSIBLE));
  for (int32_t id = 0; id < 2; ++id) g_memories.devices.push_back(DLDevice{kDLExtDev, id});
#endif
  try {
    m.push_back(ortdlpack::memory_info(DLDevice{kDLCUDAHost, 0}));
  } catch (const Error&) {
  }
  OrtMemoryInfo* unserved = nullptr;
  ortdlpack::check(ortdlpack::ort().CreateMemoryInfo_V2("FuzzGpu", OrtMemoryInfoDeviceType_GPU, 0xF22, 0,
                                                        OrtDeviceMemoryType_DEFAULT, 0, OrtDeviceAllocator, &unserved));
  m.push_back(unserved);  // process lifetime
  ortdlpack::fuzz::release_env_at_exit();
  __lsan_enable();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (ortdlpack::fuzz::is_canary(data, size)) fail("the self-test's canary input (a finding on purpose)");
  FuzzedDataProvider in(data, size);
  try {
    const Tensor t = make_tensor(in);
    if (!t) return 0;
    fill(t, static_cast<unsigned char>(size));
    const std::vector<unsigned char> bytes = bytes_of(t);
    settle();
    const long shares = t.use_count();
    for (int step = 0; step < 6 && in.remaining_bytes() > 0; ++step) {
      settle();
      switch (in.ConsumeIntegralInRange<int>(0, 4)) {
        case 0:
          export_versioned(in, t);
          break;
        case 1:
          export_legacy(in, t);
          break;
        case 2:
          place_one(in, t, bytes);
          break;
        case 3:
          copy_pair(in, t, bytes);
          break;
        default:
          try {
            check_copy_of(ortdlpack::to(t, pick_memory(in)), t, bytes);
          } catch (const Error&) {
          }
          break;
      }
    }
    settle();
    if (t.use_count() != shares) fail("a share of the tensor was kept");
  } catch (const Error& e) {
    // Setting up (fill, bytes_of) may fail only where the memory has no transfer; those inputs end here.
    if (e.kind() != ErrorKind::kUnsupported && e.kind() != ErrorKind::kRuntime) {
      std::fprintf(stderr, "fuzz_export: %s\n", e.what());
      fail("an unexpected error");
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fuzz_export: unexpected exception: %s\n", e.what());
    fail("an exception other than ortdlpack::Error escaped");
  }
  return 0;
}
