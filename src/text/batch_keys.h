// What in-batch negatives must not meet: a query's own positive, and a positive of the same query text in
// another row. The batch samplers keep examples of one key apart; these keys make one of every group of
// examples joined by a shared positive passage or a shared query text (directly or through other examples), as
// sentence-transformers' NoDuplicatesBatchSampler keeps any text from appearing twice in a batch. Pure function.
#pragma once

#include <cstdint>
#include <vector>

#include "text/pairs.h"

namespace ragmig::text {

/// One key per example, numbered from 0 in order of first appearance: equal for examples that share a
/// positive_key, a query text, or a judged passage's text (a positive or one of more_positives: the same text
/// under two corpus ids too), and for every example joined to them so (a claim with two judged abstracts, and
/// any other claim of either abstract, make one group).
std::vector<int64_t> batch_keys(const std::vector<TrainingExample>& examples);

}  // namespace ragmig::text
