// JSON of alerts, and which are still firing after a log of changes.
#include "monitor/alert.h"

#include <fmt/format.h>

#include <cmath>
#include <map>

#include "core/error.h"

namespace ragmig::monitor {

std::string Alert::key() const { return fmt::format("{}|{}|{}", rule, job, slot); }

nlohmann::json to_json(const AlertChange& c) {
  return {{"event", "alert"},
          {"state", c.firing ? "firing" : "cleared"},
          {"rule", c.alert.rule},
          {"job", c.alert.job ? nlohmann::json(c.alert.job) : nlohmann::json(nullptr)},
          {"slot", c.alert.slot.empty() ? nlohmann::json(nullptr) : nlohmann::json(c.alert.slot)},
          {"value", std::isfinite(c.alert.value) ? nlohmann::json(c.alert.value) : nlohmann::json(nullptr)},
          {"threshold", c.alert.threshold},
          {"message", c.alert.message},
          {"at", c.at},
          {"since", c.since}};
}

AlertChange alert_change_from_json(const nlohmann::json& j, const std::string& where) {
  const auto need = [&](const char* key, auto check, const char* expected) -> const nlohmann::json& {
    const auto it = j.find(key);
    if (it == j.end() || !check(*it)) throw DataError(fmt::format("{}: alert: \"{}\": expected {}", where, key, expected));
    return *it;
  };
  if (!j.is_object()) throw DataError(where + ": alert: expected a JSON object");
  const auto is_string = [](const nlohmann::json& v) { return v.is_string(); };
  const auto is_number = [](const nlohmann::json& v) { return v.is_number(); };
  const auto number_or_null = [](const nlohmann::json& v) { return v.is_number() || v.is_null(); };
  const auto string_or_null = [](const nlohmann::json& v) { return v.is_string() || v.is_null(); };
  AlertChange c;
  const std::string state = need("state", is_string, "\"firing\" or \"cleared\"").get<std::string>();
  if (state != "firing" && state != "cleared")
    throw DataError(fmt::format("{}: alert: \"state\": expected \"firing\" or \"cleared\" (got \"{}\")", where, state));
  c.firing = state == "firing";
  c.alert.rule = need("rule", is_string, "a string").get<std::string>();
  const auto& job = need("job", [](const nlohmann::json& v) { return v.is_number_integer() || v.is_null(); },
                         "a job id or null");
  c.alert.job = job.is_null() ? 0 : job.get<sched::JobId>();
  const auto& slot = need("slot", string_or_null, "a string or null");
  c.alert.slot = slot.is_null() ? "" : slot.get<std::string>();
  const auto& value = need("value", number_or_null, "a number or null");
  c.alert.value = value.is_null() ? std::nan("") : value.get<double>();
  c.alert.threshold = need("threshold", is_number, "a number").get<double>();
  c.alert.message = need("message", is_string, "a string").get<std::string>();
  c.at = need("at", is_number, "a number").get<double>();
  c.since = need("since", is_number, "a number").get<double>();
  return c;
}

std::vector<AlertChange> still_firing(const std::vector<AlertChange>& log) {
  std::map<std::string, size_t> index;  // key -> position in order
  std::vector<AlertChange> order;
  std::vector<bool> live;
  for (const auto& c : log) {
    const std::string key = c.alert.key();
    const auto it = index.find(key);
    if (c.firing) {
      if (it != index.end() && live[it->second]) continue;  // fired twice without clearing: keep the first
      index[key] = order.size();
      order.push_back(c);
      live.push_back(true);
    } else if (it != index.end()) {
      live[it->second] = false;
    }
  }
  std::vector<AlertChange> out;
  for (size_t i = 0; i < order.size(); ++i)
    if (live[i]) out.push_back(order[i]);
  return out;
}

}  // namespace ragmig::monitor
