// Re-batching the rest of an epoch and the LR scaling rule (see batch_resize.h).
#include "train/batch_resize.h"

#include <cmath>

#include "core/error.h"
#include "text/batch_sampler.h"

namespace ragmig::train {

std::vector<std::vector<int64_t>> rebatch_rest(std::vector<std::vector<int64_t>> batches, int64_t position,
                                               std::span<const int64_t> positive_keys, int64_t batch_size) {
  RAGMIG_CHECK(position >= 0 && batch_size >= 1);
  const auto kept = std::min(static_cast<size_t>(position), batches.size());
  std::vector<int64_t> rest;
  for (size_t b = kept; b < batches.size(); ++b) rest.insert(rest.end(), batches[b].begin(), batches[b].end());
  batches.resize(kept);
  for (auto& batch : text::batches_from_order(rest, positive_keys, batch_size)) batches.push_back(std::move(batch));
  return batches;
}

double lr_scale(const std::string& rule, int64_t batch, int64_t configured) {
  RAGMIG_CHECK(batch > 0 && configured > 0);
  const double ratio = static_cast<double>(batch) / static_cast<double>(configured);
  if (rule == "sqrt") return std::sqrt(ratio);
  if (rule == "linear") return ratio;
  if (rule == "none") return 1.0;
  throw ConfigError("config key 'train.resize_lr': expected " + std::string(kResizeLrRules) + ", got '" + rule + "'");
}

}  // namespace ragmig::train
