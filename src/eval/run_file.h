// TREC run files, the lingua franca of IR evaluation: one line per retrieved document,
// "qid Q0 docid rank score tag", readable by trec_eval, pytrec_eval and Pyserini. Scores are written in
// their shortest round-tripping form, so a run read back ranks exactly as it did in memory.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace ragmig::eval {

struct ScoredDoc {
  std::string doc_id;
  double score = 0;
  bool operator==(const ScoredDoc&) const = default;
};

/// Query id -> retrieved documents, best first.
using TrecRun = std::map<std::string, std::vector<ScoredDoc>>;

/// Writes every query's list in its order with ranks from 1, atomically. Throws IoError; ConfigError when
/// the tag or an id contains whitespace (the format could not be read back).
void write_trec_run(const std::string& path, const TrecRun& run, const std::string& tag);

/// Reads a run (blank lines skipped). DataError naming file:line for a line without six fields, a rank or
/// score that is not a number, or a document listed twice for one query (trec_eval refuses those too).
TrecRun read_trec_run(const std::string& path);

}  // namespace ragmig::eval
