// Seeded hold-out of training queries (see query_holdout.h).
#include "text/query_holdout.h"

#include <algorithm>
#include <unordered_set>
#include <utility>

#include "core/error.h"
#include "core/splitmix.h"

namespace ragmig::text {

std::vector<std::string> carve_queries(std::vector<std::string> candidates, int64_t count, uint64_t seed) {
  RAGMIG_CHECK(count >= 0);
  std::sort(candidates.begin(), candidates.end());
  candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());
  std::vector<std::pair<uint64_t, std::string>> keyed;
  keyed.reserve(candidates.size());
  for (auto& id : candidates) {
    uint64_t h = seed;
    for (const char c : id) h = splitmix64(h ^ static_cast<unsigned char>(c));
    keyed.emplace_back(h, std::move(id));
  }
  std::sort(keyed.begin(), keyed.end());
  if (static_cast<int64_t>(keyed.size()) > count) keyed.resize(static_cast<size_t>(count));
  std::vector<std::string> out;
  out.reserve(keyed.size());
  for (auto& [h, id] : keyed) out.push_back(std::move(id));
  return out;
}

std::vector<std::string> hold_out_queries(std::vector<TrainingExample>& examples, int64_t count,
                                          const std::string& source) {
  if (count <= 0) return {};
  std::vector<std::string> ids;
  ids.reserve(examples.size());
  for (size_t i = 0; i < examples.size(); ++i) {
    if (examples[i].query_id.empty())
      throw DataError(source + ": data.holdout_queries needs a query id for every example; example " +
                      std::to_string(i + 1) + " has none (pairs rows carry it as \"query_id\", as ragmig mine writes)");
    ids.push_back(examples[i].query_id);
  }
  std::vector<std::string> held = carve_queries(ids, count);
  const std::unordered_set<std::string> out(held.begin(), held.end());
  std::erase_if(examples, [&](const TrainingExample& e) { return out.count(e.query_id) > 0; });
  if (examples.empty())
    throw DataError(source + ": data.holdout_queries = " + std::to_string(count) + " holds out all " +
                    std::to_string(held.size()) + " queries; none is left to train on");
  std::sort(held.begin(), held.end());
  return held;
}

}  // namespace ragmig::text
