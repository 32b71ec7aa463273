// Tests of ortdlpack::Session: running an OrtSession on DLPack tensors through IoBinding. The models are built in
// code with ORT's Model Editor API (no .onnx files, no protobuf).
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <algorithm>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "model_builder.h"
#include "producer.h"
#include "support.h"
#include "ortdlpack/ortdlpack.h"

namespace {

using ortdlpack::Error;
using ortdlpack::ErrorKind;
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
    for (const std::string& s : fragments) EXPECT_NE(std::string(e.what()).find(s), std::string::npos) << e.what();
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
    options.output_device = DLDevice{kDLCPU, 0};
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
  std::vector<Tensor> out = ortdlpack::Session(add_.get()).run( {{"y", Import(y_, {1, 100})}, {"x", Import(x_, {1, 100})}});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(static_cast<const float*>(out[0].data())[3], x_[3] + y_[3]);
}

TEST_F(SessionTest, ValidationErrorsNameTheInputOrOutput) {
  ortdlpack::Session s(add_.get());
  Tensor x = Import(x_, {1, 100});
  Tensor y = Import(y_, {1, 100});
  ExpectInvalid([&] { s.run({{"x", x}, {"w", y}}); }, {"unknown input 'w'", "'x', 'y'"});
  ExpectInvalid([&] { s.run({{"x", x}}); }, {"missing input 'y'", "float32[1,100]"});
  ExpectInvalid([&] { s.run({{"x", x}, {"x", x}, {"y", y}}); }, {"'x' is fed twice"});
  ExpectInvalid([&] { s.run({{"x", x}, {"y", Tensor()}}); }, {"'y' is an empty Tensor"});
  double d[100] = {};
  ExpectInvalid([&] { s.run({{"x", x}, {"y", Import(d, {1, 100}, {kDLFloat, 64, 1})}}); },
                {"input 'y'", "element type", "float32[1,100]", "float64[1,100]"});
  ExpectInvalid([&] { s.run({{"x", Import(x_, {100})}, {"y", y}}); }, {"input 'x'", "rank", "float32[100]"});
  ExpectInvalid([&] { s.run({{"x", Import(x_, {1, 99})}, {"y", y}}); }, {"input 'x'", "dimension 1", "float32[1,99]"});
  ExpectInvalid([&] { s.run({{"x", x}, {"y", y}}, {"q"}); }, {"unknown output 'q'", "'z'"});
  ExpectInvalid([&] { s.run({{"x", x}, {"y", y}}, {"z", "z"}); }, {"'z' is requested twice"});

  float buf[200] = {};
  ortdlpack::RunOptions options;
  options.destinations = {{"z", Import(buf, {2, 100})}};
  ExpectInvalid([&] { s.run({{"x", x}, {"y", y}}, {}, options); }, {"destination 'z'", "dimension 0", "float32[2,100]"});
  options.destinations = {{"z", Import(buf, {1, 100}, {kDLInt, 32, 1})}};
  ExpectInvalid([&] { s.run({{"x", x}, {"y", y}}, {}, options); }, {"destination 'z'", "element type", "int32"});
  options.destinations = {{"z", Import(buf, {1, 100}, {kDLFloat, 32, 1}, DLPACK_FLAG_BITMASK_READ_ONLY)}};
  ExpectInvalid([&] { s.run({{"x", x}, {"y", y}}, {}, options); }, {"destination 'z' is read-only"});
  options.destinations = {{"zz", Import(buf, {1, 100})}};
  ExpectInvalid([&] { s.run({{"x", x}, {"y", y}}, {}, options); }, {"unknown output 'zz'"});
  options.output_memory = ortdlpack::memory_info(DLDevice{kDLCPU, 0});
  options.output_device = DLDevice{kDLCPU, 0};
  options.destinations.clear();
  ExpectInvalid([&] { s.run({{"x", x}, {"y", y}}, {}, options); }, {"not both"});

  ortdlpack::Session m(mm_.get());
  ortdlpack::RunOptions only_s;
  only_s.destinations = {{"s", Import(buf, {1, 4})}};
  ExpectInvalid([&] { m.run({{"x", Import(x_, {1, 4})}}, {"y"}, only_s); }, {"output 's', which is not requested"});

  // Nothing ran, nothing leaked: every binding was cleared, so the inputs are ours alone.
  EXPECT_EQ(x.use_count(), 1);
  EXPECT_EQ(y.use_count(), 1);
}

TEST_F(SessionTest, ANamedDimensionTheFeedsGiveIsCheckedInADestination) {
  // y is float[N,3] and x gives N = 2: a [3,3] destination is refused before ORT runs (it used to fail in the
  // kernel, with ORT's error printed on stderr), and left untouched.
  ortdlpack::Session s(mm_.get());
  float buf[9];
  for (float& f : buf) f = -1.0f;
  ortdlpack::RunOptions options;
  options.destinations = {{"y", Import(buf, {3, 3})}};
  ExpectInvalid([&] { s.run({{"x", Import(x_, {2, 4})}}, {"y"}, options); },
                {"output destination 'y': dimension 0 mismatch", "N = 2 (from input 'x')", "got float32[3,3]"});
  for (float f : buf) ASSERT_EQ(f, -1.0f);
}

TEST_F(SessionTest, AFailedRunIsARuntimeErrorWithOrtsMessage) {
  // A kernel failure the plan cannot see: x and y have independent dimensions (N, M), which Add cannot broadcast.
  ModelBuilder b;
  b.Node("Add", {"x", "y"}, {"z"});
  SessionPtr add(b.Build({b.Value("x", kF32, {-1}, {"N"}), b.Value("y", kF32, {-1}, {"M"})},
                         {b.Value("z", kF32, {-1}, {"N"})}));
  ortdlpack::Session s(add.get());
  try {
    s.run({{"x", Import(x_, {3})}, {"y", Import(y_, {4})}});
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kRuntime) << e.what();
    EXPECT_EQ(std::string(e.what()).rfind("run: the session failed: ONNX Runtime: ", 0), 0u) << e.what();
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

