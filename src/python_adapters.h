// Internal: what the Python binding needs from the core besides the public API — adapters to onnxruntime's Python
// API (which names devices its own way, wraps only some memory and describes sessions as NodeArgs) and the hook
// through which the binding finds installed EP packages. C++ users never need these.
#pragma once

#include <dlpack/dlpack.h>
#include <onnxruntime_c_api.h>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "run_plan.h"

namespace ortdlpack::python {

// --- devices, as onnxruntime's Python API names them -------------------------------------------------------------

// The device name onnxruntime's Python API uses for memory of that DLPack type ("cpu" for host memory, "cuda" for
// CUDA and ROCm memory); nullptr when onnxruntime has none.
const char* onnxruntime_device_name(DLDeviceType type);

// The device of `memory` as onnxruntime's C.OrtDevice(device_type, memory_type, vendor_id, device_id) takes it
// (onnxruntime numbers device and memory types as ORT's C API does: CPU 0, GPU 1, FPGA 2, NPU 3; DEFAULT 0,
// HOST_ACCESSIBLE 5). What its IOBinding binds any memory with, plugin EPs' included: by address for inputs and
// destinations, as the device ORT allocates an output on; the public IOBinding.bind_* name a device by type and
// id only, which finds no allocator for memory of a vendor but NVIDIA's ("Failed to find allocator for device").
// Every onnxruntime from 1.23 has that constructor. Error(kUnsupported) naming the version and the alternative for
// memory an onnxruntime cannot bind by address (GPU memory of vendors other than NVIDIA before onnxruntime 1.30).
struct OnnxruntimeDevice {
  int device_type;
  int memory_type;
  uint32_t vendor_id;
  int device_id;
};
OnnxruntimeDevice onnxruntime_device(const OrtMemoryInfo* memory);

// Whether onnxruntime's Python OrtValue.from_dlpack wraps memory of that type (CPU, CUDA, ROCm: the only public way
// to make an onnxruntime.OrtValue over foreign memory).
bool onnxruntime_wraps(DLDeviceType type);

// Whether onnxruntime's own OrtValue.from_dlpack reads `t` (with versioned `flags`) correctly as it is: compact
// row-major, aligned, byte_offset 0, a whole-byte element type ONNX has, writable, in memory it wraps. Such a tensor
// is handed to it without an import of ortdlpack's own. Never throws: a malformed tensor is not plain (importing it
// says why).
bool is_plain(const DLTensor& t, uint64_t flags = 0) noexcept;

// ORT device types and memory types by name ("cpu", "gpu", "fpga", "npu"; "default", "host_accessible"), as the
// binding spells them. Error(kInvalidArgument) for unknown names.
OrtMemoryInfoDeviceType ort_device_type_from_name(const std::string& name);
OrtDeviceMemoryType memory_type_from_name(const std::string& name);
// The same from the enums' values (onnxruntime's Python enums hold these); Error(kInvalidArgument) for a value that
// is not one.
OrtMemoryInfoDeviceType ort_device_type_from_value(long long value);
OrtDeviceMemoryType memory_type_from_value(long long value);

// The EP device of the env with that EP name and hardware device (type, vendor id, device id): how the binding finds
// the OrtEpDevice behind an onnxruntime.OrtEpDevice, which exposes no pointer. Error(kInvalidArgument) when the env
// has none.
const OrtEpDevice* find_ep_device(const std::string& ep_name, int64_t hardware_type, int64_t vendor_id,
                                  int64_t device_id);

// --- sessions, as onnxruntime's Python API describes them --------------------------------------------------------

// A session input or output as onnxruntime's NodeArg and OrtMemoryInfo report it: the ONNX type string
// ("tensor(float)"), dimensions (-1 for a symbolic or unknown one, with its name), and the fields of its memory.
struct IoDeclaration {
  std::string name;
  std::string type;                           // "tensor(float)", "seq(tensor(float))", ...
  std::optional<std::vector<int64_t>> shape;  // nullopt: no shape declared
  std::vector<std::string> dim_names;
  struct Memory {
    std::string name;  // the OrtMemoryInfo name ("Cpu", "Cuda", an EP's allocator name)
    int device_id = 0;
    OrtMemType mem_type = OrtMemTypeDefault;
    OrtAllocatorType allocator_type = OrtDeviceAllocator;
    OrtDeviceMemoryType device_mem_type = OrtDeviceMemoryType_DEFAULT;
    uint32_t vendor_id = 0;
  };
  std::optional<Memory> memory;  // nullopt: unknown (host)
};

// The SessionInfo of an InferenceSession from its declarations (inputs, outputs and overridable initializers).
// Memory is resolved to an OrtMemoryInfo owned by the SessionInfo: ORT's own for the names ORT knows
// (CreateMemoryInfo), else the memory of the env's EP device with that name, vendor and memory type; memory neither
// knows stays unknown (NULL, treated as host). `providers`: the session's execution provider names; the env's EP
// devices of those EPs are the session's (an EP library the env lacks is registered first, ensure_ep(): a built-in
// CUDA EP session's memory then has the env's allocator, data transfer and streams).
SessionInfo session_info(const std::vector<IoDeclaration>& inputs, const std::vector<IoDeclaration>& outputs,
                         const std::vector<IoDeclaration>& initializers, const std::vector<std::string>& providers);

// Whether numpy has the element type itself (bool, integers, floats): not bfloat16, float8, int4, ... (ml_dtypes').
bool numpy_has(ONNXTensorElementDataType type);

// Whether every output of the session comes out of onnxruntime's run as it comes out of an IOBinding: produced in
// host memory, as an element type numpy has (or as a value without a DLPack form). Then a run without destinations
// or placement may hand onnxruntime's run the caller's numpy arrays as they are (no import, no view).
bool host_outputs(const SessionInfo& info);

// Whether onnxruntime's InferenceSession.run runs the plan, on numpy views of the bound inputs (onnxruntime.OrtValues
// where numpy has no view) and the values as they are: it must when the plan needs values, and it gives what an
// IOBinding gives at less cost when no output has a destination and every bound input and output is in CPU memory,
// the outputs of element types numpy has. An IOBinding runs every other plan.
bool runs_with_values(const RunPlan& plan);

// --- installed EP packages ---------------------------------------------------------------------------------------

// An installed EP package, as its installer wrote it: its version, its folder (where its files are), the library it
// brings and the EP names it registers.
struct EpPackage {
  std::string distribution;
  std::string version;
  std::string folder;
  std::string library;
  std::vector<std::string> ep_names;
};

// Lists the installed EP packages of one distribution ("onnxruntime-ep-webgpu"), or of every distribution that
// follows the onnxruntime-ep-<name> convention when `distribution` is "". The core calls it without holding any
// lock of its own; it must not throw (an unreadable package is left out).
using EpPackageFinder = std::vector<EpPackage> (*)(const std::string& distribution);

// Installs the finder ensure_ep() asks for EP packages (none by default: then only ORT's folder is searched).
void set_ep_package_finder(EpPackageFinder finder);

// Every installed EP package the finder reports: the EP table's distributions (onnxruntime-qnn, ...) and every
// onnxruntime-ep-* one, each once. Registers nothing (show_config lists them).
std::vector<EpPackage> installed_ep_packages();

}  // namespace ortdlpack::python
