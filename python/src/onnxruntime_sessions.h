// Which plans of a user's onnxruntime.InferenceSession its own run carries out (the others the core executes):
// plain C++ (no Python), which the extension links and tests/cpp tests.
#pragma once

#include <onnxruntime_c_api.h>

#include "run_plan.h"
#include "session_info.h"

namespace ortdlpack::py {

// Whether numpy has the element type itself (bool, integers, floats): not bfloat16, float8, int4, ... (ml_dtypes').
bool numpy_has(ONNXTensorElementDataType type);

// Whether every output of the session comes out of onnxruntime's run as it comes out of the core's executor: produced
// in host memory, as an element type numpy has (or as a value without a DLPack form). Then a run without destinations
// or placement may hand onnxruntime's run the caller's numpy arrays as they are (no import, no view).
bool host_outputs(const SessionInfo& info);

// Whether onnxruntime's InferenceSession.run runs the plan, on numpy views of the bound inputs (onnxruntime.OrtValues
// where numpy has no view) and the values as they are: it must when the plan needs values, and it gives what the
// core's executor gives at less cost when no output has a destination and every bound input and output is in CPU
// memory, the outputs of element types numpy has. The core executes every other plan.
bool runs_with_values(const RunPlan& plan);

}  // namespace ortdlpack::py
