// The floating-point precision a run computes in. "auto" takes bf16 only where the hardware runs it natively
// (CUDA, or a CPU with AVX512-BF16 or AMX-BF16) and fp32 everywhere else: without those instructions LibTorch
// emulates bf16 matmuls, hundreds of times slower than fp32 (0.3 vs 176 GFLOP/s on an AVX2 EPYC, bench/encode).
#pragma once

#include <string>

namespace ragmig::model {

enum class Precision { Fp32, Bf16 };

/// "fp32" | "bf16".
std::string to_string(Precision precision);

struct PrecisionChoice {
  Precision precision = Precision::Fp32;
  std::string reason;  ///< one line for the run's start event and the eval report
};

/// Pure: what `requested` ("auto" | "fp32" | "bf16") becomes on a device that is CUDA or not, on a CPU that
/// has native bf16 or not. An explicit "bf16" is honoured (the reason says when it is emulated); anything
/// else is a ConfigError naming `key`.
PrecisionChoice choose_precision(const std::string& requested, bool cuda_device, bool cpu_native_bf16,
                                 const std::string& key = "precision");

/// Whether this CPU has AVX512-BF16 or AMX-BF16 (LibTorch's cpuinfo; false on LibTorch 1.x). RAGMIG_CPU_BF16=0
/// or 1 overrides the detection (a virtual machine that hides or misreports the flags; the fallback tests).
bool cpu_has_native_bf16();

}  // namespace ragmig::model
