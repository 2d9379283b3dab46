// What the benchmarks under bench/ share: timing a call, the machine's matmul peak, a BERT encoder's FLOPs,
// and the JSON line a Python reference prints. Header-only: each benchmark is one executable.
#pragma once

#include <fmt/format.h>
#include <torch/torch.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>

#include "model/blas_binding.h"
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

/// The same fp32 n x n x n matmul in `python`'s torch on `threads` threads, GFLOP/s (-1 when it failed): beside
/// matmul_gflops it shows whether this binary's fp32 products run on the BLAS Python's do (model/blas_binding.h).
inline double python_matmul_gflops(const std::string& python, int64_t n, int threads, double min_seconds) {
  const std::string script = fmt::format(
      "import json, time, torch; torch.set_num_threads({0}); a = torch.randn({1}, {1}); b = torch.randn({1}, {1}); "
      "a @ b; t = time.perf_counter(); c = 0\n"
      "while c < 2 or time.perf_counter() - t < {2}: a @ b; c += 1\n"
      "print(json.dumps({{'gflops': 2 * {1} ** 3 * c / (time.perf_counter() - t) / 1e9}}))",
      threads, n, min_seconds);
  // Without this process's LD_PRELOAD: the reference is Python as it runs by itself.
  const std::string out = run_python(fmt::format("env -u LD_PRELOAD '{}' -c \"{}\" 2>&1", python, script));
  return out.empty() ? -1 : nlohmann::json::parse(out)["gflops"].get<double>();
}

/// "fp32 matmul: C++ 289.3, Python 290.1 GFLOP/s (1.00x) on libtorch_cpu.so (LibTorch's own)": the line both
/// benchmarks print under their peaks; a ratio well under 1 is a BLAS binding to look at, not a slow model.
inline std::string fp32_matmul_beside_python(double cpp_gflops, const std::string& python, int threads,
                                             double min_seconds) {
  const double py = python_matmul_gflops(python, 2048, threads, min_seconds);
  return fmt::format("fp32 matmul (2048^3): C++ {:.1f}, Python {} GFLOP/s{}; C++'s sgemm_ is {}", cpp_gflops,
                     py > 0 ? fmt::format("{:.1f}", py) : "-", py > 0 ? fmt::format(" ({:.2f}x)", cpp_gflops / py) : "",
                     model::to_string(model::blas_binding()));
}

/// "42 %": gflops as a share of peak.
inline std::string fraction(double gflops, double peak) { return fmt::format("{:.0f} %", 100.0 * gflops / peak); }

}  // namespace ragmig::bench
