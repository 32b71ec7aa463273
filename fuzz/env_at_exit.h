// The end of a fuzzing run: libFuzzer ends the process with exit(), and ORT's env must be released before that.
// An env left to the process's static destruction is torn down in no set order against ORT's own statics
// (microsoft/onnxruntime#24579); in ORT 1.29 a thread CreateEnv starts then outlived memory those destructors freed,
// and ASan reported it as a heap-use-after-free after a finished run. The handler runs before every static destructor
// of ORT and of the harness (it is registered after they were constructed) and before LSan's exit-time leak check
// (registered first, run last), so leaks are still checked and the exit status is libFuzzer's.
#pragma once

#include <cstdlib>

#include "ortdlpack/ortdlpack.h"

namespace ortdlpack::fuzz {

/// \brief At exit, runs `release_harness` (what the harness holds of ORT: sessions first), then releases the env.
/// Call it last in LLVMFuzzerInitialize, once the env exists.
inline void release_env_at_exit(void (*release_harness)() = nullptr) {
  static void (*release)() = nullptr;
  release = release_harness;
  std::atexit([] {
    if (release != nullptr) release();
    ort().ReleaseEnv(env());  // ortdlpack's reference, the only one: the env and its EP libraries go
  });
}

}  // namespace ortdlpack::fuzz
