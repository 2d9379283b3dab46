// bench/eval: `ragmig mine`'s near-duplicate test (the word-set Jaccard of every candidate with the query's
// positives) with hashed word sets (eval::word_set) beside the string word sets they replaced, on the same pairs of
// the same BM25 ranking in the same run: seconds of each, the ratio, and whether they took the same decision for
// every pair. Then mine_negatives as a whole, and the retrieval before it, for scale.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cctype>
#include <chrono>

#include "eval/evaluate.h"
#include "eval/mine.h"
#include "text/beir.h"
#include "text/pairs.h"

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// The reference: the word sets as they were, sorted unique lowercased words as strings.
std::vector<std::string> string_word_set(const std::string& text) {
  std::vector<std::string> words;
  std::string word;
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u) || u >= 0x80) {
      word.push_back(static_cast<char>(std::tolower(u)));
    } else if (!word.empty()) {
      words.push_back(std::move(word));
      word.clear();
    }
  }
  if (!word.empty()) words.push_back(std::move(word));
  std::sort(words.begin(), words.end());
  words.erase(std::unique(words.begin(), words.end()), words.end());
  return words;
}

double string_jaccard(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  if (a.empty() && b.empty()) return 1.0;
  size_t common = 0;
  for (size_t i = 0, j = 0; i < a.size() && j < b.size();) {
    if (a[i] < b[j])
      ++i;
    else if (b[j] < a[i])
      ++j;
    else
      ++common, ++i, ++j;
  }
  return static_cast<double>(common) / static_cast<double>(a.size() + b.size() - common);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace ragmig;
  CLI::App app{"ragmig mine's near-duplicate test: hashed word sets beside string word sets"};
  std::string data = RAGMIG_SOURCE_DIR "/../shared/data/beir/squad-train", split = "train";
  int64_t depth = 100, candidates = 10;
  double max_overlap = 0.8;
  app.add_option("--data", data, "BEIR folder")->capture_default_str();
  app.add_option("--split", split, "qrels split whose queries are ranked")->capture_default_str();
  app.add_option("--depth", depth, "BM25 ranking depth")->capture_default_str();
  app.add_option("--candidates", candidates, "candidates per query compared with its positives")->capture_default_str();
  app.add_option("--max-overlap", max_overlap, "the Jaccard at which a candidate is a duplicate")
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  eval::EvalOptions o;
  o.data_dir = data;
  o.split = split;
  o.k = o.candidates = depth;
  o.metrics = {eval::parse_metric("recall@" + std::to_string(depth))};
  o.keep_run = true;
  o.cache_dir = "";
  auto t = Clock::now();
  const eval::EvalResult ranked = eval::evaluate(o);
  const double retrieval_s = since(t);
  const text::BeirFolder beir = text::read_beir(data);
  const eval::Judgments judgments =
      eval::resolve_judgments(text::read_qrels(text::qrels_path(data, split)), beir, nullptr);
  std::string scratch;
  const auto text_of = [&](const std::string& id) -> const std::string& {
    scratch = text::document_text(beir.corpus.docs[static_cast<size_t>(beir.corpus.index_of.at(id))]);
    return scratch;
  };

  // The (candidate, positive) texts the test compares: each query's top candidates that are not its positives.
  std::vector<std::pair<std::string, std::vector<std::string>>> work;  // candidate text, its query's positive texts
  for (const auto& [qid, grades] : judgments.by_query) {
    const auto list = ranked.run.find(qid);
    if (list == ranked.run.end()) continue;
    std::vector<std::string> positives;
    for (const auto& [doc, grade] : grades)
      if (grade > 0) positives.push_back(text_of(doc));
    int64_t taken = 0;
    for (const auto& hit : list->second) {
      if (taken == candidates) break;
      if (const auto g = grades.find(hit.doc_id); g != grades.end() && g->second > 0) continue;
      work.emplace_back(text_of(hit.doc_id), positives);
      ++taken;
    }
  }
  int64_t pairs = 0;
  for (const auto& w : work) pairs += static_cast<int64_t>(w.second.size());

  // As mine_negatives does it: positives' sets once per query (here once per candidate, alike in both), the
  // candidate's once.
  std::vector<char> by_strings, by_hashes;
  t = Clock::now();
  for (const auto& [candidate, positives] : work) {
    const auto words = string_word_set(candidate);
    bool duplicate = false;
    for (const auto& p : positives) duplicate = duplicate || string_jaccard(words, string_word_set(p)) >= max_overlap;
    by_strings.push_back(duplicate);
  }
  const double strings_s = since(t);
  t = Clock::now();
  for (const auto& [candidate, positives] : work) {
    const auto words = eval::word_set(candidate);
    bool duplicate = false;
    for (const auto& p : positives) duplicate = duplicate || eval::jaccard(words, eval::word_set(p)) >= max_overlap;
    by_hashes.push_back(duplicate);
  }
  const double hashes_s = since(t);
  const auto duplicates = std::count(by_hashes.begin(), by_hashes.end(), 1);

  t = Clock::now();
  eval::MineReport report;
  eval::mine_negatives(ranked.run, judgments, text_of, eval::MineOptions{}, &report);
  const double mine_s = since(t);

  fmt::print("data {} ({} split): {} queries ranked by BM25 to depth {} in {:.2f} s\n", data, split,
             ranked.report.queries, depth, retrieval_s);
  fmt::print("near-duplicate test on {} candidates x their positives ({} pairs, {} duplicates at {}):\n", work.size(),
             pairs, duplicates, max_overlap);
  fmt::print("  {:<28} {:>8.3f} s\n", "string word sets (reference)", strings_s);
  fmt::print("  {:<28} {:>8.3f} s   {:.2f}x   same decisions: {}\n", "hashed word sets", hashes_s, strings_s / hashes_s,
             by_strings == by_hashes ? "yes" : "NO");
  fmt::print("mine_negatives (8 negatives, default options): {:.2f} s for {} examples\n", mine_s, report.examples);
  return by_strings == by_hashes ? 0 : 1;
}
