// Hard-negative mining from a ranking (see mine.h).
#include "eval/mine.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/error.h"
#include "core/strings.h"

namespace ragmig::eval {

WordSet word_set(const std::string& text) {
  constexpr uint64_t kOffset = 14695981039346656037ull, kPrime = 1099511628211ull;  // FNV-1a, 64 bits
  WordSet words;
  uint64_t hash = kOffset;
  bool in_word = false;
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    const auto lower = static_cast<unsigned char>(u | 0x20);  // 'A'-'Z' to 'a'-'z' (std::tolower, without a locale)
    const bool letter = lower >= 'a' && lower <= 'z';
    if (letter || (u >= '0' && u <= '9') || u >= 0x80) {
      hash = (hash ^ (letter ? lower : u)) * kPrime;
      in_word = true;
    } else if (in_word) {
      words.push_back(hash);
      hash = kOffset;
      in_word = false;
    }
  }
  if (in_word) words.push_back(hash);
  std::sort(words.begin(), words.end());
  words.erase(std::unique(words.begin(), words.end()), words.end());
  return words;
}

double jaccard(const WordSet& a, const WordSet& b) {
  if (a.empty() && b.empty()) return 1.0;
  size_t common = 0;
  for (size_t i = 0, j = 0; i < a.size() && j < b.size();) {
    if (a[i] < b[j]) ++i;
    else if (b[j] < a[i]) ++j;
    else ++common, ++i, ++j;
  }
  return static_cast<double>(common) / static_cast<double>(a.size() + b.size() - common);
}

void check_mine_options(const MineOptions& options) {
  if (options.negatives < 1) throw ConfigError("--negatives must be at least 1");
  if (options.skip_top < 0) throw ConfigError("--skip-top must be 0 or more");
  if (!(options.max_overlap > 0 && options.max_overlap <= 1))
    throw ConfigError("--max-overlap must be in (0, 1]: the word-set Jaccard at which a candidate is a near-duplicate");
  if (options.relative_margin >= 1 || std::isnan(options.relative_margin))
    throw ConfigError("--relative-margin must be in [0, 1): a negative scores at least margin x |p| below the positive's p");
  if (!std::isfinite(options.absolute_margin))
    throw ConfigError("--absolute-margin must be a finite score difference, >= 0");
  if (std::isnan(options.max_score) || std::isnan(options.min_score) || options.min_score > options.max_score)
    throw ConfigError("--min-score and --max-score must be numbers with --min-score <= --max-score");
}

std::vector<MinedExample> mine_negatives(const TrecRun& run, const Judgments& judgments,
                                         const std::function<const std::string&(const std::string&)>& text_of,
                                         const MineOptions& options, MineReport* report) {
  check_mine_options(options);
  MineReport counts;
  std::vector<MinedExample> out;
  for (const auto& [query_id, grades] : judgments.by_query) {
    std::vector<std::string> positives;
    for (const auto& [doc_id, grade] : grades) {
      if (grade <= 0) continue;
      if (is_blank(text_of(doc_id)))
        ++counts.blank_skipped;
      else
        positives.push_back(doc_id);
    }
    if (positives.empty()) continue;
    std::sort(positives.begin(), positives.end());  // judgments are a hash map: fix the order
    const auto ranked = run.find(query_id);
    if (ranked == run.end()) {
      ++counts.queries_without_run;
      continue;
    }
    std::vector<WordSet> positive_words;
    for (const auto& id : positives) positive_words.push_back(word_set(text_of(id)));
    const auto& list = ranked->second;
    // Positive-aware: the highest score a negative may have, from the lowest-scored positive the ranking lists.
    double ceiling = std::numeric_limits<double>::infinity();
    if (options.positive_aware()) {
      size_t listed = 0;
      double lowest = std::numeric_limits<double>::infinity();
      for (const auto& doc : list)
        if (std::binary_search(positives.begin(), positives.end(), doc.doc_id)) {
          ++listed;
          lowest = std::min(lowest, doc.score);
        }
      if (listed < positives.size()) {
        ++counts.positives_below_depth;
        ceiling = -std::numeric_limits<double>::infinity();
      } else {
        // Less |score| x margin, not x (1 - margin), which would raise the ceiling of a negative score (as ST has it).
        if (options.relative_margin >= 0)
          ceiling = std::min(ceiling, lowest - std::fabs(lowest) * options.relative_margin);
        if (options.absolute_margin >= 0) ceiling = std::min(ceiling, lowest - options.absolute_margin);
      }
    }
    std::vector<std::string> negatives;
    for (size_t rank = static_cast<size_t>(options.skip_top);
         rank < list.size() && static_cast<int64_t>(negatives.size()) < options.negatives; ++rank) {
      const std::string& id = list[rank].doc_id;
      const auto judged = grades.find(id);
      if (judged != grades.end() && judged->second > 0) {
        ++counts.relevant_skipped;
        continue;
      }
      const std::string& text = text_of(id);
      if (is_blank(text)) {
        ++counts.blank_skipped;
        continue;
      }
      const auto words = word_set(text);
      const bool duplicate = std::any_of(positive_words.begin(), positive_words.end(),
                                         [&](const auto& p) { return jaccard(words, p) >= options.max_overlap; });
      if (duplicate) {
        ++counts.duplicates_skipped;
        continue;
      }
      if (list[rank].score > ceiling) {
        ++counts.margin_skipped;
        continue;
      }
      if (list[rank].score > options.max_score || list[rank].score < options.min_score) {
        ++counts.score_skipped;
        continue;
      }
      negatives.push_back(id);
    }
    for (const auto& positive : positives) {
      out.push_back({query_id, positive, negatives});
      ++counts.examples;
      if (static_cast<int64_t>(negatives.size()) < options.negatives) ++counts.short_examples;
    }
  }
  if (report) *report = counts;
  return out;
}

}  // namespace ragmig::eval
