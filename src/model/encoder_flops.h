// What one forward pass of an encoder computes, counted from its shape alone: the benchmarks' model FLOP
// utilisation and the scheduler's estimates of a training run's work (train/work_estimate.h) read it. Torch-free.
#pragma once

#include <cstdint>

#include "model/bert_config.h"

namespace ragmig::model {

/// Forward FLOPs of the encoder `c` on one sequence of `len` tokens: Q, K, V and output projections (Qwen3's keys
/// and values as narrow as its key/value heads), the FFN (ModernBERT's and Qwen3's gated ones: three matrices), and the
/// two attention products over the keys each token sees (on ModernBERT's sliding layers its window: what the whole
/// product under a mask, or ragmig's blocks of keys, compute beyond it is not counted as work); embeddings, softmax,
/// LayerNorm and pooling are noise beside them. A ModernBERT shape without its per-layer pattern counts every layer as
/// global.
double encoder_flops(const BertConfig& c, int64_t len);

}  // namespace ragmig::model
