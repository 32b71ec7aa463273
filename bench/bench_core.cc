// Cost of the zero-copy paths of the C++ core against the copy they replace: ns per export, import and round trip
// for a 4 KiB and a 64 MiB tensor, beside a memcpy of the same bytes. Prints a markdown table (docs/core.md).
#include <onnxruntime_c_api.h>

#include <cstdio>
#include <cstring>
#include <vector>

#include "harness.h"
#include "ortdlpack/ortdlpack.h"

namespace {

// A producer whose DLPack tensor can be handed out again and again (the deleter only counts).
struct Producer {
  std::vector<float> data;
  int64_t shape[1];
  int64_t strides[1] = {1};
  long deletes = 0;
  DLManagedTensorVersioned managed{};

  explicit Producer(size_t n) : data(n, 1.0f), shape{static_cast<int64_t>(n)} {
    managed.version = {DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION};
    managed.manager_ctx = this;
    managed.deleter = [](DLManagedTensorVersioned* self) { ++static_cast<Producer*>(self->manager_ctx)->deletes; };
    managed.dl_tensor = DLTensor{data.data(), {kDLCPU, 0}, 1, {kDLFloat, 32, 1}, shape, strides, 0};
  }
};

}  // namespace

int main() {
  using ortdlpack::bench::human;
  using ortdlpack::bench::ns_per_call;
  ortdlpack::init(OrtGetApiBase());
  std::printf(
      "| tensor | export | import | round trip (import+export+release) | memcpy of the bytes | "
      "round trip / memcpy |\n|---|---|---|---|---|---|\n");
  for (size_t bytes : {size_t{4} << 10, size_t{64} << 20}) {
    Producer producer(bytes / 4);
    ortdlpack::Tensor tensor = ortdlpack::from_dlpack(&producer.managed).tensor;
    const int iterations = 20000;
    const double export_ns = ns_per_call(
        [&] {
          DLManagedTensorVersioned* m = ortdlpack::to_dlpack_versioned(tensor);
          m->deleter(m);
        },
        iterations);
    const double import_ns = ns_per_call([&] { ortdlpack::from_dlpack(&producer.managed); }, iterations);
    const double round_ns = ns_per_call(
        [&] {
          ortdlpack::Tensor t = ortdlpack::from_dlpack(&producer.managed).tensor;
          DLManagedTensorVersioned* m = ortdlpack::to_dlpack_versioned(t);
          m->deleter(m);
        },
        iterations);
    std::vector<char> dst(bytes);
    const double memcpy_ns = ns_per_call(
        [&] {
          std::memcpy(dst.data(), producer.data.data(), bytes);
          asm volatile("" : : "r"(dst.data()) : "memory");
        },
        bytes > (1 << 20) ? 10 : iterations);
    std::printf("| %s | %s | %s | %s | %s | %.4f |\n", bytes > (1 << 20) ? "64 MiB float32" : "4 KiB float32",
                human(export_ns).c_str(), human(import_ns).c_str(), human(round_ns).c_str(), human(memcpy_ns).c_str(),
                round_ns / memcpy_ns);
  }
  return 0;
}
