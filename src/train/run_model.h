// The tokenizer and the model one training run starts from: the pretrained start (model.init) with its
// tokenizer, or a new encoder of the config's shape; then what the config adds to it (a Dense layer, LoRA
// adapters, a bf16 base, frozen embeddings, unpadded attention) on the run's device.
#pragma once

#include <string>
#include <vector>

#include "model/lora.h"
#include "model/model_folder.h"
#include "text/tokenizer.h"
#include "train/contrastive_loss.h"
#include "train/train_config.h"
#include "train/training_data.h"

namespace ragmig::train {

/// The run's tokenizer: the initial model's (of any kind, with its settings), else a WordPiece vocabulary: the run
/// folder's own (`run_vocab`, resuming), model.vocab, or one built from the data. Reads only; `origin` says which.
text::TokenizerSpec choose_tokenizer(const TrainConfig& cfg, const std::string& run_vocab,
                                     const model::LoadedModel* init, const std::vector<text::TrainingExample>& examples,
                                     const text::BeirFolder* beir, std::string& origin);

struct RunModel {
  model::DualEncoder net{nullptr};
  model::LoraSpec lora;                  ///< the adapters' shape (rank 0: none)
  std::vector<torch::Tensor> trainable;  ///< what the optimiser changes: every weight, or the adapters alone
  LossSpec loss;
  bool unpad = false;                    ///< unpadded (varlen) attention
};

/// Builds the model `cfg` trains from `init` (null: a new encoder seeded by train.seed) for `tokenizer` (named by
/// `vocab_origin` in errors), in training mode on `device`. `bf16`: the run computes in bf16. Throws ConfigError /
/// DataError for what the model cannot do (a vocabulary or lengths past its size, Matryoshka or eval dimensions
/// past its embeddings, a Dense layer on a model that has one, a bf16 base without bf16 compute).
RunModel build_run_model(const TrainConfig& cfg, const model::LoadedModel* init, const text::Tokenizer& tokenizer,
                         const std::string& vocab_origin, bool bf16, const std::string& precision_reason,
                         const torch::Device& device);

}  // namespace ragmig::train
