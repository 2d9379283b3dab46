// A sweep's asha.jsonl: every ASHA decision, appended before it is acted on, one JSON object a line:
//   {"trial": "t03", "step": 40, "value": 0.4127, "action": "stop"}   (value null: the evaluation gave NaN)
// A driver started again on the same state folder replays the log into a fresh Asha, which must take the same
// decisions: a log that replays otherwise belongs to another sweep.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hpo/asha.h"

namespace ragmig::hpo {

struct AshaLogEntry {
  std::string trial;
  int64_t step = 0;
  double value = 0;  ///< NaN where the line says null
  AshaAction action = AshaAction::Continue;
};

/// One line of the log as the driver appends it (core/event_log.h adds its time).
nlohmann::json to_json(const AshaLogEntry& entry);

/// Replays the log's `text` (read from `path`) into `asha`, line by line, and returns its entries in order. Throws
/// DataError naming path:line for a line that is not {trial: one of `trials`, step: a whole number >= 0, value: a
/// number or null, action: "continue" or "stop"}, or whose replayed decision is not the one it records. The last
/// line, when it is not JSON, is a line cut short by a crash (its decision was never acted on) and is ignored.
std::vector<AshaLogEntry> replay_asha_log(const std::string& text, const std::string& path,
                                          const std::set<std::string>& trials, Asha& asha);

}  // namespace ragmig::hpo
