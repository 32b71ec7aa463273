#include "ortdlpack/tensor.h"

#include "ortdlpack/api.h"
#include "ortdlpack/device.h"
#include "ortdlpack/dtype.h"
#include "ortdlpack/error.h"
#include "ortdlpack/handle.h"

namespace ortdlpack {

// Everything ORT can tell about the tensor, read once: the value never changes type, shape, data or memory.
Tensor::Owner::Owner(OrtValue* v, ReadOnly ro) : read_only(ro) {
  const OrtApi& api = ort();
  bool read = false;
#if ORT_API_VERSION >= 24  // built against ORT 1.23 headers: only the slower path exists
  if (ort_api_version() >= 24) {
    check(api.GetTensorElementTypeAndShapeDataReference(v, &type, &dims, &ndim));  // ORT's storage, no allocation
    read = true;
  }
#endif
  if (!read) {
    OrtTensorTypeAndShapeInfo* raw = nullptr;
    check(api.GetTensorTypeAndShape(v, &raw));
    const Owned<OrtTensorTypeAndShapeInfo> info(raw);
    check(api.GetTensorElementType(info.get(), &type));
    check(api.GetDimensionsCount(info.get(), &ndim));
    owned_dims.resize(ndim);
    check(api.GetDimensions(info.get(), owned_dims.data(), ndim));
    dims = owned_dims.data();
  }
  count = 1;
  for (size_t i = 0; i < ndim; ++i) count *= static_cast<size_t>(dims[i]);
  try {
    bytes = storage_bytes(type, count);
  } catch (const Error&) {
    bytes = 0;  // strings and types DLPack cannot carry: no byte size anyone asks for (export refuses them)
  }
  check(api.GetTensorMutableData(v, &data));
  check(api.GetTensorMemoryInfo(v, &memory));
  host = ortdlpack::host_accessible(memory);
  value.reset(v);
}

Tensor::Tensor(OrtValue* value, ReadOnly read_only, const DLDevice* device) {
  if (value == nullptr) throw Error(ErrorKind::kInvalidArgument, "OrtValue is NULL");
  Owned<OrtValue> guard(value);  // released here if anything below fails
  int is_tensor = 0;
  check(ort().IsTensor(value, &is_tensor));
  if (!is_tensor) {
    throw Error(ErrorKind::kInvalidArgument,
                "OrtValue is not a tensor (sequences, maps and optionals have no DLPack form)");
  }
  auto owner = std::make_shared<Owner>(value, read_only);
  guard.release();
  if (device != nullptr) {
    owner->device = *device;
    owner->device_known = true;
  } else {
    try {
      owner->device = to_dlpack_device(owner->memory);
      owner->device_known = true;
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::kUnsupported) throw;  // memory no DLPack device maps: device() says so when asked
    }
  }
  owner_ = std::move(owner);
}

DLDevice Tensor::device() const {
  if (!owner_) throw Error(ErrorKind::kInvalidArgument, "empty Tensor");
  return owner_->device_known ? owner_->device : to_dlpack_device(owner_->memory);
}

}  // namespace ortdlpack
