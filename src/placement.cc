#include "ortdlpack/placement.h"

#include <string>

#include "ort.h"
#include "ortdlpack/device.h"
#include "ortdlpack/error.h"
#include "ortdlpack/transfer.h"
#include "placement_rules.h"

namespace ortdlpack {
namespace {

// CPU memory is one memory whatever the kDLCPU id a caller names (memory_info() maps every id to it, and a CPU
// tensor's device() is kDLCPU 0): comparing the ids would ask for a copy that lands where the tensor already is.
bool same_device(DLDevice a, DLDevice b) {
  return a.device_type == b.device_type && (a.device_type == kDLCPU || a.device_id == b.device_id);
}

// The memory a copy for `target` goes to.
const OrtMemoryInfo* destination(const Tensor& t, const Target& target) {
  if (const OrtMemoryInfo* m = named_memory(target)) return m;
  return target.kind == Target::Kind::kHost ? memory_info(DLDevice{kDLCPU, 0}) : t.memory_info();
}

std::string describe_target(const Target& target) {
  switch (target.kind) {
    case Target::Kind::kAnywhere:
      return "where it is";
    case Target::Kind::kHost:
      return "host memory";
    case Target::Kind::kDevice:
      return describe_device(target.device);
    case Target::Kind::kMemory:
      return describe_memory(target.memory);
  }
  return "?";
}

}  // namespace

const OrtMemoryInfo* named_memory(const Target& target) {
  switch (target.kind) {
    case Target::Kind::kDevice:
      return memory_info(target.device);
    case Target::Kind::kMemory:
      return target.memory;
    case Target::Kind::kAnywhere:
    case Target::Kind::kHost:
      break;
  }
  return nullptr;
}

bool is_at(const Tensor& t, const Target& target) {
  if (target.kind == Target::Kind::kAnywhere) return true;
  if (target.kind == Target::Kind::kHost) return t.host_accessible();
  if (target.kind == Target::Kind::kMemory) return detail::same_memory(t.memory_info(), target.memory);
  // Memory no DLPack device maps is on no DLPack device (a mapping registered since is looked up).
  if (!t.has_device()) {
    try {
      return same_device(t.device(), target.device);
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::kUnsupported) throw;
      return false;
    }
  }
  return same_device(t.device(), target.device);
}

namespace {

// copies() for a tensor whose is_at(t, target) is `at`: the one rule, with is_at asked by the caller once.
bool copies_given(const Tensor& t, const Target& target, CopyMode copy, const char* what, bool at) {
  if (copy == CopyMode::kAlways) return true;
  if (at) return false;
  if (copy == CopyMode::kNever) {
    throw Error(ErrorKind::kCopyRequired, std::string(what) + ": the tensor is in " + describe_memory(t.memory_info()) +
                                              "; " + describe_target(target) + " needs a copy (copy=False)");
  }
  return true;
}

void check_not_empty(const Tensor& t, const char* what) {
  if (!t) throw Error(ErrorKind::kInvalidArgument, std::string(what) + ": empty Tensor");
}

}  // namespace

bool copies(const Tensor& t, const Target& target, CopyMode copy, const char* what) {
  check_not_empty(t, what);
  if (copy == CopyMode::kAlways) return true;  // is_at not asked
  return copies_given(t, target, copy, what, is_at(t, target));
}

Placed place(const Tensor& t, const Target& target, CopyMode copy, const char* what, OrtSyncStream* stream,
             CopyRunner run_copy) {
  check_not_empty(t, what);
  const bool at = is_at(t, target);
  if (!copies_given(t, target, copy, what, at)) return {t, false};
  const OrtMemoryInfo* memory = at ? t.memory_info() : destination(t, target);
  Placed placed{Tensor(), true};
  const std::function<void()> make = [&] { placed.tensor = to(t, memory, stream); };
  if (run_copy != nullptr) {
    run_copy(make);
  } else {
    make();
  }
  return placed;
}

}  // namespace ortdlpack
