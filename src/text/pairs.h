// Training examples for contrastive retriever training: (query, positive passage, optional hard negatives),
// read from a pairs file (JSONL in the column names of ragmig, FlagEmbedding and sentence-transformers'
// datasets, or MS MARCO's TSV triples) or derived from a BEIR folder and its qrels.
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
  /// A "pos" array's passages after the first: the query's other judged passages. Training draws one of all the
  /// example's positives at each step (train/training_data.h's assemble_batch), `ragmig beir` judges them all, and
  /// batches keep them apart from the query (batch_keys.h).
  std::vector<std::string> more_positives;
};

/// A pairs file, by its name: `*.tsv` / `*.tsv.gz` is read as TSV, anything else as JSONL (plain or gzip).
/// JSONL: one object per line, each column under one of its names —
///   query:     "query" | "anchor" | "question"
///   positive:  "positive" (string) | "pos" (array: its first, the rest more_positives) | "answer"
///   negatives: "negatives" | "neg" (arrays) | "negative" (string) | "negative_1", "negative_2", ... (strings)
///   "query_id" (optional; a string or an integer)
/// — ragmig's own rows (`ragmig mine`), FlagEmbedding's {query, pos, neg}, and sentence-transformers' datasets
/// written by `Dataset.to_json` (anchor/positive/negative, query/positive/negative_1..N, question/answer).
/// TSV: query<TAB>positive[<TAB>negative...] per line (MS MARCO's triples), UTF-8, no quoting; a first line
/// naming the columns (a query name, then a positive name) is a header and skipped.
/// Blank lines are skipped, and tabs at a TSV line's end give no negative; a blank text (core/strings.h's is_blank)
/// is a DataError naming its field or column: nothing to embed is a shifted column or a lost field, never a query
/// or passage anyone meant (a BEIR folder's blank queries are left out: below). positive_key numbers the
/// distinct positive texts in order of first appearance; only the first max_rows rows when that is > 0. Throws
/// IoError, or DataError(file, line) naming the missing, doubled or ill-typed field.
std::vector<TrainingExample> read_pairs(const std::string& path, int64_t max_rows = 0);

/// One example per qrels row with score > 0, in qrels order: positive = title + " " + text (just text when
/// the title is empty), positive_key = the document's corpus position, no negatives. A row whose query text or
/// document (title and text) is blank is left out and counted in `*blank_skipped` when given: a benchmark may have
/// blank queries, and evaluation counts them, but training on one would teach `[CLS] [SEP]` to find a passage
/// (`ragmig mine` leaves them out too). A used row naming an unknown query or document throws
/// DataError(qrels.path, entry.line, "unknown corpus id 'x'").
std::vector<TrainingExample> examples_from_beir(const BeirFolder& beir, const Qrels& qrels,
                                                int64_t* blank_skipped = nullptr);

/// The text a retriever sees for a document: "title text", or "text" when there is no title.
std::string document_text(const Document& doc);

}  // namespace ragmig::text
