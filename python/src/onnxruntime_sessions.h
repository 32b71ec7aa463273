// Sessions as onnxruntime's Python API describes them: the core's SessionInfo of an onnxruntime.InferenceSession from
// its NodeArgs and OrtMemoryInfo fields, and which of onnxruntime's two ways to run (its run, its IOBinding) carries
// out a plan. Plain C++ (no Python): the extension links it, tests/cpp tests it.
#pragma once

#include <onnxruntime_c_api.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "run_plan.h"
#include "session_info.h"

namespace ortdlpack::py {

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

}  // namespace ortdlpack::py
