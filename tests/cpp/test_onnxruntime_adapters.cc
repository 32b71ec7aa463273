// The binding's adapters to onnxruntime's Python API (python/src/onnxruntime_devices.h, onnxruntime_sessions.h): its
// device names, the tensors its OrtValue reads, sessions from its NodeArgs, and when a run can use its plain
// InferenceSession.run. Plain C++: this test compiles them in.
#include "onnxruntime_devices.h"
#include "onnxruntime_sessions.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "support.h"
#include "virtual_device_env.h"

namespace ortdlpack::py {
namespace {

using test::host_iota;
using test::kind_of;
using test::Producer;

constexpr ONNXTensorElementDataType kF32 = ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT;

struct SessionDeleter {
  void operator()(OrtSession* s) const noexcept { ort().ReleaseSession(s); }
};
using SessionPtr = std::unique_ptr<OrtSession, SessionDeleter>;

class OnnxruntimeAdaptersTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { vd = test::VirtualDeviceEnv::load("ortdlpack_vd_adapters"); }
  static void TearDownTestSuite() { vd.unload(); }
  void SetUp() override { vd.reset_counters(); }

  static inline test::VirtualDeviceEnv vd;
  SessionPtr add_{test::make_add_session(kF32, {8})};  // Y = X + X on float[8]
};

IoDeclaration Declared(std::string name, std::string type, std::optional<std::vector<int64_t>> shape,
                       std::vector<std::string> dim_names = {}) {
  IoDeclaration d;
  d.name = std::move(name);
  d.type = std::move(type);
  d.shape = std::move(shape);
  d.dim_names = std::move(dim_names);
  return d;
}

IoDeclaration::Memory MemoryOf(const OrtMemoryInfo* info) {
  IoDeclaration::Memory m;
  const char* name = nullptr;
  check(ort().MemoryInfoGetName(info, &name));
  m.name = name;
  check(ort().MemoryInfoGetId(info, &m.device_id));
  check(ort().MemoryInfoGetMemType(info, &m.mem_type));
  check(ort().MemoryInfoGetType(info, &m.allocator_type));
  m.device_mem_type = ort().MemoryInfoGetDeviceMemType(info);
  m.vendor_id = ort().MemoryInfoGetVendorId(info);
  return m;
}

TEST(OnnxruntimeAdapters, OnnxruntimeNamesDevicesItsOwnWay) {
  EXPECT_STREQ(onnxruntime_device_name(kDLROCM), "cuda");
  EXPECT_EQ(onnxruntime_device_name(kDLExtDev), nullptr);
}

TEST_F(OnnxruntimeAdaptersTest, OnnxruntimesDeviceCarriesVendorAndMemoryType) {
  const OnnxruntimeDevice d = onnxruntime_device_fields(vd.memory(1));
  EXPECT_EQ(d.device_type, OrtMemoryInfoDeviceType_NPU);  // the virtual device's hardware type
  EXPECT_EQ(d.memory_type, OrtDeviceMemoryType_DEFAULT);
  EXPECT_EQ(d.vendor_id, ort().MemoryInfoGetVendorId(vd.memory(1)));
  EXPECT_EQ(d.device_id, 1);
}

TEST(OnnxruntimeAdapters, AnEpDeviceTheEnvDoesNotHaveIsAnInvalidArgument) {
  EXPECT_EQ(kind_of([] { find_ep_device("NoSuchEP", 0, 0, 0); }), ErrorKind::kInvalidArgument);
}

TEST(OnnxruntimeAdapters, PlainTensorsAreWhatALegacyOnlyConsumerReads) {
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

TEST_F(OnnxruntimeAdaptersTest, DeclarationsGiveWhatTheSessionGives) {
  const SessionInfo from_session(add_.get());
  IoDeclaration x = Declared("X", "tensor(float)", std::vector<int64_t>{8});
  x.memory = MemoryOf(memory_info(DLDevice{kDLCPU, 0}));
  const SessionInfo declared = session_info({x}, {Declared("Y", "tensor(float)", std::vector<int64_t>{8})}, {}, {});
  for (const SessionInfo* info : {&from_session, &declared}) {
    ASSERT_EQ(info->inputs().size(), 1u);
    EXPECT_EQ(info->inputs()[0].type_string(), "float32[8]");
    EXPECT_EQ(info->outputs()[0].element_type, kF32);
    EXPECT_EQ(info->find_output("Y"), &info->outputs()[0]);
  }
  ASSERT_NE(declared.inputs()[0].memory, nullptr);  // "Cpu": ORT's own name, resolved by CreateMemoryInfo
  EXPECT_TRUE(host_accessible(declared.inputs()[0].memory));
  EXPECT_EQ(declared.outputs()[0].memory, nullptr);  // not declared: unknown, treated as host
}

TEST_F(OnnxruntimeAdaptersTest, DeclarationsOfEveryKind) {
  IoDeclaration unknown_memory = Declared("c", "tensor(int64)", std::vector<int64_t>{});
  unknown_memory.memory = IoDeclaration::Memory{"NoSuchAllocator"};
  IoDeclaration device = Declared("d", "tensor(float)", std::vector<int64_t>{1});
  device.memory = MemoryOf(vd.memory(1));
  const SessionInfo info = session_info(
      {Declared("a", "tensor(float8e4m3fn)", std::vector<int64_t>{-1, 3}, {"N", ""}),
       Declared("b", "tensor(double)", std::nullopt), unknown_memory, device},
      {Declared("s", "seq(tensor(float))", std::nullopt), Declared("t", "tensor(string)", std::vector<int64_t>{2})},
      {Declared("w", "tensor(float)", std::vector<int64_t>{3})}, {});
  EXPECT_EQ(info.inputs()[0].type_string(), "float8_e4m3fn[N,3]");
  EXPECT_EQ(info.inputs()[1].type_string(), "float64[any shape]");
  EXPECT_EQ(info.inputs()[2].type_string(), "int64[any shape]");  // NodeArg's [] is a scalar or an unknown rank
  EXPECT_EQ(info.inputs()[2].memory, nullptr);                    // neither ORT nor an EP device knows it
  ASSERT_NE(info.inputs()[3].memory, nullptr);  // the plugin's memory, found among the env's EP devices
  EXPECT_FALSE(host_accessible(info.inputs()[3].memory));
  EXPECT_EQ(to_dlpack_device(info.inputs()[3].memory).device_id, 1);
  EXPECT_FALSE(info.outputs()[0].is_tensor);
  EXPECT_FALSE(info.outputs()[0].has_dlpack_form());
  EXPECT_EQ(info.outputs()[0].type_string(), "seq(tensor(float))");
  EXPECT_TRUE(info.outputs()[1].is_tensor);
  EXPECT_FALSE(info.outputs()[1].has_dlpack_form());  // strings
  EXPECT_TRUE(info.inputs()[0].has_dlpack_form());
  EXPECT_EQ(info.find_input("w"), &info.initializers()[0]);  // an overridable initializer is fed as an input is
  EXPECT_EQ(info.find_output("w"), nullptr);
  EXPECT_TRUE(host_outputs(info));  // values only: onnxruntime's run returns them as an IOBinding would
}

TEST_F(OnnxruntimeAdaptersTest, AHostRunRunsWithValues) {
  const SessionInfo info(add_.get());
  EXPECT_TRUE(host_outputs(info));
  Tensor x = host_iota(8);
  RunPlan plan = plan_run(info, {{"X", x}}, {}, {});  // the plan outlives the Feeds it was made from: it shares x
  EXPECT_TRUE(runs_with_values(plan));
  ASSERT_EQ(plan.outputs.size(), 1u);
  EXPECT_TRUE(host_accessible(plan.outputs[0].memory));
  EXPECT_EQ(plan.inputs[0].bound().ort_value(), x.ort_value());  // bound where it is

  RunOptions into;
  into.destinations = {{"Y", host_iota(8)}};
  EXPECT_FALSE(runs_with_values(plan_run(info, {{"X", x}}, {}, into)));  // a destination needs an IoBinding
  EXPECT_TRUE(runs_with_values(plan_run(info, {}, {}, {}, {"X"})));      // a value feed needs onnxruntime's run
}

TEST_F(OnnxruntimeAdaptersTest, NumpyHasTheCommonTypes) {
  EXPECT_TRUE(numpy_has(ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16));
  EXPECT_TRUE(numpy_has(ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL));
  EXPECT_FALSE(numpy_has(ONNX_TENSOR_ELEMENT_DATA_TYPE_BFLOAT16));
  EXPECT_FALSE(numpy_has(ONNX_TENSOR_ELEMENT_DATA_TYPE_STRING));
}

TEST_F(OnnxruntimeAdaptersTest, ANodeArgWithoutDimensionsTakesAnyRank) {
  // onnxruntime shows an input declared without a shape as [], like a scalar: the plan must not refuse its feeds.
  const SessionInfo info = session_info({Declared("X", "tensor(float)", std::vector<int64_t>{})},
                                        {Declared("Y", "tensor(float)", std::nullopt)}, {}, {});
  const RunPlan plan = plan_run(info, {{"X", host_iota(8)}}, {}, {});
  EXPECT_EQ(plan.inputs.size(), 1u);
}

TEST_F(OnnxruntimeAdaptersTest, ASessionWritesTheMemoryOfItsEpDevices) {
  const std::vector<IoDeclaration> in{Declared("X", "tensor(float)", std::vector<int64_t>{8})};
  const std::vector<IoDeclaration> out{Declared("Y", "tensor(float)", std::vector<int64_t>{8})};
  const SessionInfo cpu = session_info(in, out, {}, {"CPUExecutionProvider"});
  const SessionInfo with_ep = session_info(in, out, {}, {ORTDLPACK_VD_EP_NAME, "CPUExecutionProvider"});
  const IoInfo& y = with_ep.outputs()[0];
  EXPECT_FALSE(cpu.writes(y, vd.memory(0)));
  EXPECT_TRUE(with_ep.writes(y, vd.memory(0)));
  EXPECT_TRUE(with_ep.writes(y, vd.memory(1, OrtDeviceMemoryType_HOST_ACCESSIBLE)));
  EXPECT_TRUE(cpu.writes(y, memory_info(DLDevice{kDLCPU, 0})));
}

}  // namespace
}  // namespace ortdlpack::py
