// The optimiser of a training run, and the memory it and the weights hold.
#pragma once

#include <memory>
#include <torch/torch.h>

#include "model/dual_encoder.h"
#include "train/train_config.h"

namespace ragmig::train {

/// AdamW (or SGD, train.optimizer) over the trainable parameters of `net` and `logit_scale` (when it trains), in two
/// groups as BERT fine-tuning does it: no weight decay on biases and LayerNorm.
std::unique_ptr<torch::optim::Optimizer> make_optimizer(model::DualEncoder& net, const torch::Tensor& logit_scale,
                                                        const TrainOptions& t);

/// The memory of a replica that does not grow with the batch, in MiB: every parameter, the gradients of the
/// trained ones and AdamW's two moments for each of them (SGD here keeps none).
double state_memory_mb(model::DualEncoder& net, const TrainOptions& t);

}  // namespace ragmig::train
