// TREC run files, the lingua franca of IR evaluation: one line per retrieved document,
// "qid Q0 docid rank score tag", readable by trec_eval, pytrec_eval and Pyserini. Scores are written in
// their shortest round-tripping form, so a run read back ranks exactly as it did in memory.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/atomic_file.h"

namespace ragmig::eval {

struct ScoredDoc {
  std::string doc_id;
  double score = 0;
  bool operator==(const ScoredDoc&) const = default;
};

/// Query id -> retrieved documents, best first.
using TrecRun = std::map<std::string, std::vector<ScoredDoc>>;

/// A run file written a query at a time (an evaluation need not hold its whole run: k = 1000 for every query of a
/// large split is gigabytes), put in place by commit() as write_trec_run does; destroyed uncommitted (an exception
/// mid-run), it leaves nothing behind. ConfigError when the tag or an id contains whitespace (the format could not be
/// read back); IoError.
class TrecRunWriter {
 public:
  TrecRunWriter(const std::string& path, std::string tag);
  /// One query's list, best first, ranked from 1.
  void add(const std::string& query_id, const std::vector<ScoredDoc>& docs);
  void commit();

 private:
  AtomicFileWriter file_;
  std::string tag_;
};

/// Writes every query's list in its order with ranks from 1, atomically (TrecRunWriter).
void write_trec_run(const std::string& path, const TrecRun& run, const std::string& tag);

/// Reads a run (blank lines skipped). DataError naming file:line for a line without six fields, a rank or
/// score that is not a number, or a document listed twice for one query (trec_eval refuses those too).
TrecRun read_trec_run(const std::string& path);

}  // namespace ragmig::eval
