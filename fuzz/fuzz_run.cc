// libFuzzer harness for the session run path: bytes -> one request to ortdlpack::Session::run (or bind() and two
// runs of the Binding) on one of three sessions built in code: Add/Identity on float[N,3] + float[3] on the CPU EP,
// the same on the virtual device's EP (outputs may go to its memory), and Identity on int64[?], bool[2,2] and a
// float16 scalar. The request is hostile in every part: feeds missing, fed twice, unknown, empty, of another element
// type, rank or fixed dimension, contradicting N, in any memory (CPU, the virtual device's guarded DEFAULT memory on
// two devices, its HOST_ACCESSIBLE memory), read-only; output names unknown, repeated (returned at each place, as
// onnxruntime's run does), reordered; destinations of any of those kinds, for outputs not requested, twice, or a
// feed's own tensor (memory ORT reads); output memory or device set, both, on devices nothing maps.
//
// The harness models the rules of session.h itself: every mistake it made has the error kinds it may cause
// (kInvalidArgument for what can be checked before ORT runs, kUnsupported for memory the session cannot write or a
// device nothing maps; a contradicted named dimension kInvalidArgument or ORT's kRuntime). Invariants (abort on
// violation): only ortdlpack::Error escapes; a request without mistakes succeeds and one with mistakes fails, with a
// kind its mistakes allow; outputs come in the order asked, hold x + y / x / the fed values (device outputs compared
// after a copy to the CPU), are the caller's destinations where given and in the requested memory otherwise; feeds
// are left unchanged; after the run (and the Binding) no share of a feed or destination is kept; a Binding's second
// run writes the same output tensors with the values of the feeds' new contents.
#include <dlpack/dlpack.h>
#include <fuzzer/FuzzedDataProvider.h>
#include <onnxruntime_c_api.h>
#include <sanitizer/lsan_interface.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "canary.h"
#include "env_at_exit.h"
#include "model_builder.h"
#include "ortdlpack/ortdlpack.h"
#include "placement_rules.h"
#include "virtual_device_env.h"

namespace {

using ortdlpack::Error;
using ortdlpack::ErrorKind;
using ortdlpack::ReadOnly;
using ortdlpack::Tensor;
using ortdlpack::examples::ModelBuilder;

constexpr ONNXTensorElementDataType kF32 = ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT;
constexpr ONNXTensorElementDataType kF16 = ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16;
constexpr ONNXTensorElementDataType kI64 = ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64;
constexpr ONNXTensorElementDataType kBool = ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL;

std::string g_context;  // the request, printed on failure

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "fuzz_run: invariant violated: %s\n%s", what, g_context.c_str());
  std::abort();
}

// One model input or output as the harness knows it: element type and dims (-1 with a name: that named dim).
struct Io {
  const char* name;
  ONNXTensorElementDataType type;
  std::vector<int64_t> dims;  // -1: the named dim N (or an unnamed dynamic dim for the identity model)
};

struct Model {
  std::vector<Io> inputs, outputs;
  bool add = false;  // outputs z = x + y, s = x; else output i = input i
  std::unique_ptr<ortdlpack::Session> session;
  OrtSession* ort_session = nullptr;         // released at exit, before the env
  const OrtMemoryInfo* ep_memory = nullptr;  // the memories of its EP device (the virtual device's), if any
  const OrtMemoryInfo* ep_host_memory = nullptr;
};
std::vector<Model> g_models;

struct Memory {
  const OrtMemoryInfo* info;
  std::string name;
};
std::vector<Memory> g_memories;   // CPU first
std::vector<DLDevice> g_devices;  // output_target device choices

std::vector<int64_t> shape_of(const Io& io, int64_t n) {
  std::vector<int64_t> s = io.dims;
  for (int64_t& d : s) {
    if (d < 0) d = n;
  }
  return s;
}

// A tensor of `type` and `shape` in `memory`, holding small integers from `seed` (through a CPU tensor for device
// memory); read-only (a flagged view over the same memory, `keep` holding the allocation) when asked.
Tensor make(ONNXTensorElementDataType type, const std::vector<int64_t>& shape, const OrtMemoryInfo* memory,
            unsigned seed, ReadOnly read_only, std::vector<Tensor>& keep) {
  Tensor t = ortdlpack::allocate(type, shape, memory);
  Tensor host = t.host_accessible() ? t : ortdlpack::allocate(type, shape, DLDevice{kDLCPU, 0});
  auto* p = static_cast<unsigned char*>(host.data());
  const size_t elem = host.element_count() == 0 ? 1 : host.byte_size() / host.element_count();
  for (size_t i = 0; i < host.element_count(); ++i) {
    const unsigned v = (static_cast<unsigned>(i) * 7 + seed) % 5;
    if (type == kF32) {
      const float f = static_cast<float>(v);
      std::memcpy(p + i * 4, &f, 4);
    } else if (type == kF16) {
      const uint16_t h = static_cast<uint16_t>(v == 0 ? 0 : 0x3c00 + (v << 8));  // 1, 1.25, 1.5, 1.75 as float16
      std::memcpy(p + i * 2, &h, 2);
    } else if (type == kBool) {
      p[i] = static_cast<unsigned char>(v & 1);
    } else {
      std::memset(p + i * elem, 0, elem);
      p[i * elem] = static_cast<unsigned char>(v);
    }
  }
  if (!t.host_accessible()) ortdlpack::copy(host, t);
  if (read_only == ReadOnly::kNo) return t;
  keep.push_back(t);
  OrtValue* view = nullptr;
  ortdlpack::check(ortdlpack::ort().CreateTensorWithDataAsOrtValue(t.memory_info(), t.data(), t.byte_size(),
                                                                   t.shape().data(), t.shape().size(), type, &view));
  return Tensor(view, read_only);
}

// The same memory as ortdlpack compares them: device type, vendor, memory type and device id.
bool same_memory(const OrtMemoryInfo* a, const OrtMemoryInfo* b) {
  const OrtApi& api = ortdlpack::ort();
  OrtMemoryInfoDeviceType ta{}, tb{};
  api.MemoryInfoGetDeviceType(a, &ta);
  api.MemoryInfoGetDeviceType(b, &tb);
  int ia = 0, ib = 0;
  ortdlpack::check(api.MemoryInfoGetId(a, &ia));
  ortdlpack::check(api.MemoryInfoGetId(b, &ib));
  return ta == tb && ia == ib && api.MemoryInfoGetVendorId(a) == api.MemoryInfoGetVendorId(b) &&
         api.MemoryInfoGetDeviceMemType(a) == api.MemoryInfoGetDeviceMemType(b);
}

// Whether a session of model `m` allocates outputs in `memory` when asked (session.h): CPU memory, or its EP
// device's memories.
bool allocates(const Model& m, const OrtMemoryInfo* memory) {
  return same_memory(memory, g_memories[0].info) ||
         (m.ep_memory != nullptr && (same_memory(memory, m.ep_memory) || same_memory(memory, m.ep_host_memory)));
}

// Whether a session of model `m` writes outputs into a destination in `memory`: host memory, or its allocations'.
bool writes(const Model& m, const OrtMemoryInfo* memory) {
  return ortdlpack::host_accessible(memory) || allocates(m, memory);
}

// Waits for the copies ortdlpack queued on device streams: they hold shares of their sources until they ran
// (transfer.cc), so share counts are compared only when nothing is queued.
void settle() {
  for (const Memory& m : g_memories) ortdlpack::synchronize(m.info);
}

std::vector<unsigned char> bytes_of(const Tensor& t) {
  if (t.byte_size() == 0) return {};
  const Tensor host = t.host_accessible() ? t : ortdlpack::to(t, DLDevice{kDLCPU, 0});
  const auto* p = static_cast<const unsigned char*>(host.data());
  return {p, p + host.byte_size()};
}

// The mistakes a request holds, as the error kinds each allows.
struct Mistakes {
  bool any = false;
  bool invalid = false, unsupported = false, runtime = false;
  void add(bool i, bool u = false, bool r = false) {
    any = true;
    invalid |= i;
    unsupported |= u;
    runtime |= r;
  }
  bool allows(ErrorKind k) const {
    return (k == ErrorKind::kInvalidArgument && invalid) || (k == ErrorKind::kUnsupported && unsupported) ||
           (k == ErrorKind::kRuntime && runtime);
  }
};

// A tensor for model value `io` with N = `n`, or (one time in three) one of another element type, rank or fixed dim,
// or (add model) one contradicting N; in any memory, sometimes read-only.
struct Made {
  Tensor tensor;
  bool mistyped = false;   // element type, rank or a fixed dim wrong: kInvalidArgument
  bool read_only = false;  // a mistake for a destination
  int64_t n = -1;          // the N it gives (-1: none)
  // A rank-0 declaration given another rank: onnxruntime's rule takes any shape there (docs/onnxruntime_rules.md);
  // what the run makes of it (ORT's kernels, a destination's shape) is not modeled: any outcome but a crash.
  bool unmodeled = false;
};

Made make_for(FuzzedDataProvider& in, const Model& m, const Io& io, int64_t n, unsigned seed,
              std::vector<Tensor>& keep) {
  ONNXTensorElementDataType type = io.type;
  std::vector<int64_t> shape = shape_of(io, n);
  Made made;
  switch (in.ConsumeIntegralInRange<int>(0, 11)) {
    case 0:
      type = type == kF32 ? kI64 : kF32;
      made.mistyped = true;
      break;
    case 1:
      shape.push_back(1);
      (io.dims.empty() ? made.unmodeled : made.mistyped) = true;
      break;
    case 2:
      if (!shape.empty()) {
        shape.pop_back();
        made.mistyped = true;
      }
      break;
    case 3:
      for (size_t i = 0; i < io.dims.size(); ++i) {
        if (io.dims[i] >= 0) {
          shape[i] = io.dims[i] + in.ConsumeIntegralInRange<int64_t>(1, 2);
          made.mistyped = true;
        }
      }
      break;
    case 4:
      for (size_t i = 0; i < io.dims.size(); ++i) {
        if (io.dims[i] < 0 && m.add) shape[i] = n + in.ConsumeIntegralInRange<int64_t>(1, 2);  // contradicts N
      }
      break;
    default:
      break;
  }
  if (!made.mistyped && m.add) {
    for (size_t i = 0; i < io.dims.size(); ++i) {
      if (io.dims[i] < 0) made.n = shape[i];
    }
  }
  const Memory& memory = g_memories[in.ConsumeIntegralInRange<size_t>(0, g_memories.size() - 1)];
  ReadOnly ro = ReadOnly::kNo;
  if (in.ConsumeIntegralInRange<int>(0, 7) == 0) ro = in.ConsumeBool() ? ReadOnly::kFlagged : ReadOnly::kByContract;
  made.read_only = ro != ReadOnly::kNo;
  g_context += std::string("  ") + io.name + ": type " + std::to_string(type) + " shape [";
  for (int64_t d : shape) g_context += std::to_string(d) + ",";
  g_context += "] in " + memory.name + (ro != ReadOnly::kNo ? " read-only" : "") + "\n";
  made.tensor = make(type, shape, memory.info, seed, ro, keep);
  return made;
}

// What output `o` of model `m` must hold for the feeds (by model input): x + y, x, or the fed input itself.
std::vector<unsigned char> expected(const Model& m, size_t o, const std::vector<Tensor>& by_input) {
  if (!m.add || o == 1) return bytes_of(by_input[m.add ? 0 : o]);
  const std::vector<unsigned char> x = bytes_of(by_input[0]), y = bytes_of(by_input[1]);
  std::vector<unsigned char> z(x.size());
  for (size_t i = 0; i < x.size() / 4; ++i) {
    float a = 0, b = 0;
    std::memcpy(&a, &x[i * 4], 4);
    std::memcpy(&b, &y[(i % 3) * 4], 4);
    const float c = a + b;
    std::memcpy(&z[i * 4], &c, 4);
  }
  return z;
}

void run_one(FuzzedDataProvider& in) {
  Model& m = g_models[in.ConsumeIntegralInRange<size_t>(0, g_models.size() - 1)];
  const int64_t n = in.ConsumeIntegralInRange<int64_t>(0, 4);
  g_context = "model " + std::string(m.inputs[0].name) + (m.ep_memory ? " (virtual device EP)" : "") + " N " +
              std::to_string(n) + "\n";
  Mistakes mistakes;
  bool unmodeled = false;    // Made::unmodeled: no invariant on the outcome but "only ortdlpack::Error escapes"
  std::vector<Tensor> keep;  // allocations under read-only views
  ortdlpack::Feeds feeds;
  std::vector<Tensor> by_input(m.inputs.size());
  std::optional<int64_t> fed_n;
  const unsigned seed = in.ConsumeIntegral<uint8_t>();
  for (size_t i = 0; i < m.inputs.size(); ++i) {
    switch (in.ConsumeIntegralInRange<int>(0, 15)) {
      case 0:  // missing
        mistakes.add(true);
        g_context += std::string("  ") + m.inputs[i].name + ": missing\n";
        continue;
      case 1:  // an empty Tensor
        feeds.emplace_back(m.inputs[i].name, Tensor());
        mistakes.add(true);
        g_context += std::string("  ") + m.inputs[i].name + ": empty Tensor\n";
        continue;
      default:
        break;
    }
    Made made = make_for(in, m, m.inputs[i], n, seed + static_cast<unsigned>(i), keep);
    if (made.mistyped) mistakes.add(true);
    unmodeled |= made.unmodeled;
    if (made.n >= 0) fed_n = made.n;  // only x names N
    by_input[i] = made.tensor;
    feeds.emplace_back(m.inputs[i].name, made.tensor);
    if (in.ConsumeIntegralInRange<int>(0, 15) == 0) {  // fed twice
      feeds.emplace_back(m.inputs[i].name, made.tensor);
      mistakes.add(true);
    }
  }
  if (in.ConsumeIntegralInRange<int>(0, 15) == 0) {
    feeds.emplace_back("nope", by_input[0] ? by_input[0] : Tensor());
    mistakes.add(true);
  }
  // Output names: none (all, model order) or a list, possibly reordered, repeated or unknown.
  std::vector<std::string> names;
  std::vector<size_t> returned;  // model output index of each result
  if (in.ConsumeBool()) {
    for (size_t o = 0; o < m.outputs.size(); ++o) returned.push_back(o);
  } else {
    const size_t count = in.ConsumeIntegralInRange<size_t>(1, m.outputs.size() + 1);
    for (size_t k = 0; k < count; ++k) {
      const size_t o = in.ConsumeIntegralInRange<size_t>(0, m.outputs.size());
      if (o == m.outputs.size()) {
        names.push_back("unknown");
        mistakes.add(true);
        continue;
      }
      names.push_back(m.outputs[o].name);  // (named again: returned again, as onnxruntime's run does)
      returned.push_back(o);
    }
  }
  g_context += "  output names:";
  for (const std::string& s : names) g_context += " " + s;
  g_context += "\n";
  // Destinations.
  ortdlpack::RunOptions options;
  std::vector<Tensor> destination_of(m.outputs.size());
  const size_t dest_count = in.ConsumeIntegralInRange<size_t>(0, m.outputs.size() + 1);
  for (size_t k = 0; k < dest_count; ++k) {
    const size_t o = in.ConsumeIntegralInRange<size_t>(0, m.outputs.size());
    if (o == m.outputs.size()) {
      options.destinations.emplace_back("unknown", by_input[0] ? by_input[0] : Tensor());
      mistakes.add(true);
      continue;
    }
    if (in.ConsumeIntegralInRange<int>(0, 7) == 0) {  // a feed's own tensor: ORT would write what it reads
      const Tensor& feed = by_input[in.ConsumeIntegralInRange<size_t>(0, by_input.size() - 1)];
      if (feed && feed.byte_size() != 0) {
        options.destinations.emplace_back(m.outputs[o].name, feed);
        mistakes.add(true);
        if (!writes(m, feed.memory_info())) mistakes.add(false, true);  // in memory the session may not write, too
        g_context += std::string("  destination ") + m.outputs[o].name + ": a feed's tensor\n";
        continue;
      }
    }
    Made made = make_for(in, m, m.outputs[o], n, 0x40, keep);
    unmodeled |= made.unmodeled;
    bool requested = false;
    for (size_t r : returned) requested |= r == o;
    if (made.mistyped || made.read_only || !requested || destination_of[o]) mistakes.add(true);
    if (made.n >= 0 && fed_n && *fed_n != made.n) mistakes.add(true, false, true);
    if (!writes(m, made.tensor.memory_info())) mistakes.add(false, true);
    if (!destination_of[o]) destination_of[o] = made.tensor;
    options.destinations.emplace_back(m.outputs[o].name, made.tensor);
  }
  // Where outputs are allocated (RunOptions::output_target), and whether they are read on the host.
  const OrtMemoryInfo* requested_memory = nullptr;
  switch (in.ConsumeIntegralInRange<int>(0, 7)) {
    case 1:
      requested_memory = g_memories[in.ConsumeIntegralInRange<size_t>(0, g_memories.size() - 1)].info;
      options.output_target = ortdlpack::Target::in(requested_memory);
      break;
    case 2: {
      const DLDevice d = g_devices[in.ConsumeIntegralInRange<size_t>(0, g_devices.size() - 1)];
      options.output_target = ortdlpack::Target::on(d);
      try {
        requested_memory = ortdlpack::memory_info(d);
      } catch (const Error&) {
        mistakes.add(false, true);  // a device nothing maps
      }
      break;
    }
    case 3:
      options.output_target = ortdlpack::Target::host();
      break;
    default:
      break;
  }
  const bool on_host = options.output_target.kind == ortdlpack::Target::Kind::kHost;
  options.read_on_host = in.ConsumeIntegralInRange<int>(0, 3) == 0;
  if (options.read_on_host) {
    if (requested_memory != nullptr && !ortdlpack::host_accessible(requested_memory)) mistakes.add(true);
    for (const auto& d : options.destinations) {
      if (!d.second.host_accessible()) mistakes.add(true);
    }
  }
  // Memory the session cannot write is refused for the outputs ORT allocates (none when all have destinations).
  bool allocated = false;
  for (size_t o : returned) allocated |= !destination_of[o];
  if (requested_memory != nullptr && allocated && !allocates(m, requested_memory)) mistakes.add(true);
  if (requested_memory != nullptr)
    g_context += "  output memory " + ortdlpack::describe_memory(requested_memory) + "\n";
  if (on_host) g_context += "  outputs in host memory\n";
  if (options.read_on_host) g_context += "  outputs read on the host\n";
  const bool bind = in.ConsumeIntegralInRange<int>(0, 3) == 0;

  settle();
  std::vector<long> feed_shares, dest_shares;
  for (const auto& f : feeds) feed_shares.push_back(f.second.use_count());
  for (const auto& d : options.destinations) dest_shares.push_back(d.second.use_count());
  std::vector<std::vector<unsigned char>> feed_bytes;
  for (const auto& f : feeds) feed_bytes.push_back(bytes_of(f.second));

  const auto check_results = [&](const std::vector<Tensor>& results) {
    if (unmodeled) return;
    if (results.size() != returned.size()) fail("a run returned another number of outputs than asked");
    for (size_t r = 0; r < results.size(); ++r) {
      const size_t o = returned[r];
      const Tensor& t = results[r];
      if (t.element_type() != m.outputs[o].type) fail("an output's element type");
      if (!(t.shape() == shape_of(m.outputs[o], fed_n.value_or(n)))) fail("an output's shape");
      if (destination_of[o] && t.ort_value() != destination_of[o].ort_value()) fail("an output is not its destination");
      if (!destination_of[o] && requested_memory != nullptr &&
          !ortdlpack::is_at(t, ortdlpack::Target::in(requested_memory))) {
        g_context += "  output " + std::to_string(r) + " in " + ortdlpack::describe_memory(t.memory_info()) + "\n";
        fail("an output is not in the requested memory");
      }
      if (!destination_of[o] && (on_host || options.read_on_host) && !t.host_accessible()) {
        fail("an output read on the host is not in host memory");
      }
      if (bytes_of(t) != expected(m, o, by_input)) fail("an output holds wrong values");
    }
  };
  try {
    if (bind) {
      ortdlpack::Binding b = m.session->bind(feeds, names, options);
      check_results(b.run());
      const std::vector<Tensor> first = b.outputs();
      // New contents in the feeds (same tensors): the second run reads them and writes the same outputs.
      for (const Tensor& t : by_input) {
        if (t && !t.read_only()) {
          Tensor fresh = make(t.element_type(), t.shape(), t.memory_info(), seed + 3, ReadOnly::kNo, keep);
          ortdlpack::copy(fresh, t);
        }
      }
      const std::vector<Tensor>& second = b.run();
      for (size_t r = 0; r < first.size(); ++r) {
        if (second[r].ort_value() != first[r].ort_value()) fail("a Binding's second run changed an output tensor");
      }
      check_results(second);
    } else {
      check_results(m.session->run(feeds, names, options));
    }
    if (mistakes.any && !unmodeled) fail("a request with a mistake ran");
  } catch (const Error& e) {
    if (unmodeled) {  // (any kind)
    } else if (!mistakes.any) {
      std::fprintf(stderr, "fuzz_run: %s\n", e.what());
      fail("a request without mistakes failed");
    } else if (!mistakes.allows(e.kind())) {
      std::fprintf(stderr, "fuzz_run: %s\n", e.what());
      fail("a request failed with an error kind its mistakes do not allow");
    }
  }
  settle();
  for (size_t i = 0; i < feeds.size(); ++i) {
    if (feeds[i].second.use_count() != feed_shares[i]) fail("a run kept a share of a feed");
    if (bytes_of(feeds[i].second) != feed_bytes[i] && !bind) fail("a run changed a feed");
  }
  for (size_t i = 0; i < options.destinations.size(); ++i) {
    if (options.destinations[i].second.use_count() != dest_shares[i]) fail("a run kept a share of a destination");
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // One-time set-up: ORT's env (ORT 1.29 loses 14 bytes inside CreateEnv, see tests/sanitizer/lsan.supp), the virtual
  // device and the sessions; what ORT allocates here is process-wide state, not something an input can leak.
  __lsan_disable();
  ortdlpack::init(OrtGetApiBase());
  g_memories.push_back({ortdlpack::memory_info(DLDevice{kDLCPU, 0}), "CPU"});
  g_devices = {{kDLCPU, 0}, {kDLCUDA, 0}};
  std::vector<const OrtEpDevice*> vd_device;
#ifdef ORTDLPACK_VD_PATH
  setenv(ORTDLPACK_VD_STREAM_DELAY_ENV, "20", 1);  // queued copies stay asynchronous, briefly
  const auto vd = ortdlpack::test::VirtualDeviceEnv::load("fuzz_run_vd");
  g_memories.push_back({vd.memory(0), "VD0"});
  g_memories.push_back({vd.memory(1), "VD1"});
  g_memories.push_back({vd.memory(0, OrtDeviceMemoryType_HOST_ACCESSIBLE), "VD0-host"});
  g_devices.push_back({kDLExtDev, 0});
  g_devices.push_back({kDLExtDev, 1});
  vd_device.push_back(vd.devices[0]);
#endif
  const auto add_model = [](const std::vector<const OrtEpDevice*>& ep) {
    Model m;
    m.add = true;
    m.inputs = {{"x", kF32, {-1, 3}}, {"y", kF32, {3}}};
    m.outputs = {{"z", kF32, {-1, 3}}, {"s", kF32, {-1, 3}}};
    ModelBuilder b;
    b.Node("Add", {"x", "y"}, {"z"});
    b.Node("Identity", {"x"}, {"s"});
    m.ort_session = b.Build({b.Value("x", kF32, {-1, 3}, {"N", ""}), b.Value("y", kF32, {3})},
                            {b.Value("z", kF32, {-1, 3}, {"N", ""}), b.Value("s", kF32, {-1, 3}, {"N", ""})}, 1, ep);
    m.session = std::make_unique<ortdlpack::Session>(m.ort_session, ep);
    if (!ep.empty()) {
      m.ep_memory = ortdlpack::ort().EpDevice_MemoryInfo(ep[0], OrtDeviceMemoryType_DEFAULT);
      m.ep_host_memory = ortdlpack::ort().EpDevice_MemoryInfo(ep[0], OrtDeviceMemoryType_HOST_ACCESSIBLE);
    }
    return m;
  };
  g_models.push_back(add_model({}));
  if (!vd_device.empty()) g_models.push_back(add_model(vd_device));
  {
    Model m;
    m.inputs = {{"a", kI64, {-1}}, {"b", kBool, {2, 2}}, {"h", kF16, {}}};
    m.outputs = {{"a2", kI64, {-1}}, {"b2", kBool, {2, 2}}, {"h2", kF16, {}}};
    ModelBuilder b;
    b.Node("Identity", {"a"}, {"a2"});
    b.Node("Identity", {"b"}, {"b2"});
    b.Node("Identity", {"h"}, {"h2"});
    m.ort_session = b.Build({b.Value("a", kI64, {-1}), b.Value("b", kBool, {2, 2}), b.Value("h", kF16, {})},
                            {b.Value("a2", kI64, {-1}), b.Value("b2", kBool, {2, 2}), b.Value("h2", kF16, {})});
    m.session = std::make_unique<ortdlpack::Session>(m.ort_session);
    g_models.push_back(std::move(m));
  }
  ortdlpack::fuzz::release_env_at_exit([] {
    for (Model& m : g_models) {
      m.session.reset();
      ortdlpack::ort().ReleaseSession(m.ort_session);
    }
    g_models.clear();
  });
  __lsan_enable();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (ortdlpack::fuzz::is_canary(data, size)) fail("the self-test's canary input (a finding on purpose)");
  FuzzedDataProvider in(data, size);
  try {
    run_one(in);
  } catch (const Error& e) {
    std::fprintf(stderr, "fuzz_run: %s\n", e.what());
    fail("setting up a request failed");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fuzz_run: unexpected exception: %s\n", e.what());
    fail("an exception other than ortdlpack::Error escaped");
  }
  return 0;
}
