#include "ortdlpack/import.h"

#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "dlpack_layout.h"
#include "ort.h"
#include "ortdlpack/api.h"
#include "ortdlpack/device.h"
#include "ortdlpack/dtype.h"
#include "ortdlpack/error.h"
#include "ortdlpack/placement.h"
#include "ortdlpack/transfer.h"
#include "stream_order.h"
#include "strided_copy.h"

namespace ortdlpack {
namespace {

[[noreturn]] void invalid(const std::string& message) { throw Error(ErrorKind::kInvalidArgument, "DLPack " + message); }

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
}  // namespace

namespace detail {
// The one caller of Tensor's private constructor (tensor.h).
struct TensorOfImport {
  static Tensor make(OrtValue* value, ReadOnly read_only, DLDevice device) { return Tensor(value, read_only, &device); }
};
}  // namespace detail

namespace {

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
  Source<Managed> source{detail::TensorOfImport::make(value, read_only, t.device), allocator, false};
  if (source.tensor.element_type() != l.type) {
    allocator->managed = nullptr;  // the caller keeps `managed`: releasing the value runs no deleter
    detail::check_holds(l.type, source.tensor.element_type(), "DLPack import");
  }
  return source;
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
  const Layout l = validate(t, flags, options.uint8_as_bool);
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
