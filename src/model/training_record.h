// What a model folder says of the queries it was trained on (ragmig.json's "training"): the qrels split they
// came from and the ids of that split's queries the training held out (data.holdout_queries). `ragmig eval
// --fusion auto` chooses its fusion on the held-out ones, and warns when it would choose on queries the model
// trained on. Torch-free: reading it needs no model.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace ragmig::model {

struct TrainingQueries {
  std::string split;                  ///< qrels split whose queries the model trained on (e.g. "train")
  std::vector<std::string> held_out;  ///< ids of that split's queries it never saw; empty = trained on all
};

/// {"split": ..., "held_out_queries": [...]}: the value of ragmig.json's "training".
nlohmann::json to_json(const TrainingQueries& training);

/// The "training" of the ragmig.json in model folder `dir`; nullopt when there is no ragmig.json or it says
/// nothing of training (a folder from elsewhere, a model trained on text without query ids). A malformed
/// value throws DataError naming the file and key.
std::optional<TrainingQueries> read_training_queries(const std::string& dir);

}  // namespace ragmig::model
