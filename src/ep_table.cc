#include "ep_table.h"

#include <cstring>
#include <iterator>

namespace ortdlpack::detail {
namespace {

#if defined(__APPLE__)
#define ORTDLPACK_LIB(stem) "lib" stem ".dylib"
#else
#define ORTDLPACK_LIB(stem) "lib" stem ".so"
#endif

constexpr OrtMemoryInfoDeviceType kGpu = OrtMemoryInfoDeviceType_GPU;
constexpr OrtDeviceMemoryType kDefault = OrtDeviceMemoryType_DEFAULT;
constexpr OrtDeviceMemoryType kHost = OrtDeviceMemoryType_HOST_ACCESSIBLE;

// The one table. CPU memory is no row (device type CPU is always kDLCPU), nor is the HOST_ACCESSIBLE memory of a
// vendor without a host DLPack type of its own: it is plain host memory, kDLCPU (device.cc).
constexpr EpRow kRows[] = {
    {"CPUExecutionProvider",
     {"cpu", "CPU"},
     0,
     {},
     nullptr,
     {},
     "",
     nullptr,
     StreamBackend::kNone,
     nullptr,
     false,
     {},
     nullptr},
    // NVIDIA: the CUDA EP ships as a library of onnxruntime-gpu (built in, or as a plugin it registers itself), or as
    // a plugin EP package of its own (onnxruntime-ep-cuda13/-cuda12, module onnxruntime_ep_cuda). Whichever brings
    // it, its memory is NVIDIA memory and its sync streams' handles are cudaStream_ts.
    {"CUDAExecutionProvider",
     {"cuda", "CUDA"},
     kVendorNvidia,
     {{"Cuda", kGpu, kDefault, kDLCUDA}, {"CudaPinned", kGpu, kHost, kDLCUDAHost}},
     ORTDLPACK_LIB("onnxruntime_providers_cuda"),
     {"onnxruntime-ep-cuda13", "onnxruntime-ep-cuda12"},
     "pip install onnxruntime-gpu (or the CUDA EP package onnxruntime-ep-cuda13 / -cuda12)",
     "is an NVIDIA GPU and its driver present?",
     StreamBackend::kCudaRuntime,
     "user_compute_stream",
     true,
     {},
     "enable_cuda_graph"},
    {"TensorrtExecutionProvider",
     {"tensorrt", "trt", "TensorRT"},
     kVendorNvidia,
     {},  // its memory is the CUDA EP's
     ORTDLPACK_LIB("onnxruntime_providers_tensorrt"),
     {},
     "pip install onnxruntime-gpu, and TensorRT",
     "are an NVIDIA GPU, its driver and TensorRT present?",
     StreamBackend::kCudaRuntime,
     "user_compute_stream",
     true,
     {},
     "trt_cuda_graph_enable"},
    // The TensorRT RTX EP (a package of its own, CUDA 12 and 13 builds) allocates CUDA memory itself. Its package
    // must be imported for its library to load (it links its bundled TensorRT and CUDA runtime): the finder does.
    {"NvTensorRTRTXExecutionProvider",
     {"tensorrt_rtx", "nv_tensorrt_rtx", "NvTensorRtRtx"},
     kVendorNvidia,
     {{"TensorRTRTX", kGpu, kDefault, kDLCUDA}, {"TensorRTRTX host accessible", kGpu, kHost, kDLCUDAHost}},
     nullptr,
     {"onnxruntime-ep-nv-tensorrt-rtx-cu13", "onnxruntime-ep-nv-tensorrt-rtx-cu12", "onnxruntime-ep-nv-tensorrt-rtx"},
     "pip install onnxruntime-ep-nv-tensorrt-rtx-cu13 (or -cu12)",
     "is an NVIDIA RTX GPU and its driver present?",
     StreamBackend::kCudaRuntime,
     "user_compute_stream",
     true,
     {},
     "enable_cuda_graph"},
    // AMD.
    {"MIGraphXExecutionProvider",
     {"migraphx", "MIGraphX", "rocm"},
     kVendorAmd,
     {{"Hip", kGpu, kDefault, kDLROCM}, {"HipPinned", kGpu, kHost, kDLROCMHost}},
     ORTDLPACK_LIB("onnxruntime_providers_migraphx"),
     {},
     "pip install onnxruntime-migraphx",
     "is an AMD GPU and ROCm present?",
     StreamBackend::kNone,
     nullptr,
     false,
     {},
     nullptr},
    // Intel: onnxruntime-openvino ships the library next to ORT; onnxruntime-ep-openvino is the plugin package (whose
    // tensors live in host-accessible memory: kDLCPU). Intel GPU memory, where an EP exposes it, is oneAPI's.
    {"OpenVINOExecutionProvider",
     {"openvino", "OpenVINO"},
     kVendorIntel,
     {{"OneAPI", kGpu, kDefault, kDLOneAPI}},
     ORTDLPACK_LIB("onnxruntime_providers_openvino"),
     {"onnxruntime-ep-openvino"},
     "pip install onnxruntime-ep-openvino (or onnxruntime-openvino)",
     "its factory offers Intel hardware only (CPU vendor 0x8086, Intel GPUs and NPUs)",
     StreamBackend::kNone,
     nullptr,
     false,
     {},
     nullptr},
    // Apple: the MLX EP keeps its I/O in CPU memory (unified memory: kDLCPU); Apple GPU memory, where an EP
    // exposes it, is Metal's.
    {"MLXExecutionProvider",
     {"mlx", "MLX"},
     kVendorApple,
     {{"Metal", kGpu, kDefault, kDLMetal}},
     nullptr,
     {"onnxruntime-ep-mlx"},
     "pip install onnxruntime-ep-mlx",
     "MLX runs on Apple silicon only",
     StreamBackend::kNone,
     nullptr,
     false,
     {},
     nullptr},
    // WebGPU buffers: handles, not addresses (only a WebGPU consumer can read them). ORT reports them with vendor 0.
    {"WebGpuExecutionProvider",
     {"webgpu", "WebGPU"},
     0,
     {{"WebGPU_Buf", kGpu, kDefault, kDLWebGPU}},
     nullptr,
     {"onnxruntime-ep-webgpu"},
     "pip install onnxruntime-ep-webgpu",
     "WebGPU needs a GPU with a Vulkan driver; on a machine without one, a software adapter such as Mesa's lavapipe "
     "and ORT_WEBGPU_EP_ALLOW_SOFTWARE_ADAPTER=1 in the environment",
     StreamBackend::kNone,
     nullptr,
     false,
     {},
     "enableGraphCapture"},
    // Qualcomm: the QNN EP package (onnxruntime-qnn >= 2, module onnxruntime_qnn). Its tensors live in host memory
    // (its HTP shared memory is HOST_ACCESSIBLE: kDLCPU). It cannot choose a QNN backend by itself on every host
    // (x86_64 Linux: "Could not determine default backend path"): HTP (the NPU; a simulator on x86_64) unless the
    // caller names a backend library.
    {"QNNExecutionProvider",
     {"qnn", "QNN"},
     kVendorQualcomm,
     {},
     nullptr,
     {"onnxruntime-qnn"},
     "pip install onnxruntime-qnn",
     nullptr,
     StreamBackend::kNone,
     nullptr,
     false,
     {"backend_type", "htp", "backend_path"},
     nullptr},
    // ggml's EP (onnxruntime-ggml, module onnxruntime_ggml): host memory; it runs on the CPU, or on a GPU through
    // ggml's own Vulkan backend (provider option device=gpu) with its buffers still host memory to ORT.
    {"ggml",
     {"GGML"},
     0,
     {},
     nullptr,
     {"onnxruntime-ggml"},
     "pip install onnxruntime-ggml",
     "onnxruntime-ggml 0.2 needs ONNX Runtime >= 1.29 and says why on stderr",
     StreamBackend::kNone,
     nullptr,
     false,
     {},
     nullptr},
};

template <class Rows>
size_t memory_count(const Rows& memory) {
  size_t n = 0;
  while (n < std::size(memory) && memory[n].name != nullptr) ++n;
  return n;
}

bool row_matches(const EpRow& ep, const MemoryRow& row, const MemoryFields& m) {
  if (row.memory_type != m.memory_type) return false;
  if (row.memory_type != kHost && row.device_type != m.device_type) return false;
  const bool same_name = std::strcmp(row.name, m.name) == 0;
  if (ep.vendor_id == 0) return same_name;
  return m.vendor_id == ep.vendor_id || (m.vendor_id == 0 && same_name);
}

// The first memory row of `ep` matching `m`, or nullptr.
const MemoryRow* matching_row(const EpRow& ep, const MemoryFields& m) {
  for (size_t i = 0; i < memory_count(ep.memory); ++i) {
    if (row_matches(ep, ep.memory[i], m)) return &ep.memory[i];
  }
  return nullptr;
}

}  // namespace

const EpRow* EpTable::begin() const noexcept { return std::begin(kRows); }
const EpRow* EpTable::end() const noexcept { return std::end(kRows); }

const EpRow* find_ep(const std::string& name) {
  for (const EpRow& ep : kRows) {
    if (name == ep.ep_name) return &ep;
    for (const char* alias : ep.aliases) {
      if (alias != nullptr && name == alias) return &ep;
    }
  }
  return nullptr;
}

const EpRow* owner_of(const MemoryFields& memory, const MemoryRow** row) {
  // EPs identified by their memory's name first: their memory is theirs whatever vendor ORT reports with it.
  for (bool by_name : {true, false}) {
    for (const EpRow& ep : kRows) {
      if ((ep.vendor_id == 0) != by_name) continue;
      if (const MemoryRow* r = matching_row(ep, memory)) {
        if (row != nullptr) *row = r;
        return &ep;
      }
    }
  }
  return nullptr;
}

const EpRow* owner_of(DLDeviceType type, const MemoryRow** row) {
  for (const EpRow& ep : kRows) {
    for (size_t i = 0; i < memory_count(ep.memory); ++i) {
      if (ep.memory[i].dl_type == type) {
        if (row != nullptr) *row = &ep.memory[i];
        return &ep;
      }
    }
  }
  return nullptr;
}

bool owns(const EpRow& ep, const MemoryFields& memory) { return matching_row(ep, memory) != nullptr; }

}  // namespace ortdlpack::detail
