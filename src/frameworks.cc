#include "frameworks.h"

#include <dlpack/dlpack.h>

#include <initializer_list>

#include "ortdlpack/device.h"
#include "ortdlpack/dtype.h"
#include "ortdlpack/error.h"

namespace ortdlpack {
namespace {

struct FrameworkRow {
  Framework framework;
  const char* name;         // how messages and output_type= name it
  bool output_type;         // whether output_type= takes the name (TensorFlow's tensors come back as Tensors)
  const char* packages[2];  // the top-level packages that define its tensor types
  bool immutable;           // immutable_arrays()
  bool may_move;            // memory_may_move()
  bool host_only;           // reads_on_host(): host memory of any device type
  std::initializer_list<int> devices;  // the DLPack device types its from_dlpack takes; empty: any
};

// The one table of frameworks. The device types are those each framework's DLPack import takes, as measured (torch
// 2.15 refuses kDLCUDAHost, kDLCUDAManaged and kDLWebGPU with "Unsupported device_type"); numpy reads any memory the
// host reads, through ortdlpack's own array over it.
const FrameworkRow kRows[] = {
    {Framework::kOrtdlpack, "ortdlpack", true, {nullptr, nullptr}, false, false, false, {}},
    {Framework::kTorch,
     "torch",
     true,
     {"torch", nullptr},
     false,
     true,
     false,
     {kDLCPU, kDLCUDA, kDLROCM, kDLOneAPI, kDLMetal}},
    {Framework::kNumpy, "numpy", true, {"numpy", "onnxruntime"}, false, false, true, {}},
    {Framework::kCupy, "cupy", true, {"cupy", nullptr}, false, false, false, {kDLCUDA, kDLCUDAManaged, kDLROCM}},
    {Framework::kJax, "jax", true, {"jax", "jaxlib"}, true, false, false, {kDLCPU, kDLCUDA, kDLROCM}},
    {Framework::kTensorflow, "tensorflow", false, {"tensorflow", nullptr}, true, false, false, {kDLCPU, kDLCUDA}},
    {Framework::kLikeFeeds, "like_feeds", true, {nullptr, nullptr}, false, false, false, {}},
};

const FrameworkRow* row_of(Framework framework) {
  for (const FrameworkRow& r : kRows) {
    if (r.framework == framework) return &r;
  }
  return nullptr;  // kForeign
}

}  // namespace

std::optional<Framework> framework_named(const std::string& name) {
  for (const FrameworkRow& r : kRows) {
    if (r.output_type && name == r.name) return r.framework;
  }
  return std::nullopt;
}

std::string framework_names() {
  std::string s;
  for (const FrameworkRow& r : kRows) {
    if (r.output_type) s += std::string(s.empty() ? "'" : ", '") + r.name + "'";
  }
  return s;
}

const char* framework_name(Framework framework) {
  const FrameworkRow* r = row_of(framework);
  return r != nullptr ? r->name : "the feeds' framework";
}

Framework framework_of_package(const std::string& package) {
  for (const FrameworkRow& r : kRows) {
    for (const char* p : r.packages) {
      if (p != nullptr && package == p) return r.framework;
    }
  }
  return Framework::kForeign;
}

bool immutable_arrays(Framework framework) noexcept {
  const FrameworkRow* r = row_of(framework);
  return r != nullptr && r->immutable;
}

bool memory_may_move(Framework framework) noexcept {
  const FrameworkRow* r = row_of(framework);
  return r != nullptr && r->may_move;
}

bool reads_on_host(Framework framework) noexcept {
  const FrameworkRow* r = row_of(framework);
  return r != nullptr && r->host_only;
}

bool holds(Framework framework, const OrtMemoryInfo* memory, ONNXTensorElementDataType type) {
  const FrameworkRow* r = row_of(framework);
  if (r == nullptr) return true;
  // torch has no sub-byte dtypes (int4, uint4, float4_e2m1fn): its DLPack import refuses them.
  if (framework == Framework::kTorch && has_dlpack_dtype(type) && dtype_bits(type) < 8) return false;
  if (r->host_only) return host_accessible(memory);
  if (r->devices.size() == 0) return true;
  int device_type = -1;
  try {
    // (CPU memory as ortdlpack names it, the common case, without asking ORT)
    device_type = memory == memory_info(DLDevice{kDLCPU, 0}) ? kDLCPU : to_dlpack_device(memory).device_type;
  } catch (const Error&) {  // memory no DLPack device maps: no framework but ortdlpack's Tensor holds it
    return false;
  }
  for (int d : r->devices) {
    if (d == device_type) return true;
  }
  return false;
}

}  // namespace ortdlpack
