// The OrtEp of the virtual device EP: a session may select it (SessionOptionsAppendExecutionProvider_V2, Python
// SessionOptions.add_provider_for_devices), but it claims no node (GetCapability adds nothing: the virtual device
// runs no kernels), so every node falls back to the CPU EP. What it adds to a session is the presence of a non-CPU
// EP whose default memory device is the virtual device: that is what makes ORT check feed/fetch locations and
// insert copies through the factory's data transfer (see README.md, "Sessions").
#pragma once

#include <cstdint>

#include "device_kind.h"

namespace ortdlpack::vd {

class VdEp : public OrtEp {
 public:
  // `device_id` is the virtual device the session selected (the first one if it selected several).
  VdEp(const OrtApi& api, const OrtEpApi& ep_api, uint32_t device_id) noexcept;
  ~VdEp();
  VdEp(const VdEp&) = delete;
  VdEp& operator=(const VdEp&) = delete;

  // Creates the DEFAULT memory info of the device. Must succeed before the EP is handed to ORT.
  OrtStatus* Init() noexcept;

 private:
  static const char* ORT_API_CALL GetNameImpl(const OrtEp* self) noexcept;
  static OrtStatus* ORT_API_CALL GetCapabilityImpl(OrtEp* self, const OrtGraph* graph,
                                                   OrtEpGraphSupportInfo* graph_support_info) noexcept;
  static OrtStatus* ORT_API_CALL CompileImpl(OrtEp* self, const OrtGraph** graphs, const OrtNode** fused_nodes,
                                             size_t count, OrtNodeComputeInfo** node_compute_infos,
                                             OrtNode** ep_context_nodes) noexcept;
  static void ORT_API_CALL ReleaseNodeComputeInfosImpl(OrtEp* self, OrtNodeComputeInfo** node_compute_infos,
                                                       size_t num_node_compute_infos) noexcept;
  static OrtStatus* ORT_API_CALL GetDefaultMemoryDeviceImpl(const OrtEp* self, const OrtMemoryDevice** device) noexcept;

  const OrtApi& api_;
  const OrtEpApi& ep_api_;
  uint32_t device_id_;
  OrtMemoryInfo* device_info_ = nullptr;  // DEFAULT memory of device_id_; its OrtMemoryDevice is the EP's identity
};

}  // namespace ortdlpack::vd
