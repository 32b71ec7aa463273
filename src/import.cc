#include "ortdlpack/import.h"

#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "ortdlpack/api.h"
#include "ortdlpack/device.h"
#include "ortdlpack/dtype.h"
#include "ortdlpack/error.h"
#include "ortdlpack/placement.h"
#include "ortdlpack/transfer.h"
#include "python_adapters.h"
#include "stream_order.h"
#include "strided_copy.h"

namespace ortdlpack {
namespace {

[[noreturn]] void invalid(const std::string& message) { throw Error(ErrorKind::kInvalidArgument, "DLPack " + message); }

// What validation learned about a DLPack tensor.
struct Layout {
  ONNXTensorElementDataType type;
  size_t count;  // elements
  size_t bytes;  // storage bytes of a compact copy
  char* data;    // data + byte_offset; NULL only when count == 0
  bool compact;  // row-major with no gaps (any stride on size-1 dims)
  bool aligned;  // data aligned to the element's scalar size
  bool padded;   // sub-byte elements one per byte (IS_SUBBYTE_TYPE_PADDED): ORT holds them only packed, as a copy
};

// The header fields: ndim, shape, device id, dtype and its flags.
void validate_header(const DLTensor& t, uint64_t flags, const ImportOptions& options, Layout& l) {
  if (t.ndim < 0 || t.ndim > kMaxNdim) {
    invalid("ndim " + std::to_string(t.ndim) + " is out of range [0, " + std::to_string(kMaxNdim) + "]");
  }
  if (t.ndim > 0 && t.shape == nullptr) invalid("shape is NULL with ndim " + std::to_string(t.ndim));
  if (t.device.device_id < 0) invalid("device_id " + std::to_string(t.device.device_id) + " is negative");
  l.type = from_dlpack_dtype(t.dtype, options.uint8_as_bool);
  l.padded = t.dtype.bits < 8 && (flags & DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED) != 0;
}

// Element count and byte size, which must fit ORT's int64 sizes. A zero dim makes the tensor empty whatever the
// others.
void validate_sizes(const DLTensor& t, Layout& l) {
  bool empty = false;
  for (int32_t i = 0; i < t.ndim; ++i) {
    if (t.shape[i] < 0) invalid("shape[" + std::to_string(i) + "] = " + std::to_string(t.shape[i]) + " is negative");
    empty = empty || t.shape[i] == 0;
  }
  constexpr uint64_t kMax = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  uint64_t count = empty ? 0 : 1;
  for (int32_t i = 0; i < t.ndim && !empty; ++i) {
    if (__builtin_mul_overflow(count, static_cast<uint64_t>(t.shape[i]), &count) || count > kMax) {
      invalid("shape: the element count overflows int64");
    }
  }
  uint64_t total_bits = 0;
  if (__builtin_mul_overflow(count, static_cast<uint64_t>(t.dtype.bits), &total_bits) || (total_bits + 7) / 8 > kMax) {
    invalid("shape: the byte size overflows int64");
  }
  l.count = static_cast<size_t>(count);
  l.bytes = static_cast<size_t>((total_bits + 7) / 8);
}

// Row-major with no gaps (any stride on size-1 dims; NULL strides are row-major). The shape was validated.
bool compact(const DLTensor& t) {
  if (t.strides == nullptr) return true;
  int64_t expected = 1;
  for (int32_t i = t.ndim - 1; i >= 0; --i) {
    if (t.shape[i] != 1 && t.strides[i] != expected) return false;
    expected *= t.shape[i];  // cannot overflow: bounded by the element count
  }
  return true;
}

// For a strided tensor with elements at `address`: every addressed element lies in the address space. The buffer's
// extent is unknown to a consumer; what can be checked is that the lowest and highest addressed offsets neither
// overflow nor wrap around.
void check_address_range(const DLTensor& t, uintptr_t address) {
  const int64_t elem = static_cast<int64_t>(t.dtype.bits / 8);
  int64_t lo = 0, hi = 0;
  for (int32_t i = 0; i < t.ndim; ++i) {
    int64_t reach = 0;
    if (__builtin_mul_overflow(t.shape[i] - 1, t.strides[i], &reach) || __builtin_mul_overflow(reach, elem, &reach) ||
        __builtin_add_overflow(reach < 0 ? lo : hi, reach, reach < 0 ? &lo : &hi)) {
      invalid("strides[" + std::to_string(i) + "] = " + std::to_string(t.strides[i]) + " overflows the address range");
    }
  }
  uintptr_t last = 0;
  // -lo in unsigned arithmetic: lo may be INT64_MIN, whose negation overflows int64.
  if (0 - static_cast<uint64_t>(lo) > address ||
      __builtin_add_overflow(address, static_cast<uint64_t>(hi) + elem, &last)) {
    invalid("strides address memory outside the address space");
  }
}

// Every field of a DLPack tensor from outside, and what the import needs to know about its layout.
Layout validate(const DLTensor& t, uint64_t flags, const ImportOptions& options) {
  Layout l{};
  validate_header(t, flags, options, l);
  validate_sizes(t, l);
  if (t.data == nullptr) {
    if (l.count != 0) invalid("data is NULL for a tensor of " + std::to_string(l.count) + " elements");
    l.compact = l.aligned = true;
    return l;
  }
  uintptr_t address = 0;
  if (__builtin_add_overflow(reinterpret_cast<uintptr_t>(t.data), t.byte_offset, &address)) {
    invalid("byte_offset " + std::to_string(t.byte_offset) + " overflows the data pointer");
  }
  l.data = reinterpret_cast<char*>(address);
  if (l.count == 0) {
    l.compact = l.aligned = true;
    return l;
  }
  const uint32_t bits = t.dtype.bits;
  if (bits < 8) {
    // Packed sub-byte elements: compact only (strides count elements, which do not start on byte boundaries); padded
    // ones compact too, packed by the copy ORT needs.
    if (!compact(t)) {
      throw Error(ErrorKind::kUnsupported, std::string("DLPack strided ") + (l.padded ? "padded" : "packed") +
                                               " sub-byte tensors are not supported");
    }
    l.compact = !l.padded;
    l.aligned = true;
    return l;
  }
  const size_t scalar = (t.dtype.code == kDLComplex ? bits / 2 : bits) / 8;
  l.aligned = address % scalar == 0;
  l.compact = compact(t);
  if (!l.compact) check_address_range(t, address);
  return l;
}

// An allocator used only for its Free: ORT calls it once, when the OrtValue over DLPack memory is released, and it
// hands the memory back to the producer by running the DLPack deleter (unless disarmed: the caller kept it).
template <class Managed>
struct DeleterAllocator {
  OrtAllocator base;  // first member: ORT passes &base back to the callbacks
  Managed* managed;
  const OrtMemoryInfo* info;

  DeleterAllocator(Managed* m, const OrtMemoryInfo* i) : base{}, managed(m), info(i) {
    base.version = kMinOrtApiVersion;
    base.Alloc = [](OrtAllocator*, size_t) -> void* { return nullptr; };
    base.Free = [](OrtAllocator* self, void*) {
      auto* a = reinterpret_cast<DeleterAllocator*>(self);
      if (a->managed != nullptr && a->managed->deleter != nullptr) a->managed->deleter(a->managed);
      delete a;
    };
    base.Info = [](const OrtAllocator* self) { return reinterpret_cast<const DeleterAllocator*>(self)->info; };
  }
};

// The imported tensor before placement: over the producer's memory (owning it through `allocator`), or a compact
// copy of it (`copied`; the producer's tensor is released once the import succeeds).
template <class Managed>
struct Source {
  Tensor tensor;
  DeleterAllocator<Managed>* allocator = nullptr;
  bool copied = false;
};

// A tensor over the producer's memory that owns `managed` (its deleter runs when ORT releases the value).
template <class Managed>
Source<Managed> wrap(Managed* managed, const Layout& l, const OrtMemoryInfo* memory, ReadOnly read_only) {
  const DLTensor& t = managed->dl_tensor;
  // ORT may refuse a NULL buffer even for an empty tensor; any non-NULL address does, as nothing is read.
  static char empty_buffer;
  void* data = l.data != nullptr ? l.data : &empty_buffer;
  auto* allocator = new DeleterAllocator<Managed>(managed, memory);
  OrtValue* value = nullptr;
  OrtStatus* status = ort().CreateTensorWithDataAndDeleterAsOrtValue(&allocator->base, data, l.bytes, t.shape,
                                                                     static_cast<size_t>(t.ndim), l.type, &value);
  if (status != nullptr) {
    delete allocator;  // the caller keeps `managed`
    check(status);
  }
  return {Tensor(value, read_only, &t.device), allocator, false};
}

// A compact copy of a layout ORT cannot hold (gaps, negative or overlapping strides, misaligned data): host memory
// only, and only when `copy` allows it.
template <class Managed>
Source<Managed> compact_copy(const DLTensor& t, const Layout& l, const OrtMemoryInfo* memory,
                             const ImportOptions& options) {
  if (options.copy == CopyMode::kNever) {
    throw Error(ErrorKind::kCopyRequired,
                std::string("DLPack tensor ") +
                    (l.padded    ? "holds one sub-byte element per byte (padded), which ORT packs"
                     : l.compact ? "data is not aligned to its element size"
                                 : "is not compact row-major") +
                    ": ORT can only hold it as a copy, and copying was not allowed");
  }
  if (!host_accessible(memory)) {
    throw Error(ErrorKind::kUnsupported,
                "DLPack tensor on " + describe_device(t.device) +
                    (l.padded ? " holds padded sub-byte elements" : " is not compact row-major") +
                    "; ortdlpack copies such layouts only in host memory");
  }
  Source<Managed> s;
  s.tensor = allocate(l.type, std::vector<int64_t>(t.shape, t.shape + t.ndim), memory);
  s.copied = true;
  const std::function<void()> gather = [&] {
    if (l.count == 0) return;
    if (l.padded) {
      detail::pack_sub_byte(s.tensor.data(), reinterpret_cast<const uint8_t*>(l.data), l.count, t.dtype.bits);
    } else if (l.compact) {
      std::memcpy(s.tensor.data(), l.data, l.bytes);
    } else {
      detail::strided_copy(s.tensor.data(), l.data, t.ndim, t.shape, t.strides, t.dtype.bits / 8);
    }
  };
  if (options.run_copy != nullptr) {
    options.run_copy(gather);
  } else {
    gather();
  }
  return s;
}

// Whether the producer's tensor is a fresh copy in the sense of copy=kAlways (Python's copy=True): memory the consumer
// holds alone (dlpack.h's IS_COPIED: "considered solely owned by the consumer") and may write, as numpy's and torch's
// copy=True arrays are. A READ_ONLY|IS_COPIED tensor is the consumer's but not writable: kAlways copies it again.
bool producer_copied(uint64_t flags) {
  return (flags & DLPACK_FLAG_BITMASK_IS_COPIED) != 0 && (flags & DLPACK_FLAG_BITMASK_READ_ONLY) == 0;
}

// The import protocol: validate, hold the memory as it is (or as a compact copy where ORT cannot hold it), then place
// it where the caller asks. copy=kAlways is satisfied by one fresh writable copy, whoever made it (the import, the
// producer: producer_copied, or the placement); Imported::copied says the result is such a copy, whoever made it.
template <class Managed>
Imported import_tensor(Managed* managed, uint64_t flags, const ImportOptions& options) {
  const DLTensor& t = managed->dl_tensor;
  const Layout l = validate(t, flags, options);
  const OrtMemoryInfo* memory = memory_info(t.device);
  if (!host_accessible(memory)) note_import(memory);  // the producer may have queued work before our stream
  // A fresh copy the producer made (IS_COPIED) is the consumer's, whatever the producer's contract for its arrays.
  const ReadOnly read_only = (flags & DLPACK_FLAG_BITMASK_READ_ONLY) != 0                        ? ReadOnly::kFlagged
                             : options.read_only && (flags & DLPACK_FLAG_BITMASK_IS_COPIED) == 0 ? ReadOnly::kByContract
                                                                                                 : ReadOnly::kNo;
  Source<Managed> source =
      l.compact && l.aligned ? wrap(managed, l, memory, read_only) : compact_copy<Managed>(t, l, memory, options);
  const bool fresh = source.copied || producer_copied(flags);
  const CopyMode mode = options.copy == CopyMode::kAlways && fresh ? CopyMode::kIfNeeded : options.copy;
  try {
    Placed placed = place(source.tensor, options.target, mode, "from_dlpack", nullptr, options.run_copy);
    if (source.copied && managed->deleter != nullptr) managed->deleter(managed);  // the copy no longer reads it
    return {std::move(placed.tensor), fresh || placed.copied};
  } catch (...) {
    if (source.allocator != nullptr) source.allocator->managed = nullptr;  // the caller keeps `managed`
    throw;
  }
}

}  // namespace

bool python::is_plain(const DLTensor& t, uint64_t flags) noexcept {
  if (t.byte_offset != 0 || (flags & DLPACK_FLAG_BITMASK_READ_ONLY) != 0 || t.dtype.bits < 8 ||
      t.dtype.code == kDLComplex) {
    return false;
  }
  if (!onnxruntime_wraps(t.device.device_type)) return false;
  try {
    const Layout l = validate(t, flags, ImportOptions{});
    return l.compact && l.aligned;
  } catch (...) {
    return false;
  }
}

Imported from_dlpack(DLManagedTensorVersioned* managed, const ImportOptions& options) {
  if (managed == nullptr) invalid("managed tensor is NULL");
  if (managed->version.major != DLPACK_MAJOR_VERSION) {
    throw Error(ErrorKind::kUnsupported, "DLPack version " + std::to_string(managed->version.major) + "." +
                                             std::to_string(managed->version.minor) +
                                             " is not supported (this build speaks " +
                                             std::to_string(DLPACK_MAJOR_VERSION) + ".x)");
  }
  return import_tensor(managed, managed->flags, options);
}

Imported from_dlpack(DLManagedTensor* managed, const ImportOptions& options) {
  if (managed == nullptr) invalid("managed tensor is NULL");
  return import_tensor(managed, 0, options);
}

}  // namespace ortdlpack
