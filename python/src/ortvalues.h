// The onnxruntime.OrtValue boundary (ortvalue.cc), through what the installed onnxruntime has (1.23 on).
#pragma once

#include "extension.h"

namespace ortdlpack::py {

bool is_ortvalue(nb::handle x);
// onnxruntime.OrtValue over an unconsumed legacy capsule (bool told to onnxruntime < 1.32 its own way).
nb::object ortvalue_from_capsule(nb::handle capsule);
// An onnxruntime.OrtValue sharing `t`'s memory and keeping it alive, complete (work pending on it is waited for: the
// value's readers order nothing). BufferError for memory it cannot wrap (CPU, CUDA and ROCm only).
nb::object ortvalue_of(const Tensor& t);
// An unconsumed legacy capsule of an onnxruntime.OrtValue's tensor, bool tensors typed kDLBool.
nb::object capsule_of_ortvalue(nb::handle ortvalue);

}  // namespace ortdlpack::py
