// The data-parallel parts of a training step. `sync`: the InfoNCE loss of the whole global batch, with every
// replica's embeddings gathered and only this replica's rows live, then gradients summed over replicas.
// `localsgd`: sample-weighted averaging of parameters (and optimiser moments). Plus the small per-step
// exchange that makes replicas agree on stopping and see each other's step times.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <vector>

#include "train/grad_step.h"
#include "train/process_group.h"

namespace ragmig::train {

/// Sync-mode backward with global negatives. `local` holds this replica's sizes[rank] queries (rows in rank
/// order form the global batch). Each replica computes the same global loss (mean over all queries against
/// all positives and hard negatives), but its own embeddings are the only live tensors, so its backward
/// yields d loss / d params through its rows only; the sum over replicas is then exactly the gradient of the
/// single-process loss on the global batch. The gradient of `scale` is the full one on every replica (divide
/// its sum by the replica count). `grad_cache`: embed without a graph in chunks first, as GradCache does.
/// `comm_seconds` gets the time spent in collectives. Returns the global loss (contrastive_loss of `loss_spec`).
double backward_global_batch(const EncodeFn& encode, const PairBatch& local, const torch::Tensor& scale,
                             Communicator& comm, const std::vector<int64_t>& sizes, bool grad_cache, int64_t chunk,
                             double& comm_seconds, const LossSpec& loss_spec = {});

/// Sums the gradients of `params` over replicas in one flat buffer; this replica's gradients are first
/// multiplied by `weight`, those of `scale_param` (if defined and with a gradient) by `scale_weight`.
/// Parameters without a gradient are skipped (the same on every replica: same model, same code path).
void all_reduce_gradients(Communicator& comm, const std::vector<torch::Tensor>& params, double weight,
                          const torch::Tensor& scale_param, double scale_weight);

/// tensors := sum over replicas of weight_r * tensors_r (weights sum to 1 over replicas), one flat buffer.
void weighted_average(Communicator& comm, const std::vector<torch::Tensor>& tensors, double weight);

/// rank `root`'s values into every replica's tensors (start of training: one set of weights).
void broadcast_tensors(Communicator& comm, const std::vector<torch::Tensor>& tensors, int root);

/// The optimiser moments that localsgd may average: AdamW's exp_avg / exp_avg_sq (and max_exp_avg_sq),
/// SGD's momentum buffer; in parameter-group order, only for parameters that have state.
std::vector<torch::Tensor> optimizer_moments(torch::optim::Optimizer& optimizer);

/// What each replica tells the others after a step.
struct ReplicaReport {
  bool stop = false;         ///< a stop (SIGTERM) was requested here
  double compute_s = 0;      ///< this step's own work, collectives excluded
  int64_t samples = 0;       ///< samples trained on this step
  int64_t tokens = 0;        ///< non-padding tokens of those samples
  double loss = 0;           ///< this replica's loss contribution (already weighted)
  int64_t positions = 0;     ///< token positions computed on, padding included
  int64_t resize_batch = 0;  ///< rank 0: the scheduler's request (control.json) due at the next step; 0 = none
  int64_t resize_chunk = 0;
};

/// One all-gather of a few numbers: every replica's report, in rank order.
std::vector<ReplicaReport> exchange_reports(Communicator& comm, const ReplicaReport& mine);

}  // namespace ragmig::train
