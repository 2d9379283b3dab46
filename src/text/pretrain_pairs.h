// Training pairs from raw text, for domain-adaptive contrastive pre-training before (or instead of)
// fine-tuning on judged pairs:
// - independent cropping (Contriever, Izacard et al. 2022): query and positive are two spans of the same
//   document, each of 10-50 % of its words, drawn independently (they may overlap);
// - inverse cloze task (ICT, Lee et al. 2019): the query is one sentence of the document, the positive the
//   document without that sentence — kept in it with probability 0.1, so the model also learns to match words.
// Deterministic: the same documents and seed give the same pairs. Torch-free.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "text/pairs.h"

namespace ragmig::text {

enum class PretrainTask { kCrop, kIct };

/// "crop" | "ict"; ConfigError naming data.pretrain otherwise.
PretrainTask parse_pretrain_task(const std::string& name);

/// The document's sentences: split after '.', '!' or '?' followed by white space, trimmed, empty ones dropped.
std::vector<std::string> split_sentences(const std::string& text);

/// One pair per document that can give one (crop: at least 4 words; ICT: at least 2 sentences), in document
/// order, positive_key = the document's index (two pairs of one document are never in-batch negatives of each
/// other). A document's draws depend on `seed` and its position only, never on the other documents.
std::vector<TrainingExample> pretrain_examples(const std::vector<std::string>& documents, PretrainTask task,
                                               uint64_t seed);

/// Documents of a raw-text file: JSONL rows with "text" (and an optional "title", put in front), or any other
/// file as one document per non-blank line (plain or .gz). DataError naming file:line for a bad row.
std::vector<std::string> read_raw_documents(const std::string& path);

}  // namespace ragmig::text
