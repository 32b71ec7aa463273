// ortdlpack: one RAII owner for ORT C API handles, like ORT_DEFINE_RELEASE + Ort::Base<T> in onnxruntime_cxx_api.h.
//
//   Owned<OrtValue> v(raw);          // ReleaseValue(raw) when v goes, unless v.release() handed it on
//
// The releaser of each handle type is named once, below; the core never writes a releaser by hand.
#pragma once

#include <onnxruntime_c_api.h>

#include <memory>

#include "ortdlpack/api.h"

namespace ortdlpack {

template <class T>
struct Releaser;  // one specialisation per ORT handle type

#define ORTDLPACK_DEFINE_RELEASE(NAME)                                       \
  template <>                                                                \
  struct Releaser<Ort##NAME> {                                               \
    void operator()(Ort##NAME* p) const noexcept { ort().Release##NAME(p); } \
  };

ORTDLPACK_DEFINE_RELEASE(Value)
ORTDLPACK_DEFINE_RELEASE(Status)
ORTDLPACK_DEFINE_RELEASE(TensorTypeAndShapeInfo)
ORTDLPACK_DEFINE_RELEASE(TypeInfo)
ORTDLPACK_DEFINE_RELEASE(MemoryInfo)
ORTDLPACK_DEFINE_RELEASE(IoBinding)
ORTDLPACK_DEFINE_RELEASE(Session)
ORTDLPACK_DEFINE_RELEASE(SessionOptions)
ORTDLPACK_DEFINE_RELEASE(RunOptions)
ORTDLPACK_DEFINE_RELEASE(SyncStream)
ORTDLPACK_DEFINE_RELEASE(ModelMetadata)
ORTDLPACK_DEFINE_RELEASE(ValueInfo)
ORTDLPACK_DEFINE_RELEASE(Node)
ORTDLPACK_DEFINE_RELEASE(Graph)
ORTDLPACK_DEFINE_RELEASE(Model)
#undef ORTDLPACK_DEFINE_RELEASE

// An owned ORT handle. ort() cannot fail once a handle exists: the API was there to create it.
template <class T>
using Owned = std::unique_ptr<T, Releaser<T>>;

}  // namespace ortdlpack
