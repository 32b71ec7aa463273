// Outputs in the caller's framework (output_frameworks.cc): output_type= names, the framework of a feed, and a Tensor
// made a torch, numpy, cupy or jax array over the same memory. Which framework holds what is the core's table
// (frameworks.h).
#pragma once

#include <vector>

#include "extension.h"

namespace ortdlpack::py {

// What a run's outputs are made as: a framework and, for kForeign, its importer (the feeds' package's from_dlpack: a
// module attribute, kept for the process's life like every module_attribute).
struct OutputFramework {
  Framework framework = Framework::kOrtdlpack;
  PyObject* importer = nullptr;
};
// An output_type= name (not None: the caller's default): TypeError/ValueError naming `what`.
Framework to_output_type(nb::handle spec, const char* what);
// The framework of a feed: torch, numpy (lists and scalars too: they become numpy arrays), cupy, jax, tensorflow, the
// framework of any other DLPack producer whose package has a from_dlpack (paddle, tvm_ffi, ...), else ortdlpack's.
OutputFramework framework_of(nb::handle feed);
// `t` as an object of the framework, sharing its memory (kOrtdlpack, kTensorflow: an ortdlpack.Tensor).
nb::object to_framework(const Tensor& t, const OutputFramework& f);
nb::object to_frameworks(const std::vector<Tensor>& tensors, const OutputFramework& f);
// Orders `t`, in memory the host cannot read, before the work torch's current stream (the caller's) queues next.
void order_for_torch(const Tensor& t);

}  // namespace ortdlpack::py
