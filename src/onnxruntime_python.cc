// onnxruntime's Python API as the core knows it (onnxruntime_python.h).
#include "onnxruntime_python.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <iterator>
#include <mutex>
#include <string>

#include "frontend.h"
#include "ortdlpack/api.h"
#include "ortdlpack/device.h"
#include "ortdlpack/error.h"

namespace ortdlpack {

bool onnxruntime_takes_iterables() { return ort_runtime_api_version() >= 24; }

const char* onnxruntime_device_name(DLDeviceType type) {
  switch (type) {
    case kDLCPU:
    case kDLCUDAHost:
    case kDLROCMHost:
      return "cpu";
    case kDLCUDA:
    case kDLROCM:  // onnxruntime's Python names ROCm memory "cuda" too
      return "cuda";
    default:
      return nullptr;
  }
}

bool onnxruntime_wraps(DLDeviceType type) { return type == kDLCPU || type == kDLCUDA || type == kDLROCM; }

bool is_plain(const DLTensor& t, uint64_t flags) noexcept {
  return t.byte_offset == 0 && (flags & DLPACK_FLAG_BITMASK_READ_ONLY) == 0 && t.dtype.bits >= 8 &&
         t.dtype.code != kDLComplex && onnxruntime_wraps(t.device.device_type) && imports_in_place(t, flags);
}

const OrtEpDevice* find_ep_device(const std::string& ep_name, int64_t hardware_type, int64_t vendor_id,
                                  int64_t device_id) {
  const OrtApi& api = ort();
  for (const OrtEpDevice* d : detail::env_ep_devices()) {
    const OrtHardwareDevice* hw = api.EpDevice_Device(d);
    if (ep_name == api.EpDevice_EpName(d) && static_cast<int64_t>(api.HardwareDevice_Type(hw)) == hardware_type &&
        static_cast<int64_t>(api.HardwareDevice_VendorId(hw)) == vendor_id &&
        static_cast<int64_t>(api.HardwareDevice_DeviceId(hw)) == device_id) {
      return d;
    }
  }
  throw Error(ErrorKind::kInvalidArgument,
              "OrtEpDevice of EP '" + ep_name + "' is not among the environment's EP devices");
}

bool readable_word(const void* p) noexcept {
  const auto address = reinterpret_cast<uintptr_t>(p);
  if (address == 0 || address % alignof(void*) != 0) return false;
  // The kernel copies the word into a pipe of the process's own, or fails with EFAULT for an address the process
  // cannot read (unmapped, PROT_NONE): the copy is the kernel's, so no signal reaches the process. The word is read
  // back at once, under a lock: the pipe never fills.
  static int fds[2] = {-1, -1};
  static std::mutex mutex;
  const std::lock_guard<std::mutex> lock(mutex);
  if (fds[0] < 0 && pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) return false;
  ssize_t written = 0;
  do {
    written = write(fds[1], p, sizeof(void*));
  } while (written < 0 && errno == EINTR);
  if (written != static_cast<ssize_t>(sizeof(void*))) return false;
  void* word = nullptr;
  return read(fds[0], &word, sizeof(word)) == static_cast<ssize_t>(sizeof(word));
}

namespace {

// One protobuf field: a varint (`bytes` NULL) or length-delimited bytes.
std::string field(int number, uint64_t varint, const std::string* bytes = nullptr) {
  const auto encode = [](uint64_t n) {
    std::string out;
    do {
      out += static_cast<char>((n & 0x7F) | (n > 0x7F ? 0x80 : 0));
      n >>= 7;
    } while (n != 0);
    return out;
  };
  if (bytes == nullptr) return encode(static_cast<uint64_t>(number) << 3) + encode(varint);
  return encode(static_cast<uint64_t>(number) << 3 | 2) + encode(bytes->size()) + *bytes;
}
std::string field(int number, const std::string& bytes) { return field(number, 0, &bytes); }

}  // namespace

std::string borrow_probe_model() {
  // TypeProto.tensor_type: elem_type float (1), shape [1].
  const std::string tensor = field(1, field(1, 1) + field(2, field(1, field(1, 1))));
  const auto value = [&](const char* name) { return field(1, std::string(name)) + field(2, tensor); };
  const std::string node = field(1, std::string("x")) + field(2, std::string("y")) + field(4, std::string("Identity"));
  const std::string graph = field(1, node) + field(2, std::string("g")) + field(11, value("x")) + field(12, value("y"));
  return field(1, 8) + field(7, graph) + field(8, field(2, 17));  // IR 8, opset 17
}

const char* borrow_reason(Borrow status) {
  switch (status) {
    case Borrow::kReached:
      return "reached";
    case Borrow::kNoConduit:
      return "no SessionIOBinding of its C session through pybind11's conduit";
    case Borrow::kUnreadable:
      return "the SessionIOBinding's first word cannot be read";
    case Borrow::kNotASession:
      return "the SessionIOBinding's first member is not an ORT session (its vtable is not ORT's session class's)";
  }
  return "unknown";
}

BorrowedPointer session_at(const void* const* first) {
  if (!readable_word(first)) return {nullptr, Borrow::kUnreadable};
  const void* session = *first;
  if (!readable_word(session)) return {nullptr, Borrow::kUnreadable};
  if (*static_cast<const void* const*>(session) != session_vtable()) return {nullptr, Borrow::kNotASession};
  return {static_cast<OrtSession*>(const_cast<void*>(session)), Borrow::kReached};
}

const OnnxruntimeError kOnnxruntimeErrors[16] = {
    {ORT_OK, "OK", nullptr},
    {ORT_FAIL, "FAIL", "Fail"},
    {ORT_INVALID_ARGUMENT, "INVALID_ARGUMENT", "InvalidArgument"},
    {ORT_NO_SUCHFILE, "NO_SUCHFILE", "NoSuchFile"},
    {ORT_NO_MODEL, "NO_MODEL", "NoModel"},
    {ORT_ENGINE_ERROR, "ENGINE_ERROR", "EngineError"},
    {ORT_RUNTIME_EXCEPTION, "RUNTIME_EXCEPTION", "RuntimeException"},
    {ORT_INVALID_PROTOBUF, "INVALID_PROTOBUF", "InvalidProtobuf"},
    {ORT_MODEL_LOADED, "MODEL_LOADED", nullptr},
    {ORT_NOT_IMPLEMENTED, "NOT_IMPLEMENTED", "NotImplemented"},
    {ORT_INVALID_GRAPH, "INVALID_GRAPH", "InvalidGraph"},
    {ORT_EP_FAIL, "EP_FAIL", "EPFail"},
    {ORT_MODEL_LOAD_CANCELED, "MODEL_LOAD_CANCELED", "ModelLoadCanceled"},
    {ORT_MODEL_REQUIRES_COMPILATION, "MODEL_REQUIRES_COMPILATION", "ModelRequiresCompilation"},
    {ORT_NOT_FOUND, "NOT_FOUND", "NotFound"},
    {ORT_DEVICE_RESET, "DEVICE_RESET", "DeviceReset"},  // (onnxruntime's class since 1.32)
};

std::string onnxruntime_message(const Error& e) {
  static const OnnxruntimeError unknown{ORT_FAIL, "GENERAL ERROR", nullptr};
  const auto i = static_cast<size_t>(e.ort_code());
  const OnnxruntimeError& c = i < std::size(kOnnxruntimeErrors) ? kOnnxruntimeErrors[i] : unknown;
  return "[ONNXRuntimeError] : " + std::to_string(i) + " : " + c.status_name + " : " + e.what();
}

}  // namespace ortdlpack
