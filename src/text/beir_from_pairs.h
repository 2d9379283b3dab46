// A BEIR folder made from a pairs file (text/pairs.h), so that data that comes as (query, positive, negatives)
// rows — sentence-transformers' datasets, MS MARCO's triples, `ragmig mine`'s output — is evaluated, mined and
// swept over as any BEIR data set is: every distinct passage (positives and negatives) a document, every distinct
// query a query, every pair a qrels row of score 1, and a seeded set of queries held out as the test split.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "text/beir.h"
#include "text/pairs.h"

namespace ragmig::text {

/// The seed of the test split's carve (query_holdout.h's carve_queries), apart from the validation hold-out's.
inline constexpr uint64_t kTestSplitSeed = 0x7e57;

struct PairsFolder {
  std::vector<Document> corpus;              ///< "d1", "d2", ...: the distinct passage texts in order of first
                                             ///< appearance (a row's positive, then its negatives); no titles
  std::vector<Query> queries;                ///< in order of first appearance
  std::vector<QrelEntry> train, test;        ///< (query, positive, 1) for every positive (more_positives too),
                                             ///< each pair once, in row order
  std::vector<TrainingExample> train_pairs;  ///< the rows of the train queries, each with its query id
};

/// Query ids are the rows' "query_id" when every row has one (an id naming two texts is an error), else
/// "q1", "q2", ... by distinct query text (no row may have one then). `test_queries` queries, carved by `seed`
/// from the ids (made ids: from the query texts, so that the split does not follow the rows' order), make the test
/// split; the rest the train split. Throws DataError naming `source` when the ids
/// are mixed, clash or hold a tab or line break (qrels are TSV), or when the test split would take every query.
PairsFolder beir_from_pairs(const std::vector<TrainingExample>& examples, int64_t test_queries, uint64_t seed,
                            const std::string& source);

/// Writes DIR/corpus.jsonl, DIR/queries.jsonl, DIR/qrels/train.tsv, DIR/qrels/test.tsv (when the test split has
/// queries) and DIR/pairs/train.jsonl (the train rows with their ids, negatives and "pos" arrays where they had
/// more than one positive: `ragmig train`'s data.pairs with data.split = "train"), all or nothing
/// (core/atomic_file.h's write_folder_atomically). Throws IoError.
void write_pairs_folder(const PairsFolder& folder, const std::string& dir);

}  // namespace ragmig::text
