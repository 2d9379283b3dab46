// Which keys of a run's config may change when its run folder is started again. A resume continues the same
// model on the same data, so keys that decide shapes, data, tokenisation or the order and content of batches
// (model.*, data.*, train.batch_size, train.seed, ...) are fixed by the first start and a change is refused
// before anything in the folder is written; keys that only steer the rest of the run (its length and
// learning-rate schedule, clipping, checkpoints, logging, threads, device, precision, evaluation, the
// replicas' transport and timeout, and the tests' fault injection) may change,
// and the trainer logs each change as a `config_changed` event.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace ragmig::train {

struct ConfigChange {
  std::string key;  ///< "section.name", as in --set
  nlohmann::json before, after;
};

struct ResumeCheck {
  std::vector<ConfigChange> refused;  ///< changes a resume cannot honour
  std::vector<ConfigChange> allowed;  ///< changes it takes from here on
};

/// Whether `key` ("train.lr") may differ between a run folder's config.json and the config resuming it.
bool may_change_on_resume(const std::string& key);

/// Pure: the differences between the resolved configs `before` (the run folder's config.json) and `after`, both
/// {"section": {"key": value}}. A key `before` lacks (written by an older ragmig) is not compared.
ResumeCheck compare_for_resume(const nlohmann::json& before, const nlohmann::json& after);

/// "run folder R was trained with model.hidden_size=32 (this config says 64), ...; use a new --run-dir ..."
std::string refusal_message(const std::string& run_dir, const std::vector<ConfigChange>& refused);

}  // namespace ragmig::train
