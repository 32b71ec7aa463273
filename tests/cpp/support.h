// Test support for the GoogleTest suites: ORT set-up, the counting DLPack producer (producer.h), and models built with the Model
// Editor API (no model files, no protobuf).
#pragma once

#include <gtest/gtest.h>
#include <onnxruntime_c_api.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "model_builder.h"
#include "producer.h"
#include "ortdlpack/ortdlpack.h"

namespace ortdlpack::test {

inline void ort_check(OrtStatus* status) { ortdlpack::check(status); }

// Initialises ortdlpack with the linked ORT once per test binary.
class OrtEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    ortdlpack::init(OrtGetApiBase());
    ortdlpack::env();
  }
};

using examples::make_add_session;

}  // namespace ortdlpack::test
