// A minimal benchmark harness: median of several timed batches, each batch long enough to dwarf the clock.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

namespace ortdlpack::bench {

// Nanoseconds per call of `fn`: the median over `batches` batches of `iterations` calls each.
template <class Fn>
double ns_per_call(Fn&& fn, int iterations, int batches = 7) {
  for (int i = 0; i < std::max(1, iterations / 10); ++i) fn();  // warm-up
  std::vector<double> samples;
  for (int b = 0; b < batches; ++b) {
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < iterations; ++i) fn();
    const auto stop = std::chrono::steady_clock::now();
    samples.push_back(std::chrono::duration<double, std::nano>(stop - start).count() / iterations);
  }
  std::nth_element(samples.begin(), samples.begin() + batches / 2, samples.end());
  return samples[static_cast<size_t>(batches / 2)];
}

inline std::string human(double ns) {
  char buf[32];
  if (ns < 1e3)
    std::snprintf(buf, sizeof buf, "%.0f ns", ns);
  else if (ns < 1e6)
    std::snprintf(buf, sizeof buf, "%.2f us", ns / 1e3);
  else
    std::snprintf(buf, sizeof buf, "%.2f ms", ns / 1e6);
  return buf;
}

}  // namespace ortdlpack::bench
