// The self-test of scripts/fuzz.sh (--self-test): with ORTDLPACK_FUZZ_CANARY set in the environment, an input that
// starts with "CANARY" is a finding on purpose, so the script can prove that a finding fails its run.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace ortdlpack::fuzz {

inline bool is_canary(const uint8_t* data, size_t size) {
  static const bool enabled = std::getenv("ORTDLPACK_FUZZ_CANARY") != nullptr;
  return enabled && size >= 6 && std::memcmp(data, "CANARY", 6) == 0;
}

}  // namespace ortdlpack::fuzz
