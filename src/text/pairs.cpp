// Training-example readers. Positive keys are assigned here, once, so that samplers downstream can work on
// integers and never compare passage texts.
#include "text/pairs.h"

#include <unordered_map>

#include "core/error.h"
#include "text/json_rows.h"

namespace ragmig::text {

using nlohmann::json;

namespace {

std::vector<std::string> string_array(const json& row, const char* key, const std::string& file, int64_t line) {
  const json& v = row.at(key);
  if (!v.is_array())
    throw DataError(file, line, std::string("field \"") + key + "\" must be an array of strings, got " +
                                    v.type_name());
  std::vector<std::string> out;
  out.reserve(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    if (!v[i].is_string())
      throw DataError(file, line, std::string("field \"") + key + "\"[" + std::to_string(i) +
                                      "] must be a string, got " + v[i].type_name());
    out.push_back(v[i].get<std::string>());
  }
  return out;
}

}  // namespace

std::vector<TrainingExample> read_pairs_jsonl(const std::string& path, int64_t max_rows) {
  std::vector<TrainingExample> examples;
  std::unordered_map<std::string, int64_t> keys;
  for_each_json_row(path, [&](const json& row, const std::string& file, int64_t line) {
    TrainingExample ex;
    if (!row.contains("query")) throw DataError(file, line, "missing field \"query\"");
    ex.query = json_string_field(row, "query", file, line, /*required=*/true);
    if (row.contains("query_id")) ex.query_id = json_id_field(row, "query_id", file, line);
    if (row.contains("positive")) {
      if (!row["positive"].is_string())
        throw DataError(file, line, std::string("field \"positive\" must be a string, got ") +
                                        row["positive"].type_name());
      ex.positive = row["positive"].get<std::string>();
    } else if (row.contains("pos")) {
      std::vector<std::string> pos = string_array(row, "pos", file, line);
      if (pos.empty()) throw DataError(file, line, "field \"pos\" is empty");
      ex.positive = std::move(pos.front());
    } else {
      throw DataError(file, line, "missing field \"positive\" (or \"pos\")");
    }
    if (row.contains("negatives")) ex.negatives = string_array(row, "negatives", file, line);
    else if (row.contains("neg")) ex.negatives = string_array(row, "neg", file, line);
    ex.positive_key = keys.emplace(ex.positive, static_cast<int64_t>(keys.size())).first->second;
    examples.push_back(std::move(ex));
  }, max_rows);
  return examples;
}

std::string document_text(const Document& doc) {
  if (doc.title.empty()) return doc.text;
  std::string s;
  s.reserve(doc.title.size() + 1 + doc.text.size());
  s += doc.title;
  s += ' ';
  s += doc.text;
  return s;
}

std::vector<TrainingExample> examples_from_beir(const BeirFolder& beir, const Qrels& qrels) {
  std::vector<TrainingExample> examples;
  examples.reserve(qrels.entries.size());
  for (const QrelEntry& e : qrels.entries) {
    if (e.score <= 0) continue;
    auto q = beir.query_index.find(e.query_id);
    if (q == beir.query_index.end())
      throw DataError(qrels.path, e.line, "unknown query id '" + e.query_id + "'");
    auto d = beir.corpus.index_of.find(e.doc_id);
    if (d == beir.corpus.index_of.end())
      throw DataError(qrels.path, e.line, "unknown corpus id '" + e.doc_id + "'");
    TrainingExample ex;
    ex.query_id = e.query_id;
    ex.query = beir.queries[static_cast<size_t>(q->second)].text;
    ex.positive = document_text(beir.corpus.docs[static_cast<size_t>(d->second)]);
    ex.positive_key = d->second;
    examples.push_back(std::move(ex));
  }
  return examples;
}

}  // namespace ragmig::text
