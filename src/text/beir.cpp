// BEIR readers. JSON rows are parsed one line at a time so that any failure can name its line; JSON errors
// from nlohmann are rethrown as DataError, never let through.
#include "text/beir.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/line_reader.h"
#include "core/strings.h"
#include "text/json_rows.h"

namespace ragmig::text {

namespace {

using nlohmann::json;

Corpus read_corpus_rows(const std::string& path, bool keep_text, const std::function<void(const Document&)>& each,
                        int64_t max_rows = 0) {
  Corpus corpus;
  for_each_json_row(path, [&](const json& row, const std::string& file, int64_t line) {
    Document doc;
    doc.id = json_id_field(row, "_id", file, line);
    doc.title = json_string_field(row, "title", file, line, /*required=*/false);
    doc.text = json_string_field(row, "text", file, line, /*required=*/true);
    auto [it, inserted] = corpus.index_of.emplace(doc.id, static_cast<int64_t>(corpus.docs.size()));
    if (!inserted)
      throw DataError(file, line, "duplicate document id '" + doc.id + "' (first in row " +
                                      std::to_string(it->second + 1) + ")");
    if (each) each(doc);
    if (!keep_text) {
      std::string().swap(doc.title);
      std::string().swap(doc.text);
    }
    corpus.docs.push_back(std::move(doc));
  }, max_rows);
  return corpus;
}

}  // namespace

Corpus read_corpus(const std::string& path, int64_t max_rows) { return read_corpus_rows(path, true, {}, max_rows); }

Corpus read_corpus_ids(const std::string& path, const std::function<void(const Document&)>& each) {
  return read_corpus_rows(path, false, each);
}

std::vector<Query> read_queries(const std::string& path, int64_t max_rows) {
  std::vector<Query> queries;
  std::unordered_map<std::string, int64_t> seen;
  for_each_json_row(path, [&](const json& row, const std::string& file, int64_t line) {
    Query q;
    q.id = json_id_field(row, "_id", file, line);
    q.text = json_string_field(row, "text", file, line, /*required=*/true);
    if (!seen.emplace(q.id, static_cast<int64_t>(queries.size())).second)
      throw DataError(file, line, "duplicate query id '" + q.id + "'");
    queries.push_back(std::move(q));
  }, max_rows);
  return queries;
}

namespace {

std::vector<std::string_view> split_on(std::string_view line, bool tabs_only) {
  std::vector<std::string_view> out;
  size_t i = 0;
  const auto is_sep = [&](char c) { return tabs_only ? c == '\t' : (c == ' ' || c == '\t'); };
  if (tabs_only) {
    while (true) {
      const size_t j = line.find('\t', i);
      out.push_back(line.substr(i, j == std::string_view::npos ? std::string_view::npos : j - i));
      if (j == std::string_view::npos) break;
      i = j + 1;
    }
    return out;
  }
  while (i < line.size()) {
    while (i < line.size() && is_sep(line[i])) ++i;
    size_t j = i;
    while (j < line.size() && !is_sep(line[j])) ++j;
    if (j > i) out.push_back(line.substr(i, j - i));
    i = j;
  }
  return out;
}

// Integer scores; "1.0"-style integral decimals are accepted because some converters write them.
bool parse_score(std::string_view s, int32_t& out) {
  s = trim(s);
  if (s.empty()) return false;
  const char* first = s.data();
  if (*first == '+') ++first;
  auto [ptr, ec] = std::from_chars(first, s.data() + s.size(), out);
  if (ec == std::errc() && ptr == s.data() + s.size()) return true;
  double d = 0;
  auto [dptr, dec] = std::from_chars(first, s.data() + s.size(), d);
  if (dec != std::errc() || dptr != s.data() + s.size() || !std::isfinite(d) || d != std::floor(d) ||
      std::fabs(d) > 1e9)
    return false;
  out = static_cast<int32_t>(d);
  return true;
}

}  // namespace

Qrels read_qrels(const std::string& path) {
  LineReader reader(resolve_maybe_gz(path));
  Qrels qrels;
  qrels.path = reader.path();
  std::string line;
  bool first_row = true;
  while (reader.next(line)) {
    const int64_t n = reader.line_number();
    if (is_blank(line)) continue;
    std::vector<std::string_view> cols = split_on(line, /*tabs_only=*/true);
    QrelEntry e;
    e.line = n;
    std::string_view score;
    if (cols.size() == 3) {
      e.query_id = trim(cols[0]);
      e.doc_id = trim(cols[1]);
      score = cols[2];
    } else {
      cols = split_on(line, /*tabs_only=*/false);
      if (cols.size() == 4) {  // TREC: qid iteration docid relevance
        e.query_id = cols[0];
        e.doc_id = cols[2];
        score = cols[3];
      } else if (cols.size() == 3) {
        e.query_id = cols[0];
        e.doc_id = cols[1];
        score = cols[2];
      } else {
        throw DataError(qrels.path, n, "expected 'query-id<TAB>corpus-id<TAB>score' or TREC 'qid 0 docid rel', got " +
                                           std::to_string(cols.size()) + " columns");
      }
    }
    const bool was_first = first_row;
    first_row = false;
    if (!parse_score(score, e.score)) {
      // A first row whose score has no digit is the header "query-id corpus-id score".
      if (was_first && std::none_of(score.begin(), score.end(), [](char c) { return c >= '0' && c <= '9'; }))
        continue;
      throw DataError(qrels.path, n, "score is not an integer: '" + std::string(trim(score)) + "'");
    }
    if (e.query_id.empty() || e.doc_id.empty()) throw DataError(qrels.path, n, "empty query or corpus id");
    qrels.entries.push_back(std::move(e));
  }
  if (qrels.entries.empty()) throw DataError(qrels.path + " is empty (no qrels rows)");
  return qrels;
}

BeirFolder read_beir(const std::string& dir, CorpusText text, const std::function<void(const Document&)>& each) {
  BeirFolder folder;
  folder.corpus = read_corpus_rows(resolve_maybe_gz(dir + "/corpus.jsonl"), text == CorpusText::kKeep, each);
  folder.queries = read_queries(resolve_maybe_gz(dir + "/queries.jsonl"));
  folder.query_index.reserve(folder.queries.size());
  for (size_t i = 0; i < folder.queries.size(); ++i)
    folder.query_index.emplace(folder.queries[i].id, static_cast<int64_t>(i));
  return folder;
}

std::string qrels_path(const std::string& dir, const std::string& split) {
  return resolve_maybe_gz(dir + "/qrels/" + split + ".tsv");
}

bool has_qrels(const std::string& dir, const std::string& split) {
  const std::string stem = dir + "/qrels/" + split + ".tsv";
  return std::filesystem::exists(stem) || std::filesystem::exists(stem + ".gz");
}

void require_qrels(const std::string& dir, const std::string& split, const std::string& what) {
  if (has_qrels(dir, split)) return;
  std::vector<std::string> found;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir + "/qrels", ec)) found.push_back(e.path().filename());
  std::sort(found.begin(), found.end());
  std::string listed;
  for (const auto& f : found) listed += (listed.empty() ? "" : ", ") + f;
  throw ConfigError(what + ": no qrels for split '" + split + "' in " + dir + "/qrels (found: " +
                    (listed.empty() ? "nothing" : listed) + ")");
}

}  // namespace ragmig::text
