// Soak: many DLPack round trips and session runs with DLPack I/O in one process; RSS before/after and deleter
// accounting. Exit status 0 when every deleter ran exactly once and RSS grew by less than the limit.
//
//   build/tests/cpp/soak [round_trips=1000000] [session_runs=10000] [rss_limit_mib=16]
//
// One round trip: a producer's DLPack tensor (versioned, or legacy every other time) is imported zero-copy,
// exported (versioned and legacy) and re-imported, then everything is dropped: the producer's deleter must run
// exactly once and each export's exactly once. One session run: an Add model fed a DLPack-imported input, its
// output exported to DLPack and released by the consumer. RSS is read from /proc/self/statm after a warm-up (ORT's
// arenas, the memory-info cache and the first session allocations are then in place), and again at the end.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <vector>

#include "model_builder.h"
#include "ortdlpack/ortdlpack.h"
#include "producer.h"

namespace {

using namespace ortdlpack;

long rss_kib() {
  std::ifstream statm("/proc/self/statm");
  long size = 0, resident = 0;
  statm >> size >> resident;
  return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

using test::Producer;

bool round_trips(Producer& p, long n, long& exports) {
  for (long i = 0; i < n; ++i) {
    const long before = p.deletes;
    {
      Imported in = (i & 1) ? from_dlpack(&p.legacy) : from_dlpack(&p.versioned);
      DLManagedTensorVersioned* v = to_dlpack_versioned(in.tensor);
      DLManagedTensor* l = to_dlpack_legacy(in.tensor);
      Imported again = from_dlpack(v);
      Imported again_legacy = from_dlpack(l);
      exports += 2;
      if (in.copied || again.tensor.data() != p.buffer->data() || again_legacy.tensor.data() != p.buffer->data() ||
          in.tensor.use_count() != 3 || p.deletes != before) {
        std::fprintf(stderr, "round trip %ld: wrong sharing (use_count %ld, deletes %ld)\n", i, in.tensor.use_count(),
                     p.deletes - before);
        return false;
      }
    }
    if (p.deletes != before + 1) {
      std::fprintf(stderr, "round trip %ld: the producer's deleter ran %ld times\n", i, p.deletes - before);
      return false;
    }
  }
  return true;
}

struct Consumer {
  long deletes = 0;
};

bool session_runs(Session& session, Producer& p, long n, long& output_deletes) {
  for (long i = 0; i < n; ++i) {
    const long before = p.deletes;
    std::vector<Tensor> out = session.run({{"X", from_dlpack(&p.versioned).tensor}});
    if (p.deletes != before + 1) {
      std::fprintf(stderr, "run %ld: input deleter ran %ld times\n", i, p.deletes - before);
      return false;
    }
    DLManagedTensorVersioned* y = to_dlpack_versioned(out.at(0));
    out.clear();  // the DLPack tensor is now the output's only owner
    if (static_cast<const float*>(y->dl_tensor.data)[63] != 3.0f) {
      std::fprintf(stderr, "run %ld: wrong output\n", i);
      return false;
    }
    y->deleter(y);  // the consumer is done
    ++output_deletes;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  const long n_round_trips = argc > 1 ? std::atol(argv[1]) : 1000000;
  const long n_runs = argc > 2 ? std::atol(argv[2]) : 10000;
  const long limit_kib = (argc > 3 ? std::atol(argv[3]) : 16) * 1024;
  init(OrtGetApiBase());
  OrtSession* raw = examples::make_add_session(ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, {8, 8});
  bool ok = true;
  long exports = 0, output_deletes = 0;
  std::unique_ptr<Producer> owned = Producer::make(DLDataType{kDLFloat, 32, 1}, {8, 8});
  Producer& p = *owned;
  std::fill_n(reinterpret_cast<float*>(p.buffer->data()), 64, 1.5f);  // X + X = 3
  {
    Session session(raw);
    // Warm-up.
    ok = round_trips(p, 1000, exports) && session_runs(session, p, 100, output_deletes);
    const long rss_before = rss_kib();
    const long deletes_before = p.deletes;
    const auto start = std::chrono::steady_clock::now();
    ok = ok && round_trips(p, n_round_trips, exports);
    const auto mid = std::chrono::steady_clock::now();
    ok = ok && session_runs(session, p, n_runs, output_deletes);
    const auto end = std::chrono::steady_clock::now();
    const long rss_after = rss_kib();
    const double rt_s = std::chrono::duration<double>(mid - start).count();
    const double run_s = std::chrono::duration<double>(end - mid).count();
    std::printf("soak: %ld round trips in %.2f s (%.2f us each), %ld session runs in %.2f s (%.1f us each)\n",
                n_round_trips, rt_s, 1e6 * rt_s / static_cast<double>(n_round_trips ? n_round_trips : 1), n_runs, run_s,
                1e6 * run_s / static_cast<double>(n_runs ? n_runs : 1));
    std::printf("soak: producer deleter calls %ld (expected %ld), exported tensors %ld, output deleters %ld\n",
                p.deletes - deletes_before, n_round_trips + n_runs, exports, output_deletes);
    std::printf("soak: RSS before %ld KiB, after %ld KiB, growth %ld KiB (limit %ld KiB)\n", rss_before, rss_after,
                rss_after - rss_before, limit_kib);
    if (p.deletes - deletes_before != n_round_trips + n_runs) ok = false;
    if (rss_after - rss_before >= limit_kib) {
      std::fprintf(stderr, "soak: RSS grew by %ld KiB\n", rss_after - rss_before);
      ok = false;
    }
  }
  ort().ReleaseSession(raw);
  std::printf("soak: %s\n", ok ? "OK" : "FAILED");
  return ok ? 0 : 1;
}
