// A BEIR folder from a pairs file (see beir_from_pairs.h).
#include "text/beir_from_pairs.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "core/atomic_file.h"
#include "core/error.h"
#include "text/query_holdout.h"

namespace ragmig::text {

using nlohmann::json;

PairsFolder beir_from_pairs(const std::vector<TrainingExample>& examples, int64_t test_queries, uint64_t seed,
                            const std::string& source) {
  RAGMIG_CHECK(test_queries >= 0);
  const auto with_ids =
      std::count_if(examples.begin(), examples.end(), [](const auto& e) { return !e.query_id.empty(); });
  if (with_ids != 0 && with_ids != static_cast<int64_t>(examples.size()))
    throw DataError(fmt::format("{}: {} of {} examples have a query_id; give every one an id, or none (ids are then "
                                "made from the query texts)", source, with_ids, examples.size()));
  PairsFolder out;
  std::unordered_map<std::string, size_t> query_at;          // id -> position in out.queries
  std::unordered_map<std::string, std::string> id_of_query;  // text -> made id (rows without ids)
  std::unordered_map<std::string, std::string> id_of_doc;    // text -> id
  const auto doc = [&](const std::string& text) -> const std::string& {
    const auto [it, added] = id_of_doc.emplace(text, "d" + std::to_string(id_of_doc.size() + 1));
    if (added) out.corpus.push_back({it->second, "", text});
    return it->second;
  };
  std::vector<std::string> query_of(examples.size());             // per example: its query's id
  std::vector<std::vector<std::string>> judged_of(examples.size());  // per example: its positives' ids
  for (size_t i = 0; i < examples.size(); ++i) {
    const TrainingExample& e = examples[i];
    const auto made = [&] {
      return id_of_query.emplace(e.query, "q" + std::to_string(id_of_query.size() + 1)).first->second;
    };
    std::string id = with_ids ? e.query_id : made();
    if (id.find_first_of("\t\r\n") != std::string::npos)
      throw DataError(fmt::format("{}: example {}: query_id {} holds a tab or a line break (qrels are TSV)", source,
                                  i + 1, json(id).dump()));
    const auto [at, added] = query_at.emplace(id, out.queries.size());
    if (added) out.queries.push_back({id, e.query});
    else if (out.queries[at->second].text != e.query)
      throw DataError(fmt::format("{}: example {}: query_id \"{}\" names two query texts", source, i + 1, id));
    query_of[i] = std::move(id);
    judged_of[i].push_back(doc(e.positive));
    for (const auto& positive : e.more_positives) judged_of[i].push_back(doc(positive));
    for (const auto& negative : e.negatives) doc(negative);
  }

  // Carved by the rows' ids, or where ids are made (by first appearance) by the query texts: the same test queries
  // whatever the order of the rows.
  std::vector<std::string> keys;
  std::unordered_map<std::string, std::string> id_of_key;
  keys.reserve(out.queries.size());
  for (const auto& q : out.queries) {
    keys.push_back(with_ids ? q.id : q.text);
    id_of_key.emplace(keys.back(), q.id);
  }
  const std::vector<std::string> carved = carve_queries(std::move(keys), test_queries, seed);
  if (!carved.empty() && carved.size() == out.queries.size())
    throw DataError(fmt::format("{}: a test split of {} queries takes all {}; none is left to train on", source,
                                test_queries, out.queries.size()));
  std::unordered_set<std::string> test;
  for (const auto& key : carved) test.insert(id_of_key.at(key));
  std::set<std::pair<std::string, std::string>> judged;
  for (size_t i = 0; i < examples.size(); ++i) {
    const std::string& query = query_of[i];
    const bool in_test = test.count(query) > 0;
    for (const auto& positive : judged_of[i])
      if (judged.emplace(query, positive).second) (in_test ? out.test : out.train).push_back({query, positive, 1, 0});
    if (in_test) continue;
    out.train_pairs.push_back(examples[i]);
    out.train_pairs.back().query_id = query;
  }
  return out;
}

namespace {

std::string qrels_tsv(const std::vector<QrelEntry>& entries) {
  std::string out = "query-id\tcorpus-id\tscore\n";
  for (const auto& e : entries) out += fmt::format("{}\t{}\t{}\n", e.query_id, e.doc_id, e.score);
  return out;
}

}  // namespace

void write_pairs_folder(const PairsFolder& folder, const std::string& dir) {
  write_folder_atomically(dir, [&](const std::string& tmp) {
    const std::filesystem::path root(tmp);
    std::string corpus, queries, pairs;
    for (const auto& d : folder.corpus)
      corpus += json{{"_id", d.id}, {"title", d.title}, {"text", d.text}}.dump() + "\n";
    for (const auto& q : folder.queries) queries += json{{"_id", q.id}, {"text", q.text}}.dump() + "\n";
    for (const auto& e : folder.train_pairs) {
      json row = {{"query_id", e.query_id}, {"query", e.query}, {"negatives", e.negatives}};
      if (e.more_positives.empty()) {
        row["positive"] = e.positive;
      } else {  // FlagEmbedding's "pos": all are trained on (one drawn a step) and judged
        row["pos"] = json::array({e.positive});
        for (const auto& p : e.more_positives) row["pos"].push_back(p);
      }
      pairs += row.dump() + "\n";
    }
    write_file_atomic(root / "corpus.jsonl", corpus);
    write_file_atomic(root / "queries.jsonl", queries);
    std::filesystem::create_directory(root / "qrels");
    write_file_atomic(root / "qrels" / "train.tsv", qrels_tsv(folder.train));
    if (!folder.test.empty()) write_file_atomic(root / "qrels" / "test.tsv", qrels_tsv(folder.test));
    std::filesystem::create_directory(root / "pairs");
    write_file_atomic(root / "pairs" / "train.jsonl", pairs);
  });
}

}  // namespace ragmig::text
