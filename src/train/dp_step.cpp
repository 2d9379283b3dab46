// Data-parallel step parts (see dp_step.h). Gradients of the gathered embeddings reach only the local rows:
// the other replicas' rows are detached copies, and their own backward covers them.
#include "train/dp_step.h"

#include <chrono>
#include <tuple>

#include "core/clock.h"
#include "core/error.h"
#include "model/rng_state.h"
#include "train/contrastive_loss.h"
#include "train/torch_compat.h"

namespace ragmig::train {
namespace {

using Clock = std::chrono::steady_clock;

// Runs `fn` and adds its wall time to `seconds`. The device's queued work is finished first, so that the
// collective's time does not include the compute before it.
template <class Fn>
auto timed(double& seconds, const torch::Device& device, Fn&& fn) {
  finish_device_work(device);
  const auto t0 = Clock::now();
  auto out = fn();
  seconds += seconds_since(t0);
  return out;
}

torch::Tensor flatten(const std::vector<torch::Tensor>& tensors, const std::vector<double>& weights) {
  std::vector<torch::Tensor> flat;
  for (size_t i = 0; i < tensors.size(); ++i) {
    torch::Tensor v = tensors[i].detach().reshape(-1).to(torch::kFloat32);
    flat.push_back(weights[i] == 1.0 ? v : v * weights[i]);
  }
  return torch::cat(flat);
}

void unflatten_into(const torch::Tensor& flat, const std::vector<torch::Tensor>& tensors) {
  torch::NoGradGuard no_grad;
  int64_t at = 0;
  for (const auto& t : tensors) {
    const int64_t n = t.numel();
    t.copy_(flat.slice(0, at, at + n).view_as(t));
    at += n;
  }
}

}  // namespace

double backward_global_batch(const EncodeFn& encode, const PairBatch& local, const torch::Tensor& scale,
                             Communicator& comm, const std::vector<int64_t>& sizes, bool grad_cache, int64_t chunk,
                             double& comm_seconds, const LossSpec& loss_spec) {
  const int rank = comm.rank();
  const int64_t h = local.hard_negatives;
  const int64_t b = local.queries();
  RAGMIG_CHECK(b == sizes[static_cast<size_t>(rank)]);

  // This replica's embeddings: with a graph, or (GradCache) without one, to be re-embedded below.
  model::RngState rng;
  torch::Tensor q, p;
  if (grad_cache) {
    rng = model::capture_rng_state();
    std::tie(q, p) = embed_in_chunks(encode, local, chunk);
  } else {
    const auto e = encode({{local.q_ids, local.q_mask, Tower::Query}, {local.p_ids, local.p_mask, Tower::Passage}});
    q = e[0];
    p = e[1];
  }
  torch::Tensor q_live = grad_cache ? q.detach().requires_grad_(true) : q;
  torch::Tensor p_live = grad_cache ? p.detach().requires_grad_(true) : p;

  // Everyone's rows; each replica's passages are its b_r positives then its b_r * H hard negatives.
  std::vector<int64_t> p_sizes;
  for (int64_t s : sizes) p_sizes.push_back(s * (1 + h));
  auto q_parts = timed(comm_seconds, q.device(), [&] { return all_gather_rows(comm, q.detach().to(torch::kFloat32), sizes); });
  auto p_parts = timed(comm_seconds, p.device(), [&] { return all_gather_rows(comm, p.detach().to(torch::kFloat32), p_sizes); });
  q_parts[static_cast<size_t>(rank)] = q_live;
  p_parts[static_cast<size_t>(rank)] = p_live;

  // The single-process layout: all queries, all positives, then all hard negatives in query order.
  std::vector<torch::Tensor> qs, pos, negs;
  for (size_t r = 0; r < sizes.size(); ++r) {
    qs.push_back(q_parts[r].to(torch::kFloat32));
    pos.push_back(p_parts[r].slice(0, 0, sizes[r]).to(torch::kFloat32));
    if (h > 0) negs.push_back(p_parts[r].slice(0, sizes[r]).to(torch::kFloat32));
  }
  torch::Tensor loss =
      contrastive_loss(torch::cat(qs), torch::cat(pos), h > 0 ? torch::cat(negs) : torch::Tensor(), scale, loss_spec);
  loss.backward();

  if (grad_cache) {  // push the cached embedding gradients through chunk-wise graphs, same dropout masks
    model::restore_rng_state(rng);
    backward_in_chunks(encode, local, chunk, q_live.grad(), p_live.grad());
  }
  return loss.item<double>();
}

void all_reduce_gradients(Communicator& comm, const std::vector<torch::Tensor>& params, double weight,
                          const torch::Tensor& scale_param, double scale_weight) {
  std::vector<torch::Tensor> grads;
  std::vector<double> weights;
  for (const auto& p : params)
    if (p.grad().defined()) {
      grads.push_back(p.grad());
      weights.push_back(weight);
    }
  if (scale_param.defined() && scale_param.grad().defined()) {
    grads.push_back(scale_param.grad());
    weights.push_back(scale_weight);
  }
  if (grads.empty()) return;
  torch::Tensor flat = flatten(grads, weights);
  comm.all_reduce_sum(flat);
  unflatten_into(flat, grads);
}

void weighted_average(Communicator& comm, const std::vector<torch::Tensor>& tensors, double weight) {
  if (tensors.empty()) return;
  torch::Tensor flat = flatten(tensors, std::vector<double>(tensors.size(), weight));
  comm.all_reduce_sum(flat);
  unflatten_into(flat, tensors);
}

void broadcast_tensors(Communicator& comm, const std::vector<torch::Tensor>& tensors, int root) {
  if (tensors.empty()) return;
  torch::Tensor flat = flatten(tensors, std::vector<double>(tensors.size(), 1.0));
  comm.broadcast(flat, root);
  unflatten_into(flat, tensors);
}

std::vector<torch::Tensor> optimizer_moments(torch::optim::Optimizer& optimizer) {
  std::vector<torch::Tensor> out;
  auto& state = optimizer.state();
  for (auto& group : optimizer.param_groups())
    for (auto& p : group.params()) {
      const auto it = state.find(optimizer_state_key(p));
      if (it == state.end()) continue;
      if (auto* adam = dynamic_cast<torch::optim::AdamWParamState*>(it->second.get())) {
        for (const auto& t : {adam->exp_avg(), adam->exp_avg_sq(), adam->max_exp_avg_sq()})
          if (t.defined()) out.push_back(t);
      } else if (auto* sgd = dynamic_cast<torch::optim::SGDParamState*>(it->second.get())) {
        if (sgd->momentum_buffer().defined()) out.push_back(sgd->momentum_buffer());
      }
    }
  return out;
}

std::vector<ReplicaReport> exchange_reports(Communicator& comm, const ReplicaReport& mine) {
  torch::Tensor t = torch::tensor({mine.stop ? 1.0 : 0.0, mine.compute_s, static_cast<double>(mine.samples),
                                   static_cast<double>(mine.tokens), mine.loss, static_cast<double>(mine.positions),
                                   static_cast<double>(mine.resize_batch), static_cast<double>(mine.resize_chunk)},
                                  torch::kFloat64);
  std::vector<ReplicaReport> out;
  for (const auto& x : comm.all_gather(t)) {
    auto a = x.accessor<double, 1>();
    out.push_back({a[0] != 0, a[1], static_cast<int64_t>(a[2]), static_cast<int64_t>(a[3]), a[4],
                   static_cast<int64_t>(a[5]), static_cast<int64_t>(a[6]), static_cast<int64_t>(a[7])});
  }
  return out;
}

}  // namespace ragmig::train
