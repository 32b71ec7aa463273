// What the core knows of onnxruntime's Python API (src/onnxruntime_python.h): its device names, the tensors its
// OrtValue reads, its EP devices, the OrtSession behind its sessions recognised.
#include "onnxruntime_python.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <iterator>
#include <memory>
#include <string>
#include <utility>

#include "ort.h"
#include "ortdlpack/session.h"
#include "support.h"

namespace ortdlpack {
namespace {

using test::kind_of;
using test::Producer;

struct SessionDeleter {
  void operator()(OrtSession* s) const noexcept { ort().ReleaseSession(s); }
};
using SessionPtr = std::unique_ptr<OrtSession, SessionDeleter>;

TEST(OnnxruntimePython, OnnxruntimeNamesDevicesItsOwnWay) {
  EXPECT_STREQ(onnxruntime_device_name(kDLROCM), "cuda");
  EXPECT_EQ(onnxruntime_device_name(kDLExtDev), nullptr);
}

TEST(OnnxruntimePython, AnEpDeviceTheEnvDoesNotHaveIsAnInvalidArgument) {
  EXPECT_EQ(kind_of([] { find_ep_device("NoSuchEP", 0, 0, 0); }), ErrorKind::kInvalidArgument);
}

TEST(OnnxruntimePython, PlainTensorsAreWhatALegacyOnlyConsumerReads) {
  auto p = Producer::make(DLDataType{kDLFloat, 32, 1}, {3, 2}, 8);
  const DLTensor& t = p->versioned.dl_tensor;
  EXPECT_TRUE(is_plain(t));
  EXPECT_FALSE(is_plain(t, DLPACK_FLAG_BITMASK_READ_ONLY));
  p->versioned.dl_tensor.byte_offset = 4;  // a consumer that ignores byte_offset would read the wrong elements
  EXPECT_FALSE(is_plain(t));
  p->versioned.dl_tensor.byte_offset = 0;
  std::swap(p->strides[0], p->strides[1]);  // transposed
  EXPECT_FALSE(is_plain(t));
  std::swap(p->strides[0], p->strides[1]);
  p->versioned.dl_tensor.device = DLDevice{kDLExtDev, 0};  // memory onnxruntime's Python OrtValue cannot wrap
  EXPECT_FALSE(is_plain(t));
  p->versioned.dl_tensor.device = DLDevice{kDLCPU, 0};
  p->versioned.dl_tensor.dtype = DLDataType{kDLInt, 4, 1};  // packed sub-byte
  EXPECT_FALSE(is_plain(t));
  p->versioned.dl_tensor.ndim = -1;  // malformed: not plain, and no exception
  EXPECT_FALSE(is_plain(t));
}

// The session borrow's probe: no word is read before the kernel says it can be, so no address faults, and a readable
// word that points to anything but an ORT session is refused.
TEST(OnnxruntimePython, TheProbeBeforeAReadNeverFaults) {
  void* const page = mmap(nullptr, static_cast<size_t>(sysconf(_SC_PAGESIZE)), PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
                          -1, 0);  // mapped (mincore would pass it), but no read of it may happen
  ASSERT_NE(page, MAP_FAILED);
  EXPECT_EQ(session_at(static_cast<const void* const*>(page)).status, Borrow::kUnreadable);
  munmap(page, static_cast<size_t>(sysconf(_SC_PAGESIZE)));
  EXPECT_EQ(session_at(nullptr).status, Borrow::kUnreadable);
  EXPECT_EQ(session_at(reinterpret_cast<const void* const*>(uintptr_t{8})).status, Borrow::kUnreadable);  // unmapped
  const void* words[2] = {&words[1], nullptr};  // a readable pointer to a word that is no vtable of ORT's session
  EXPECT_EQ(session_at(words).status, Borrow::kNotASession);
  EXPECT_STREQ(borrow_reason(Borrow::kNotASession),
               "the SessionIOBinding's first member is not an ORT session (its vtable is not ORT's session class's)");
}

TEST(OnnxruntimePython, ASessionOfThisOrtIsRecognisedByItsVtable) {
  SessionPtr s(test::make_add_session(ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, {8}));
  const void* first = s.get();  // as onnxruntime's SessionIOBinding holds it: its first member
  const BorrowedPointer b = session_at(&first);
  EXPECT_EQ(b.status, Borrow::kReached);
  EXPECT_EQ(b.session, s.get());
}

// The model show_config's borrow probe makes an InferenceSession of: a model ORT loads, one float input x and output y.
TEST(OnnxruntimePython, TheBorrowProbeModelIsAModelOrtLoads) {
  const std::string model = borrow_probe_model();
  const SessionConfig none;
  Session s(model.data(), model.size(), none);
  ASSERT_EQ(s.inputs().size(), 1u);
  ASSERT_EQ(s.outputs().size(), 1u);
  EXPECT_EQ(s.inputs()[0].name, "x");
  EXPECT_EQ(s.outputs()[0].name, "y");
}

TEST(OnnxruntimePython, OrtErrorsAreWordedAsOnnxruntimesPythonWordsThem) {
  for (size_t code = 0; code < std::size(kOnnxruntimeErrors); ++code)
    EXPECT_EQ(static_cast<size_t>(kOnnxruntimeErrors[code].code), code);
  EXPECT_EQ(onnxruntime_message(Error(ORT_INVALID_ARGUMENT, "bad")), "[ONNXRuntimeError] : 2 : INVALID_ARGUMENT : bad");
  EXPECT_EQ(onnxruntime_message(Error(ORT_EP_FAIL, "gone")), "[ONNXRuntimeError] : 11 : EP_FAIL : gone");
  EXPECT_EQ(kOnnxruntimeErrors[ORT_MODEL_LOADED].class_name, nullptr);  // onnxruntime raises a RuntimeError
}

}  // namespace
}  // namespace ortdlpack
