// Tests of the run plan (run_plan.h): SessionInfo from an OrtSession and from declarations, and the decisions
// plan_run makes before ORT runs, on host memory and on the virtual device plugin's memory (which the host cannot
// touch: a kernel writing there would crash, so every such case must be refused or staged).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "support.h"
#include "virtual_device_env.h"

namespace ortdlpack {
namespace {

using test::host_iota;

constexpr ONNXTensorElementDataType kF32 = ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT;

struct SessionDeleter {
  void operator()(OrtSession* s) const noexcept { ort().ReleaseSession(s); }
};
using SessionPtr = std::unique_ptr<OrtSession, SessionDeleter>;

class RunPlanTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { vd = test::VirtualDeviceEnv::load("ortdlpack_vd_plan"); }
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

template <class F>
void ExpectError(ErrorKind kind, F&& f, const std::vector<std::string>& fragments) {
  try {
    f();
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
    for (const std::string& s : fragments) EXPECT_NE(std::string(e.what()).find(s), std::string::npos) << e.what();
  }
}

TEST_F(RunPlanTest, DeclarationsGiveWhatTheSessionGives) {
  const SessionInfo from_session(add_.get());
  IoDeclaration x = Declared("X", "tensor(float)", std::vector<int64_t>{8});
  x.memory = MemoryOf(memory_info(DLDevice{kDLCPU, 0}));
  const SessionInfo declared({x}, {Declared("Y", "tensor(float)", std::vector<int64_t>{8})});
  for (const SessionInfo* info : {&from_session, &declared}) {
    ASSERT_EQ(info->inputs().size(), 1u);
    EXPECT_EQ(info->inputs()[0].describe(), "float32[8]");
    EXPECT_EQ(info->outputs()[0].element_type, kF32);
    EXPECT_EQ(info->output_index("Y"), 0);
  }
  ASSERT_NE(declared.inputs()[0].memory, nullptr);  // "Cpu": ORT's own name, resolved by CreateMemoryInfo
  EXPECT_TRUE(host_accessible(declared.inputs()[0].memory));
  EXPECT_EQ(declared.outputs()[0].memory, nullptr);  // not declared: unknown, treated as host
}

TEST_F(RunPlanTest, DeclarationsOfEveryKind) {
  IoDeclaration unknown_memory = Declared("c", "tensor(int64)", std::vector<int64_t>{});
  unknown_memory.memory = IoDeclaration::Memory{"NoSuchAllocator"};
  IoDeclaration device = Declared("d", "tensor(float)", std::vector<int64_t>{1});
  device.memory = MemoryOf(vd.memory(1));
  const SessionInfo info({Declared("a", "tensor(float8e4m3fn)", std::vector<int64_t>{-1, 3}, {"N", ""}),
                          Declared("b", "tensor(double)", std::nullopt), unknown_memory, device},
                         {Declared("s", "seq(tensor(float))", std::nullopt)});
  EXPECT_EQ(info.inputs()[0].describe(), "float8_e4m3fn[N,3]");
  EXPECT_EQ(info.inputs()[1].describe(), "float64[any shape]");
  EXPECT_EQ(info.inputs()[2].describe(), "int64[]");
  EXPECT_EQ(info.inputs()[2].memory, nullptr);  // neither ORT nor an EP device knows it
  ASSERT_NE(info.inputs()[3].memory, nullptr);  // the plugin's memory, found among the env's EP devices
  EXPECT_FALSE(host_accessible(info.inputs()[3].memory));
  EXPECT_EQ(to_dlpack_device(info.inputs()[3].memory).device_id, 1);
  EXPECT_FALSE(info.outputs()[0].is_tensor);
  EXPECT_EQ(info.outputs()[0].describe(), "a non-tensor value");
}

TEST_F(RunPlanTest, CpuOnlyIsTheCpuEpAlone) {
  const std::vector<IoDeclaration> x = {Declared("x", "tensor(float)", std::vector<int64_t>{1})};
  EXPECT_TRUE(SessionInfo(x, x, {"CPUExecutionProvider"}).cpu_only());
  EXPECT_FALSE(SessionInfo(x, x, {"VirtualDeviceEP", "CPUExecutionProvider"}).cpu_only());
  EXPECT_FALSE(SessionInfo(x, x).cpu_only());          // providers unknown
  EXPECT_FALSE(SessionInfo(add_.get()).cpu_only());   // ORT's C API cannot tell a session's providers
}

TEST_F(RunPlanTest, HostOnlyIsAPlainHostRun) {
  const SessionInfo info(add_.get());
  Tensor x = host_iota(8);
  RunPlan plan = plan_run(info, {{"X", x}}, {}, {});  // the plan outlives the Feeds it was made from: it shares x
  EXPECT_TRUE(plan.host_only);
  ASSERT_EQ(plan.outputs.size(), 1u);
  EXPECT_TRUE(host_accessible(plan.outputs[0].memory));
  EXPECT_EQ(plan.inputs[0].bound().ort_value(), x.ort_value());  // bound where it is

  RunOptions into;
  into.destinations = {{"Y", host_iota(8)}};
  EXPECT_FALSE(plan_run(info, {{"X", x}}, {}, into).host_only);  // a destination needs an IoBinding
}

TEST_F(RunPlanTest, DeviceFeedForAHostInputIsStaged) {
  const SessionInfo info(add_.get());
  Tensor x = to(host_iota(8), vd.memory(0));
  RunPlan plan = plan_run(info, {{"X", x}}, {}, {});
  ASSERT_TRUE(plan.inputs[0].staged);
  EXPECT_TRUE(host_accessible(plan.inputs[0].bound().memory_info()));
  EXPECT_EQ(vd.counters().bytes_d2h, 32u);  // the one copy
  EXPECT_TRUE(plan.host_only);
}

TEST_F(RunPlanTest, DeviceDestinationOfAHostSessionIsRefusedBeforeItRuns) {
  Session s(add_.get());
  RunOptions options;
  options.destinations = {{"Y", allocate(kF32, {8}, vd.memory(0))}};
  ExpectError(ErrorKind::kUnsupported, [&] { s.run({{"X", host_iota(8)}}, {}, options); },
              {"output destination 'Y'", "VirtualDevice", "cannot write", "never copied"});
}

TEST_F(RunPlanTest, OutputsOnADeviceTheSessionHasNoEpForAreRefused) {
  Session s(add_.get());
  RunOptions by_device;
  by_device.output_device = DLDevice{kDLExtDev, 0};
  ExpectError(ErrorKind::kInvalidArgument, [&] { s.run({{"X", host_iota(8)}}, {}, by_device); },
              {"output 'Y' cannot be placed in VirtualDevice", "no execution provider"});
  RunOptions by_memory;
  by_memory.output_memory = vd.memory(1);
  ExpectError(ErrorKind::kInvalidArgument, [&] { s.run({{"X", host_iota(8)}}, {}, by_memory); },
              {"output 'Y' cannot be placed"});
  EXPECT_EQ(vd.counters().allocs, 0u);
}

TEST_F(RunPlanTest, ASessionWritesTheMemoryOfItsEpDevices) {
  const std::vector<IoDeclaration> in{Declared("X", "tensor(float)", std::vector<int64_t>{8})};
  const std::vector<IoDeclaration> out{Declared("Y", "tensor(float)", std::vector<int64_t>{8})};
  const SessionInfo cpu_only(in, out, {"CPUExecutionProvider"});
  const SessionInfo with_ep(in, out, {ORTDLPACK_VD_EP_NAME, "CPUExecutionProvider"});
  const IoInfo& y = with_ep.outputs()[0];
  EXPECT_FALSE(cpu_only.writes(y, vd.memory(0)));
  EXPECT_TRUE(with_ep.writes(y, vd.memory(0)));
  EXPECT_TRUE(with_ep.writes(y, vd.memory(1, OrtDeviceMemoryType_HOST_ACCESSIBLE)));
  EXPECT_TRUE(cpu_only.writes(y, memory_info(DLDevice{kDLCPU, 0})));
  const SessionInfo from_session(add_.get(), vd.devices);
  EXPECT_TRUE(from_session.writes(from_session.outputs()[0], vd.memory(1)));
}

}  // namespace
}  // namespace ortdlpack
