#include "ortdlpack/export.h"

#include <limits>
#include <new>
#include <string>
#include <type_traits>

#include "ortdlpack/api.h"
#include "ortdlpack/device.h"
#include "ortdlpack/dtype.h"
#include "ortdlpack/error.h"

namespace ortdlpack {
namespace {

// One allocation per export: the managed tensor, the Tensor share that keeps the OrtValue alive, then shape and
// strides (2 * ndim int64) right behind the struct.
template <class Managed>
struct ExportContext {
  Managed managed{};
  Tensor owner;

  int64_t* dims() { return reinterpret_cast<int64_t*>(this + 1); }

  static void deleter(Managed* self) noexcept {
    auto* ctx = static_cast<ExportContext*>(self->manager_ctx);
    ctx->~ExportContext();
    ::operator delete(ctx);
  }
};
static_assert(sizeof(ExportContext<DLManagedTensorVersioned>) % alignof(int64_t) == 0);
static_assert(sizeof(ExportContext<DLManagedTensor>) % alignof(int64_t) == 0);

template <class Managed>
Managed* export_tensor(const Tensor& tensor, bool versioned) {
  if (!tensor) throw Error(ErrorKind::kInvalidArgument, "cannot export an empty Tensor");
  const ONNXTensorElementDataType type = tensor.element_type();
  const ShapeView dims = tensor.shape();
  const DLDataType dtype = to_dlpack_dtype(type);
  if (!versioned && dtype.bits < 8) {
    throw Error(ErrorKind::kUnsupported,
                std::string(dtype_name(type)) + " is a packed sub-byte type, which needs DLPack >= 1.1 (versioned)");
  }
  if (!versioned && tensor.read_only_kind() == ReadOnly::kFlagged) {
    throw Error(ErrorKind::kUnsupported,
                "a read-only tensor cannot be exported as a legacy DLPack tensor, which has no read-only flag");
  }
  const DLDevice device = tensor.device();

  using Context = ExportContext<Managed>;
  void* memory = ::operator new(sizeof(Context) + 2 * dims.size() * sizeof(int64_t));
  auto* ctx = new (memory) Context();
  ctx->owner = tensor;
  int64_t* shape = ctx->dims();
  int64_t* strides = shape + dims.size();
  int64_t stride = 1;
  for (size_t i = dims.size(); i-- > 0;) {
    shape[i] = dims[i];
    strides[i] = stride;
    // Size-0/1 dims keep nonzero strides, as torch and numpy do. Only an empty tensor can have dims whose product
    // overflows int64 (e.g. [0, 2^62, 4], accepted from DLPack or ORT); its strides address nothing: saturate.
    if (__builtin_mul_overflow(stride, dims[i] > 1 ? dims[i] : 1, &stride)) {
      stride = std::numeric_limits<int64_t>::max();
    }
  }
  DLTensor& t = ctx->managed.dl_tensor;
  t.data = tensor.data();
  t.device = device;
  t.ndim = static_cast<int32_t>(dims.size());
  t.dtype = dtype;
  t.shape = dims.size() ? shape : nullptr;
  t.strides = dims.size() ? strides : nullptr;
  t.byte_offset = 0;
  ctx->managed.manager_ctx = ctx;
  ctx->managed.deleter = &Context::deleter;
  return &ctx->managed;
}

}  // namespace

DLManagedTensorVersioned* to_dlpack_versioned(const Tensor& tensor, uint64_t extra_flags) {
  DLManagedTensorVersioned* m = export_tensor<DLManagedTensorVersioned>(tensor, true);
  m->version = DLPackVersion{DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION};
  m->flags = extra_flags | (tensor.read_only() ? DLPACK_FLAG_BITMASK_READ_ONLY : 0);
  return m;
}

DLManagedTensor* to_dlpack_legacy(const Tensor& tensor) { return export_tensor<DLManagedTensor>(tensor, false); }

namespace {
struct LegacyView {
  DLManagedTensor legacy;
  DLManagedTensorVersioned* inner;
  static void deleter(DLManagedTensor* self) noexcept {
    auto* v = static_cast<LegacyView*>(self->manager_ctx);
    if (v->inner->deleter != nullptr) v->inner->deleter(v->inner);
    delete v;
  }
};
}  // namespace

DLManagedTensor* legacy_view(DLManagedTensorVersioned* versioned) {
  if (versioned == nullptr) throw Error(ErrorKind::kInvalidArgument, "legacy_view: managed tensor is NULL");
  auto* v = new (std::nothrow) LegacyView{};
  if (v == nullptr) {
    if (versioned->deleter != nullptr) versioned->deleter(versioned);
    throw std::bad_alloc();
  }
  v->inner = versioned;
  v->legacy.dl_tensor = versioned->dl_tensor;
  v->legacy.manager_ctx = v;
  v->legacy.deleter = &LegacyView::deleter;
  return &v->legacy;
}

}  // namespace ortdlpack
