// The [alerts] table of a sweep file or of `ragmig run --alerts FILE`: thresholds of the alert rules and the
// command that hears about each alert. Keys it does not know, and values of the wrong type or range, are a
// ConfigError naming the file, the table and the key.
#pragma once

#include <string>

#include "monitor/alert_rules.h"

namespace ragmig::monitor {

/// The thresholds in `path`'s [alerts] table (every other table is left to its own reader); the defaults
/// where a key or the table is absent. `deadline` is a TOML date-time (with an offset, or local time), or
/// Unix seconds. Throws IoError (unreadable) or ConfigError.
AlertThresholds read_alert_config(const std::string& path);
/// The same, from TOML text; `source` names it in errors.
AlertThresholds parse_alert_config(const std::string& toml_text, const std::string& source);

/// One line per key with its default, for --help.
std::string alert_config_help();

}  // namespace ragmig::monitor
