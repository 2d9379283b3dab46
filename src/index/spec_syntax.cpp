// Spec string grammar (see spec_syntax.h).
#include "index/spec_syntax.h"

#include <charconv>
#include <set>

#include "core/error.h"
#include "core/strings.h"

namespace ragmig::index {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

}  // namespace

SpecParts split_spec(std::string_view spec, const std::string& what) {
  // Built piecewise: GCC 12 warns falsely (-Wrestrict) on "'" + std::string(...).
  std::string quoted(1, '\'');
  quoted.append(spec).push_back('\'');
  SpecParts parts;
  const size_t open = spec.find('(');
  if (open == std::string_view::npos) {
    if (spec.find(')') != std::string_view::npos) throw ConfigError(what + " spec " + quoted + ": ')' without '('");
    parts.head = trim(spec);
    if (parts.head.empty()) throw ConfigError("empty " + what + " spec");
    return parts;
  }
  if (spec.back() != ')') throw ConfigError(what + " spec " + quoted + ": expected ')' at the end");
  parts.head = trim(spec.substr(0, open));
  if (parts.head.empty()) throw ConfigError(what + " spec " + quoted + ": missing name before '('");
  std::string_view inner = spec.substr(open + 1, spec.size() - open - 2);
  if (inner.find_first_of("()") != std::string_view::npos)
    throw ConfigError(what + " spec " + quoted + ": nested parentheses");
  std::set<std::string> seen;
  while (!inner.empty()) {
    const size_t comma = inner.find(',');
    std::string_view item = trim(inner.substr(0, comma));
    const size_t eq = item.find('=');
    if (eq == std::string_view::npos) throw ConfigError(what + " spec " + quoted + ": expected key=value, got '" + std::string(item) + "'");
    std::string key(trim(item.substr(0, eq))), value(trim(item.substr(eq + 1)));
    if (key.empty() || value.empty()) throw ConfigError(what + " spec " + quoted + ": empty key or value in '" + std::string(item) + "'");
    if (!seen.insert(key).second) throw ConfigError(what + " spec " + quoted + ": '" + key + "' given twice");
    parts.params.emplace_back(std::move(key), std::move(value));
    if (comma == std::string_view::npos) break;
    inner.remove_prefix(comma + 1);
    if (trim(inner).empty()) throw ConfigError(what + " spec " + quoted + ": trailing ','");
  }
  return parts;
}

double spec_number(const std::string& value, const std::string& key, const std::string& spec) {
  if (const auto d = finite_number(value)) return *d;
  throw ConfigError("spec '" + spec + "': " + key + " expects a number, got '" + value + "'");
}

int64_t spec_integer(const std::string& value, const std::string& key, const std::string& spec, int64_t min_value) {
  const auto v = whole_number(value);
  if (!v) throw ConfigError("spec '" + spec + "': " + key + " expects an integer, got '" + value + "'");
  if (*v < min_value)
    throw ConfigError("spec '" + spec + "': " + key + " must be at least " + std::to_string(min_value) + ", got " + value);
  return *v;
}

std::string format_number(double value) {
  char buf[64];
  auto [ptr, ec] = std::to_chars(buf, buf + sizeof buf, value);
  RAGMIG_CHECK(ec == std::errc());
  return std::string(buf, ptr);
}

std::string join_spec(const std::string& head, const std::vector<std::pair<std::string, std::string>>& params) {
  if (params.empty()) return head;
  std::string out = head + "(";
  for (size_t i = 0; i < params.size(); ++i) {
    if (i) out += ",";
    out += params[i].first + "=" + params[i].second;
  }
  return out + ")";
}

}  // namespace ragmig::index
