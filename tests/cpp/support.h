// Test support: ORT set-up, a DLPack producer that counts its deleter calls, and models built with the Model
// Editor API (no model files, no protobuf).
#pragma once

#include <gtest/gtest.h>
#include <onnxruntime_c_api.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

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

// A DLPack producer over its own buffer. `deletes` counts deleter calls (each test asserts it ends at exactly 1).
struct Producer {
  std::shared_ptr<std::vector<uint8_t>> buffer;
  std::vector<int64_t> shape, strides;
  int deletes = 0;
  DLManagedTensorVersioned versioned{};
  DLManagedTensor legacy{};

  // Compact row-major tensor of `dtype` and `shape`, bytes filled with a pattern.
  static std::unique_ptr<Producer> make(DLDataType dtype, std::vector<int64_t> shape, size_t extra_bytes = 0) {
    auto p = std::make_unique<Producer>();
    size_t count = 1;
    for (int64_t d : shape) count *= static_cast<size_t>(d);
    const size_t bytes = dtype.bits < 8 ? (count * dtype.bits + 7) / 8 : count * dtype.bits / 8;
    p->buffer = std::make_shared<std::vector<uint8_t>>(bytes + extra_bytes);
    for (size_t i = 0; i < p->buffer->size(); ++i) (*p->buffer)[i] = static_cast<uint8_t>(i * 7 + 3);
    p->shape = std::move(shape);
    p->strides.assign(p->shape.size(), 1);
    for (size_t i = p->shape.size(); i-- > 1;) p->strides[i - 1] = p->strides[i] * std::max<int64_t>(p->shape[i], 1);
    p->fill(dtype);
    return p;
  }

  void fill(DLDataType dtype) {
    DLTensor t{};
    t.data = buffer->data();
    t.device = DLDevice{kDLCPU, 0};
    t.ndim = static_cast<int32_t>(shape.size());
    t.dtype = dtype;
    t.shape = shape.empty() ? nullptr : shape.data();
    t.strides = strides.empty() ? nullptr : strides.data();
    versioned.version = DLPackVersion{1, 3};
    versioned.manager_ctx = this;
    versioned.deleter = [](DLManagedTensorVersioned* self) { ++static_cast<Producer*>(self->manager_ctx)->deletes; };
    versioned.dl_tensor = t;
    legacy.manager_ctx = this;
    legacy.deleter = [](DLManagedTensor* self) { ++static_cast<Producer*>(self->manager_ctx)->deletes; };
    legacy.dl_tensor = t;
  }

  DLTensor& t() { return versioned.dl_tensor; }
};

// A session computing Y = X + X over `dims` of `type`, built in memory with the Model Editor API.
inline OrtSession* make_add_session(ONNXTensorElementDataType type, const std::vector<int64_t>& dims) {
  const OrtApi& api = ortdlpack::ort();
  const OrtModelEditorApi* editor = api.GetModelEditorApi();
  auto value_info = [&](const char* name) {
    OrtTensorTypeAndShapeInfo* tensor_info = nullptr;
    ort_check(api.CreateTensorTypeAndShapeInfo(&tensor_info));
    ort_check(api.SetTensorElementType(tensor_info, type));
    ort_check(api.SetDimensions(tensor_info, dims.data(), dims.size()));
    OrtTypeInfo* type_info = nullptr;
    ort_check(editor->CreateTensorTypeInfo(tensor_info, &type_info));
    OrtValueInfo* vi = nullptr;
    ort_check(editor->CreateValueInfo(name, type_info, &vi));
    api.ReleaseTypeInfo(type_info);
    api.ReleaseTensorTypeAndShapeInfo(tensor_info);
    return vi;
  };
  OrtGraph* graph = nullptr;
  ort_check(editor->CreateGraph(&graph));
  OrtValueInfo* inputs[] = {value_info("X")};
  OrtValueInfo* outputs[] = {value_info("Y")};
  ort_check(editor->SetGraphInputs(graph, inputs, 1));
  ort_check(editor->SetGraphOutputs(graph, outputs, 1));
  const char* node_inputs[] = {"X", "X"};
  const char* node_outputs[] = {"Y"};
  OrtNode* node = nullptr;
  ort_check(editor->CreateNode("Add", "", "add", node_inputs, 2, node_outputs, 1, nullptr, 0, &node));
  ort_check(editor->AddNodeToGraph(graph, node));
  const char* domains[] = {""};
  const int opsets[] = {18};
  OrtModel* model = nullptr;
  ort_check(editor->CreateModel(domains, opsets, 1, &model));
  ort_check(editor->AddGraphToModel(model, graph));
  OrtSessionOptions* options = nullptr;
  ort_check(api.CreateSessionOptions(&options));
  ort_check(api.SetIntraOpNumThreads(options, 1));
  OrtSession* session = nullptr;
  OrtStatus* status = editor->CreateSessionFromModel(ortdlpack::env(), model, options, &session);
  api.ReleaseSessionOptions(options);
  api.ReleaseModel(model);
  ort_check(status);
  return session;
}

}  // namespace ortdlpack::test
