// The zero-copy round trip, step by step: a framework's buffer goes into ONNX Runtime and the result comes back
// out, through DLPack, and the program prints where every byte lives.
//
//   framework buffer --DLPack--> ortdlpack::from_dlpack --> OrtValue (same memory) --> session.Run
//   session output OrtValue --> ortdlpack::to_dlpack_versioned --DLPack--> framework (same memory)
#include <onnxruntime_c_api.h>

#include <cstdio>
#include <vector>

#include "model_builder.h"
#include "ortdlpack/ortdlpack.h"

namespace {

// Stands in for a framework tensor (a torch.Tensor, a cupy array, ...): a buffer and a DLPack view of it.
struct FrameworkTensor {
  std::vector<float> data;
  int64_t shape[2];
  int64_t strides[2];
  int deleter_calls = 0;
  DLManagedTensorVersioned managed{};

  FrameworkTensor(int64_t rows, int64_t cols)
      : data(static_cast<size_t>(rows * cols)), shape{rows, cols}, strides{cols, 1} {
    for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<float>(i);
    managed.version = {DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION};
    managed.manager_ctx = this;
    managed.deleter = [](DLManagedTensorVersioned* self) {
      ++static_cast<FrameworkTensor*>(self->manager_ctx)->deleter_calls;
    };
    managed.dl_tensor = DLTensor{data.data(), {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, shape, strides, 0};
  }
};

}  // namespace

int main() {
  try {
    ortdlpack::init(OrtGetApiBase());
    const OrtApi& api = ortdlpack::ort();
    std::printf("ONNX Runtime %s (C API %u), DLPack %d.%d\n\n", OrtGetApiBase()->GetVersionString(),
                ortdlpack::ort_api_version(), DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION);

    FrameworkTensor x(2, 4);
    OrtSession* session = ortdlpack::examples::make_add_session(ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, {2, 4});

    // 1. DLPack -> ORT: the OrtValue is created over the framework's buffer; the framework's deleter will run once,
    //    when ORT releases the value.
    ortdlpack::Imported input = ortdlpack::from_dlpack(&x.managed);
    std::printf("import : framework buffer %p -> OrtValue data %p  (%s, copied: %s)\n",
                static_cast<void*>(x.data.data()), input.tensor.data(),
                input.tensor.data() == x.data.data() ? "same memory" : "DIFFERENT memory", input.copied ? "yes" : "no");

    // 2. Run: Y = X + X.
    const char* in_names[] = {"X"};
    const char* out_names[] = {"Y"};
    const OrtValue* inputs[] = {input.tensor.ort_value()};
    OrtValue* y = nullptr;
    ortdlpack::check(api.Run(session, nullptr, in_names, inputs, 1, out_names, 1, &y));
    ortdlpack::Tensor output(y);

    // 3. ORT -> DLPack: the consumer gets ORT's output buffer itself, and shares its ownership.
    DLManagedTensorVersioned* out = ortdlpack::to_dlpack_versioned(output);
    std::printf("export : OrtValue data %p -> DLPack data %p  (%s, device %s, strides [%lld, %lld])\n", output.data(),
                out->dl_tensor.data, output.data() == out->dl_tensor.data ? "same memory" : "DIFFERENT memory",
                ortdlpack::describe_device(out->dl_tensor.device).c_str(),
                static_cast<long long>(out->dl_tensor.strides[0]), static_cast<long long>(out->dl_tensor.strides[1]));
    const auto* values = static_cast<const float*>(out->dl_tensor.data);
    std::printf("result : Y = X + X = [");
    for (int i = 0; i < 8; ++i) std::printf("%s%g", i ? ", " : "", static_cast<double>(values[i]));
    std::printf("]\n");

    // 4. Ownership: dropping ORT's references first leaves the consumer's DLPack tensor valid.
    output = ortdlpack::Tensor();
    std::printf("owners : DLPack consumer still reads Y[7] = %g after ORT dropped its reference\n",
                static_cast<double>(values[7]));
    out->deleter(out);
    input.tensor = ortdlpack::Tensor();
    api.ReleaseSession(session);
    std::printf("deleter: framework deleter called %d time(s) once ORT released the input\n", x.deleter_calls);
    std::printf("\nbytes copied: 0 (in) + 0 (out)\n");
    return x.deleter_calls == 1 ? 0 : 1;
  } catch (const ortdlpack::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
