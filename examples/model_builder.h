// Builds small ONNX models in memory with ORT's Model Editor API (no model files, no protobuf): what the demo, the
// benchmarks and the tests run. Needs an ORT with the Model Editor API (>= 1.22, full build).
#pragma once

#include <onnxruntime_c_api.h>

#include <cstdint>
#include <vector>

#include "ortdlpack/api.h"

namespace ortdlpack::examples {

// A session computing Y = X + X over a fixed shape `dims` of `type`.
inline OrtSession* make_add_session(ONNXTensorElementDataType type, const std::vector<int64_t>& dims,
                                    int intra_op_threads = 1) {
  const OrtApi& api = ort();
  const OrtModelEditorApi* editor = api.GetModelEditorApi();
  auto value_info = [&](const char* name) {
    OrtTensorTypeAndShapeInfo* tensor_info = nullptr;
    check(api.CreateTensorTypeAndShapeInfo(&tensor_info));
    check(api.SetTensorElementType(tensor_info, type));
    check(api.SetDimensions(tensor_info, dims.data(), dims.size()));
    OrtTypeInfo* type_info = nullptr;
    check(editor->CreateTensorTypeInfo(tensor_info, &type_info));
    OrtValueInfo* vi = nullptr;
    check(editor->CreateValueInfo(name, type_info, &vi));  // copies type_info
    api.ReleaseTypeInfo(type_info);
    api.ReleaseTensorTypeAndShapeInfo(tensor_info);
    return vi;
  };
  // The graph takes ownership of value infos and nodes, the model of the graph.
  OrtGraph* graph = nullptr;
  check(editor->CreateGraph(&graph));
  OrtValueInfo* inputs[] = {value_info("X")};
  OrtValueInfo* outputs[] = {value_info("Y")};
  check(editor->SetGraphInputs(graph, inputs, 1));
  check(editor->SetGraphOutputs(graph, outputs, 1));
  const char* node_inputs[] = {"X", "X"};
  const char* node_outputs[] = {"Y"};
  OrtNode* node = nullptr;
  check(editor->CreateNode("Add", "", "add", node_inputs, 2, node_outputs, 1, nullptr, 0, &node));
  check(editor->AddNodeToGraph(graph, node));
  const char* domains[] = {""};
  const int opsets[] = {18};
  OrtModel* model = nullptr;
  check(editor->CreateModel(domains, opsets, 1, &model));
  check(editor->AddGraphToModel(model, graph));
  OrtSessionOptions* options = nullptr;
  check(api.CreateSessionOptions(&options));
  check(api.SetIntraOpNumThreads(options, intra_op_threads));
  OrtSession* session = nullptr;
  OrtStatus* status = editor->CreateSessionFromModel(env(), model, options, &session);
  api.ReleaseSessionOptions(options);
  api.ReleaseModel(model);
  check(status);
  return session;
}

}  // namespace ortdlpack::examples
