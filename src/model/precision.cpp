// choose_precision and the CPU probe (see precision.h).
#include "model/precision.h"

#include <cstdlib>

#include <torch/torch.h>
#if TORCH_VERSION_MAJOR >= 2
#include <ATen/cpu/Utils.h>
#endif

#include "core/error.h"

namespace ragmig::model {

std::string to_string(Precision precision) { return precision == Precision::Bf16 ? "bf16" : "fp32"; }

PrecisionChoice choose_precision(const std::string& requested, bool cuda_device, bool cpu_native_bf16,
                                 const std::string& key) {
  if (requested == "fp32") return {Precision::Fp32, "fp32 as asked"};
  if (requested == "bf16") {
    if (cuda_device || cpu_native_bf16) return {Precision::Bf16, "bf16 as asked"};
    return {Precision::Bf16, "bf16 as asked, emulated on this CPU (no AVX512-BF16 or AMX): far slower than fp32"};
  }
  if (requested != "auto") throw ConfigError(key + ": unknown precision '" + requested + "' (expected auto, fp32 or bf16)");
  if (cuda_device) return {Precision::Bf16, "auto: bf16 on CUDA"};
  if (cpu_native_bf16) return {Precision::Bf16, "auto: bf16, this CPU has AVX512-BF16 or AMX-BF16"};
  return {Precision::Fp32, "auto: fp32, this CPU has no native bf16 (AVX512-BF16 or AMX)"};
}

bool cpu_has_native_bf16() {
  if (const char* forced = std::getenv("RAGMIG_CPU_BF16"); forced && (forced == std::string("0") || forced == std::string("1")))
    return forced == std::string("1");
#if TORCH_VERSION_MAJOR >= 2
  const auto caps = at::cpu::get_cpu_capabilities();
  auto has = [&](const char* name) {
    const auto it = caps.find(name);
    return it != caps.end() && it->second.isBool() && it->second.toBool();
  };
  return has("avx512_bf16") || has("amx_bf16");
#else
  return false;
#endif
}

}  // namespace ragmig::model
