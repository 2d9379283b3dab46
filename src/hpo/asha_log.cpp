// Reading and replaying asha.jsonl (see asha_log.h).
#include "hpo/asha_log.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <optional>

#include "core/error.h"
#include "core/strings.h"

namespace ragmig::hpo {
namespace {

// The entry one line holds; nullopt when it is not shaped as the driver writes it.
std::optional<AshaLogEntry> entry_of(const nlohmann::json& j, const std::set<std::string>& trials) {
  if (!j.is_object()) return std::nullopt;
  const auto trial = j.find("trial"), step = j.find("step"), value = j.find("value"), action = j.find("action");
  if (trial == j.end() || !trial->is_string() || !trials.count(trial->get<std::string>())) return std::nullopt;
  if (step == j.end() || !step->is_number_integer()) return std::nullopt;
  if (step->is_number_unsigned() ? step->get<uint64_t>() > uint64_t{std::numeric_limits<int64_t>::max()}
                                 : step->get<int64_t>() < 0)
    return std::nullopt;
  if (value == j.end() || !(value->is_number() || value->is_null())) return std::nullopt;
  if (action == j.end() || !action->is_string()) return std::nullopt;
  AshaLogEntry e;
  e.trial = trial->get<std::string>();
  e.step = step->get<int64_t>();
  e.value = value->is_number() ? value->get<double>() : std::nan("");
  const std::string said = action->get<std::string>();
  if (said != to_string(AshaAction::Continue) && said != to_string(AshaAction::Stop)) return std::nullopt;
  e.action = said == to_string(AshaAction::Stop) ? AshaAction::Stop : AshaAction::Continue;
  return e;
}

}  // namespace

nlohmann::json to_json(const AshaLogEntry& entry) {
  // A NaN value is written as null, as nlohmann writes NaN.
  return {{"trial", entry.trial}, {"step", entry.step}, {"value", entry.value}, {"action", to_string(entry.action)}};
}

std::vector<AshaLogEntry> replay_asha_log(const std::string& text, const std::string& path,
                                          const std::set<std::string>& trials, Asha& asha) {
  std::vector<AshaLogEntry> out;
  const std::vector<std::string> lines = split(text, '\n');
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    const auto number = static_cast<int64_t>(i + 1);
    if (line.empty()) continue;
    const nlohmann::json j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) {
      const bool last = i + 1 == lines.size() || (i + 2 == lines.size() && lines.back().empty());
      if (last) break;  // cut short by a crash: the decision was never acted on
      throw DataError(path, number, "not a JSON line");
    }
    const auto entry = entry_of(j, trials);
    if (!entry)
      throw DataError(path, number,
                      "expected {trial: a trial of this sweep, step: a whole number >= 0, value: a number or null, "
                      "action: \"continue\" or \"stop\"}");
    const AshaAction replayed = asha.report(entry->trial, entry->step, entry->value);
    if (replayed != entry->action)
      throw DataError(path, number,
                      fmt::format("replaying gives '{}' where the log says '{}': the log belongs to another sweep",
                                  to_string(replayed), to_string(entry->action)));
    out.push_back(*entry);
  }
  return out;
}

}  // namespace ragmig::hpo
