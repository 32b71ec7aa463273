// When a user's numpy arrays may go to onnxruntime.InferenceSession's own run as they are: plain C++ (no Python),
// which the extension links and tests/cpp tests.
#pragma once

#include <onnxruntime_c_api.h>

#include "binding_adapter.h"

namespace ortdlpack::py {

// Whether numpy has the element type itself (bool, integers, floats): not bfloat16, float8, int4, ... (ml_dtypes').
bool numpy_has(ONNXTensorElementDataType type);

// Whether every output of the session comes out of onnxruntime's run as it comes out of the core's executor: produced
// in host memory, as an element type numpy has (or as a value without a DLPack form). Then a run without destinations
// or placement may hand onnxruntime's run the caller's numpy arrays as they are (no import, no view).
bool host_outputs(const SessionInfo& info);

}  // namespace ortdlpack::py
