// A LoRA adapter with random factors for tests: a fresh adapter's B is zero, so it would change nothing.
#pragma once

#include <torch/torch.h>

#include <cstdint>

#include "model/lora.h"

namespace ragmig::testing {

/// Attaches `spec`'s adapters to `tower`, draws every LoRA parameter from normal(0, stddev) after
/// torch::manual_seed(seed), and returns them (model::own_adapter).
inline model::LoraAdapter random_lora_adapter(model::BertModel& tower, const model::LoraSpec& spec, uint64_t seed,
                                              double stddev) {
  model::attach_lora(tower, spec);
  torch::manual_seed(seed);
  {
    torch::NoGradGuard no_grad;
    for (auto& p : tower->named_parameters())
      if (model::is_lora_parameter(p.key())) p.value().normal_(0, stddev);
  }
  return model::own_adapter(tower, spec);
}

}  // namespace ragmig::testing
