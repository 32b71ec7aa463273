// Sessions of a model built here with the Model Editor API (no file, no protobuf): whether ORT creates a session on an
// EP's devices (ep_library.h session_refusal), ORT's own verdict on an EP library it registered; and what every
// session of the running ORT looks like in memory (onnxruntime_python.h session_vtable).
#include <cctype>
#include <string>
#include <utility>
#include <vector>

#include "ep_library.h"
#include "onnxruntime_python.h"
#include "ort.h"
#include "ortdlpack/api.h"
#include "ortdlpack/error.h"
#include "ortdlpack/handle.h"

namespace ortdlpack::detail {
namespace {

// y = Add(x, x), float[8], opset 18: an op every EP with kernels claims (ORT checks a kernel EP's version when it
// creates the EP's kernels, 1.26 included), and that ORT's CPU EP runs where the EP claims nothing.
Owned<OrtModel> probe_model() {
  const OrtApi& api = ort();
  const OrtModelEditorApi* editor = api.GetModelEditorApi();
  if (editor == nullptr) throw Error(ErrorKind::kUnsupported, "this ONNX Runtime has no Model Editor API");
  OrtTensorTypeAndShapeInfo* shape_raw = nullptr;
  ortdlpack::check(api.CreateTensorTypeAndShapeInfo(&shape_raw));
  const Owned<OrtTensorTypeAndShapeInfo> shape(shape_raw);
  const int64_t dims[] = {8};
  ortdlpack::check(api.SetTensorElementType(shape_raw, ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT));
  ortdlpack::check(api.SetDimensions(shape_raw, dims, 1));
  OrtTypeInfo* type_raw = nullptr;
  ortdlpack::check(editor->CreateTensorTypeInfo(shape_raw, &type_raw));
  const Owned<OrtTypeInfo> type(type_raw);
  // Ownership moves to ORT as each piece is added: release() once the call took it.
  OrtValueInfo* raw = nullptr;
  ortdlpack::check(editor->CreateValueInfo("x", type_raw, &raw));
  Owned<OrtValueInfo> x(raw);
  ortdlpack::check(editor->CreateValueInfo("y", type_raw, &raw));
  Owned<OrtValueInfo> y(raw);
  OrtGraph* graph_raw = nullptr;
  ortdlpack::check(editor->CreateGraph(&graph_raw));
  Owned<OrtGraph> graph(graph_raw);
  OrtValueInfo* inputs[] = {x.get()};
  ortdlpack::check(editor->SetGraphInputs(graph_raw, inputs, 1));
  x.release();
  OrtValueInfo* outputs[] = {y.get()};
  ortdlpack::check(editor->SetGraphOutputs(graph_raw, outputs, 1));
  y.release();
  const char* node_inputs[] = {"x", "x"};
  const char* node_outputs[] = {"y"};
  OrtNode* node_raw = nullptr;
  ortdlpack::check(editor->CreateNode("Add", "", "add", node_inputs, 2, node_outputs, 1, nullptr, 0, &node_raw));
  Owned<OrtNode> node(node_raw);
  ortdlpack::check(editor->AddNodeToGraph(graph_raw, node_raw));
  node.release();
  const char* domains[] = {""};
  const int opsets[] = {18};
  OrtModel* model_raw = nullptr;
  ortdlpack::check(editor->CreateModel(domains, opsets, 1, &model_raw));
  Owned<OrtModel> model(model_raw);
  ortdlpack::check(editor->AddGraphToModel(model_raw, graph_raw));
  graph.release();
  return model;
}

}  // namespace

std::string session_refusal(const std::string& ep_name,
                            const std::vector<std::pair<std::string, std::string>>& options) {
  const OrtApi& api = ort();
  const std::vector<const OrtEpDevice*> devices = ep_devices_of(ep_name);
  const Owned<OrtModel> model = probe_model();
  OrtSessionOptions* options_raw = nullptr;
  ortdlpack::check(api.CreateSessionOptions(&options_raw));
  const Owned<OrtSessionOptions> session_options(options_raw);
  ortdlpack::check(api.SetIntraOpNumThreads(options_raw, 1));
  ortdlpack::check(api.SetSessionGraphOptimizationLevel(options_raw, ORT_DISABLE_ALL));
  std::vector<const char*> keys, values;
  for (const auto& [key, value] : options) {
    keys.push_back(key.c_str());
    values.push_back(value.c_str());
  }
  ortdlpack::check(api.SessionOptionsAppendExecutionProvider_V2(options_raw, env(), devices.data(), devices.size(),
                                                                keys.data(), values.data(), keys.size()));
  OrtSession* session = nullptr;
  if (OrtStatus* status = api.GetModelEditorApi()->CreateSessionFromModel(env(), model.get(), options_raw, &session)) {
    const Owned<OrtStatus> owned(status);
    std::string message = api.GetErrorMessage(status);
    while (!message.empty() && std::isspace(static_cast<unsigned char>(message.back()))) message.pop_back();
    return message;
  }
  api.ReleaseSession(session);
  return "";
}

}  // namespace ortdlpack::detail

namespace ortdlpack {

const void* session_vtable() {
  static const void* const vtable = [] {
    const OrtApi& api = ort();
    const Owned<OrtModel> model = detail::probe_model();
    OrtSessionOptions* options_raw = nullptr;
    check(api.CreateSessionOptions(&options_raw));
    const Owned<OrtSessionOptions> options(options_raw);
    check(api.SetIntraOpNumThreads(options_raw, 1));
    OrtSession* session = nullptr;
    check(api.GetModelEditorApi()->CreateSessionFromModel(env(), model.get(), options_raw, &session));
    const Owned<OrtSession> owned(session);
    return *reinterpret_cast<const void* const*>(session);  // ORT's session class is polymorphic: its vtable first
  }();
  return vtable;
}

}  // namespace ortdlpack
