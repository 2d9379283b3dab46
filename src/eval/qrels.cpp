// Judgments from qrels rows (see qrels.h).
#include "eval/qrels.h"

#include "core/error.h"

namespace ragmig::eval {
namespace {

// Where each (query, document) pair was first seen, to name both lines of a conflict.
using FirstLine = std::map<std::pair<std::string, std::string>, int64_t>;

void add_row(Judgments& j, FirstLine& first, const text::QrelEntry& e, const std::string& file) {
  auto [it, fresh] = j.by_query[e.query_id].try_emplace(e.doc_id, e.score);
  if (fresh) {
    first.emplace(std::make_pair(e.query_id, e.doc_id), e.line);
  } else if (it->second != e.score) {
    throw DataError(file, e.line, "query '" + e.query_id + "' judges document '" + e.doc_id + "' " + std::to_string(e.score) +
                                      ", but line " + std::to_string(first.at({e.query_id, e.doc_id})) + " says " +
                                      std::to_string(it->second));
  }
}

std::string first_lines(const std::vector<int64_t>& lines, const std::string& file) {
  std::string out;
  for (size_t i = 0; i < lines.size() && i < 3; ++i) out += (i ? ", " : "") + file + ":" + std::to_string(lines[i]);
  if (lines.size() > 3) out += ", ...";
  return out;
}

}  // namespace

Judgments judgments_from(const text::Qrels& qrels) {
  Judgments j;
  j.source = qrels.path;
  FirstLine first;
  for (const auto& e : qrels.entries) add_row(j, first, e, qrels.path);
  return j;
}

Judgments resolve_judgments(const text::Qrels& qrels, const text::BeirFolder& beir, QrelsCheck* check) {
  Judgments j;
  j.source = qrels.path;
  FirstLine first;
  QrelsCheck local;
  QrelsCheck& c = check ? *check : local;
  std::vector<int64_t> bad_query_lines, bad_doc_lines;
  for (const auto& e : qrels.entries) {
    if (!beir.query_index.count(e.query_id)) {
      ++c.unknown_query_rows;
      bad_query_lines.push_back(e.line);
      continue;
    }
    if (!beir.corpus.index_of.count(e.doc_id)) {
      ++c.unknown_doc_rows;
      bad_doc_lines.push_back(e.line);
    }
    add_row(j, first, e, qrels.path);
  }
  if (c.unknown_query_rows > 0)
    c.warnings.push_back(std::to_string(c.unknown_query_rows) + " qrels rows name a query that is not in queries.jsonl; "
                         "they are left out (" + first_lines(bad_query_lines, qrels.path) + ")");
  if (c.unknown_doc_rows > 0)
    c.warnings.push_back(std::to_string(c.unknown_doc_rows) + " qrels rows name a document that is not in the corpus; "
                         "they still count as relevant and cannot be retrieved (" + first_lines(bad_doc_lines, qrels.path) + ")");
  return j;
}

}  // namespace ragmig::eval
