// A small key table over AlertThresholds' fields; `deadline` is read by hand (a date-time, or a number).
#include "monitor/alert_config.h"

#include <fmt/format.h>

#include <cmath>
#include <ctime>
#include <variant>
#include <vector>

#include "core/atomic_file.h"
#include "core/error.h"
#include "core/toml_names.h"

namespace ragmig::monitor {
namespace {

struct Key {
  const char* name;
  std::variant<double AlertThresholds::*, int64_t AlertThresholds::*, std::string AlertThresholds::*> field;
  double min;  ///< numbers only
  const char* help;
};

const std::vector<Key>& keys() {
  static const std::vector<Key> k = {
      {"exec", &AlertThresholds::exec, 0, "command run by `sh -c` with each alert (firing or cleared) as JSON on stdin"},
      {"interval_s", &AlertThresholds::interval_s, 0.05, "seconds between the monitor's samples"},
      {"stall_factor", &AlertThresholds::stall_factor, 1, "stall: no progress for this many times the usual interval"},
      {"stall_min_s", &AlertThresholds::stall_min_s, 0, "stall: ... and at least this many seconds"},
      {"start_timeout_s", &AlertThresholds::start_timeout_s, 0, "stall: no progress this long after starting"},
      {"loss_exploding_factor", &AlertThresholds::loss_exploding_factor, 1,
       "loss_exploding: loss above this many times the attempt's lowest ..."},
      {"loss_exploding_min_rise", &AlertThresholds::loss_exploding_min_rise, 0,
       "loss_exploding: ... and at least this much above it (nats)"},
      {"loss_exploding_min_events", &AlertThresholds::loss_exploding_min_events, 1,
       "loss_exploding: ... once this many losses were reported"},
      {"idle_utilization", &AlertThresholds::idle_utilization, 0, "slot_idle: a slot used under this share (0..1) ..."},
      {"idle_s", &AlertThresholds::idle_s, 0, "slot_idle: ... for this many seconds while jobs wait"},
      {"memory_fraction", &AlertThresholds::memory_fraction, 0, "memory_high: this share (0..1) of a slot's memory used ..."},
      {"memory_for_s", &AlertThresholds::memory_for_s, 0, "memory_high: ... for this many seconds"},
      {"crash_loop_failures", &AlertThresholds::crash_loop_failures, 1, "crash_loop: this many failed attempts ..."},
      {"crash_loop_window_s", &AlertThresholds::crash_loop_window_s, 0, "crash_loop: ... within this many seconds"},
      {"oom_window_s", &AlertThresholds::oom_window_s, 0, "oom: an out-of-memory exit this recent, no progress since"},
      {"forget_after_s", &AlertThresholds::forget_after_s, 0,
       "a job that ended is watched this long more: its NaN, OOM and crash-loop alerts clear then"},
  };
  return k;
}

// Unix time of a TOML date-time: with an offset it is exact; without, it is local time here.
double unix_time(const toml::date_time& dt) {
  std::tm tm{};
  tm.tm_year = dt.date.year - 1900;
  tm.tm_mon = dt.date.month - 1;
  tm.tm_mday = dt.date.day;
  tm.tm_hour = dt.time.hour;
  tm.tm_min = dt.time.minute;
  tm.tm_sec = dt.time.second;
  const double frac = dt.time.nanosecond / 1e9;
  if (dt.offset) return static_cast<double>(::timegm(&tm)) - dt.offset->minutes * 60.0 + frac;
  tm.tm_isdst = -1;
  return static_cast<double>(std::mktime(&tm)) + frac;
}

}  // namespace

AlertThresholds parse_alert_config(const std::string& text, const std::string& source) {
  toml::table root;
  try {
    root = toml::parse(text, source);
  } catch (const toml::parse_error& e) {
    throw ConfigError(fmt::format("{}:{}:{}: {}", source, e.source().begin.line, e.source().begin.column, e.description()));
  }
  AlertThresholds t;
  const toml::node* node = root.get("alerts");
  if (!node) return t;
  const toml::table* table = node->as_table();
  if (!table) throw ConfigError(fmt::format("{}: alerts: expected a table [alerts] (got {})", source, toml_type_name(*node)));
  for (auto&& [k, v] : *table) {
    const std::string name(k.str());
    const auto line = v.source().begin.line;
    const auto fail = [&](const std::string& what) {
      throw ConfigError(fmt::format("{}:{}: [alerts] {}: {}", source, line, name, what));
    };
    if (name == "deadline") {
      if (const auto* dt = v.as_date_time()) t.deadline = unix_time(dt->get());
      else if (v.is_number()) t.deadline = v.value<double>().value_or(0);
      else fail(fmt::format("expected a date-time (2026-11-26T08:00:00, with or without an offset) or Unix seconds (got {})",
                            toml_type_name(v)));
      if (!(t.deadline > 0 && std::isfinite(t.deadline))) fail(fmt::format("expected a time after 1970 (got {})", t.deadline));
      continue;
    }
    const Key* key = nullptr;
    for (const auto& candidate : keys())
      if (name == candidate.name) key = &candidate;
    if (!key) {
      std::string known = "deadline";
      for (const auto& candidate : keys()) known += std::string(", ") + candidate.name;
      fail("unknown key (known: " + known + ")");
    }
    std::visit(
        [&](auto member) {
          using T = std::remove_reference_t<decltype(t.*member)>;
          if constexpr (std::is_same_v<T, std::string>) {
            if (!v.is_string()) fail(fmt::format("expected a string (got {})", toml_type_name(v)));
            t.*member = *v.value<std::string>();
          } else if constexpr (std::is_same_v<T, int64_t>) {
            if (!v.is_integer()) fail(fmt::format("expected an integer >= {} (got {})", key->min, toml_type_name(v)));
            t.*member = *v.value<int64_t>();
            if (static_cast<double>(t.*member) < key->min) fail(fmt::format("expected an integer >= {} (got {})", key->min, t.*member));
          } else {
            if (!v.is_number()) fail(fmt::format("expected a number >= {} (got {})", key->min, toml_type_name(v)));
            t.*member = *v.value<double>();
            // TOML has nan and inf: NaN passes no comparison, so it would turn the rule off unseen.
            if (!(t.*member >= key->min) || !std::isfinite(t.*member))
              fail(fmt::format("expected a finite number >= {} (got {})", key->min, t.*member));
          }
        },
        key->field);
  }
  const auto share = [&](const char* key, double v) {
    if (v > 1) throw ConfigError(fmt::format("{}: [alerts] {}: expected a share between 0 and 1 (got {})", source, key, v));
  };
  share("idle_utilization", t.idle_utilization);
  share("memory_fraction", t.memory_fraction);
  return t;
}

AlertThresholds read_alert_config(const std::string& path) {
  return parse_alert_config(read_file(path), path);
}

std::string alert_config_help() {
  const AlertThresholds d;
  std::string out = "  deadline = <date-time | Unix seconds>   deadline: the queue's estimated finish passes this\n";
  for (const auto& k : keys()) {
    const std::string value = std::visit(
        [&](auto member) -> std::string {
          using T = std::remove_reference_t<decltype(d.*member)>;
          if constexpr (std::is_same_v<T, std::string>) return "\"" + d.*member + "\"";
          else return fmt::format("{}", d.*member);
        },
        k.field);
    out += fmt::format("  {} = {}   {}\n", k.name, value, k.help);
  }
  return out;
}

}  // namespace ragmig::monitor
