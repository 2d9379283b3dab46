// The floating-point precision a run computes in. "auto" takes bf16 only where the hardware runs its matmuls
// faster than fp32's (CUDA; a CPU with AMX-BF16, or AMD's AVX512-BF16) and fp32 everywhere else. Measured with
// bench/encode's matmul peak (2 cores): without AVX512-BF16 or AMX LibTorch emulates bf16, hundreds of times
// slower than fp32 (0.3 vs 176 GFLOP/s on an AVX2 EPYC); an AVX512-BF16 EPYC (Zen 4) runs it at twice fp32's rate
// (404 vs 193); an Emerald Rapids Xeon whose virtual machine hides AMX, AVX512-BF16 alone, at half (161 vs 323;
// a MiniLM fine-tune 6.3 vs 9.7 samples/s). No Intel CPU with AVX512-BF16 alone has been measured faster in bf16.
#pragma once

#include <string>

namespace ragmig::model {

enum class Precision { Fp32, Bf16 };

/// "fp32" | "bf16".
std::string to_string(Precision precision);

/// How a CPU runs bf16 matmuls, against fp32's.
enum class CpuBf16 {
  Emulated,  ///< no AVX512-BF16 or AMX-BF16: far slower
  Slower,    ///< Intel's AVX512-BF16 without AMX: native, at about half the rate
  Faster,    ///< AMX-BF16, or AVX512-BF16 on another vendor's CPU (AMD Zen 4 and later)
};

/// Pure: the class of a CPU with these features.
CpuBf16 classify_cpu_bf16(bool amx_bf16, bool avx512_bf16, bool intel);

struct PrecisionChoice {
  Precision precision = Precision::Fp32;
  std::string reason;  ///< one line for the run's start event and the eval report
};

/// Pure: what `requested` ("auto" | "fp32" | "bf16") becomes on a device that is CUDA or not, on a CPU of the
/// given class. An explicit "bf16" is honoured (the reason says when it is emulated or slower); anything else is
/// a ConfigError naming `key`.
PrecisionChoice choose_precision(const std::string& requested, bool cuda_device, CpuBf16 cpu,
                                 const std::string& key = "precision");

/// This CPU's class (LibTorch's cpuinfo and the CPUID vendor; Emulated on LibTorch 1.x). RAGMIG_CPU_BF16=0 or 1
/// makes it Emulated or Faster (a virtual machine that hides or misreports the flags; the fallback tests).
CpuBf16 cpu_bf16();

}  // namespace ragmig::model
