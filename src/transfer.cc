#include "ortdlpack/transfer.h"

#include <cstring>
#include <string>

#include "ep_library.h"
#include "ort.h"
#include "ortdlpack/api.h"
#include "ortdlpack/device.h"
#include "ortdlpack/dtype.h"
#include "ortdlpack/error.h"
#include "ortdlpack/stream.h"

namespace ortdlpack {
namespace {

void check_pair(const Tensor& src, const Tensor& dst, size_t i) {
  if (!src || !dst) throw Error(ErrorKind::kInvalidArgument, "copy: tensor " + std::to_string(i) + " is empty");
  if (dst.read_only()) {
    throw Error(ErrorKind::kInvalidArgument, "copy: destination " + std::to_string(i) + " is read-only");
  }
  if (src.element_type() != dst.element_type() || src.shape() != dst.shape()) {
    throw Error(ErrorKind::kInvalidArgument,
                "copy: tensor " + std::to_string(i) + " differs in element type or shape between source and destination");
  }
}

// CopyTensors takes one source and one destination memory per call: run one call per (src, dst) memory pair.
void copy_through_env(const std::vector<const OrtValue*>& src, const std::vector<OrtValue*>& dst,
                      const std::vector<const OrtMemoryInfo*>& src_mem, const std::vector<const OrtMemoryInfo*>& dst_mem,
                      OrtSyncStream* stream) {
  std::vector<bool> done(src.size(), false);
  std::vector<const OrtValue*> batch_src;
  std::vector<OrtValue*> batch_dst;
  for (size_t head = 0; head < src.size(); ++head) {
    if (done[head]) continue;
    batch_src.clear();
    batch_dst.clear();
    for (size_t i = head; i < src.size(); ++i) {
      if (done[i] || !detail::same_memory(src_mem[i], src_mem[head]) || !detail::same_memory(dst_mem[i], dst_mem[head])) {
        continue;
      }
      batch_src.push_back(src[i]);
      batch_dst.push_back(dst[i]);
      done[i] = true;
    }
    // On ortdlpack's stream of the device (stream.h): after the producers' and ortdlpack's pending work there, and
    // complete on return when the destination is host memory.
    // The EPs serving both memories are registered first (the explicit step, ep_library.h).
    detail::ensure_ep_for(src_mem[head]);
    detail::ensure_ep_for(dst_mem[head]);
    OrtStatus* status = nullptr;
    ordered_copy(src_mem[head], dst_mem[head], stream, [&](OrtSyncStream* used) {
      status = ort().CopyTensors(env(), batch_src.data(), batch_dst.data(), used, batch_src.size());
    });
    detail::check(status, "copy from " + describe_memory(src_mem[head]) + " to " + describe_memory(dst_mem[head]) +
                              " failed");
  }
}

}  // namespace

Tensor allocate(ONNXTensorElementDataType type, const std::vector<int64_t>& shape, const OrtMemoryInfo* memory) {
  if (memory == nullptr) throw Error(ErrorKind::kInvalidArgument, "allocate: OrtMemoryInfo is NULL");
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] < 0) {
      throw Error(ErrorKind::kInvalidArgument, "allocate: shape[" + std::to_string(i) + "] is negative");
    }
  }
  to_dlpack_dtype(type);  // rejects element types ortdlpack cannot exchange
  const OrtApi& api = ort();
  OrtAllocator* allocator = nullptr;
  if (detail::is_cpu_memory(memory)) {
    allocator = detail::default_allocator();
  } else {
    detail::ensure_ep_for(memory);  // the EP owning this memory may ship unregistered (onnxruntime-gpu's CUDA EP)
    check(api.GetSharedAllocator(env(), memory, &allocator));
    if (allocator == nullptr) throw Error(ErrorKind::kUnsupported, "allocate: " + detail::missing_ep_message(memory));
  }
  OrtValue* value = nullptr;
  check(api.CreateTensorAsOrtValue(allocator, shape.data(), shape.size(), type, &value));
  Tensor tensor(value);
  // ORT does not treat a NULL from a plugin allocator as a failure: the tensor would point at nothing.
  if (tensor.data() == nullptr && tensor.byte_size() != 0) {
    throw Error(ErrorKind::kRuntime, "allocation of " + std::to_string(tensor.byte_size()) + " bytes on " +
                                         describe_memory(memory) + " failed");
  }
  return tensor;
}

Tensor allocate(ONNXTensorElementDataType type, const std::vector<int64_t>& shape, DLDevice device) {
  return allocate(type, shape, memory_info(device));
}

Tensor allocate(ONNXTensorElementDataType type, const std::vector<int64_t>& shape, const OrtEpDevice* ep_device,
                OrtDeviceMemoryType memory_type) {
  if (ep_device == nullptr) throw Error(ErrorKind::kInvalidArgument, "allocate: OrtEpDevice is NULL");
  const OrtMemoryInfo* memory = ort().EpDevice_MemoryInfo(ep_device, memory_type);
  if (memory == nullptr) {
    throw Error(ErrorKind::kUnsupported, std::string("allocate: EP '") + ort().EpDevice_EpName(ep_device) +
                                             "' has no " +
                                             (memory_type == OrtDeviceMemoryType_DEFAULT ? "DEFAULT" : "HOST_ACCESSIBLE") +
                                             " memory");
  }
  return allocate(type, shape, memory);
}

void copy(const std::vector<Tensor>& src, const std::vector<Tensor>& dst, OrtSyncStream* stream) {
  if (src.size() != dst.size()) {
    throw Error(ErrorKind::kInvalidArgument, "copy: " + std::to_string(src.size()) + " sources but " +
                                                 std::to_string(dst.size()) + " destinations");
  }
  // Every pair is validated before anything is written: a bad pair must not leave earlier destinations copied.
  for (size_t i = 0; i < src.size(); ++i) check_pair(src[i], dst[i], i);
  std::vector<const OrtValue*> env_src;
  std::vector<OrtValue*> env_dst;
  std::vector<const OrtMemoryInfo*> src_mem, dst_mem;
  std::vector<size_t> host_pairs;
  for (size_t i = 0; i < src.size(); ++i) {
    const OrtMemoryInfo* sm = src[i].memory_info();
    const OrtMemoryInfo* dm = dst[i].memory_info();
    if (src[i].host_accessible() && dst[i].host_accessible()) {
      host_pairs.push_back(i);
      continue;
    }
    env_src.push_back(src[i].ort_value());
    env_dst.push_back(dst[i].ort_value());
    src_mem.push_back(sm);
    dst_mem.push_back(dm);
  }
  // The transfers that can fail (no data transfer for a pair, a device error) go first, so that such a failure
  // leaves the host destinations untouched.
  if (!env_src.empty()) copy_through_env(env_src, env_dst, src_mem, dst_mem, stream);
  // ORT has no host-to-host data transfer.
  for (size_t i : host_pairs) {
    const size_t bytes = src[i].byte_size();
    if (bytes != 0 && src[i].data() != dst[i].data()) std::memcpy(dst[i].data(), src[i].data(), bytes);
  }
}

void copy(const Tensor& src, const Tensor& dst, OrtSyncStream* stream) { copy(std::vector<Tensor>{src}, std::vector<Tensor>{dst}, stream); }

Tensor to(const Tensor& src, const OrtMemoryInfo* memory, OrtSyncStream* stream) {
  if (!src) throw Error(ErrorKind::kInvalidArgument, "to: empty Tensor");
  Tensor dst = allocate(src.element_type(), src.shape(), memory);
  copy(src, dst, stream);
  return dst;
}

Tensor to(const Tensor& src, DLDevice device, OrtSyncStream* stream) { return to(src, memory_info(device), stream); }

}  // namespace ortdlpack
