// ortdlpack: the one placement decision. Whether a tensor is used where it is, or copied (on the host, or through
// the env's data transfers), is decided here and only here: for an import (from_dlpack's device/copy), an export
// (__dlpack__'s dl_device/copy), Tensor.to, a host view (numpy), copy= and a session's staging of a device feed for
// a host input. A copy made anywhere in ortdlpack to move a tensor happens inside place(); the only other copy is
// an import's compact copy of a layout ORT cannot hold (import.h).
#pragma once

#include <dlpack/dlpack.h>
#include <onnxruntime_c_api.h>

#include <functional>

#include "ortdlpack/tensor.h"

namespace ortdlpack {

enum class CopyMode {
  kNever,     // the tensor where it is, or Error(kCopyRequired)        (Python copy=False)
  kIfNeeded,  // a copy only when the tensor is not where it must be  (Python copy=None)
  kAlways,    // always a fresh compact copy                           (Python copy=True)
};

// Where a tensor must be.
struct Target {
  enum class Kind {
    kAnywhere,  // where it is
    kHost,      // any memory the host reads directly (CPU, pinned, HOST_ACCESSIBLE); a copy goes to CPU memory
    kDevice,    // on a DLPack device (its memory_info())
    kMemory,    // in exactly this ORT memory (an EP device's)
  };
  Kind kind = Kind::kAnywhere;
  DLDevice device{kDLCPU, 0};
  const OrtMemoryInfo* memory = nullptr;  // kMemory only; owned by ORT (the EP device) or memory_info()

  /// \brief Wherever the tensor is.
  static Target anywhere() { return {}; }
  /// \brief Any memory the host reads directly.
  static Target host() { return {Kind::kHost, {kDLCPU, 0}, nullptr}; }
  /// \brief Memory of DLPack device `d`.
  static Target on(DLDevice d) { return {Kind::kDevice, d, nullptr}; }
  /// \brief Exactly the ORT memory `m`.
  static Target in(const OrtMemoryInfo* m) { return {Kind::kMemory, {kDLCPU, 0}, m}; }
};

struct Placed {
  Tensor tensor;
  bool copied = false;  // a fresh tensor (IS_COPIED when exported)
};

// How a copy is run when one is made: `run_copy(copy)` calls copy() once. Copies are the one slow step of a
// placement or an import, so a binding releases its interpreter lock around them (and only around them). nullptr:
// copy() is called directly.
using CopyRunner = void (*)(const std::function<void()>& copy);

/// \brief `t` where `target` asks, under `copy`: `t` itself when it is there (unless kAlways); otherwise a copy into
/// the target's memory (host memcpy or the env's data transfer, transfer.h), run through `run_copy`, or
/// Error(kCopyRequired) with kNever. `what` names the caller in messages ("from_dlpack", "__dlpack__", "to",
/// "__array__"). `stream` (optional) orders a device copy (transfer.h).
Placed place(const Tensor& t, const Target& target, CopyMode copy, const char* what, OrtSyncStream* stream = nullptr,
             CopyRunner run_copy = nullptr);

}  // namespace ortdlpack
