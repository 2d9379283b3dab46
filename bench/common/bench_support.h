// What the benchmarks under bench/ share: timing a call, the machine's matmul peak, a BERT encoder's FLOPs,
// and the JSON line a Python reference prints. Header-only: each benchmark is one executable.
#pragma once

#include <fmt/format.h>
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>

#include "model/encoder_flops.h"

namespace ragmig::bench {

using Clock = std::chrono::steady_clock;

/// Seconds per call of fn: one warm-up call, then calls until min_seconds have passed (at least two).
inline double seconds_per_call(const std::function<void()>& fn, double min_seconds) {
  fn();
  int64_t calls = 0;
  const auto t0 = Clock::now();
  double elapsed = 0;
  while (calls < 2 || elapsed < min_seconds) {
    fn();
    ++calls;
    elapsed = std::chrono::duration<double>(Clock::now() - t0).count();
  }
  return elapsed / static_cast<double>(calls);
}

/// GFLOP/s of an n x n x n matmul in dtype.
inline double matmul_gflops(torch::ScalarType dtype, int64_t n, double min_seconds) {
  auto a = torch::randn({n, n}).to(dtype), b = torch::randn({n, n}).to(dtype);
  const double s = seconds_per_call([&] { (void)torch::matmul(a, b); }, min_seconds);
  return 2.0 * n * n * n / s / 1e9;
}

/// A BERT encoder's forward FLOPs (model/encoder_flops.h).
using ragmig::model::encoder_flops;

/// Runs a Python reference and returns the last JSON object it printed ("" when it failed, after saying so).
inline std::string run_python(const std::string& cmd) {
  FILE* pipe = ::popen(cmd.c_str(), "r");
  if (!pipe) return "";
  std::string out;
  char buf[4096];
  while (std::fgets(buf, sizeof buf, pipe)) out += buf;
  const size_t json = out.rfind('{');
  if (::pclose(pipe) != 0 || json == std::string::npos) {
    fmt::print(stderr, "python reference failed: {}\n{}\n", cmd, out);
    return "";
  }
  return out.substr(json);
}

/// "42 %": gflops as a share of peak.
inline std::string fraction(double gflops, double peak) { return fmt::format("{:.0f} %", 100.0 * gflops / peak); }

}  // namespace ragmig::bench
