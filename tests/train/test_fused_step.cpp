// The fused optimiser step (train/fused_step.h) against LibTorch's per-parameter loops: the same weights after
// several steps with clipping, weight-decay groups and a state restored from a copy (as from a checkpoint).
// LibTorch has the fused AdamW kernel on CPU too (from 2.4), which is where this runs; tests/train/test_cuda.cpp
// repeats it on a GPU.
#include "train/fused_step.h"

#include <gtest/gtest.h>

namespace ragmig::train {
namespace {

std::vector<torch::Tensor> make_params() {
  torch::manual_seed(7);
  return {torch::randn({8, 5}).requires_grad_(), torch::randn({5}).requires_grad_(), torch::randn({}).requires_grad_()};
}

std::vector<torch::optim::OptimizerParamGroup> groups_of(const std::vector<torch::Tensor>& p) {
  std::vector<torch::optim::OptimizerParamGroup> g;
  g.emplace_back(std::vector<torch::Tensor>{p[0]}, std::make_unique<torch::optim::AdamWOptions>(torch::optim::AdamWOptions(1e-2).weight_decay(0.1)));
  g.emplace_back(std::vector<torch::Tensor>{p[1], p[2]}, std::make_unique<torch::optim::AdamWOptions>(torch::optim::AdamWOptions(1e-2).weight_decay(0.0)));
  return g;
}

void set_grads(const std::vector<torch::Tensor>& p, int step) {
  for (size_t i = 0; i < p.size(); ++i) {
    torch::manual_seed(100 * step + static_cast<int>(i));
    p[i].mutable_grad() = torch::randn(p[i].sizes()) * 3;
  }
}

TEST(FusedStep, ClippingOnTheDeviceMatchesClipGradNorm) {
  auto a = make_params(), b = make_params();
  set_grads(a, 1);
  set_grads(b, 1);
  torch::nn::utils::clip_grad_norm_(a, 0.5);
  clip_grad_norm_on_device(b, 0.5);
  for (size_t i = 0; i < a.size(); ++i) EXPECT_LT((a[i].grad() - b[i].grad()).abs().max().item<double>(), 1e-6);
  set_grads(b, 2);
  const auto before = b[0].grad().clone();
  clip_grad_norm_on_device(b, 1e6);  // under the norm: unchanged
  EXPECT_TRUE(torch::allclose(b[0].grad(), before));
}

TEST(FusedStep, FusedAdamWTracksAdamWAcrossARestoredState) {
  if (!fused_step_available(torch::kCPU)) GTEST_SKIP() << "LibTorch " << TORCH_VERSION << " has no CPU fused AdamW";
  auto a = make_params(), b = make_params();
  torch::optim::AdamW loop(groups_of(a), torch::optim::AdamWOptions(1e-2));
  auto state = std::make_unique<torch::optim::AdamW>(groups_of(b), torch::optim::AdamWOptions(1e-2));
  auto fused = std::make_unique<FusedAdamW>(*state);
  for (int s = 1; s <= 6; ++s) {
    set_grads(a, s);
    set_grads(b, s);
    loop.step();
    fused->step();
    if (s == 3) {  // a restored optimiser (as a checkpoint gives): the state's step counts carry on
      std::stringstream buffer;
      {
        torch::serialize::OutputArchive out;
        state->save(out);
        out.save_to(buffer);
      }
      state = std::make_unique<torch::optim::AdamW>(groups_of(b), torch::optim::AdamWOptions(1e-2));
      torch::serialize::InputArchive in;
      in.load_from(buffer);
      state->load(in);
      fused = std::make_unique<FusedAdamW>(*state);
    }
  }
  for (size_t i = 0; i < a.size(); ++i) EXPECT_LT((a[i] - b[i]).abs().max().item<double>(), 1e-6) << i;
  const auto& st = static_cast<torch::optim::AdamWParamState&>(*state->state().at(b[0].unsafeGetTensorImpl()));
  EXPECT_EQ(st.step(), 6);
}

}  // namespace
}  // namespace ragmig::train
