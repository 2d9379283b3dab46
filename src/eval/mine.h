// Hard negatives for contrastive training, mined from a retriever's ranking (BM25's or a model's top-k, as a
// TREC run): for every judged-relevant (query, document) pair, the best-ranked documents that are neither
// judged relevant for that query nor near-duplicates of one of its positives — the unjudged copies and
// paraphrases that would otherwise teach the model to push a right answer away. Pure and torch-free; `ragmig
// mine` runs the retriever and writes the result as the trainer's pairs JSONL (data.pairs).
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "eval/qrels.h"
#include "eval/run_file.h"

namespace ragmig::eval {

struct MineOptions {
  int64_t negatives = 8;     ///< per example, at most (fewer where the ranking runs out)
  int64_t skip_top = 0;      ///< ranks passed over first: the very top holds most unjudged positives
  double max_overlap = 0.8;  ///< Jaccard of word sets with any positive at or above which a candidate is a
                             ///< near-duplicate and not taken (1 = only exact word-set copies)
  /// Positive-aware mining (NV-Retriever's TopK-PercPos; sentence-transformers' mine_hard_negatives, whose rules
  /// these are): a candidate is taken only if its score s is at most p - |p| x relative_margin and at most
  /// p - absolute_margin, p the score of the query's lowest-scored positive; one that scores closer to a positive is
  /// most likely an unjudged positive. Scores are the ranking's. Negative: off.
  double relative_margin = -1;
  double absolute_margin = -1;
  bool positive_aware() const { return relative_margin >= 0 || absolute_margin >= 0; }
  /// Bounds on a negative's own score (sentence-transformers' max_score / min_score): a candidate scoring above
  /// max_score (most likely an unjudged positive) or below min_score (too easy to teach anything) is not taken.
  double max_score = std::numeric_limits<double>::infinity();
  double min_score = -std::numeric_limits<double>::infinity();
};

struct MinedExample {
  std::string query_id, positive_id;
  std::vector<std::string> negative_ids;  ///< best-ranked first
  bool operator==(const MinedExample&) const = default;
};

struct MineReport {
  int64_t examples = 0;            ///< judged-relevant (query, document) pairs with a ranking
  int64_t queries_without_run = 0; ///< queries with positives the run has no list for (left out)
  int64_t relevant_skipped = 0;    ///< candidates passed over because judged relevant for the query
  int64_t duplicates_skipped = 0;  ///< candidates passed over as near-duplicates of a positive
  int64_t short_examples = 0;      ///< examples with fewer negatives than asked for
  int64_t margin_skipped = 0;      ///< candidates passed over as scoring within the margin of a positive
  int64_t score_skipped = 0;       ///< candidates passed over as scoring above max_score or below min_score
  /// Documents with blank text (core/strings.h's is_blank), passed over as candidates and left out as positives: the
  /// trainer refuses a blank text in a pairs file (text/pairs.h).
  int64_t blank_skipped = 0;
  /// Queries (positive-aware mining) with a positive the ranking does not list: every listed candidate outscores
  /// it, so none is taken (a deeper ranking finds some).
  int64_t positives_below_depth = 0;
};

/// The lowercased alphanumeric words of a text (any other byte separates; bytes of UTF-8 letters stay inside words),
/// each as its 64-bit FNV-1a hash, sorted and unique: what the near-duplicate test compares. Hashes rather than
/// strings: no allocation per word, and integer compares (mining a corpus computes one per candidate); two distinct
/// words of a pair of documents collide with a chance of about 1e-16.
using WordSet = std::vector<uint64_t>;
WordSet word_set(const std::string& text);

/// |a ∩ b| / |a ∪ b| of two word sets; 1 for two empty sets.
double jaccard(const WordSet& a, const WordSet& b);

/// ConfigError (naming the command-line option) for options mine_negatives refuses; checked before any ranking.
void check_mine_options(const MineOptions& options);

/// One example per judgment with grade > 0 whose query has a list in `run`, in judgment order (queries by id,
/// documents by id), each with the same negatives for its query: the run's documents from rank skip_top + 1 on,
/// skipping every document judged relevant for the query (grade > 0) and every document whose word set overlaps
/// a positive's by max_overlap or more (and, positive-aware, every document that scores within the margins of the
/// query's lowest-scored positive, and every document scoring outside [min_score, max_score]), up to `negatives`;
/// a document with blank text is neither a positive (no example) nor a negative.
/// `text_of(doc_id)` gives a document's text (it throws for an unknown id). Deterministic: the same inputs give
/// the same output. ConfigError for bad options (check_mine_options).
std::vector<MinedExample> mine_negatives(const TrecRun& run, const Judgments& judgments,
                                         const std::function<const std::string&(const std::string&)>& text_of,
                                         const MineOptions& options, MineReport* report = nullptr);

}  // namespace ragmig::eval
