// bench_decode_core: the in-place decode loop of examples/decode_loop.py written in C++ on the core's API (Session,
// bind() with RunOptions::in_place, Binding::run(changed)), each decode step timed alone. bench/bench_decode.py runs
// it beside onnxruntime-genai's C++ loop: what a step costs when no Python runs between the steps.
//
//   bench_decode_core ORT_LIBRARY MODEL LAYERS KV_HEADS HEAD_SIZE MAX_LENGTH VOCAB TOKENS GENERATIONS
//
// ORT_LIBRARY: the ONNX Runtime library to run on, dlopen()ed (the core links none): the one onnxruntime-genai runs
// on, so that both loops run the same ORT. The prompt is 3..10 (bench_decode.py's); names are the builder's
// (input_ids, attention_mask, past_key_values.N.key/value, present.N.key/value, logits); one intra-op thread. Prints
// one line per generation: the seconds of each of its TOKENS - 1 decode steps; then "ids" and the TOKENS ids of the
// last generation.
#include <dlfcn.h>
#include <onnxruntime_c_api.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "ortdlpack/ortdlpack.h"

namespace {

// A DLPack view of memory the loop owns (which outlives every Tensor made of it); the import frees the view.
ortdlpack::Tensor view(void* data, DLDataType dtype, std::vector<int64_t> dims) {
  struct View {
    std::vector<int64_t> shape;
    DLManagedTensorVersioned managed{};
  };
  auto* v = new View{std::move(dims), {}};
  v->managed.version = {DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION};
  v->managed.manager_ctx = v;
  v->managed.deleter = [](DLManagedTensorVersioned* self) { delete static_cast<View*>(self->manager_ctx); };
  v->managed.dl_tensor =
      DLTensor{data, {kDLCPU, 0}, static_cast<int32_t>(v->shape.size()), dtype, v->shape.data(), nullptr, 0};
  return ortdlpack::from_dlpack(&v->managed).tensor;  // (the import owns the view from here, also if it throws)
}

constexpr DLDataType kFloat32{kDLFloat, 32, 1}, kInt64{kDLInt, 64, 1};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 10) {
    std::fprintf(stderr, "usage: %s ORT_LIBRARY MODEL LAYERS KV_HEADS HEAD_SIZE MAX_LENGTH VOCAB TOKENS GENERATIONS\n",
                 argv[0]);
    return 2;
  }
  void* ort_library = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  auto* get_api_base =
      ort_library ? reinterpret_cast<const OrtApiBase* (*)()>(dlsym(ort_library, "OrtGetApiBase")) : nullptr;
  if (get_api_base == nullptr) {
    std::fprintf(stderr, "bench_decode_core: no OrtGetApiBase in %s: %s\n", argv[1], dlerror());
    return 1;
  }
  const int layers = std::atoi(argv[3]), kv_heads = std::atoi(argv[4]), head_size = std::atoi(argv[5]);
  const int64_t max_length = std::atoll(argv[6]), vocab = std::atoll(argv[7]);
  const int tokens = std::atoi(argv[8]), generations = std::atoi(argv[9]);
  try {
    ortdlpack::init(get_api_base());
    ortdlpack::SessionConfig config;
    config.intra_op_num_threads = 1;
    ortdlpack::Session session(argv[2], config);

    std::vector<int64_t> prompt{3, 4, 5, 6, 7, 8, 9, 10}, mask(static_cast<size_t>(max_length), 1), step_id(1);
    const auto prompt_length = static_cast<int64_t>(prompt.size());
    std::vector<std::vector<float>> caches(static_cast<size_t>(2 * layers),
                                           std::vector<float>(static_cast<size_t>(kv_heads * max_length * head_size)));
    const auto prefill = [&] {
      return ortdlpack::Feeds{{"input_ids", view(prompt.data(), kInt64, {1, prompt_length})},
                              {"attention_mask", view(mask.data(), kInt64, {1, prompt_length})}};
    };
    ortdlpack::Feeds feeds = prefill();
    ortdlpack::RunOptions options;
    size_t next_cache = 0;
    for (int layer = 0; layer < layers; ++layer) {
      for (const char* kind : {"key", "value"}) {
        const std::string past = "past_key_values." + std::to_string(layer) + "." + kind;
        feeds.emplace_back(past, view(caches[next_cache++].data(), kFloat32, {1, kv_heads, max_length, head_size}));
        options.in_place.emplace_back("present." + std::to_string(layer) + "." + kind, past);
      }
    }
    ortdlpack::Binding binding = session.bind(feeds, {"logits"}, options);
    const auto argmax = [&](const ortdlpack::Tensor& logits) {  // of the last position's row
      const float* row = static_cast<const float*>(logits.data()) + (logits.element_count() - vocab);
      return static_cast<int64_t>(std::max_element(row, row + vocab) - row);
    };
    const ortdlpack::Tensor step_ids = view(step_id.data(), kInt64, {1, 1});
    std::vector<int64_t> ids;
    for (int g = 0; g < generations; ++g) {
      // The first generation runs the prefill bind() bound; the others rebind the prompt over the same caches.
      step_id[0] = argmax((g == 0 ? binding.run() : binding.run(prefill()))[0]);
      ids.assign(1, step_id[0]);
      std::vector<double> seconds;
      for (int64_t i = 1; i < tokens; ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        const std::vector<ortdlpack::Tensor> out = binding.run(
            {{"input_ids", step_ids}, {"attention_mask", view(mask.data(), kInt64, {1, prompt_length + i})}});
        step_id[0] = argmax(out[0]);
        ids.push_back(step_id[0]);
        seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      }
      for (double s : seconds) std::printf("%.9f ", s);
      std::printf("\n");
    }
    std::printf("ids");
    for (int64_t id : ids) std::printf(" %lld", static_cast<long long>(id));
    std::printf("\n");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_decode_core: %s\n", e.what());
    return 1;
  }
  return 0;
}
