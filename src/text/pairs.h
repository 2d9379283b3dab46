// Training examples for contrastive retriever training: (query, positive passage, optional hard negatives),
// read from a pairs JSONL file or derived from a BEIR folder and its qrels.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "text/beir.h"

namespace ragmig::text {

struct TrainingExample {
  std::string query_id;  ///< the query's id where the data names it (BEIR qrels, pairs rows' "query_id"); may be empty
  std::string query;
  std::string positive;
  std::vector<std::string> negatives;
  int64_t positive_key = 0;  ///< equal keys = the same positive passage (batch samplers keep them apart)
};

/// Rows {"query": str, "positive": str, "negatives": [str, ...] (optional), "query_id": str (optional)}, or
/// with "pos"/"neg" arrays instead (the first of "pos" is the positive). positive_key numbers the distinct
/// positive texts in order of first appearance; only the first max_rows rows when that is > 0. Throws IoError,
/// or DataError(file, line) naming the missing or ill-typed field.
std::vector<TrainingExample> read_pairs_jsonl(const std::string& path, int64_t max_rows = 0);

/// One example per qrels row with score > 0, in qrels order: positive = title + " " + text (just text when
/// the title is empty), positive_key = the document's corpus position, no negatives. A used row naming an
/// unknown query or document throws DataError(qrels.path, entry.line, "unknown corpus id 'x'").
std::vector<TrainingExample> examples_from_beir(const BeirFolder& beir, const Qrels& qrels);

/// The text a retriever sees for a document: "title text", or "text" when there is no title.
std::string document_text(const Document& doc);

}  // namespace ragmig::text
