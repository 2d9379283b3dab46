// choose_precision and the CPU probe (see precision.h).
#include "model/precision.h"

#include <cstdlib>

#include <torch/torch.h>
#if TORCH_VERSION_MAJOR >= 2
#include <ATen/cpu/Utils.h>
#endif
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>

#include <cstring>
#endif

#include "core/error.h"

namespace ragmig::model {
namespace {

bool cpu_is_intel() {
#if defined(__x86_64__) || defined(__i386__)
  unsigned int max_leaf = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid(0, &max_leaf, &ebx, &ecx, &edx)) return false;
  char vendor[13] = {};
  std::memcpy(vendor, &ebx, 4);
  std::memcpy(vendor + 4, &edx, 4);
  std::memcpy(vendor + 8, &ecx, 4);
  return std::strcmp(vendor, "GenuineIntel") == 0;
#else
  return false;
#endif
}

}  // namespace

std::string to_string(Precision precision) { return precision == Precision::Bf16 ? "bf16" : "fp32"; }

CpuBf16 classify_cpu_bf16(bool amx_bf16, bool avx512_bf16, bool intel) {
  if (amx_bf16) return CpuBf16::Faster;
  if (!avx512_bf16) return CpuBf16::Emulated;
  return intel ? CpuBf16::Slower : CpuBf16::Faster;
}

PrecisionChoice choose_precision(const std::string& requested, bool cuda_device, CpuBf16 cpu, const std::string& key) {
  const bool on_cpu = !cuda_device;
  if (requested == "fp32") return {Precision::Fp32, "fp32 as asked"};
  if (requested == "bf16") {
    if (on_cpu && cpu == CpuBf16::Emulated)
      return {Precision::Bf16, "bf16 as asked, emulated on this CPU (no AVX512-BF16 or AMX): far slower than fp32"};
    if (on_cpu && cpu == CpuBf16::Slower)
      return {Precision::Bf16, "bf16 as asked, slower than fp32 on this CPU (Intel's AVX512-BF16 without AMX)"};
    return {Precision::Bf16, "bf16 as asked"};
  }
  if (requested != "auto") throw ConfigError(key + ": unknown precision '" + requested + "' (expected auto, fp32 or bf16)");
  if (cuda_device) return {Precision::Bf16, "auto: bf16 on CUDA"};
  switch (cpu) {
    case CpuBf16::Faster:
      return {Precision::Bf16, "auto: bf16, faster than fp32 on this CPU (AMX-BF16, or AMD's AVX512-BF16)"};
    case CpuBf16::Slower:
      return {Precision::Fp32, "auto: fp32, faster than bf16 on this CPU (Intel's AVX512-BF16 without AMX)"};
    case CpuBf16::Emulated:
      break;
  }
  return {Precision::Fp32, "auto: fp32, this CPU has no native bf16 (AVX512-BF16 or AMX)"};
}

CpuBf16 cpu_bf16() {
  if (const char* forced = std::getenv("RAGMIG_CPU_BF16"); forced && (forced == std::string("0") || forced == std::string("1")))
    return forced == std::string("1") ? CpuBf16::Faster : CpuBf16::Emulated;
#if TORCH_VERSION_MAJOR >= 2
  const auto caps = at::cpu::get_cpu_capabilities();
  auto has = [&](const char* name) {
    const auto it = caps.find(name);
    return it != caps.end() && it->second.isBool() && it->second.toBool();
  };
  return classify_cpu_bf16(has("amx_bf16"), has("avx512_bf16"), cpu_is_intel());
#else
  return CpuBf16::Emulated;
#endif
}

}  // namespace ragmig::model
