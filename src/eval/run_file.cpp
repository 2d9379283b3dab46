// TREC run files (see run_file.h).
#include "eval/run_file.h"

#include <charconv>
#include <set>

#include "core/atomic_file.h"
#include "core/error.h"
#include "core/line_reader.h"
#include "core/strings.h"

namespace ragmig::eval {
namespace {

bool has_space(const std::string& s) {
  return s.find_first_of(" \t\r\n") != std::string::npos || s.empty();
}

std::vector<std::string_view> fields_of(std::string_view line) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    size_t j = i;
    while (j < line.size() && line[j] != ' ' && line[j] != '\t') ++j;
    if (j > i) out.push_back(line.substr(i, j - i));
    i = j;
  }
  return out;
}

}  // namespace

TrecRunWriter::TrecRunWriter(const std::string& path, std::string tag) : file_(path), tag_(std::move(tag)) {
  if (has_space(tag_)) throw ConfigError("run tag '" + tag_ + "' must be one word");
}

void TrecRunWriter::add(const std::string& qid, const std::vector<ScoredDoc>& docs) {
  if (has_space(qid)) throw ConfigError("query id '" + qid + "' cannot go into a TREC run (whitespace)");
  std::string lines;
  char score[64];
  for (size_t r = 0; r < docs.size(); ++r) {
    if (has_space(docs[r].doc_id))
      throw ConfigError("document id '" + docs[r].doc_id + "' cannot go into a TREC run (whitespace)");
    const auto [end, ec] = std::to_chars(score, score + sizeof score, docs[r].score);
    lines.append(qid).append(" Q0 ").append(docs[r].doc_id).append(" ").append(std::to_string(r + 1)).append(" ");
    lines.append(score, end).append(" ").append(tag_).append("\n");
  }
  file_.write(lines);
}

void TrecRunWriter::commit() { file_.commit(); }

void write_trec_run(const std::string& path, const TrecRun& run, const std::string& tag) {
  TrecRunWriter writer(path, tag);
  for (const auto& [qid, docs] : run) writer.add(qid, docs);
  writer.commit();
}

TrecRun read_trec_run(const std::string& path) {
  LineReader reader(path);
  TrecRun run;
  std::map<std::string, std::set<std::string>> seen;
  std::string line;
  while (reader.next(line)) {
    const int64_t n = reader.line_number();
    const auto f = fields_of(line);
    if (f.empty()) continue;
    if (f.size() != 6)
      throw DataError(reader.path(), n,
                      "expected 'qid Q0 docid rank score tag', got " + std::to_string(f.size()) + " fields");
    if (!whole_number(f[3])) throw DataError(reader.path(), n, "rank is not an integer: '" + std::string(f[3]) + "'");
    const auto score = finite_number(f[4]);
    if (!score) throw DataError(reader.path(), n, "score is not a number: '" + std::string(f[4]) + "'");
    std::string qid(f[0]), doc(f[2]);
    if (!seen[qid].insert(doc).second)
      throw DataError(reader.path(), n, "document '" + doc + "' is listed twice for query '" + qid + "'");
    run[qid].push_back(ScoredDoc{std::move(doc), *score});
  }
  return run;
}

}  // namespace ragmig::eval
