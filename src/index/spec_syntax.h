// The grammar shared by ragmig's spec strings: `Name` or `Name(key=value,...)`, e.g. `BM25(k1=0.9,b=0.4)`,
// `HNSW32(efSearch=128)`, `RRF(k=60)`. Numbers are printed in their shortest round-tripping form so that
// to_string(parse(s)) == s for every canonical spec.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ragmig::index {

struct SpecParts {
  std::string head;                                         ///< text before '(' (the whole spec without one)
  std::vector<std::pair<std::string, std::string>> params;  ///< key=value pairs in written order
};

/// Splits a spec; `what` names the spec kind in errors. Throws ConfigError for unbalanced parentheses,
/// an empty key or value, a pair without '=', a repeated key, or text after ')'.
SpecParts split_spec(std::string_view spec, const std::string& what);

/// Parses a finite number or a (non-negative when `non_negative`) integer value of `key`; ConfigError
/// naming the spec and key otherwise.
double spec_number(const std::string& value, const std::string& key, const std::string& spec);
int64_t spec_integer(const std::string& value, const std::string& key, const std::string& spec, int64_t min_value);

/// Shortest decimal text that reads back as the same double (0.9 -> "0.9", 60 -> "60").
std::string format_number(double value);

/// `head` alone, or `head(k1=v1,k2=v2)` when params is non-empty.
std::string join_spec(const std::string& head, const std::vector<std::pair<std::string, std::string>>& params);

}  // namespace ragmig::index
