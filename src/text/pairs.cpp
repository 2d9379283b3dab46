// Training-example readers. Positive keys are assigned here, once, so that samplers downstream can work on
// integers and never compare passage texts.
#include "text/pairs.h"

#include <fmt/format.h>

#include <array>
#include <functional>
#include <map>
#include <unordered_map>

#include "core/error.h"
#include "core/line_reader.h"
#include "core/strings.h"
#include "text/json_rows.h"
#include "text/unicode.h"

namespace ragmig::text {

using nlohmann::json;

namespace {

// The names a column goes by: ragmig's and FlagEmbedding's first, then those of sentence-transformers' datasets.
constexpr std::array<const char*, 3> kQueryNames = {"query", "anchor", "question"};
constexpr std::array<const char*, 3> kPositiveNames = {"positive", "pos", "answer"};

std::string quoted_names(const std::array<const char*, 3>& names) {
  return fmt::format("\"{}\", \"{}\" or \"{}\"", names[0], names[1], names[2]);
}

// The one of `names` that `row` has; DataError when it has none or two.
const char* one_column(const json& row, const std::array<const char*, 3>& names, const std::string& file,
                       int64_t line) {
  const char* found = nullptr;
  for (const char* name : names) {
    if (!row.contains(name)) continue;
    if (found)
      throw DataError(file, line, fmt::format("has both \"{}\" and \"{}\"; expected one of them", found, name));
    found = name;
  }
  if (!found) throw DataError(file, line, "missing field " + quoted_names(names));
  return found;
}

std::string text_field(const json& row, const std::string& key, const std::string& file, int64_t line) {
  const json& v = row.at(key);
  if (!v.is_string())
    throw DataError(file, line, fmt::format("field \"{}\" must be a string, got {}", key, v.type_name()));
  if (is_blank(v.get_ref<const std::string&>()))
    throw DataError(file, line, fmt::format("field \"{}\" is blank; expected text", key));
  return v.get<std::string>();
}

std::vector<std::string> text_array(const json& row, const std::string& key, const std::string& file, int64_t line) {
  const json& v = row.at(key);
  if (!v.is_array())
    throw DataError(file, line, fmt::format("field \"{}\" must be an array of strings, got {}", key, v.type_name()));
  std::vector<std::string> out;
  out.reserve(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    if (!v[i].is_string())
      throw DataError(file, line, fmt::format("field \"{}\"[{}] must be a string, got {}", key, i, v[i].type_name()));
    if (is_blank(v[i].get_ref<const std::string&>()))
      throw DataError(file, line, fmt::format("field \"{}\"[{}] is blank; expected text", key, i));
    out.push_back(v[i].get<std::string>());
  }
  return out;
}

// "negative_1", "negative_2", ... (sentence-transformers' mined datasets): their numbers, each with its key.
std::map<int64_t, std::string> numbered_negatives(const json& row) {
  std::map<int64_t, std::string> out;
  for (const auto& [key, value] : row.items()) {
    if (key.rfind("negative_", 0) != 0) continue;
    const auto n = whole_number(std::string_view(key).substr(9), 1);
    if (n && key == "negative_" + std::to_string(*n)) out.emplace(*n, key);
  }
  return out;
}

std::vector<std::string> negatives_of(const json& row, const std::string& file, int64_t line) {
  const std::map<int64_t, std::string> numbered = numbered_negatives(row);
  std::vector<std::string> kinds;
  for (const char* name : {"negatives", "neg", "negative"})
    if (row.contains(name)) kinds.push_back(name);
  if (!numbered.empty()) kinds.push_back(numbered.begin()->second);
  if (kinds.size() > 1)
    throw DataError(file, line, fmt::format("has both \"{}\" and \"{}\"; expected one kind of negatives", kinds[0],
                                            kinds[1]));
  if (kinds.empty()) return {};
  if (kinds[0] == "negative") return {text_field(row, "negative", file, line)};
  if (numbered.empty()) return text_array(row, kinds[0], file, line);
  std::vector<std::string> out;
  for (const auto& [n, key] : numbered) {
    if (n != static_cast<int64_t>(out.size()) + 1)
      throw DataError(file, line, fmt::format("has \"{}\" but no \"negative_{}\"", key, out.size() + 1));
    out.push_back(text_field(row, key, file, line));
  }
  return out;
}

TrainingExample example_from_row(const json& row, const std::string& file, int64_t line) {
  TrainingExample ex;
  ex.query = text_field(row, one_column(row, kQueryNames, file, line), file, line);
  if (row.contains("query_id")) ex.query_id = json_id_field(row, "query_id", file, line);
  const std::string positive = one_column(row, kPositiveNames, file, line);
  if (positive == "pos") {
    std::vector<std::string> pos = text_array(row, "pos", file, line);
    if (pos.empty()) throw DataError(file, line, "field \"pos\" is empty");
    ex.positive = std::move(pos.front());
    ex.more_positives.assign(std::make_move_iterator(pos.begin() + 1), std::make_move_iterator(pos.end()));
  } else {
    ex.positive = text_field(row, positive, file, line);
  }
  ex.negatives = negatives_of(row, file, line);
  return ex;
}

bool one_of(const std::string& s, const std::array<const char*, 3>& names) {
  for (const char* name : names)
    if (s == name) return true;
  return false;
}

// MS MARCO's layout: query<TAB>positive[<TAB>negative...], an optional header line naming the columns.
void for_each_tsv_example(const std::string& path, const std::function<void(TrainingExample)>& fn, int64_t max_rows) {
  LineReader reader(resolve_maybe_gz(path));
  const std::string& file = reader.path();
  std::string line;
  int64_t rows = 0;
  bool first = true;
  while ((max_rows <= 0 || rows < max_rows) && reader.next(line)) {
    if (is_blank(line)) continue;
    const int64_t n = reader.line_number();
    std::vector<std::string> fields = split(line, '\t');
    if (first && fields.size() >= 2 && one_of(fields[0], kQueryNames) && one_of(fields[1], kPositiveNames)) {
      first = false;
      continue;  // the header
    }
    first = false;
    while (fields.size() > 2 && is_blank(fields.back())) fields.pop_back();  // tabs at the line's end: no negative
    if (fields.size() < 2)
      throw DataError(file, n, "expected query<TAB>positive[<TAB>negative...] (a line without a tab)");
    for (size_t i = 0; i < fields.size(); ++i) {
      if (!is_valid_utf8(fields[i])) throw DataError(file, n, fmt::format("column {} is not valid UTF-8", i + 1));
      if (is_blank(fields[i]))
        throw DataError(file, n, fmt::format("column {} ({}) is blank; expected text", i + 1,
                                             i == 0 ? "query" : i == 1 ? "positive" : "a negative"));
    }
    TrainingExample ex;
    ex.query = std::move(fields[0]);
    ex.positive = std::move(fields[1]);
    ex.negatives.assign(std::make_move_iterator(fields.begin() + 2), std::make_move_iterator(fields.end()));
    fn(std::move(ex));
    ++rows;
  }
  if (rows == 0) throw DataError(file + " has no training pairs");
}

}  // namespace

std::vector<TrainingExample> read_pairs(const std::string& path, int64_t max_rows) {
  std::vector<TrainingExample> examples;
  std::unordered_map<std::string, int64_t> keys;
  const auto add = [&](TrainingExample ex) {
    ex.positive_key = keys.emplace(ex.positive, static_cast<int64_t>(keys.size())).first->second;
    examples.push_back(std::move(ex));
  };
  if (path.ends_with(".tsv") || path.ends_with(".tsv.gz")) {
    for_each_tsv_example(path, add, max_rows);
  } else {
    for_each_json_row(path, [&](const json& row, const std::string& file, int64_t line) {
      add(example_from_row(row, file, line));
    }, max_rows);
  }
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

std::vector<TrainingExample> examples_from_beir(const BeirFolder& beir, const Qrels& qrels, int64_t* blank_skipped) {
  std::vector<TrainingExample> examples;
  int64_t blank = 0;
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
    if (is_blank(ex.query) || is_blank(ex.positive)) {
      ++blank;
      continue;
    }
    examples.push_back(std::move(ex));
  }
  if (blank_skipped) *blank_skipped = blank;
  return examples;
}

}  // namespace ragmig::text
