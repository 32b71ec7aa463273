// Tests of the run plan (run_plan.h): SessionInfo and the decisions plan_run makes before ORT runs, on host memory and
// on the virtual device plugin's memory (which the host cannot touch: a kernel writing there would crash, so every such
// case must be refused or staged).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "python_adapters.h"
#include "run_plan.h"
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

TEST_F(RunPlanTest, DeviceFeedForAHostInputIsStaged) {
  const SessionInfo info(add_.get());
  Tensor x = to(host_iota(8), vd.memory(0));
  RunPlan plan = plan_run(info, {{"X", x}}, {}, {});
  ASSERT_TRUE(plan.inputs[0].staged);
  EXPECT_TRUE(host_accessible(plan.inputs[0].bound().memory_info()));
  EXPECT_EQ(vd.counters().bytes_d2h, 32u);  // the one copy
  EXPECT_TRUE(python::host_only(info, plan));
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
  const SessionInfo from_declarations = python::session_info({}, {}, {});
  EXPECT_TRUE(from_declarations.inputs().empty());
  const SessionInfo cpu_only(add_.get());
  const SessionInfo with_ep(add_.get(), vd.devices);
  const IoInfo& y = with_ep.outputs()[0];
  EXPECT_FALSE(cpu_only.writes(y, vd.memory(0)));
  EXPECT_TRUE(with_ep.writes(y, vd.memory(0)));
  EXPECT_TRUE(with_ep.writes(y, vd.memory(1, OrtDeviceMemoryType_HOST_ACCESSIBLE)));
  EXPECT_TRUE(cpu_only.writes(y, memory_info(DLDevice{kDLCPU, 0})));
  EXPECT_TRUE(with_ep.writes(with_ep.outputs()[0], vd.memory(1)));
}

// Found by fuzz/fuzz_run.cc: ORT allocates an output only in memory the session has an allocator for. Asked for the
// host-accessible memory of a device the session has no EP for, it allocated the output in CPU memory instead, and
// the run returned it as if placed where asked; such memory is now refused for allocations (a destination there is
// still written: it is host memory).
TEST_F(RunPlanTest, OutputsAreAllocatedOnlyInMemoryTheSessionAllocates) {
  const OrtMemoryInfo* vd_host = vd.memory(0, OrtDeviceMemoryType_HOST_ACCESSIBLE);
  const SessionInfo cpu_only(add_.get());
  const SessionInfo with_ep(add_.get(), {vd.devices[0]});
  EXPECT_FALSE(cpu_only.allocates(cpu_only.outputs()[0], vd_host));
  EXPECT_TRUE(cpu_only.writes(cpu_only.outputs()[0], vd_host));
  EXPECT_TRUE(cpu_only.allocates(cpu_only.outputs()[0], memory_info(DLDevice{kDLCPU, 0})));
  EXPECT_TRUE(with_ep.allocates(with_ep.outputs()[0], vd_host));
  EXPECT_FALSE(with_ep.allocates(with_ep.outputs()[0], vd.memory(1, OrtDeviceMemoryType_HOST_ACCESSIBLE)));

  Session cpu(add_.get());
  RunOptions by_memory;
  by_memory.output_memory = vd_host;
  ExpectError(ErrorKind::kInvalidArgument, [&] { cpu.run({{"X", host_iota(8)}}, {}, by_memory); },
              {"output 'Y' cannot be placed in VirtualDeviceHost:0", "no execution provider"});
  RunOptions into;
  into.destinations = {{"Y", allocate(kF32, {8}, vd_host)}};
  EXPECT_EQ(cpu.run({{"X", host_iota(8)}}, {}, into)[0].data(), into.destinations[0].second.data());

  examples::ModelBuilder b;
  b.Node("Add", {"X", "X"}, {"Y"});
  SessionPtr on_ep(b.Build({b.Value("X", kF32, {8})}, {b.Value("Y", kF32, {8})}, 1, {vd.devices[0]}));
  Session s(on_ep.get(), {vd.devices[0]});
  const Tensor y = s.run({{"X", host_iota(8)}}, {}, by_memory)[0];
  EXPECT_TRUE(is_at(y, Target::in(vd_host)));
  EXPECT_EQ(static_cast<const float*>(y.data())[3], 2 * (0.25f + 3));
}

TEST_F(RunPlanTest, NamedDimensionsHoldOneValueAcrossInputsAndDestinations) {
  // ONNX IR: a dimension variable denotes one value across the graph's inputs and outputs.
  const auto declared = [](const char* name, std::vector<std::string> dims) {
    python::IoDeclaration d;
    d.name = name;
    d.type = "tensor(float)";
    d.shape = std::vector<int64_t>(dims.size(), -1);
    d.dim_names = std::move(dims);
    return d;
  };
  const SessionInfo info = python::session_info({declared("a", {"N"}), declared("b", {"N"})},
                                                {declared("c", {"N"}), declared("d", {"K"})}, {});
  ExpectError(ErrorKind::kInvalidArgument, [&] { plan_run(info, {{"a", host_iota(3)}, {"b", host_iota(4)}}, {}, {}); },
              {"input 'b': dimension 0 mismatch", "float32[N] with N = 3 (from input 'a')", "got float32[4]"});
  RunOptions into;
  into.destinations = {{"c", host_iota(4)}};
  ExpectError(ErrorKind::kInvalidArgument,
              [&] { plan_run(info, {{"a", host_iota(3)}, {"b", host_iota(3)}}, {}, into); },
              {"output destination 'c': dimension 0 mismatch", "N = 3 (from input 'a')"});
  into.destinations = {{"c", host_iota(3)}, {"d", host_iota(5)}};  // K: no feed gives it, ORT's to compute
  EXPECT_EQ(plan_run(info, {{"a", host_iota(3)}, {"b", host_iota(3)}}, {}, into).outputs.size(), 2u);
}

}  // namespace
}  // namespace ortdlpack
