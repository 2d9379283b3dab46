// The resume rule (see resume_rule.h).
#include "train/resume_rule.h"

#include <array>
#include <string_view>

namespace ragmig::train {

bool may_change_on_resume(const std::string& key) {
  static constexpr std::array<std::string_view, 13> kSteering = {"train.max_steps",
                                                                 "train.lr",
                                                                 "train.warmup_steps",
                                                                 "train.weight_decay",
                                                                 "train.max_grad_norm",
                                                                 "train.checkpoint_every",
                                                                 "train.keep_checkpoints",
                                                                 "train.log_every",
                                                                 "train.threads",
                                                                 "train.device",
                                                                 "train.precision",
                                                                 "train.bf16_residual",
                                                                 "train.activation_checkpointing"};
  for (const auto k : kSteering)
    if (key == k) return true;
  // Evaluation, the transport and its timeout, and the fault injection of the tests steer nothing the model sees.
  return key.rfind("eval.", 0) == 0 || key.rfind("parallel.debug_", 0) == 0 ||
         key.rfind("train.debug_", 0) == 0 || key == "parallel.timeout_s" ||
         key == "parallel.backend";
}

ResumeCheck compare_for_resume(const nlohmann::json& before, const nlohmann::json& after) {
  ResumeCheck out;
  if (!before.is_object() || !after.is_object()) return out;
  for (const auto& [section, keys] : after.items()) {
    if (!keys.is_object() || !before.contains(section) || !before[section].is_object()) continue;
    for (const auto& [name, value] : keys.items()) {
      if (!before[section].contains(name)) continue;
      const nlohmann::json& old = before[section][name];
      if (old == value) continue;
      ConfigChange change{section + "." + name, old, value};
      (may_change_on_resume(change.key) ? out.allowed : out.refused).push_back(std::move(change));
    }
  }
  return out;
}

std::string refusal_message(const std::string& run_dir, const std::vector<ConfigChange>& refused) {
  std::string out = "run folder " + run_dir + " was trained with ";
  for (size_t i = 0; i < refused.size(); ++i) {
    if (i > 0) out += ", ";
    out += refused[i].key + "=" + refused[i].before.dump() + " (this config says " + refused[i].after.dump() + ")";
  }
  out +=
      ". A resume keeps the keys that decide shapes, data and batches; use a new --run-dir (keys that may change: "
      "train.max_steps, lr, warmup_steps, weight_decay, max_grad_norm, checkpoint_every, keep_checkpoints, "
      "log_every, threads, device, precision, bf16_residual, activation_checkpointing, eval.*, parallel.backend, "
      "parallel.timeout_s)";
  return out;
}

}  // namespace ragmig::train
