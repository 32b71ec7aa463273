// What the module registers (module.cc calls each once): every Python-visible type and function of the extension, by
// the file that defines it.
#pragma once

#include "extension.h"

namespace ortdlpack::py {

void define_errors(nb::module_& m);             // errors.cc: CopyRequiredError, onnxruntime's classes
void define_device(nb::module_& m);             // devices.cc: ortdlpack.Device
void define_tensor(nb::module_& m);             // tensor.cc: ortdlpack.Tensor (numpy_arrays.cc, exchange_api.cc)
void define_dlpack(nb::module_& m);             // from_dlpack.cc: from_dlpack, as_ortvalue
void define_session(nb::module_& m);            // session.cc: Session, Binding, NodeArg, ModelMetadata
void define_run(nb::module_& m);                // run.cc: ortdlpack.run, InferenceSession's run and bind
void define_compiled_sessions(nb::module_& m);  // compiled_sessions.cc: the registry compiled code names sessions by
void define_torch_kernel(nb::module_& m);       // torch_kernel.cc: the kernels of torch's ortdlpack::run
void define_xla_ffi(nb::module_& m);            // xla_ffi.cc: the XLA FFI handlers of jax_function
void define_testing(nb::module_& m);            // testing.cc: ortdlpack._ortdlpack._testing (test builds only)

}  // namespace ortdlpack::py
