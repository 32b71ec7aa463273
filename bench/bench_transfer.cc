// Copies through the env's data transfer on a plugin EP's device (the virtual device): GB/s of host -> device ->
// host against memcpy of the same bytes, a batched copy of 100 tensors against 100 single copies, and the fixed
// cost of one device copy: the stream lookups every device copy, import and export makes (2-4 per copy) against
// one GetEpDevices call. Prints markdown tables (docs/devices.md). ORTDLPACK_VD_GUARD=0 measures without the
// page-protection guard. The virtual device's per-copy test delay (ORTDLPACK_VD_STREAM_DELAY_US) is set to 0 unless
// the caller sets it: it stands for device time, which this measures nothing of.
#include <onnxruntime_c_api.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "harness.h"
#include "ortdlpack/ortdlpack.h"

int main() {
  using ortdlpack::bench::human;
  using ortdlpack::bench::ns_per_call;
  setenv("ORTDLPACK_VD_STREAM_DELAY_US", "0", /*overwrite=*/0);  // read once, when the library is registered
  ortdlpack::init(OrtGetApiBase());
  const OrtApi& api = ortdlpack::ort();
  ortdlpack::check(api.RegisterExecutionProviderLibrary(ortdlpack::env(), "ortdlpack_vd", ORTDLPACK_VD_PATH));
  const OrtEpDevice* const* devices = nullptr;
  size_t n = 0;
  ortdlpack::check(api.GetEpDevices(ortdlpack::env(), &devices, &n));
  const OrtEpDevice* device = nullptr;
  for (size_t i = 0; i < n; ++i) {
    if (std::string(api.EpDevice_EpName(devices[i])) == "VirtualDeviceEP") device = devices[i];
  }
  if (device == nullptr) return 1;
  const char* guard = std::getenv("ORTDLPACK_VD_GUARD");
  std::printf("virtual device guard: %s\n\n", guard && std::string(guard) == "0" ? "off" : "on (mprotect per copy)");

  std::printf(
      "| bytes | host->device->host (ortdlpack::copy x2) | GB/s | 2 x memcpy | GB/s | ratio |\n"
      "|---|---|---|---|---|---|\n");
  for (int64_t bytes : {int64_t{4} << 10, int64_t{1} << 20, int64_t{64} << 20}) {
    const std::vector<int64_t> shape{bytes / 4};
    ortdlpack::Tensor host = ortdlpack::allocate(ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, shape, DLDevice{kDLCPU, 0});
    ortdlpack::Tensor back = ortdlpack::allocate(ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, shape, DLDevice{kDLCPU, 0});
    ortdlpack::Tensor dev = ortdlpack::allocate(ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, shape, device);
    std::memset(host.data(), 1, static_cast<size_t>(bytes));
    const int iterations = bytes > (1 << 20) ? 5 : 2000;
    const double ort_ns = ns_per_call(
        [&] {
          ortdlpack::copy(host, dev);
          ortdlpack::copy(dev, back);
        },
        iterations);
    std::vector<char> mid(static_cast<size_t>(bytes)), out(static_cast<size_t>(bytes));
    const double memcpy_ns = ns_per_call(
        [&] {
          std::memcpy(mid.data(), host.data(), mid.size());
          std::memcpy(out.data(), mid.data(), out.size());
          asm volatile("" : : "r"(out.data()) : "memory");
        },
        iterations);
    const double moved = 2.0 * static_cast<double>(bytes);
    std::printf("| %lld KiB | %s | %.2f | %s | %.2f | %.2f |\n", static_cast<long long>(bytes >> 10),
                human(ort_ns).c_str(), moved / ort_ns, human(memcpy_ns).c_str(), moved / memcpy_ns, ort_ns / memcpy_ns);
  }

  std::vector<ortdlpack::Tensor> src, dst;
  for (int i = 0; i < 100; ++i) {
    src.push_back(ortdlpack::allocate(ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, {256}, DLDevice{kDLCPU, 0}));
    dst.push_back(ortdlpack::allocate(ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, {256}, device));
  }
  const double batched = ns_per_call([&] { ortdlpack::copy(src, dst); }, 200);
  const double singles = ns_per_call(
      [&] {
        for (size_t i = 0; i < src.size(); ++i) ortdlpack::copy(src[i], dst[i]);
      },
      200);
  std::printf("\n| 100 x 1 KiB host->device | per batch | per tensor | ratio |\n|---|---|---|---|\n");
  std::printf("| one batched copy | %s | %s | 1.00 |\n", human(batched).c_str(), human(batched / 100).c_str());
  std::printf("| 100 single copies | %s | %s | %.2f |\n", human(singles).c_str(), human(singles / 100).c_str(),
              singles / batched);

  const OrtMemoryInfo* memory = api.EpDevice_MemoryInfo(device, OrtDeviceMemoryType_DEFAULT);
  const double lookup =
      ns_per_call([&] { asm volatile(""
                                     :
                                     : "r"(ortdlpack::device_stream(memory))
                                     : "memory"); }, 100000);
  const double listing = ns_per_call(
      [&] {
        ortdlpack::check(api.GetEpDevices(ortdlpack::env(), &devices, &n));
        asm volatile("" : : "r"(devices) : "memory");
      },
      100000);
  ortdlpack::Tensor a = ortdlpack::allocate(ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, {4}, device);
  ortdlpack::Tensor b = ortdlpack::allocate(ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, {4}, device);
  const double d2d = ns_per_call([&] { ortdlpack::copy(a, b); }, 20000);
  ortdlpack::synchronize(memory);
  std::printf("\n| fixed cost of a device copy | per call | ratio to GetEpDevices |\n|---|---|---|\n");
  std::printf("| one GetEpDevices call | %s | 1.00 |\n", human(listing).c_str());
  std::printf("| stream lookup (ortdlpack::device_stream) | %s | %.2f |\n", human(lookup).c_str(), lookup / listing);
  std::printf("| 16 B device->device copy (queued) | %s | %.2f |\n", human(d2d).c_str(), d2d / listing);
  return 0;
}
