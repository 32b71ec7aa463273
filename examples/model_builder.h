// Builds small ONNX models in memory with ORT's Model Editor API (no model files, no protobuf): what the demo, the
// benchmarks and the tests run. Needs an ORT with the Model Editor API (>= 1.22, full build).
#pragma once

#include <onnxruntime_c_api.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "ortdlpack/api.h"

namespace ortdlpack::examples {

// One graph, built node by node, then turned into a session. The graph takes ownership of value infos, nodes and
// initializers, the model of the graph; Build() releases what it made.
class ModelBuilder {
 public:
  ModelBuilder() { check(editor_->CreateGraph(&graph_)); }
  ModelBuilder(const ModelBuilder&) = delete;
  ModelBuilder& operator=(const ModelBuilder&) = delete;
  ~ModelBuilder() {
    if (graph_ != nullptr) ort().ReleaseGraph(graph_);
  }

  // A graph input/output of `type` and `dims` (-1: dynamic, named by `symbols[i]` when given).
  OrtValueInfo* Value(const char* name, ONNXTensorElementDataType type, const std::vector<int64_t>& dims,
                      std::vector<const char*> symbols = {}) {
    const OrtApi& api = ort();
    OrtTensorTypeAndShapeInfo* tensor_info = nullptr;
    check(api.CreateTensorTypeAndShapeInfo(&tensor_info));
    check(api.SetTensorElementType(tensor_info, type));
    check(api.SetDimensions(tensor_info, dims.data(), dims.size()));
    if (!symbols.empty()) check(api.SetSymbolicDimensions(tensor_info, symbols.data(), symbols.size()));
    OrtTypeInfo* type_info = nullptr;
    check(editor_->CreateTensorTypeInfo(tensor_info, &type_info));
    OrtValueInfo* value_info = nullptr;
    check(editor_->CreateValueInfo(name, type_info, &value_info));  // copies type_info
    api.ReleaseTypeInfo(type_info);
    api.ReleaseTensorTypeAndShapeInfo(tensor_info);
    return value_info;
  }

  // A node of the default ONNX domain, without attributes.
  void Node(const char* op, std::vector<const char*> inputs, std::vector<const char*> outputs) {
    OrtNode* node = nullptr;
    check(editor_->CreateNode(op, "", (std::string(op) + "_" + outputs[0]).c_str(), inputs.data(), inputs.size(),
                              outputs.data(), outputs.size(), nullptr, 0, &node));
    check(editor_->AddNodeToGraph(graph_, node));
  }

  // A float32 initializer holding `data`.
  void Initializer(const char* name, const std::vector<int64_t>& dims, const std::vector<float>& data) {
    const OrtApi& api = ort();
    OrtAllocator* allocator = nullptr;
    check(api.GetAllocatorWithDefaultOptions(&allocator));
    OrtValue* value = nullptr;
    check(api.CreateTensorAsOrtValue(allocator, dims.data(), dims.size(), ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, &value));
    void* p = nullptr;
    check(api.GetTensorMutableData(value, &p));
    std::memcpy(p, data.data(), data.size() * sizeof(float));
    check(editor_->AddInitializerToGraph(graph_, name, value, false));
  }

  // The session (opset 18, `intra_op_threads` threads) over the graph with these inputs and outputs, on the EP of
  // `ep_devices` when given (SessionOptionsAppendExecutionProvider_V2), else on ORT's CPU EP.
  OrtSession* Build(std::vector<OrtValueInfo*> inputs, std::vector<OrtValueInfo*> outputs, int intra_op_threads = 1,
                    const std::vector<const OrtEpDevice*>& ep_devices = {}) {
    const OrtApi& api = ort();
    check(editor_->SetGraphInputs(graph_, inputs.data(), inputs.size()));
    check(editor_->SetGraphOutputs(graph_, outputs.data(), outputs.size()));
    const char* domains[] = {""};
    const int opsets[] = {18};
    OrtModel* model = nullptr;
    check(editor_->CreateModel(domains, opsets, 1, &model));
    check(editor_->AddGraphToModel(model, graph_));
    graph_ = nullptr;  // the model owns it now
    OrtSessionOptions* options = nullptr;
    OrtStatus* status = api.CreateSessionOptions(&options);
    if (status == nullptr) status = api.SetIntraOpNumThreads(options, intra_op_threads);
    if (status == nullptr && !ep_devices.empty()) {
      status = api.SessionOptionsAppendExecutionProvider_V2(options, env(), ep_devices.data(), ep_devices.size(),
                                                            nullptr, nullptr, 0);
    }
    OrtSession* session = nullptr;
    if (status == nullptr) status = editor_->CreateSessionFromModel(env(), model, options, &session);
    if (options != nullptr) api.ReleaseSessionOptions(options);
    api.ReleaseModel(model);
    check(status);
    return session;
  }

 private:
  const OrtModelEditorApi* editor_ = ort().GetModelEditorApi();
  OrtGraph* graph_ = nullptr;
};

// A session computing Y = X + X over a fixed shape `dims` of `type`.
inline OrtSession* make_add_session(ONNXTensorElementDataType type, const std::vector<int64_t>& dims,
                                    int intra_op_threads = 1) {
  ModelBuilder b;
  b.Node("Add", {"X", "X"}, {"Y"});
  return b.Build({b.Value("X", type, dims)}, {b.Value("Y", type, dims)}, intra_op_threads);
}

}  // namespace ortdlpack::examples
