// Training queries held out for validation: a seeded hash of each query id orders the candidates, and the
// first N are held out. The same ids come out on every machine and whatever the order of the files, so the
// trainer that leaves them out (data.holdout_queries) and `ragmig eval --fusion auto`, which chooses the
// fusion on them, agree on which queries a model never saw. Pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "text/pairs.h"

namespace ragmig::text {

/// The seed both the trainer's hold-out and eval's validation carve use.
inline constexpr uint64_t kHoldoutSeed = 0x5eed;

/// The `count` distinct ids of `candidates` first in the order of splitmix64 hashes of (seed, id) (ties by
/// id): every candidate when there are fewer. Returned in that hash order. count < 0 is a caller's bug.
std::vector<std::string> carve_queries(std::vector<std::string> candidates, int64_t count,
                                       uint64_t seed = kHoldoutSeed);

/// Removes from `examples` every example of `count` queries carved from their query ids (carve_queries) and
/// returns those ids, sorted. Every example needs a query id; `source` names the file in the DataErrors: an
/// example without one ("... needs a query id for every example; example N has none"), or a count that
/// would leave no query to train on.
std::vector<std::string> hold_out_queries(std::vector<TrainingExample>& examples, int64_t count,
                                          const std::string& source);

}  // namespace ragmig::text
