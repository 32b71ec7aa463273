// Internal: the placement decision's parts, without acting on it (placement.h's place() acts on it). For the core's
// own checks, its tests and the fuzz harnesses; no C++ user calls them.
#pragma once

#include "ortdlpack/placement.h"
#include "ortdlpack/tensor.h"

namespace ortdlpack {

// The one memory `target` names: memory_info(device) for kDevice (Error(kUnsupported) for a device nothing maps),
// the memory for kMemory; NULL for kAnywhere and kHost, which name none (they depend on the tensor).
const OrtMemoryInfo* named_memory(const Target& target);

// Whether `t` already is where `target` asks.
bool is_at(const Tensor& t, const Target& target);

// The decision alone, without acting on it: whether place() copies (Error(kCopyRequired) when `copy` forbids
// the copy it needs). Lets a caller prepare for a copy (a front end releases its interpreter lock) only when one comes.
bool copies(const Tensor& t, const Target& target, CopyMode copy, const char* what);

}  // namespace ortdlpack
