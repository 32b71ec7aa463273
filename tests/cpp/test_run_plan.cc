// Tests of the run plan (run_plan.h): SessionInfo and the decisions plan_run makes before ORT runs, on host memory and
// on the virtual device plugin's memory (which the host cannot touch: a kernel writing there would crash, so every such
// case must be refused or staged).
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "async_producer.h"
#include "frontend.h"
#include "placement_rules.h"
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
  EXPECT_FALSE(plan.needs_values());
}

// A run that repeats the last run's signature reuses its plan; one that changes it (a feed in other memory, other
// outputs, another reader) is planned anew: a device feed after host feeds is staged (a stale plan would hand the
// device pointer to a CPU kernel: guarded memory faults), a host feed after it is not.
TEST_F(RunPlanTest, AChangedSignatureIsPlannedAnew) {
  examples::ModelBuilder b;
  b.Node("Add", {"X", "X"}, {"Y"});
  b.Node("Mul", {"X", "X"}, {"Z"});
  SessionPtr two(b.Build({b.Value("X", kF32, {8})}, {b.Value("Y", kF32, {8}), b.Value("Z", kF32, {8})}));
  Session s(two.get());
  const auto third = [](const Tensor& t) { return static_cast<const float*>(t.data())[3]; };
  const float x3 = 0.25f + 3;
  for (int run = 0; run < 2; ++run) EXPECT_EQ(third(s.run({{"X", host_iota(8)}})[1]), x3 * x3);
  const std::vector<Tensor> z = s.run({{"X", host_iota(8)}}, {"Z"});
  ASSERT_EQ(z.size(), 1u);
  EXPECT_EQ(third(z[0]), x3 * x3);
  const std::vector<Tensor> staged = s.run({{"X", to(host_iota(8), vd.memory(0))}}, {"Z"});
  EXPECT_EQ(third(staged[0]), x3 * x3);
  EXPECT_EQ(vd.counters().bytes_d2h, 32u);  // staged: the one copy
  EXPECT_EQ(third(s.run({{"X", host_iota(8)}}, {"Z"})[0]), x3 * x3);
  EXPECT_EQ(vd.counters().bytes_d2h, 32u);  // not staged again
  RunOptions on_host;
  on_host.read_on_host = true;
  EXPECT_EQ(third(s.run({{"X", host_iota(8)}}, {"Y"}, on_host)[0]), 2 * x3);
}

// A plan is reused by the memory its feeds are in, never by the address of what describes that memory: a device feed
// whose OrtValue takes the address a freed host feed's had (the allocator reuses it) is planned anew and staged.
TEST_F(RunPlanTest, AFeedInOtherMemoryAtAFreedFeedsAddressIsPlannedAnew) {
  Session s(add_.get());
  const float x3 = 0.25f + 3;
  // Imported feeds: each OrtValue's memory info is its own, and the allocator hands a freed one's address out again.
  const auto imported = [](const Tensor& t) { return from_dlpack(to_dlpack_versioned(t)).tensor; };
  for (int round = 0; round < 8; ++round) {
    EXPECT_EQ(static_cast<const float*>(s.run({{"X", imported(host_iota(8))}})[0].data())[3], 2 * x3);
    const std::vector<Tensor> y = s.run({{"X", imported(to(host_iota(8), vd.memory(0)))}});
    EXPECT_EQ(static_cast<const float*>(y[0].data())[3], 2 * x3);
  }
  EXPECT_EQ(vd.counters().bytes_d2h, 8 * 32u);  // every device feed staged: one copy each
}

// A repeated run with destinations reuses its plan, never its destinations: each run writes its own, and each is
// checked as the first run's was (shape, overlap with this run's feed).
TEST_F(RunPlanTest, ARepeatedRunWithDestinationsChecksAndWritesEachRunsOwn) {
  Session s(add_.get());
  const auto at = [](const Tensor& t, size_t i) { return static_cast<const float*>(t.data())[i]; };
  RunOptions first, second, overlapping, misshapen;
  first.destinations = {{"Y", allocate(kF32, {8}, DLDevice{kDLCPU, 0})}};
  second.destinations = {{"Y", allocate(kF32, {8}, DLDevice{kDLCPU, 0})}};
  std::memset(second.destinations[0].second.data(), 0, 32);
  const Tensor x = host_iota(8);
  s.run({{"X", x}}, {}, first);
  s.run({{"X", x}}, {}, first);
  const Tensor y = s.run({{"X", x}}, {}, second)[0];
  EXPECT_EQ(y.data(), second.destinations[0].second.data());
  EXPECT_EQ(at(y, 3), 2 * at(x, 3));
  overlapping.destinations = {{"Y", x}};
  ExpectError(ErrorKind::kInvalidArgument, [&] { s.run({{"X", x}}, {}, overlapping); },
              {"output destination 'Y' overlaps input 'X'"});
  misshapen.destinations = {{"Y", allocate(kF32, {4}, DLDevice{kDLCPU, 0})}};
  ExpectError(ErrorKind::kInvalidArgument, [&] { s.run({{"X", x}}, {}, misshapen); },
              {"output destination 'Y'", "dimension 0 mismatch"});
  EXPECT_EQ(at(s.run({{"X", x}}, {}, second)[0], 5), 2 * at(x, 5));
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
  by_device.output_target = Target::on(DLDevice{kDLExtDev, 0});
  ExpectError(ErrorKind::kInvalidArgument, [&] { s.run({{"X", host_iota(8)}}, {}, by_device); },
              {"output 'Y' cannot be placed in VirtualDevice", "no execution provider"});
  RunOptions by_memory;
  by_memory.output_target = Target::in(vd.memory(1));
  ExpectError(ErrorKind::kInvalidArgument, [&] { s.run({{"X", host_iota(8)}}, {}, by_memory); },
              {"output 'Y' cannot be placed"});
  EXPECT_EQ(vd.counters().allocs, 0u);
}

// RunOptions::read_on_host (a numpy consumer): device memory the host cannot read is refused before ORT runs, for
// allocated outputs and destinations alike; host memory is accepted, and outputs the session produces on a device
// are allocated in CPU memory (ORT copies them).
TEST_F(RunPlanTest, OutputsReadOnTheHostAreInHostMemory) {
  examples::ModelBuilder b;
  b.Node("Add", {"X", "X"}, {"Y"});
  SessionPtr on_ep(b.Build({b.Value("X", kF32, {8})}, {b.Value("Y", kF32, {8})}, 1, {vd.devices[0]}));
  Session s(on_ep.get(), {vd.devices[0]});
  RunOptions on_host;
  on_host.read_on_host = true;
  const Tensor y = s.run({{"X", host_iota(8)}}, {}, on_host)[0];
  EXPECT_TRUE(y.host_accessible());
  EXPECT_EQ(static_cast<const float*>(y.data())[3], 2 * (0.25f + 3));
  RunOptions with_host_memory = on_host;
  with_host_memory.output_target = Target::in(vd.memory(0, OrtDeviceMemoryType_HOST_ACCESSIBLE));
  EXPECT_TRUE(is_at(s.run({{"X", host_iota(8)}}, {}, with_host_memory)[0], with_host_memory.output_target));

  const size_t allocs = vd.counters().allocs;
  RunOptions on_device = on_host;
  on_device.output_target = Target::on(DLDevice{kDLExtDev, 0});
  ExpectError(ErrorKind::kInvalidArgument, [&] { s.run({{"X", host_iota(8)}}, {}, on_device); },
              {"outputs read on the host", "cannot be placed in VirtualDevice:0"});
  RunOptions into_device = on_host;
  into_device.destinations = {{"Y", allocate(kF32, {8}, vd.memory(0))}};
  ExpectError(ErrorKind::kInvalidArgument, [&] { s.run({{"X", host_iota(8)}}, {}, into_device); },
              {"outputs read on the host", "destination of 'Y'", "VirtualDevice:0"});
  EXPECT_EQ(vd.counters().allocs, allocs + 1);  // the destination only: nothing ran
}

TEST_F(RunPlanTest, ASessionWritesTheMemoryOfItsEpDevices) {
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
  by_memory.output_target = Target::in(vd_host);
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

// An input or output as a model declares it: an ONNX type, dynamic dimensions by name ("": unnamed).
IoInfo declared(const char* name, std::vector<std::string> dims, const char* type = "tensor(float)") {
  IoInfo io;
  io.name = name;
  io.onnx_type = type;
  const std::string t = type;
  io.is_tensor = t.compare(0, 7, "tensor(") == 0;
  if (!io.is_tensor) return io;
  io.element_type = dtype_from_onnx_name(t.substr(7, t.size() - 8));
  io.has_shape = !dims.empty();
  io.shape.assign(dims.size(), -1);
  io.dim_names = std::move(dims);
  return io;
}

SessionInfo info_of(std::vector<IoInfo> inputs, std::vector<IoInfo> outputs, std::vector<IoInfo> initializers = {},
                    const std::vector<const OrtEpDevice*>& ep_devices = {}) {
  return SessionInfo(std::move(inputs), std::move(outputs), std::move(initializers), ep_devices);
}

TEST_F(RunPlanTest, ASymbolicDimensionIsALabelNotAConstraint) {
  // As ORT reads a model: Paddle2ONNX names both spatial dims of an OCR model "?", which ORT runs at 48x192.
  const SessionInfo info =
      info_of({declared("x", {"?", "?"}), declared("y", {"N"})}, {declared("c", {"N"}), declared("d", {"K"})});
  RunOptions into;
  into.destinations = {{"c", host_iota(4)}, {"d", host_iota(5)}};
  const RunPlan plan =
      plan_run(info, {{"x", allocate(kF32, {48, 192}, DLDevice{kDLCPU, 0})}, {"y", host_iota(3)}}, {}, into);
  EXPECT_EQ(plan.outputs.size(), 2u);
}

// onnxruntime's run makes some checks itself, in its words: the plan makes them first in the same words (ORT's code
// for those its C++ makes, none for those its Python makes), and leaves what ORT checks when it runs to ORT.
TEST_F(RunPlanTest, ChecksOnnxruntimesRunMakesAreWordedAsItWordsThem) {
  const SessionInfo info(add_.get());
  const auto error = [&](auto f) {
    try {
      f();
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument) << e.what();
      return std::make_pair(e.ort_code(), std::string(e.what()));
    }
    return std::make_pair(ORT_OK, std::string("no error"));
  };
  EXPECT_EQ(error([&] { plan_run(info, {{"X", host_iota(8)}, {"Z", host_iota(8)}}, {}, {}); }),
            std::make_pair(ORT_INVALID_ARGUMENT, std::string("Invalid input name: Z")));
  EXPECT_EQ(error([&] { plan_run(info, {{"Z", host_iota(8)}}, {}, {}); }),  // missing first, as its Python checks
            std::make_pair(ORT_OK, std::string("Required inputs (['X']) are missing from input feed (['Z']).")));
  EXPECT_EQ(error([&] { plan_run(info, {{"X", host_iota(8)}}, {"Z"}, {}); }),
            std::make_pair(ORT_INVALID_ARGUMENT, std::string("Invalid output name:Z")));
  // A feed's element type, rank and dimensions: ORT's to check, in its words.
  EXPECT_EQ(plan_run(info, {{"X", host_iota(7)}}, {}, {}).inputs.size(), 1u);
  Session s(add_.get());
  const auto [code, message] = error([&] { s.run({{"X", host_iota(7)}}); });
  EXPECT_EQ(code, ORT_INVALID_ARGUMENT);
  EXPECT_NE(message.find("Got invalid dimensions for input: X"), std::string::npos) << message;
  RunOptions into;
  into.destinations = {{"Y", host_iota(8)}, {"Y", host_iota(8)}};  // ortdlpack's own rule: no ORT code
  EXPECT_EQ(error([&] { plan_run(info, {{"X", host_iota(8)}}, {}, into); }).first, ORT_OK);
}

TEST_F(RunPlanTest, OptionalInputsAndOverridableInitializersNeedNoFeed) {
  const SessionInfo info = info_of({declared("x", {"N"}), declared("o", {}, "optional(tensor(float))")},
                                   {declared("y", {"N"})}, {declared("w", {"N"})});
  EXPECT_EQ(plan_run(info, {{"x", host_iota(3)}}, {}, {}).inputs.size(), 1u);
  const RunPlan plan = plan_run(info, {{"x", host_iota(3)}, {"w", host_iota(2)}}, {}, {});
  ASSERT_EQ(plan.inputs.size(), 2u);
  EXPECT_EQ(plan.inputs[1].io, &info.initializers()[0]);
  EXPECT_EQ(plan_run(info, {{"x", host_iota(3)}, {"o", host_iota(3)}}, {}, {}).inputs.size(), 2u);  // ORT's to check
}

TEST_F(RunPlanTest, AValueRunReturnsItsOutputsInHostMemory) {
  const SessionInfo info =
      info_of({declared("s", {}, "seq(tensor(float))"), declared("x", {"N"})},
              {declared("y", {"N"}), declared("m", {}, "map(int64,tensor(float))")}, {}, vd.devices);
  const RunPlan plan = plan_run(info, {{"x", host_iota(3)}}, {}, {}, {"s"});
  EXPECT_TRUE(plan.needs_values());
  ASSERT_EQ(plan.values.size(), 1u);
  EXPECT_EQ(plan.values[0]->name, "s");
  EXPECT_TRUE(host_accessible(plan.outputs[0].memory));
  EXPECT_FALSE(plan_run(info, {{"x", host_iota(3)}}, {"y"}, {}, {"s"}).values.empty());
  EXPECT_TRUE(plan_run(info, {{"x", host_iota(3)}}, {"m"}, {}, {"s"}).needs_values());
  RunOptions on_device;
  on_device.output_target = Target::in(vd.memory(0));
  ExpectError(ErrorKind::kInvalidArgument, [&] { plan_run(info, {{"x", host_iota(3)}}, {"y"}, on_device, {"s"}); },
              {"outputs cannot be placed in device memory", "input 's' is fed a value"});
  RunOptions into;
  into.destinations = {{"y", host_iota(3)}};
  ExpectError(ErrorKind::kInvalidArgument, [&] { plan_run(info, {{"x", host_iota(3)}}, {"y"}, into, {"s"}); },
              {"outputs cannot be written into destinations"});
  ExpectError(ErrorKind::kInvalidArgument, [&] { plan_run(info, {{"x", host_iota(3)}}, {}, {}, {"s", "s"}); },
              {"input 's' is fed twice"});
  EXPECT_EQ(plan_run(info, {}, {}, {}, {"x", "s"}).values.size(), 2u);  // an array ORT reads: ORT checks it
}

TEST_F(RunPlanTest, AnOutputOverAFeedsMemoryIsCopied) {
  const SessionInfo info(add_.get());
  Tensor x = host_iota(8);
  const RunPlan plan = plan_run(info, {{"X", x}}, {}, {});
  std::vector<Tensor> outputs{x};  // what ORT returns for a graph output that is a graph input
  settle_outputs(plan, outputs);
  EXPECT_NE(outputs[0].data(), x.data());
  EXPECT_EQ(std::memcmp(outputs[0].data(), x.data(), x.byte_size()), 0);
  Tensor other = host_iota(8);
  std::vector<Tensor> separate{other};
  settle_outputs(plan, separate);
  EXPECT_EQ(separate[0].data(), other.data());
}

// A front end's runtime, as the core calls it: which route a run took, what it asked for.
struct RecordingRuntime final : Runtime {
  explicit RecordingRuntime(std::vector<Tensor> given) : arrays(std::move(given)) {}
  Tensor tensor_of(size_t index) override {
    ++imported;
    return arrays.at(index);
  }
  void run_values(const RunPlan& plan) override { ran_values = plan.values.size() + plan.inputs.size(); }
  void unlocked(const std::function<void()>& work) override {
    ++released;
    work();
  }
  std::vector<Tensor> arrays;
  int imported = 0, released = 0;
  size_t ran_values = 0;
};

// The route is the core's: arrays go to the runtime's own run when it returns what the executor would (host outputs
// of types numpy has) and nothing is placed; anything placed, and tensors, go to the executor, arrays made Tensors.
TEST_F(RunPlanTest, TheCoreDecidesWhichRunCarriesARequestOut) {
  Session s(add_.get(), BorrowedSession{{}, {{"CPUExecutionProvider", {}}}, nullptr, false});
  RecordingRuntime runtime({host_iota(8)});
  RunRequest arrays{{}, {FedValue{"X", true}}, {}, {}, {}};
  EXPECT_EQ(run(s, arrays, &runtime).route, Route::kRuntime);
  EXPECT_EQ(runtime.ran_values, 1u);
  EXPECT_EQ(runtime.imported, 0);
  RunRequest placed{{}, {FedValue{"X", true}}, {}, {}, {}};
  placed.options.destinations = {{"Y", allocate(kF32, {8}, DLDevice{kDLCPU, 0})}};
  const RunResult executed = run(s, placed, &runtime);
  EXPECT_EQ(executed.route, Route::kExecutor);
  EXPECT_EQ(runtime.imported, 1);
  EXPECT_EQ(runtime.released, 1);
  EXPECT_EQ(static_cast<const float*>(executed.outputs[0].data())[3], 2 * (0.25f + 3));
  RunRequest tensors{{{"X", host_iota(8)}}, {}, {}, {}, {}};
  EXPECT_EQ(run(s, tensors, &runtime).route, Route::kExecutor);
  RunRequest value{{}, {FedValue{"X", false}}, {}, {}, {}};
  value.options.stream = 1;  // an option the runtime's route cannot honour: refused, never dropped
  ExpectError(ErrorKind::kInvalidArgument, [&] { run(s, value, &runtime); }, {"RunOptions::stream"});
  RunRequest no_runtime{{}, {FedValue{"X", true}}, {}, {}, {}};
  ExpectError(ErrorKind::kInvalidArgument, [&] { run(s, no_runtime, nullptr); },
              {"input 'X' is fed a value, not a tensor"});
}

// A session another API created (onnxruntime's InferenceSession) is borrowed with what its creator knows: the EPs it
// runs on by name give it their devices' memory.
TEST_F(RunPlanTest, ABorrowedSessionHasTheDevicesOfTheEpsItRunsOn) {
  Session cpu(add_.get(), BorrowedSession{{}, {{"CPUExecutionProvider", {}}}, nullptr, false});
  Session with_ep(add_.get(),
                  BorrowedSession{{}, {{ORTDLPACK_VD_EP_NAME, {}}, {"CPUExecutionProvider", {}}}, nullptr, false});
  const SessionInfo& info_cpu = detail::SessionAccess::info(cpu);
  const SessionInfo& info_ep = detail::SessionAccess::info(with_ep);
  EXPECT_FALSE(info_cpu.writes(info_cpu.outputs()[0], vd.memory(0)));
  EXPECT_TRUE(info_ep.writes(info_ep.outputs()[0], vd.memory(1)));
  EXPECT_EQ(with_ep.providers(), (std::vector<std::string>{ORTDLPACK_VD_EP_NAME, "CPUExecutionProvider"}));
}

// A replay of a captured graph reads and writes the tensors of the run that captured it: every other run would get
// another run's results, silently. So a session that captures graphs runs through one Binding per graph.
TEST_F(RunPlanTest, ASessionThatCapturesGraphsRunsOneBindingPerGraph) {
  Session s(add_.get(), BorrowedSession{{}, {}, nullptr, true});
  ExpectError(ErrorKind::kInvalidArgument, [&] { s.run({{"X", host_iota(8)}}); },
              {"replays captured device graphs", "bind() once", "gpu_graph_id to -1"});
  const auto graph = [](const char* id) {
    OrtRunOptions* raw = nullptr;
    check(ort().CreateRunOptions(&raw));
    check(ort().AddRunConfigEntry(raw, "gpu_graph_id", id));
    return Owned<OrtRunOptions>(raw);
  };
  const Owned<OrtRunOptions> skip = graph("-1"), one = graph("1");
  RunOptions skipping;
  skipping.run_options = skip.get();
  EXPECT_EQ(s.run({{"X", host_iota(8)}}, {}, skipping).size(), 1u);  // opted out of capture

  Binding first = s.bind({{"X", host_iota(8)}});
  first.run();  // graph 0
  first.run();
  Binding second = s.bind({{"X", host_iota(8)}});
  ExpectError(ErrorKind::kInvalidArgument, [&] { second.run(); }, {"graph 0", "captured by another Binding"});
  EXPECT_EQ(second.run(one.get()).size(), 1u);  // another graph
  Binding moved = std::move(first);             // (the same Binding: its graph stays its own)
  moved.run();
  moved = Binding();  // released: graph 0 stays captured on its tensors, never replayed again
  ExpectError(ErrorKind::kInvalidArgument, [&] { second.run(); }, {"graph 0", "(released since)"});
  Binding third = s.bind({{"X", host_iota(8)}});
  ExpectError(ErrorKind::kInvalidArgument, [&] { third.run(one.get()); }, {"graph 1", "or run that Binding"});
}

}  // namespace
}  // namespace ortdlpack
