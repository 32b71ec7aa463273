// ortdlpack: zero-copy DLPack interop for ONNX Runtime tensors. The whole public C++ API.
//
// Ownership on failure, the one rule at every boundary: a function that takes ownership of an argument (a DLPack
// tensor, an OrtValue) has it from the call on, whether it returns or throws: if it throws, it has released it
// (legacy_view, Tensor(OrtValue*)). The one exception is DLPack's own consumer rule: from_dlpack (import.h) takes a
// DLPack tensor only when it returns; if it throws, the caller still owns the tensor (a capsule stays unconsumed).
#pragma once

#include "ortdlpack/api.h"        // init(): the ORT C API the core calls
#include "ortdlpack/device.h"     // OrtMemoryInfo <-> DLDevice
#include "ortdlpack/dtype.h"      // ONNX element type <-> DLDataType
#include "ortdlpack/ep.h"         // EPs by name; their libraries registered when needed
#include "ortdlpack/error.h"      // ortdlpack::Error
#include "ortdlpack/export.h"     // Tensor -> DLPack
#include "ortdlpack/handle.h"     // Owned<T>: RAII owner of ORT handles
#include "ortdlpack/import.h"     // DLPack -> Tensor, placed where asked
#include "ortdlpack/placement.h"  // place(): the one copy/no-copy decision
#include "ortdlpack/session.h"    // create and run sessions on Tensors through IoBinding
#include "ortdlpack/shapes.h"     // output shapes from input shapes, for frameworks' tracers
#include "ortdlpack/stream.h"     // stream ordering of device work
#include "ortdlpack/tensor.h"     // Tensor: shared owner of an OrtValue
#include "ortdlpack/transfer.h"   // allocate / copy / to
