// Test support for the GoogleTest suites: ORT set-up, the counting DLPack producer (producer.h), and models built with
// the Model Editor API (no model files, no protobuf).
#pragma once

#include <gtest/gtest.h>
#include <onnxruntime_c_api.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "model_builder.h"
#include "ortdlpack/ortdlpack.h"
#include "producer.h"

namespace ortdlpack::test {

inline void ort_check(OrtStatus* status) { ortdlpack::check(status); }

// The kind of the ortdlpack::Error `f` throws (a test failure when it throws none).
inline ErrorKind kind_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.kind();
  }
  ADD_FAILURE() << "no Error thrown";
  return ErrorKind::kRuntime;
}

// Initialises ortdlpack with the linked ORT once per test binary.
class OrtEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    ortdlpack::init(OrtGetApiBase());
    ortdlpack::env();
  }
};

using examples::make_add_session;

// A host int32[2, 3] tensor holding 0..5.
inline Tensor host_int32_2x3() {
  Tensor t = allocate(ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32, {2, 3}, DLDevice{kDLCPU, 0});
  for (int i = 0; i < 6; ++i) static_cast<int32_t*>(t.data())[i] = i;
  return t;
}

// Protobuf fields (wire types varint and length-delimited): enough to write a tiny ONNX model without a protobuf
// library or a file in the repo, for the sessions the core creates from model bytes (SessionConfig).
inline std::string pb_varint(uint64_t v) {
  std::string out;
  for (; v >= 0x80; v >>= 7) out.push_back(static_cast<char>((v & 0x7F) | 0x80));
  out.push_back(static_cast<char>(v));
  return out;
}
inline std::string pb_field(uint32_t number, uint64_t value) { return pb_varint(number << 3) + pb_varint(value); }
inline std::string pb_field(uint32_t number, const std::string& bytes) {
  return pb_varint((number << 3) | 2) + pb_varint(bytes.size()) + bytes;
}

// y = Identity(x) on float[d] (opset 13), as ModelProto bytes: d is `n`, or the symbolic `dim_param` (with its
// `denotation`) when that is set; the metadata fields as given.
struct IdentityModel {
  uint64_t n = 2;
  std::string dim_param;
  std::string denotation;
  std::string producer_name, domain, doc_string, graph_name = "g", graph_doc_string;
  uint64_t model_version = 0;
  std::vector<std::pair<std::string, std::string>> metadata_props;
};
inline std::string model_bytes(const IdentityModel& m) {
  std::string dim = m.dim_param.empty() ? pb_field(1, m.n) : pb_field(2, m.dim_param);
  if (!m.denotation.empty()) dim += pb_field(3, m.denotation);
  const std::string type = pb_field(1, pb_field(1, uint64_t{1}) + pb_field(2, pb_field(1, dim)));
  std::string graph = pb_field(1, pb_field(1, "x") + pb_field(2, "y") + pb_field(4, "Identity")) +
                      pb_field(2, m.graph_name) + pb_field(11, pb_field(1, "x") + pb_field(2, type)) +
                      pb_field(12, pb_field(1, "y") + pb_field(2, type));
  if (!m.graph_doc_string.empty()) graph += pb_field(10, m.graph_doc_string);
  std::string model =
      pb_field(1, uint64_t{8}) + pb_field(7, graph) + pb_field(8, pb_field(1, "") + pb_field(2, uint64_t{13}));
  if (!m.producer_name.empty()) model += pb_field(2, m.producer_name);
  if (!m.domain.empty()) model += pb_field(4, m.domain);
  if (m.model_version != 0) model += pb_field(5, m.model_version);
  if (!m.doc_string.empty()) model += pb_field(6, m.doc_string);
  for (const auto& [key, value] : m.metadata_props) model += pb_field(14, pb_field(1, key) + pb_field(2, value));
  return model;
}
inline std::string identity_model_bytes(uint64_t n) {
  IdentityModel m;
  m.n = n;
  return model_bytes(m);
}

}  // namespace ortdlpack::test
