#include "model/pooling_mode.h"

#include <utility>

#include "core/error.h"

namespace ragmig::model {
namespace {

const std::pair<Pooling, const char*> kPoolingNames[] = {{Pooling::Mean, "mean"},
                                                         {Pooling::Cls, "cls"},
                                                         {Pooling::Max, "max"},
                                                         {Pooling::MeanSqrtLen, "mean_sqrt_len_tokens"},
                                                         {Pooling::LastToken, "lasttoken"}};

}  // namespace

std::string to_string(Pooling pooling) {
  for (const auto& [p, name] : kPoolingNames)
    if (p == pooling) return name;
  return "?";
}

std::optional<Pooling> pooling_named(std::string_view name) {
  for (const auto& [p, n] : kPoolingNames)
    if (name == n) return p;
  return std::nullopt;
}

Pooling parse_pooling(const std::string& text) {
  if (const auto p = pooling_named(text)) return *p;
  throw DataError("unknown pooling \"" + text + "\" (expected " + pooling_choices() + ")");
}

std::string pooling_choices() {
  std::string out;
  const size_t n = std::size(kPoolingNames);
  for (size_t i = 0; i < n; ++i) out += std::string(i == 0 ? "" : i + 1 == n ? " or " : ", ") + kPoolingNames[i].second;
  return out;
}

}  // namespace ragmig::model
