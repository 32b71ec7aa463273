// Tests of ortdlpack::Session: running an OrtSession on DLPack tensors through IoBinding. The models are built in
// code with ORT's Model Editor API (no .onnx files, no protobuf).
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "model_builder.h"
#include "ortdlpack/ortdlpack.h"
#include "producer.h"
#include "support.h"
#ifdef ORTDLPACK_VD_PATH
#include "virtual_device_env.h"
#endif

namespace {

using ortdlpack::Error;
using ortdlpack::ErrorKind;
using ortdlpack::Target;
using ortdlpack::Tensor;

const OrtApi* g_api = nullptr;

// --- DLPack tensors over test-owned buffers (producer.h), each deleter counted --------------------------------------

// Every producer a test made; a test ends with each deleter run exactly once (SessionTest::TearDown).
struct Producers {
  std::mutex mutex;
  std::vector<std::unique_ptr<ortdlpack::test::Producer>> all;

  DLManagedTensorVersioned* over(void* data, std::vector<int64_t> shape, DLDataType dtype, uint64_t flags) {
    auto p = ortdlpack::test::Producer::over(data, dtype, std::move(shape));
    p->versioned.flags = flags;
    std::lock_guard<std::mutex> lock(mutex);
    all.push_back(std::move(p));
    return &all.back()->versioned;
  }
  long created() {
    std::lock_guard<std::mutex> lock(mutex);
    return static_cast<long>(all.size());
  }
  long deleted() {
    std::lock_guard<std::mutex> lock(mutex);
    long n = 0;
    for (const auto& p : all) n += p->deletes.load();
    return n;
  }
  bool each_deleted_once() {
    std::lock_guard<std::mutex> lock(mutex);
    return std::all_of(all.begin(), all.end(), [](const auto& p) { return p->deletes.load() == 1; });
  }
  void clear() {
    std::lock_guard<std::mutex> lock(mutex);
    all.clear();
  }
};
Producers g_producers;

Tensor Import(void* data, std::vector<int64_t> shape, DLDataType dtype = {kDLFloat, 32, 1}, uint64_t flags = 0) {
  ortdlpack::Imported imported = ortdlpack::from_dlpack(g_producers.over(data, std::move(shape), dtype, flags));
  EXPECT_FALSE(imported.copied);
  return imported.tensor;
}

// --- models built with the Model Editor API ------------------------------------------------------------------------

using ortdlpack::examples::ModelBuilder;

constexpr ONNXTensorElementDataType kF32 = ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT;

// z = x + y on float[1,100].
OrtSession* AddModel() {
  ModelBuilder b;
  b.Node("Add", {"x", "y"}, {"z"});
  return b.Build({b.Value("x", kF32, {1, 100}), b.Value("y", kF32, {1, 100})}, {b.Value("z", kF32, {1, 100})});
}

// y = x @ W + B on x: float[N,4] -> float[N,3], plus a second output s = x + x (float[N,4]).
constexpr float W(int i, int j) { return static_cast<float>(i * 3 + j) * 0.5f - 2.0f; }
constexpr float B(int j) { return static_cast<float>(j) - 1.0f; }
OrtSession* MatMulAddModel() {
  ModelBuilder b;
  std::vector<float> w, bias;
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 3; ++j) w.push_back(W(i, j));
  for (int j = 0; j < 3; ++j) bias.push_back(B(j));
  b.Initializer("W", {4, 3}, w);
  b.Initializer("B", {3}, bias);
  b.Node("MatMul", {"x", "W"}, {"xw"});
  b.Node("Add", {"xw", "B"}, {"y"});
  b.Node("Add", {"x", "x"}, {"s"});
  return b.Build({b.Value("x", kF32, {-1, 4}, {"N", ""})},
                 {b.Value("y", kF32, {-1, 3}, {"N", ""}), b.Value("s", kF32, {-1, 4}, {"N", ""})});
}

struct SessionDeleter {
  void operator()(OrtSession* s) const { g_api->ReleaseSession(s); }
};
using SessionPtr = std::unique_ptr<OrtSession, SessionDeleter>;

class SessionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    g_producers.clear();
    add_.reset(AddModel());
    mm_.reset(MatMulAddModel());
    for (int i = 0; i < 100; ++i) {
      x_[i] = static_cast<float>(i);
      y_[i] = static_cast<float>(1000 - 2 * i);
    }
  }
  void TearDown() override { EXPECT_TRUE(g_producers.each_deleted_once()) << "unbalanced DLPack deleters"; }

  SessionPtr add_, mm_;
  float x_[100]{}, y_[100]{};
};

template <class F>
void ExpectInvalid(F&& f, const std::vector<std::string>& fragments) {
  try {
    f();
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument) << e.what();
    for (const std::string& s : fragments) {
      EXPECT_FALSE(s.empty()) << "an empty fragment matches every message";
      EXPECT_NE(std::string(e.what()).find(s), std::string::npos) << e.what();
    }
  }
}

TEST_F(SessionTest, InfoIsCachedFromTheModel) {
  ortdlpack::Session s(mm_.get());
  ASSERT_EQ(s.inputs().size(), 1u);
  ASSERT_EQ(s.outputs().size(), 2u);
  EXPECT_EQ(s.inputs()[0].name, "x");
  EXPECT_EQ(s.inputs()[0].type_string(), "float32[N,4]");
  EXPECT_EQ(s.outputs()[1].name, "s");
  EXPECT_EQ(s.outputs()[0].name, "y");
  ASSERT_NE(s.outputs()[0].memory, nullptr);
  EXPECT_EQ(ortdlpack::to_dlpack_device(s.outputs()[0].memory).device_type, kDLCPU);
}

TEST_F(SessionTest, ImportedInputsExportedOutput) {
  ortdlpack::Session s(add_.get());
  DLManagedTensorVersioned* exported = nullptr;
  {
    Tensor x = Import(x_, {1, 100});
    Tensor y = Import(y_, {1, 100});
    std::vector<Tensor> out = s.run({{"x", x}, {"y", y}});
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].shape(), (std::vector<int64_t>{1, 100}));
    // The inputs were read where they are and ORT holds no reference after run(): only ours.
    EXPECT_EQ(x.use_count(), 1);
    EXPECT_EQ(x.data(), static_cast<void*>(x_));
    EXPECT_EQ(g_producers.deleted(), 0);
    exported = ortdlpack::to_dlpack_versioned(out[0]);
  }
  EXPECT_EQ(g_producers.deleted(), 2);  // both inputs handed back once the caller dropped them
  // The output lives on in the exported tensor alone, after the Tensors and before/after the Session.
  const auto* z = static_cast<const float*>(exported->dl_tensor.data);
  for (int i = 0; i < 100; ++i) ASSERT_EQ(z[i], x_[i] + y_[i]);
  EXPECT_EQ(exported->dl_tensor.ndim, 2);
  exported->deleter(exported);
}

TEST_F(SessionTest, OutputOutlivesSessionAndOrtSession) {
  Tensor out;
  {
    ortdlpack::Session s(add_.get());
    out = s.run({{"x", Import(x_, {1, 100})}, {"y", Import(y_, {1, 100})}})[0];
  }
  add_.reset();  // the OrtSession is gone too
  const auto* z = static_cast<const float*>(out.data());
  for (int i = 0; i < 100; ++i) ASSERT_EQ(z[i], x_[i] + y_[i]);
}

TEST_F(SessionTest, PreallocatedOutputLandsInCallerBuffer) {
  ortdlpack::Session s(add_.get());
  std::vector<float> dst(100, -1.0f);
  ortdlpack::RunOptions options;
  options.destinations = {{"z", Import(dst.data(), {1, 100})}};
  std::vector<Tensor> out = s.run({{"x", Import(x_, {1, 100})}, {"y", Import(y_, {1, 100})}}, {"z"}, options);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].data(), static_cast<void*>(dst.data()));
  EXPECT_EQ(out[0].ort_value(), options.destinations[0].second.ort_value());  // the caller's own Tensor
  for (int i = 0; i < 100; ++i) ASSERT_EQ(dst[i], x_[i] + y_[i]);
  EXPECT_EQ(g_producers.deleted(), 2);  // the two temporary feeds
}

TEST_F(SessionTest, DynamicBatchOutputSubsetAndMixedDestinations) {
  ortdlpack::Session s(mm_.get());
  for (int64_t n : {1, 5}) {
    std::vector<float> x(static_cast<size_t>(n) * 4);
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 7) - 3.0f;
    // Only y, allocated by the session.
    std::vector<Tensor> out = s.run({{"x", Import(x.data(), {n, 4})}}, {"y"});
    ASSERT_EQ(out.size(), 1u);
    ASSERT_EQ(out[0].shape(), (std::vector<int64_t>{n, 3}));
    const auto* y = static_cast<const float*>(out[0].data());
    for (int64_t r = 0; r < n; ++r) {
      for (int j = 0; j < 3; ++j) {
        float expected = B(j);
        for (int i = 0; i < 4; ++i) expected += x[static_cast<size_t>(r * 4 + i)] * W(i, j);
        ASSERT_FLOAT_EQ(y[r * 3 + j], expected);
      }
    }
    // Both, in reversed order; s into a caller buffer, y on the session's choice of memory.
    std::vector<float> sbuf(x.size());
    ortdlpack::RunOptions options;
    options.destinations = {{"s", Import(sbuf.data(), {n, 4})}};
    options.output_target = Target::on(DLDevice{kDLCPU, 0});
    out = s.run({{"x", Import(x.data(), {n, 4})}}, {"s", "y"}, options);
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(out[0].data(), static_cast<void*>(sbuf.data()));
    EXPECT_EQ(out[1].shape(), (std::vector<int64_t>{n, 3}));
    for (size_t i = 0; i < x.size(); ++i) ASSERT_EQ(sbuf[i], 2 * x[i]);
  }
}

// --- sessions the core creates from a model file or bytes ---------------------------------------------------------

TEST(SessionCreate, FromBytesAndFromAFile) {
  const std::string model = ortdlpack::test::identity_model_bytes(2);
  ortdlpack::SessionConfig config;
  config.intra_op_num_threads = 1;
  config.entries = {{"session.intra_op.allow_spinning", "0"}};
  ortdlpack::Session from_bytes(model.data(), model.size(), config);
  const std::string path = ::testing::TempDir() + "ortdlpack_identity.onnx";
  {
    FILE* f = std::fopen(path.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    ASSERT_EQ(std::fwrite(model.data(), 1, model.size(), f), model.size());
    std::fclose(f);
  }
  ortdlpack::Session from_file(path, {});
  std::remove(path.c_str());
  for (ortdlpack::Session* s : {&from_bytes, &from_file}) {
    float x[2] = {1.5f, -2.0f};
    const std::vector<Tensor> y = s->run({{"x", Import(x, {2})}});
    ASSERT_EQ(y.size(), 1u);
    EXPECT_EQ(std::memcmp(y[0].data(), x, sizeof(x)), 0);
    EXPECT_EQ(s->inputs()[0].name, "x");
  }
}

TEST(SessionCreate, ErrorsSayWhatIsWrong) {
  const std::string model = ortdlpack::test::identity_model_bytes(2);
  ortdlpack::SessionConfig options_without_ep;
  options_without_ep.ep_options = {{"device_id", "0"}};
  ExpectInvalid([&] { ortdlpack::Session(model.data(), model.size(), options_without_ep); }, {"ep_options needs ep"});
  ortdlpack::SessionConfig unknown_ep;
  unknown_ep.ep = "NoSuchExecutionProvider";
  ExpectInvalid([&] { ortdlpack::Session(model.data(), model.size(), unknown_ep); }, {"NoSuchExecutionProvider"});
  const std::string garbage = "not an onnx model";
  EXPECT_THROW(ortdlpack::Session(garbage.data(), garbage.size(), {}), Error);
  EXPECT_THROW(ortdlpack::Session(::testing::TempDir() + "no_such_model.onnx", {}), Error);
}

TEST_F(SessionTest, ABorrowedSessionRuns) {
  std::vector<Tensor> out =
      ortdlpack::Session(add_.get()).run({{"y", Import(y_, {1, 100})}, {"x", Import(x_, {1, 100})}});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(static_cast<const float*>(out[0].data())[3], x_[3] + y_[3]);
}

TEST_F(SessionTest, ValidationErrorsNameTheInputOrOutput) {
  ortdlpack::Session s(add_.get());
  Tensor x = Import(x_, {1, 100});
  Tensor y = Import(y_, {1, 100});
  // onnxruntime's words for what its run checks (its Python's and ORT's), ortdlpack's for the rest.
  ExpectInvalid([&] { s.run({{"x", x}, {"y", y}, {"w", y}}); }, {"Invalid input name: w"});
  ExpectInvalid([&] { s.run({{"x", x}}); }, {"Required inputs (['y']) are missing from input feed (['x'])."});
  ExpectInvalid([&] { s.run({{"x", x}, {"x", x}, {"y", y}}); }, {"'x' is fed twice"});
  ExpectInvalid([&] { s.run({{"x", x}, {"y", Tensor()}}); }, {"'y' is an empty Tensor"});
  double d[100] = {};
  ExpectInvalid([&] { s.run({{"x", x}, {"y", Import(d, {1, 100}, {kDLFloat, 64, 1})}}); },
                {"Unexpected input data type. Actual: (tensor(double)) , expected: (tensor(float))"});
  ExpectInvalid([&] { s.run({{"x", Import(x_, {100})}, {"y", y}}); }, {"Invalid rank for input: x Got: 1 Expected: 2"});
  ExpectInvalid([&] { s.run({{"x", Import(x_, {1, 99})}, {"y", y}}); },
                {"Got invalid dimensions for input: x", "index: 1 Got: 99 Expected: 100"});
  ExpectInvalid([&] { s.run({{"x", x}, {"y", y}}, {"q"}); }, {"Invalid output name:q"});
  {
    // An output named twice is returned twice, as onnxruntime's run returns it: the same tensor, bound once.
    const std::vector<Tensor> twice = s.run({{"x", x}, {"y", y}}, {"z", "z"});
    ASSERT_EQ(twice.size(), 2u);
    EXPECT_EQ(twice[0].ort_value(), twice[1].ort_value());
    ortdlpack::Binding b = s.bind({{"x", x}, {"y", y}}, {"z", "z"});
    EXPECT_EQ(b.run().size(), 2u);
    EXPECT_EQ(b.output_names(), (std::vector<std::string>{"z", "z"}));
  }

  float buf[200] = {};
  ortdlpack::RunOptions options;
  options.destinations = {{"z", Import(buf, {2, 100})}};
  ExpectInvalid([&] { s.run({{"x", x}, {"y", y}}, {}, options); },
                {"destination 'z'", "dimension 0", "float32[2,100]"});  // (ortdlpack's own check)
  options.destinations = {{"z", Import(buf, {1, 100}, {kDLInt, 32, 1})}};
  ExpectInvalid([&] { s.run({{"x", x}, {"y", y}}, {}, options); }, {"destination 'z'", "element type", "int32"});
  options.destinations = {{"z", Import(buf, {1, 100}, {kDLFloat, 32, 1}, DLPACK_FLAG_BITMASK_READ_ONLY)}};
  ExpectInvalid([&] { s.run({{"x", x}, {"y", y}}, {}, options); }, {"destination 'z' is read-only"});
  options.destinations = {{"zz", Import(buf, {1, 100})}};
  ExpectInvalid([&] { s.run({{"x", x}, {"y", y}}, {}, options); }, {"unknown output 'zz'"});
  options.destinations.clear();

  ortdlpack::Session m(mm_.get());
  ortdlpack::RunOptions only_s;
  only_s.destinations = {{"s", Import(buf, {1, 4})}};
  ExpectInvalid([&] { m.run({{"x", Import(x_, {1, 4})}}, {"y"}, only_s); }, {"output 's', which is not requested"});

  // Nothing ran, nothing leaked: every binding was cleared, so the inputs are ours alone.
  EXPECT_EQ(x.use_count(), 1);
  EXPECT_EQ(y.use_count(), 1);
}

TEST_F(SessionTest, ADestinationOfAnotherSizeThanTheOutputIsOrtsToRefuse) {
  // y is float[N,3] and x gives N = 2: "N" is a label (ORT reads it so), so a [3,3] destination passes the plan and
  // ORT refuses it when the run allocates y; the destination is left untouched.
  ortdlpack::Session s(mm_.get());
  float buf[9];
  for (float& f : buf) f = -1.0f;
  ortdlpack::RunOptions options;
  options.destinations = {{"y", Import(buf, {3, 3})}};
  try {
    s.run({{"x", Import(x_, {2, 4})}}, {"y"}, options);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(e.ort_code(), ORT_OK) << e.what();
    EXPECT_NE(std::string(e.what()).find("{3,3}"), std::string::npos) << e.what();  // ORT's words, as they are
  }
  for (float f : buf) ASSERT_EQ(f, -1.0f);
}

TEST_F(SessionTest, AFailedRunIsARuntimeErrorWithOrtsMessage) {
  // A kernel failure the plan cannot see: x and y have independent dimensions (N, M), which Add cannot broadcast.
  ModelBuilder b;
  b.Node("Add", {"x", "y"}, {"z"});
  SessionPtr add(
      b.Build({b.Value("x", kF32, {-1}, {"N"}), b.Value("y", kF32, {-1}, {"M"})}, {b.Value("z", kF32, {-1}, {"N"})}));
  ortdlpack::Session s(add.get());
  try {
    s.run({{"x", Import(x_, {3})}, {"y", Import(y_, {4})}});
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kRuntime) << e.what();
    // ORT's code and its message as they are, which a front end words as ORT's own binding does.
    EXPECT_EQ(std::string(e.what()).rfind("Non-zero status code returned while running Add node", 0), 0u) << e.what();
  }
}

TEST_F(SessionTest, TenThousandRunsBalanceEveryDeleter) {
  ortdlpack::Session s(add_.get());
  std::vector<float> dst(100);
  float checksum = 0;
  for (int i = 0; i < 10000; ++i) {
    ortdlpack::RunOptions options;
    if (i % 2) options.destinations = {{"z", Import(dst.data(), {1, 100})}};
    std::vector<Tensor> out = s.run({{"x", Import(x_, {1, 100})}, {"y", Import(y_, {1, 100})}}, {}, options);
    DLManagedTensorVersioned* e = ortdlpack::to_dlpack_versioned(out[0]);
    checksum += static_cast<const float*>(e->dl_tensor.data)[i % 100];
    out.clear();
    e->deleter(e);
  }
  EXPECT_GT(checksum, 0.0f);
  EXPECT_EQ(g_producers.created(), 25000);
  EXPECT_EQ(g_producers.deleted(), 25000);
}

TEST_F(SessionTest, ConcurrentRunsShareOneSession) {
  ortdlpack::Session s(add_.get());
  std::atomic<int> failures{0};
  auto worker = [&] {
    for (int i = 0; i < 300; ++i) {
      std::vector<Tensor> out = s.run({{"x", Import(x_, {1, 100})}, {"y", Import(y_, {1, 100})}});
      if (static_cast<const float*>(out[0].data())[7] != x_[7] + y_[7]) failures.fetch_add(1);
    }
  };
  std::thread a(worker), b(worker);
  a.join();
  b.join();
  EXPECT_EQ(failures.load(), 0);
}

// --- SessionConfig: what onnxruntime.SessionOptions sets ------------------------------------------------------

std::string TempPath(const std::string& name) { return ::testing::TempDir() + name; }

bool FileExists(const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (f != nullptr) std::fclose(f);
  return f != nullptr;
}

TEST(SessionConfigTest, EverySettingReachesOrt) {
  ortdlpack::test::IdentityModel spec;
  spec.dim_param = "N";
  const std::string model = ortdlpack::test::model_bytes(spec);
  ortdlpack::SessionConfig c;
  c.intra_op_num_threads = 1;
  c.inter_op_num_threads = 1;
  c.use_per_session_threads = true;
  c.graph_optimization_level = ORT_ENABLE_EXTENDED;
  c.execution_mode = ORT_PARALLEL;
  c.optimized_model_filepath = TempPath("ortdlpack_optimized.onnx");
  c.enable_cpu_mem_arena = false;
  c.enable_mem_pattern = false;
  c.enable_mem_reuse = true;  // the default: accepted
  c.execution_order = "DEFAULT";
  c.use_deterministic_compute = true;
  c.log_severity_level = 3;
  c.log_verbosity_level = 0;
  c.log_id = "ortdlpack-test";
  c.entries = {{"session.intra_op.allow_spinning", "0"}};
  c.free_dimension_overrides_by_name = {{"N", 3}};
  std::remove(c.optimized_model_filepath->c_str());
  ortdlpack::Session s(model.data(), model.size(), c);
  EXPECT_TRUE(FileExists(*c.optimized_model_filepath)) << "ORT saved the optimized model";
  std::remove(c.optimized_model_filepath->c_str());
  // The override fixed N: the session declares float32[3] and refuses any other length.
  EXPECT_EQ(s.inputs()[0].shape, (std::vector<int64_t>{3}));
  float x[3] = {1, 2, 3};
  EXPECT_EQ(static_cast<const float*>(s.run({{"x", Import(x, {3})}})[0].data())[2], 3.0f);
  ExpectInvalid([&] { s.run({{"x", Import(x, {2})}}); }, {"Got invalid dimensions for input: x"});
  EXPECT_EQ(s.end_profiling(), "");  // not enabled: no profile
}

TEST(SessionConfigTest, BaseOptionsAreKeptAndTheFieldsApplyOnTop) {
  ortdlpack::test::IdentityModel spec;
  spec.dim_param = "N";
  const std::string model = ortdlpack::test::model_bytes(spec);
  OrtSessionOptions* raw = nullptr;
  ortdlpack::check(g_api->CreateSessionOptions(&raw));
  const ortdlpack::Owned<OrtSessionOptions> base(raw);
  ortdlpack::check(g_api->AddFreeDimensionOverrideByName(raw, "N", 4));  // no getter exists: only a copy keeps it
  ortdlpack::SessionConfig c;
  c.base = raw;
  c.intra_op_num_threads = 1;
  ortdlpack::Session s(model.data(), model.size(), c);
  EXPECT_EQ(s.inputs()[0].shape, (std::vector<int64_t>{4}));
  ortdlpack::Session unfixed(model.data(), model.size(), {});
  EXPECT_EQ(unfixed.inputs()[0].shape, (std::vector<int64_t>{-1}));
  c.entries = {{"session.use_env_allocators", "1"}};  // applied to the copy, not to the base
  ortdlpack::Session t(model.data(), model.size(), c);
  int has = 1;
  ortdlpack::check(g_api->HasSessionConfigEntry(raw, "session.use_env_allocators", &has));
  EXPECT_EQ(has, 0);
}

TEST(SessionConfigTest, FreeDimensionByDenotation) {
  ortdlpack::test::IdentityModel spec;
  spec.dim_param = "batch";
  spec.denotation = "DATA_BATCH";
  const std::string model = ortdlpack::test::model_bytes(spec);
  ortdlpack::SessionConfig c;
  c.free_dimension_overrides_by_denotation = {{"DATA_BATCH", 5}};
  ortdlpack::Session s(model.data(), model.size(), c);
  EXPECT_EQ(s.inputs()[0].shape, (std::vector<int64_t>{5}));
  ortdlpack::Session unfixed(model.data(), model.size(), {});
  EXPECT_EQ(unfixed.inputs()[0].shape, (std::vector<int64_t>{-1}));
  EXPECT_EQ(unfixed.inputs()[0].dim_names, (std::vector<std::string>{"batch"}));
}

TEST(SessionConfigTest, ProfilingWritesAProfileWithThePrefix) {
  const std::string model = ortdlpack::test::identity_model_bytes(2);
  ortdlpack::SessionConfig c;
  c.enable_profiling = true;
  c.profile_file_prefix = TempPath("ortdlpack_profile");
  ortdlpack::Session s(model.data(), model.size(), c);
  EXPECT_GT(s.profiling_start_ns(), 0u);
  float x[2] = {1, 2};
  s.run({{"x", Import(x, {2})}});
  const std::string file = s.end_profiling();
  EXPECT_EQ(file.rfind(*c.profile_file_prefix, 0), 0u) << file;
  EXPECT_TRUE(FileExists(file)) << file;
  std::remove(file.c_str());
}

TEST(SessionConfigTest, RefusedSettingsNameTheField) {
  const std::string model = ortdlpack::test::identity_model_bytes(2);
  const auto refused = [&](const std::function<void(ortdlpack::SessionConfig&)>& set,
                           const std::vector<std::string>& fragments) {
    ortdlpack::SessionConfig c;
    set(c);
    ExpectInvalid([&] { ortdlpack::Session(model.data(), model.size(), c); }, fragments);
  };
  refused([](auto& c) { c.intra_op_num_threads = -1; }, {"intra_op_num_threads must be >= 0, got -1"});
  refused([](auto& c) { c.inter_op_num_threads = -2; }, {"inter_op_num_threads"});
  refused([](auto& c) { c.log_severity_level = 5; }, {"log_severity_level", "got 5"});
  refused([](auto& c) { c.log_severity_level = -1; }, {"log_severity_level"});
  refused([](auto& c) { c.log_verbosity_level = -1; }, {"log_verbosity_level"});
  refused([](auto& c) { c.graph_optimization_level = 7; }, {"graph_optimization_level 7", "ORT_ENABLE_ALL (99)"});
  refused([](auto& c) { c.execution_mode = 2; }, {"execution_mode 2"});
  refused([](auto& c) { c.enable_mem_reuse = false; }, {"enable_mem_reuse", "C API has no call"});
  refused([](auto& c) { c.execution_order = "PRIORITY_BASED"; }, {"execution_order 'PRIORITY_BASED'"});
  refused([](auto& c) { c.profile_file_prefix = "p"; }, {"profile_file_prefix needs enable_profiling"});
  refused([](auto& c) { c.free_dimension_overrides_by_name = {{"N", -1}}; }, {"free dimension 'N'", "-1"});
  refused([](auto& c) { c.free_dimension_overrides_by_denotation = {{"", 1}}; }, {"names no dimension"});
  refused([](auto& c) { c.ep = "cpu", c.providers = {{"cpu", {}}}; }, {"set ep or providers, not both"});
  refused([](auto& c) { c.providers = {{"cpu", {}}, {"CPUExecutionProvider", {}}}; },
          {"'CPUExecutionProvider' is listed twice"});
  refused([](auto& c) { c.providers = {{"", {}}}; }, {"an execution provider name is empty"});
  refused([](auto& c) { c.providers = {{"NoSuchExecutionProvider", {}}}; }, {"NoSuchExecutionProvider"});
}

TEST(SessionConfigTest, GlobalThreadPoolsAreAskedOfTheEnv) {
  // use_per_session_threads=false reaches ORT, which refuses it on an env created without global thread pools.
  const std::string model = ortdlpack::test::identity_model_bytes(2);
  ortdlpack::SessionConfig c;
  c.use_per_session_threads = false;
  try {
    ortdlpack::Session(model.data(), model.size(), c);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("thread"), std::string::npos) << e.what();
  }
}

TEST(SessionConfigTest, ProvidersAreListedInOrtsNamesCpuLast) {
  const std::string model = ortdlpack::test::identity_model_bytes(2);
  const auto providers = [&](const ortdlpack::SessionConfig& c) {
    return ortdlpack::Session(model.data(), model.size(), c).providers();
  };
  const std::vector<std::string> cpu{"CPUExecutionProvider"};
  EXPECT_EQ(providers({}), cpu);
  ortdlpack::SessionConfig c;
  c.ep = "cpu";
  EXPECT_EQ(providers(c), cpu);
  c = {};
  c.providers = {{"CPUExecutionProvider", {}}};
  EXPECT_EQ(providers(c), cpu);
  c.providers = {{"cpu", {{"arena_extend_strategy", "kSameAsRequested"}}}};
  EXPECT_EQ(providers(c), cpu);
  // A listed CPU EP is appended, as onnxruntime appends it: ORT then refuses it beside a disabled CPU fallback.
  c.providers = {{"CPUExecutionProvider", {}}};
  c.entries = {{"session.disable_cpu_ep_fallback", "1"}};
  EXPECT_THROW(providers(c), Error);
}

// onnxruntime's providers= with provider_options=, by its rules: one options dict per provider, to names only.
TEST(SessionConfigTest, ProviderOptionsGoToTheProvidersByOnnxruntimesRules) {
  using Options = std::vector<std::pair<std::string, std::string>>;
  const std::vector<ortdlpack::Provider> names{{"cpu", {}}, {"webgpu", {}}};
  const std::vector<Options> options{{{"a", "1"}}, {}};
  const std::vector<ortdlpack::Provider> merged = ortdlpack::with_provider_options(names, options);
  ASSERT_EQ(merged.size(), 2u);
  EXPECT_EQ(merged[0].options, options[0]);
  EXPECT_TRUE(merged[1].options.empty());
  EXPECT_EQ(ortdlpack::with_provider_options(names, std::nullopt).size(), 2u);
  EXPECT_TRUE(ortdlpack::with_provider_options(std::nullopt, std::nullopt).empty());
  const auto refused = [](auto providers, auto given) {
    try {
      ortdlpack::with_provider_options(providers, given);
    } catch (const Error& e) {
      return e.kind() == ErrorKind::kInvalidArgument;
    }
    return false;
  };
  EXPECT_TRUE(refused(std::nullopt, options));                                  // provider_options alone
  EXPECT_TRUE(refused(names, std::vector<Options>{{}}));                        // a count that differs
  EXPECT_TRUE(refused(std::vector<ortdlpack::Provider>{{"cpu", {{"b", "2"}}}},  // options in both places
                      std::vector<Options>{{}}));
  // A (name, options) pair beside provider_options, its options empty: onnxruntime takes names only there.
  EXPECT_THROW(ortdlpack::with_provider_options(names, options, true), Error);
}

TEST(SessionConfigTest, ABorrowedSessionListsTheCpuEp) {
  SessionPtr add(AddModel());
  EXPECT_EQ(ortdlpack::Session(add.get()).providers(), std::vector<std::string>{"CPUExecutionProvider"});
}

// --- metadata ------------------------------------------------------------------------------------------------------

TEST(SessionMetadataTest, ModelFieldsAndCustomMetadata) {
  ortdlpack::test::IdentityModel spec;
  spec.producer_name = "ortdlpack-tests";
  spec.domain = "org.example";
  spec.doc_string = "an identity";
  spec.graph_name = "identity_graph";
  spec.graph_doc_string = "the graph";
  spec.model_version = 7;
  spec.metadata_props = {{"zeta", "last"}, {"author", "me"}};
  const std::string model = ortdlpack::test::model_bytes(spec);
  ortdlpack::Session s(model.data(), model.size(), {});
  const ortdlpack::ModelMetadata m = s.metadata();
  EXPECT_EQ(m.producer_name, "ortdlpack-tests");
  EXPECT_EQ(m.graph_name, "identity_graph");
  EXPECT_EQ(m.domain, "org.example");
  EXPECT_EQ(m.description, "an identity");
  EXPECT_EQ(m.graph_description, "the graph");
  EXPECT_EQ(m.version, 7);
  using KV = std::vector<std::pair<std::string, std::string>>;
  EXPECT_EQ(m.custom_metadata_map, (KV{{"author", "me"}, {"zeta", "last"}}));
  const ortdlpack::ModelMetadata empty = ortdlpack::Session(ortdlpack::test::identity_model_bytes(2).data(),
                                                            ortdlpack::test::identity_model_bytes(2).size(), {})
                                             .metadata();
  EXPECT_EQ(empty.producer_name, "");
  EXPECT_TRUE(empty.custom_metadata_map.empty());
}

TEST_F(SessionTest, IoInfoCarriesTheOnnxTypeString) {
  ortdlpack::Session s(mm_.get());
  EXPECT_EQ(s.inputs()[0].onnx_type, "tensor(float)");
  EXPECT_EQ(s.outputs()[1].onnx_type, "tensor(float)");
  EXPECT_EQ(std::string(ortdlpack::onnx_dtype_name(ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE)), "double");
  EXPECT_EQ(std::string(ortdlpack::onnx_dtype_name(ONNX_TENSOR_ELEMENT_DATA_TYPE_STRING)), "string");
  EXPECT_EQ(std::string(ortdlpack::onnx_dtype_name(ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED)), "undefined");
  for (auto t : {ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL, ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16,
                 ONNX_TENSOR_ELEMENT_DATA_TYPE_BFLOAT16, ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT8E4M3FN,
                 ONNX_TENSOR_ELEMENT_DATA_TYPE_INT4}) {
    EXPECT_EQ(ortdlpack::dtype_from_onnx_name(ortdlpack::onnx_dtype_name(t)), t);  // one table, both ways
  }
}

// --- Binding: bind once, run many ----------------------------------------------------------------------------------

TEST_F(SessionTest, BindingRerunsOnTheSameTensorsIntoTheSameOutputs) {
  ortdlpack::Session s(add_.get());
  std::vector<float> x(x_, x_ + 100), y(y_, y_ + 100);
  ortdlpack::Binding b = s.bind({{"x", Import(x.data(), {1, 100})}, {"y", Import(y.data(), {1, 100})}});
  EXPECT_TRUE(b.outputs().empty());
  EXPECT_EQ(b.output_names(), std::vector<std::string>{"z"});
  const void* first = nullptr;
  for (int run = 0; run < 5; ++run) {
    for (float& v : x) v += 1.0f;  // contents change between runs; the tensors stay
    const std::vector<Tensor>& out = b.run();
    ASSERT_EQ(out.size(), 1u);
    if (run == 0) first = out[0].data();
    EXPECT_EQ(out[0].data(), first) << "the output stays where the first run allocated it";
    const auto* z = static_cast<const float*>(out[0].data());
    for (int i = 0; i < 100; ++i) ASSERT_EQ(z[i], x[i] + y[i]);
  }
  const std::vector<Tensor> again = b.run();
  ASSERT_EQ(b.outputs().size(), 1u);
  EXPECT_EQ(b.outputs()[0].data(), again[0].data());
  EXPECT_EQ(g_producers.deleted(), 0) << "the Binding holds its feeds";
  b = ortdlpack::Binding();
  EXPECT_EQ(g_producers.deleted(), 2) << "and releases them with itself";
  ExpectInvalid([&] { b.run(); }, {"the Binding is empty"});
}

// A graph output that is a graph input: ORT hands back the feed and writes no destination given for it. The executor
// writes the feed's values there, and a Binding's passed-through output follows its feed from run to run.
TEST_F(SessionTest, APassedThroughOutputIsWrittenIntoItsDestinationAndFollowsItsFeed) {
  ModelBuilder b;
  b.Node("Add", {"x", "x"}, {"y"});
  SessionPtr through(
      b.Build({b.Value("x", kF32, {1, 100})}, {b.Value("x", kF32, {1, 100}), b.Value("y", kF32, {1, 100})}));
  ortdlpack::Session s(through.get());
  std::vector<float> dst(100, -1.0f);
  ortdlpack::RunOptions options;
  options.destinations = {{"x", Import(dst.data(), {1, 100})}};
  const std::vector<Tensor> out = s.run({{"x", Import(x_, {1, 100})}}, {"x", "y"}, options);
  EXPECT_EQ(out[0].data(), static_cast<void*>(dst.data()));
  EXPECT_EQ(dst[7], x_[7]);
  ortdlpack::Binding bound = s.bind({{"x", Import(x_, {1, 100})}}, {"x", "y"});
  EXPECT_EQ(static_cast<const float*>(bound.run()[0].data())[7], x_[7]);
  x_[7] = 123.0f;
  const std::vector<Tensor>& again = bound.run();
  EXPECT_EQ(static_cast<const float*>(again[0].data())[7], 123.0f);  // the feed's value of this run
  EXPECT_NE(again[0].data(), static_cast<void*>(x_));                // a copy, never the feed itself
  EXPECT_EQ(static_cast<const float*>(again[1].data())[7], 246.0f);
}

// An output written in place of its feed (RunOptions::in_place): accepted for exactly the feed's memory, declared;
// every other overlap is refused as before.
TEST_F(SessionTest, InPlaceIsTheFeedItselfDeclared) {
  ModelBuilder b;
  b.Node("Add", {"x", "y"}, {"z"});
  SessionPtr add(b.Build({b.Value("x", kF32, {1, 100}), b.Value("y", kF32, {1, 100})}, {b.Value("z", kF32, {1, 100})}));
  ortdlpack::Session s(add.get());
  const Tensor x = Import(x_, {1, 100});
  const Tensor y = Import(y_, {1, 100});
  ortdlpack::RunOptions overlapping;
  overlapping.destinations = {{"z", Import(x_, {1, 100})}};
  ExpectInvalid([&] { s.run({{"x", x}, {"y", y}}, {}, overlapping); }, {"overlaps input 'x'", "in_place"});
  ortdlpack::RunOptions in_place;
  in_place.in_place = {{"z", "x"}};
  const float want = x_[5] + y_[5];
  const std::vector<Tensor> z = s.run({{"x", x}, {"y", y}}, {}, in_place);
  EXPECT_EQ(z[0].data(), static_cast<void*>(x_));  // the feed itself, written
  EXPECT_EQ(x_[5], want);
  in_place.destinations = {{"z", Import(x_, {1, 100})}};  // the same memory exactly: accepted
  EXPECT_EQ(s.run({{"x", x}, {"y", y}}, {}, in_place)[0].data(), static_cast<void*>(x_));
  in_place.destinations = {{"z", Import(y_, {1, 100})}};  // another tensor: refused
  ExpectInvalid([&] { s.run({{"x", x}, {"y", y}}, {}, in_place); }, {"is not the tensor fed as input 'x'"});
  in_place.destinations.clear();
  in_place.in_place = {{"z", "w"}};
  ExpectInvalid([&] { s.run({{"x", x}, {"y", y}}, {}, in_place); }, {"input 'w', which is not fed a tensor"});
  in_place.in_place = {{"q", "x"}};
  ExpectInvalid([&] { s.run({{"x", x}, {"y", y}}, {}, in_place); }, {"unknown output 'q'"});
  in_place.in_place = {{"z", "x"}};
  const Tensor read_only = Import(x_, {1, 100}, {kDLFloat, 32, 1}, DLPACK_FLAG_BITMASK_READ_ONLY);
  ExpectInvalid([&] { s.run({{"x", read_only}, {"y", y}}, {}, in_place); }, {"is read-only"});
  ExpectInvalid([&] { s.run({{"x", x}, {"y", x}}, {}, in_place); }, {"overlaps input 'y'"});  // fed twice: read
}

// Binding::run(changed): the named inputs rebound (a new shape allowed: the outputs ORT allocated are allocated
// again), the others stay where they are.
TEST_F(SessionTest, ABindingRebindsWhatChanges) {
  ortdlpack::Session s(mm_.get());
  std::vector<float> a(8, 1.0f), c(12, 2.0f);
  ortdlpack::Binding bound = s.bind({{"x", Import(a.data(), {2, 4})}});
  const void* first = bound.run()[0].data();
  std::vector<float> a2(8, 3.0f);
  const std::vector<Tensor>& same_shape = bound.run({{"x", Import(a2.data(), {2, 4})}});
  EXPECT_EQ(same_shape[0].data(), first);  // the output stays where it is
  EXPECT_EQ(static_cast<const float*>(same_shape[1].data())[0], 6.0f);
  const std::vector<Tensor>& reshaped = bound.run({{"x", Import(c.data(), {3, 4})}});
  EXPECT_EQ(reshaped[0].shape(), (std::vector<int64_t>{3, 3}));
  EXPECT_EQ(static_cast<const float*>(reshaped[1].data())[11], 4.0f);
  EXPECT_EQ(bound.run()[0].shape(), (std::vector<int64_t>{3, 3}));  // bound from now on
  ExpectInvalid([&] { bound.run({{"w", Import(a.data(), {2, 4})}}); }, {"input 'w' is not bound"});
  EXPECT_EQ(bound.run()[1].shape(), (std::vector<int64_t>{3, 4}));  // a failed rebind left it as it was
}

// A run(changed) that fails, in its rebinding or in its run, leaves the Binding binding what it bound before: its
// feeds, and its outputs where they were (before, the feeds rebound ahead of the failure stayed bound, and the caller
// could not know which).
TEST_F(SessionTest, AFailedRunThatRebindsLeavesTheBindingAsItWas) {
  ortdlpack::Session s(mm_.get());
  std::vector<float> a(8, 1.0f), c(12, 2.0f);
  ortdlpack::Binding bound = s.bind({{"x", Import(a.data(), {2, 4})}});
  const std::vector<Tensor> first = bound.run();
  // The rebinding fails: a known input rebound, then an unknown one.
  ExpectInvalid([&] { bound.run({{"x", Import(c.data(), {3, 4})}, {"w", Import(c.data(), {3, 4})}}); },
                {"input 'w' is not bound"});
  std::vector<Tensor> again = bound.run();
  EXPECT_EQ(again[0].shape(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(again[0].data(), first[0].data()) << "the outputs where they were";
  EXPECT_EQ(static_cast<const float*>(again[1].data())[0], 2.0f) << "x + x of the feed bound before";
  // The run fails (the terminate flag) after a rebinding to another shape, whose outputs ORT would allocate anew.
  OrtRunOptions* raw = nullptr;
  ortdlpack::check(g_api->CreateRunOptions(&raw));
  const ortdlpack::Owned<OrtRunOptions> terminate(raw);
  ortdlpack::check(g_api->RunOptionsSetTerminate(raw));
  EXPECT_THROW(bound.run({{"x", Import(c.data(), {3, 4})}}, raw), Error);
  a.assign(8, 5.0f);
  again = bound.run();
  EXPECT_EQ(again[0].shape(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(again[0].data(), first[0].data());
  EXPECT_EQ(static_cast<const float*>(again[1].data())[0], 10.0f);
  // And a rebinding that succeeds after them binds as it says.
  EXPECT_EQ(bound.run({{"x", Import(c.data(), {3, 4})}})[0].shape(), (std::vector<int64_t>{3, 3}));
}

// Runs of one Binding on two threads, one rebinding its feed to another shape every run (its outputs allocated
// again): each run's list is its caller's own, the outputs of one run (before, run() returned the Binding's own
// list, which the next run rewrote while its caller read it: a data race, under TSan too).
TEST_F(SessionTest, EachRunOfABindingReturnsItsOwnList) {
  ortdlpack::Session s(mm_.get());
  std::vector<float> a(8, 1.0f), c(12, 2.0f);
  const Tensor two = Import(a.data(), {2, 4}), three = Import(c.data(), {3, 4});
  ortdlpack::Binding bound = s.bind({{"x", two}});
  std::atomic<int> inconsistent{0};
  const auto check = [&](const std::vector<Tensor>& out) {
    if (out.size() != 2 || out[0].shape()[0] != out[1].shape()[0]) ++inconsistent;
  };
  std::thread rebinding([&] {
    for (int i = 0; i < 200; ++i) check(bound.run({{"x", i % 2 == 0 ? three : two}}));
  });
  for (int i = 0; i < 200; ++i) check(bound.run());
  rebinding.join();
  EXPECT_EQ(inconsistent.load(), 0);
}

TEST_F(SessionTest, BindingWritesIntoDestinationsAndChecksLikeRun) {
  ortdlpack::Session s(mm_.get());
  std::vector<float> x(8, 1.0f), sbuf(8, 0.0f);
  ortdlpack::RunOptions options;
  options.destinations = {{"s", Import(sbuf.data(), {2, 4})}};
  ortdlpack::Binding b = s.bind({{"x", Import(x.data(), {2, 4})}}, {"s", "y"}, options);
  for (int run = 0; run < 3; ++run) {
    x[3] = static_cast<float>(run);
    const std::vector<Tensor>& out = b.run();
    EXPECT_EQ(out[0].data(), static_cast<void*>(sbuf.data()));
    EXPECT_EQ(sbuf[3], 2.0f * static_cast<float>(run));
    EXPECT_EQ(out[1].shape(), (std::vector<int64_t>{2, 3}));
  }
  // bind() plans like run(): the same errors, before anything is bound.
  ExpectInvalid([&] { s.bind({{"x", Import(x.data(), {2, 4})}, {"w", Import(x.data(), {2, 4})}}); },
                {"Invalid input name: w"});
  ExpectInvalid([&] { s.bind({{"x", Import(x.data(), {2, 4})}}, {"q"}); }, {"Invalid output name:q"});
}

TEST_F(SessionTest, BindingRunOptionsPerRun) {
  ortdlpack::Session s(add_.get());
  ortdlpack::Binding b = s.bind({{"x", Import(x_, {1, 100})}, {"y", Import(y_, {1, 100})}});
  OrtRunOptions* raw = nullptr;
  ortdlpack::check(g_api->CreateRunOptions(&raw));
  const ortdlpack::Owned<OrtRunOptions> terminate(raw);
  ortdlpack::check(g_api->RunOptionsSetTerminate(raw));
  try {
    b.run(raw);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kRuntime) << e.what();
    EXPECT_NE(std::string(e.what()).find("Exiting due to terminate flag"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(b.outputs().empty()) << "a failed first run allocated nothing";
  EXPECT_EQ(static_cast<const float*>(b.run()[0].data())[1], x_[1] + y_[1]);  // the binding is still usable
}

TEST(SessionBindingTest, KeepsItsSessionAlive) {
  const std::string model = ortdlpack::test::identity_model_bytes(2);
  float x[2] = {4, 5};
  ortdlpack::Binding b;
  {
    ortdlpack::Session s(model.data(), model.size(), {});
    b = s.bind({{"x", Import(x, {2})}});
  }
  x[1] = 6;
  EXPECT_EQ(static_cast<const float*>(b.run()[0].data())[1], 6.0f);
}

TEST_F(SessionTest, ConcurrentRunsOfOneBindingAreSerialised) {
  ortdlpack::Session s(add_.get());
  ortdlpack::Binding b = s.bind({{"x", Import(x_, {1, 100})}, {"y", Import(y_, {1, 100})}});
  std::atomic<int> failures{0};
  auto worker = [&] {
    for (int i = 0; i < 300; ++i) {
      if (static_cast<const float*>(b.run()[0].data())[7] != x_[7] + y_[7]) failures.fetch_add(1);
    }
  };
  std::thread t1(worker), t2(worker);
  t1.join();
  t2.join();
  EXPECT_EQ(failures.load(), 0);
}

#ifdef ORTDLPACK_VD_PATH
// On the virtual device: a session on the plugin EP (outputs in device memory), and a host session fed a device
// tensor (staged to the host before every run).
class SessionOnDevice : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { vd = ortdlpack::test::VirtualDeviceEnv::load("ortdlpack_vd_session"); }
  static void TearDownTestSuite() { vd.unload(); }
  static std::vector<float> Read(const Tensor& t) {
    const Tensor host = ortdlpack::to(t, DLDevice{kDLCPU, 0});
    const auto* f = static_cast<const float*>(host.data());
    return std::vector<float>(f, f + host.element_count());
  }
  static inline ortdlpack::test::VirtualDeviceEnv vd;
};

TEST_F(SessionOnDevice, ProvidersInPriorityOrder) {
  const std::string model = ortdlpack::test::identity_model_bytes(8);
  ortdlpack::SessionConfig c;
  c.providers = {{"VirtualDeviceEP", {{"device_id", "1"}}}, {"CPUExecutionProvider", {}}};
  ortdlpack::Session s(model.data(), model.size(), c);
  EXPECT_EQ(s.providers(), (std::vector<std::string>{"VirtualDeviceEP", "CPUExecutionProvider"}));
  ortdlpack::SessionConfig cpu_first;
  cpu_first.providers = {{"cpu", {}}, {"VirtualDeviceEP", {{"device_id", "0"}}}};
  ortdlpack::Session t(model.data(), model.size(), cpu_first);
  EXPECT_EQ(t.providers(), (std::vector<std::string>{"CPUExecutionProvider", "VirtualDeviceEP"}));
  ortdlpack::SessionConfig twice = c;
  twice.providers.insert(twice.providers.begin(), {"VirtualDeviceEP", {{"device_id", "0"}}});
  ExpectInvalid([&] { ortdlpack::Session(model.data(), model.size(), twice); }, {"'VirtualDeviceEP' is listed twice"});
  // A stream belongs to the one EP besides the CPU EP.
  twice.stream = 1;
  ExpectInvalid([&] { ortdlpack::Session(model.data(), model.size(), twice); },
                {"providers lists 2 besides the CPU EP"});
}

TEST_F(SessionOnDevice, BindingOutputsStayAtFixedDeviceAddresses) {
  const std::string model = ortdlpack::test::identity_model_bytes(8);
  ortdlpack::SessionConfig c;
  c.ep = "VirtualDeviceEP";
  c.ep_options = {{"device_id", "0"}};
  ortdlpack::Session s(model.data(), model.size(), c);
  const Tensor x = ortdlpack::allocate(kF32, {8}, vd.memory(0));
  ortdlpack::RunOptions on_device;
  on_device.output_target = Target::in(vd.memory(0));  // the EP runs no kernel itself: ORT copies the output there
  ortdlpack::Binding b = s.bind({{"x", x}}, {}, on_device);
  const void* first = nullptr;
  for (int run = 0; run < 3; ++run) {
    ortdlpack::copy(ortdlpack::test::host_iota(8, static_cast<float>(run)), x);
    const std::vector<Tensor>& y = b.run();
    if (run == 0) first = y[0].data();
    EXPECT_EQ(y[0].data(), first);
    EXPECT_TRUE(vd.is_device_pointer(y[0].data(), 8 * sizeof(float)));
    EXPECT_EQ(Read(y[0]), Read(ortdlpack::test::host_iota(8, static_cast<float>(run))));
  }
}

TEST_F(SessionOnDevice, ABoundDeviceFeedIsStagedAgainForEveryRun) {
  const std::string model = ortdlpack::test::identity_model_bytes(8);
  ortdlpack::Session s(model.data(), model.size(), {});  // a CPU session
  const Tensor x = ortdlpack::allocate(kF32, {8}, vd.memory(1));
  ortdlpack::copy(ortdlpack::test::host_iota(8, 0.0f), x);
  ortdlpack::Binding b = s.bind({{"x", x}});
  for (int run = 0; run < 3; ++run) {
    const Tensor want = ortdlpack::test::host_iota(8, 10.0f * static_cast<float>(run));
    ortdlpack::copy(want, x);
    EXPECT_EQ(Read(b.run()[0]), Read(want));
  }
}
#endif

// Tests link GTest::gtest_main: ORT is handed to the core by a global environment.
class InitEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    ortdlpack::init(OrtGetApiBase());
    g_api = &ortdlpack::ort();
  }
};
const ::testing::Environment* const g_init = ::testing::AddGlobalTestEnvironment(new InitEnvironment);

}  // namespace
