#include "ortdlpack/transfer.h"

#include <cstring>
#include <memory>
#include <string>

#include "ep_library.h"
#include "ort.h"
#include "ortdlpack/api.h"
#include "ortdlpack/device.h"
#include "ortdlpack/dtype.h"
#include "ortdlpack/error.h"
#include "stream_order.h"

namespace ortdlpack {
namespace {

void check_pair(const Tensor& src, const Tensor& dst, size_t i) {
  if (!src || !dst) throw Error(ErrorKind::kInvalidArgument, "copy: tensor " + std::to_string(i) + " is empty");
  if (dst.read_only()) {
    throw Error(ErrorKind::kInvalidArgument, "copy: destination " + std::to_string(i) + " is read-only");
  }
  if (src.element_type() != dst.element_type() || src.shape() != dst.shape()) {
    throw Error(ErrorKind::kInvalidArgument, "copy: tensor " + std::to_string(i) +
                                                 " differs in element type or shape between source and destination");
  }
}

// CopyTensors takes one source and one destination memory per call: run one call per (src, dst) memory pair, over
// the pairs `env_pairs` of src/dst.
void copy_through_env(const std::vector<Tensor>& src, const std::vector<Tensor>& dst,
                      const std::vector<size_t>& env_pairs, OrtSyncStream* stream) {
  std::vector<bool> done(env_pairs.size(), false);
  std::vector<const OrtValue*> batch_src;
  std::vector<OrtValue*> batch_dst;
  std::vector<size_t> batch;  // its pairs
  for (size_t head = 0; head < env_pairs.size(); ++head) {
    if (done[head]) continue;
    const OrtMemoryInfo* src_mem = src[env_pairs[head]].memory_info();
    const OrtMemoryInfo* dst_mem = dst[env_pairs[head]].memory_info();
    batch_src.clear();
    batch_dst.clear();
    batch.clear();
    for (size_t i = head; i < env_pairs.size(); ++i) {
      const size_t k = env_pairs[i];
      if (done[i] || !detail::same_memory(src[k].memory_info(), src_mem) ||
          !detail::same_memory(dst[k].memory_info(), dst_mem)) {
        continue;
      }
      batch_src.push_back(src[k].ort_value());
      batch_dst.push_back(dst[k].ort_value());
      batch.push_back(k);
      done[i] = true;
    }
    // The EPs serving both memories are registered first (the explicit step, ep_library.h).
    detail::ensure_ep_for(src_mem);
    detail::ensure_ep_for(dst_mem);
    // On ortdlpack's stream of the device (stream_order.h): after the producers' and ortdlpack's pending work there,
    // and complete on return when the destination is host memory.
    OrtStatus* status = nullptr;
    const QueuedCopy queued = ordered_copy(src_mem, dst_mem, stream, [&](OrtSyncStream* used) {
      status = ort().CopyTensors(env(), batch_src.data(), batch_dst.data(), used, batch_src.size());
      return status == nullptr;
    });
    detail::check(status, "copy from " + describe_memory(src_mem) + " to " + describe_memory(dst_mem) + " failed");
    // A copy left queued keeps its device sources alive until it ran (stream_order.h). A host source was read when
    // the copy was enqueued (pageable memory is staged then, as CUDA does; pinned sources complete on return), and a
    // destination is the caller's: the EP orders a free of device memory after the device's use of it (cudaFree,
    // the virtual device).
    if (!queued || src[batch.front()].host_accessible()) continue;
    auto sources = std::make_shared<std::vector<Tensor>>();
    size_t bytes = 0;
    for (size_t k : batch) {
      sources->push_back(src[k]);
      bytes += src[k].byte_size();
    }
    keep_until_done(queued, std::move(sources), bytes);
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
  detail::check_holds(type, tensor.element_type(), "allocate");
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
    throw Error(ErrorKind::kUnsupported,
                std::string("allocate: EP '") + ort().EpDevice_EpName(ep_device) + "' has no " +
                    (memory_type == OrtDeviceMemoryType_DEFAULT ? "DEFAULT" : "HOST_ACCESSIBLE") + " memory");
  }
  return allocate(type, shape, memory);
}

void copy(const std::vector<Tensor>& src, const std::vector<Tensor>& dst, OrtSyncStream* stream) {
  if (src.size() != dst.size()) {
    throw Error(ErrorKind::kInvalidArgument,
                "copy: " + std::to_string(src.size()) + " sources but " + std::to_string(dst.size()) + " destinations");
  }
  // Every pair is validated before anything is written: a bad pair must not leave earlier destinations copied.
  for (size_t i = 0; i < src.size(); ++i) check_pair(src[i], dst[i], i);
  std::vector<size_t> env_pairs, host_pairs;
  for (size_t i = 0; i < src.size(); ++i) {
    (src[i].host_accessible() && dst[i].host_accessible() ? host_pairs : env_pairs).push_back(i);
  }
  // The transfers that can fail (no data transfer for a pair, a device error) go first, so that such a failure
  // leaves the host destinations untouched.
  if (!env_pairs.empty()) copy_through_env(src, dst, env_pairs, stream);
  // ORT has no host-to-host data transfer.
  for (size_t i : host_pairs) {
    const size_t bytes = src[i].byte_size();
    if (bytes != 0 && src[i].data() != dst[i].data()) std::memcpy(dst[i].data(), src[i].data(), bytes);
  }
}

void copy(const Tensor& src, const Tensor& dst, OrtSyncStream* stream) {
  copy(std::vector<Tensor>{src}, std::vector<Tensor>{dst}, stream);
}

Tensor to(const Tensor& src, const OrtMemoryInfo* memory, OrtSyncStream* stream) {
  if (!src) throw Error(ErrorKind::kInvalidArgument, "to: empty Tensor");
  Tensor dst = allocate(src.element_type(), src.shape(), memory);
  copy(src, dst, stream);
  return dst;
}

Tensor to(const Tensor& src, DLDevice device, OrtSyncStream* stream) { return to(src, memory_info(device), stream); }

}  // namespace ortdlpack
