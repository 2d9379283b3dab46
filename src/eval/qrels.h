// Relevance judgments as the metrics use them: per query, document id -> grade. Built from the rows of
// text::read_qrels (BEIR TSV or TREC "qid 0 docid rel"), checked against a BEIR folder so that qrels naming
// unknown queries or documents are counted and warned about rather than silently skewing the averages.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "text/beir.h"

namespace ragmig::eval {

/// One query's judgments: document id -> grade (0 or below: judged not relevant).
using QueryJudgments = std::unordered_map<std::string, int32_t>;

struct Judgments {
  std::string source;                            ///< the qrels file
  std::map<std::string, QueryJudgments> by_query;  ///< ordered, so averages and outputs are reproducible
};

/// Groups the rows by query. A (query, document) pair given twice with the same grade counts once; with
/// different grades it is a DataError naming the file and the second line.
Judgments judgments_from(const text::Qrels& qrels);

struct QrelsCheck {
  int64_t unknown_query_rows = 0;  ///< rows whose query is not in queries.jsonl: dropped (nothing to run)
  int64_t unknown_doc_rows = 0;    ///< rows whose document is not in the corpus: kept, as trec_eval would
  std::vector<std::string> warnings;  ///< one line per kind, naming file:line of the first offenders
};

/// judgments_from() restricted to the queries of `beir`; counts both kinds of unknown id in *check.
Judgments resolve_judgments(const text::Qrels& qrels, const text::BeirFolder& beir, QrelsCheck* check);

}  // namespace ragmig::eval
