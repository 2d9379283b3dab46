// Groups of examples joined by a positive or a query text (see batch_keys.h): union-find over the examples.
#include "text/batch_keys.h"

#include <algorithm>
#include <numeric>
#include <string>
#include <string_view>
#include <unordered_map>

namespace ragmig::text {

std::vector<int64_t> batch_keys(const std::vector<TrainingExample>& examples) {
  std::vector<size_t> parent(examples.size());
  std::iota(parent.begin(), parent.end(), size_t{0});
  const auto root = [&](size_t i) {
    while (parent[i] != i) i = parent[i] = parent[parent[i]];  // path halving
    return i;
  };
  const auto join = [&](size_t a, size_t b) {
    a = root(a), b = root(b);
    if (a != b) parent[std::max(a, b)] = std::min(a, b);  // the earliest example is a group's root
  };
  // Passages by key and by text: a "pos" array's other passages have no key, and a corpus may hold one text
  // under two ids.
  std::unordered_map<int64_t, size_t> by_positive;
  std::unordered_map<std::string_view, size_t> by_query, by_passage;  // views of the examples' own texts
  for (size_t i = 0; i < examples.size(); ++i) {
    const TrainingExample& e = examples[i];
    join(i, by_positive.emplace(e.positive_key, i).first->second);
    join(i, by_query.emplace(e.query, i).first->second);
    join(i, by_passage.emplace(e.positive, i).first->second);
    for (const auto& p : e.more_positives) join(i, by_passage.emplace(p, i).first->second);
  }
  std::vector<int64_t> keys(examples.size());
  std::unordered_map<size_t, int64_t> key_of_root;
  for (size_t i = 0; i < examples.size(); ++i)
    keys[i] = key_of_root.emplace(root(i), static_cast<int64_t>(key_of_root.size())).first->second;
  return keys;
}

}  // namespace ragmig::text
