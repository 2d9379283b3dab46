// Changing the batch size of a running job (DESIGN.md's job protocol: the scheduler's Resize, written to
// <run>/control.json). At a step boundary the batches the epoch has taken stay as they were and the rest of
// its examples, in their order, are cut again at the new size; the learning rate follows a stated scaling
// rule. Pure functions: a checkpoint that records where its epoch was resized replays the same batches.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace ragmig::train {

/// A resize within an epoch: from batch `position` of the epoch on, batches of `batch_size`.
struct EpochResize {
  int64_t position = 0;
  int64_t batch_size = 0;
};

/// batches[0, position) unchanged, then the examples of batches[position, end), in their order, batched at
/// `batch_size` by text::batches_from_order (no positive key twice in a batch; what cannot fill a last batch
/// is dropped, as at the end of any epoch). Batches of a length-grouped epoch hold similar lengths, so cutting
/// them smaller keeps the padding low.
std::vector<std::vector<int64_t>> rebatch_rest(std::vector<std::vector<int64_t>> batches, int64_t position,
                                               std::span<const int64_t> positive_keys, int64_t batch_size);

/// The factor on the scheduled learning rate at global batch `batch` for a run configured with `configured`,
/// by `rule` (train.resize_lr): "sqrt" = sqrt(batch / configured), the square-root rule for Adam-type
/// optimisers (Malladi et al. 2022, "On the SDEs and Scaling Rules for Adaptive Gradient Algorithms");
/// "linear" = batch / configured (Goyal et al. 2017, for SGD); "none" = 1.
double lr_scale(const std::string& rule, int64_t batch, int64_t configured);

/// The rules lr_scale knows, for validation and --help.
inline constexpr const char* kResizeLrRules = "sqrt | linear | none";

}  // namespace ragmig::train
