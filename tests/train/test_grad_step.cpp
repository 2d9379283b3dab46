// GradCache gives the gradients of the full-batch loss (within 1e-5 on CPU) in chunks; plain accumulation
// gives those of its micro-batch losses. B = 12 queries, H = 1 hard negative each.
#include "train/grad_step.h"

#include <gtest/gtest.h>

#include <ATen/autocast_mode.h>
#include <ATen/record_function.h>

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "model/dual_encoder.h"
#include "model/rng_state.h"
#include "support/tiny_bert.h"
#include "train/autocast_guard.h"
#include "train/contrastive_loss.h"

namespace ragmig::train {
namespace {

model::EncoderSpec tiny_spec(double dropout, bool shared) {
  model::EncoderSpec spec;
  spec.bert = testing::tiny_bert_config(50, 16, 2, 32);
  spec.bert.hidden_dropout_prob = dropout;
  spec.bert.attention_probs_dropout_prob = dropout;
  spec.shared_towers = shared;
  return spec;
}

PairBatch random_batch(int64_t b, int64_t h) {
  PairBatch batch;
  batch.q_ids = torch::randint(5, 50, {b, 7}, torch::kLong);
  batch.q_mask = torch::ones({b, 7}, torch::kLong);
  batch.q_mask.slice(1, 5).slice(0, 0, b / 2).zero_();  // some padding
  batch.p_ids = torch::randint(5, 50, {b * (1 + h), 11}, torch::kLong);
  batch.p_mask = torch::ones({b * (1 + h), 11}, torch::kLong);
  batch.p_mask.slice(1, 8).slice(0, 0, b).zero_();
  batch.hard_negatives = h;
  return batch;
}

std::vector<torch::Tensor> grads_of(model::DualEncoder& net) {
  std::vector<torch::Tensor> out;
  for (auto& p : net->parameters()) out.push_back(p.grad().defined() ? p.grad().clone() : torch::zeros_like(p));
  return out;
}

double max_diff(const std::vector<torch::Tensor>& a, const std::vector<torch::Tensor>& b) {
  double m = 0;
  for (size_t i = 0; i < a.size(); ++i) m = std::max(m, (a[i] - b[i]).abs().max().item<double>());
  return m;
}

// `unpad`: the towers run on the real tokens only, and with shared towers a query batch and a passage batch given
// together go through one forward pass (model::BertModelImpl::forward_pair).
struct TestEncoder {
  model::DualEncoder net;
  EncodeFn encode;
  explicit TestEncoder(const model::EncoderSpec& spec, bool unpad = false) : net(spec) {
    net->train();
    net->query_tower()->set_unpad(unpad);
    net->passage_tower()->set_unpad(unpad);
    encode = [this](const std::vector<TowerInput>& inputs) { return encode_towers(net, inputs); };
  }
  torch::Tensor operator()(const torch::Tensor& ids, const torch::Tensor& mask, Tower tower) const {
    return encode_one(encode, ids, mask, tower);
  }
};

// (shared towers, chunk rows, float64, unpadded towers: then each chunk call is one joined pass). In float64 the
// two computations agree to rounding (1e-5 is the bound; they meet it by orders of magnitude); in float32
// chunked and whole-batch matmuls round differently, so the bound there is relative to the largest gradient.
class GradCacheTest : public ::testing::TestWithParam<std::tuple<bool, int64_t, bool, bool>> {};

TEST_P(GradCacheTest, EqualsFullBatchGradientsWithoutDropout) {
  const auto [shared, chunk, f64, unpad] = GetParam();
  torch::manual_seed(11);
  TestEncoder s(tiny_spec(0.0, shared), unpad);
  const auto dtype = f64 ? torch::kFloat64 : torch::kFloat32;
  s.net->to(dtype);
  const PairBatch batch = random_batch(12, 1);
  auto scale_full = torch::full({}, 20.0, dtype).requires_grad_(true);
  auto scale_gc = torch::full({}, 20.0, dtype).requires_grad_(true);

  s.net->zero_grad();
  const double loss_full = backward_full(s.encode, batch, scale_full).item<double>();
  const auto g_full = grads_of(s.net);
  s.net->zero_grad();
  const double loss_gc = backward_grad_cache(s.encode, batch, scale_gc, chunk).item<double>();
  const auto g_gc = grads_of(s.net);

  EXPECT_NEAR(loss_full, loss_gc, 1e-6);
  double largest = 0;
  for (const auto& g : g_full) largest = std::max(largest, g.abs().max().item<double>());
  EXPECT_GT(largest, 1e-3);  // the gradients are not trivially zero
  const double diff = max_diff(g_full, g_gc);
  const double bound = f64 ? 1e-10 : 1e-5 * largest;
  EXPECT_LT(diff, bound) << "maxdiff = " << diff << ", largest gradient " << largest;
  EXPECT_NEAR(scale_full.grad().item<double>(), scale_gc.grad().item<double>(), f64 ? 1e-10 : 1e-5);
}

INSTANTIATE_TEST_SUITE_P(Chunks, GradCacheTest,
                         ::testing::Combine(::testing::Bool(), ::testing::Values<int64_t>(1, 5, 12), ::testing::Bool(),
                                            ::testing::Bool()));

// GradCache (float64, chunks of 5) on a batch of 12 queries with `hard_negatives` each under `spec`: the full batch's
// loss and gradients (the loss is a function of the cached embeddings like any other), and other gradients than
// plain InfoNCE's. Returns the loss and InfoNCE's.
std::pair<double, double> expect_grad_cache_keeps_the_full_batch(const LossSpec& spec, uint64_t seed,
                                                                 int64_t hard_negatives) {
  torch::manual_seed(seed);
  TestEncoder s(tiny_spec(0.0, true));
  s.net->to(torch::kFloat64);
  const PairBatch batch = random_batch(12, hard_negatives);
  const auto scale = torch::full({}, 20.0, torch::kFloat64);
  s.net->zero_grad();
  const double full = backward_full(s.encode, batch, scale, spec).item<double>();
  const auto g_full = grads_of(s.net);
  s.net->zero_grad();
  const double cached = backward_grad_cache(s.encode, batch, scale, 5, spec).item<double>();
  EXPECT_NEAR(full, cached, 1e-10);
  EXPECT_LT(max_diff(g_full, grads_of(s.net)), 1e-10);
  s.net->zero_grad();
  const double infonce = backward_full(s.encode, batch, scale).item<double>();
  EXPECT_GT(max_diff(g_full, grads_of(s.net)), 1e-4);
  return {full, infonce};
}

// The Matryoshka loss through GradCache: every size moves the gradients.
TEST(GradCache, EqualsFullBatchGradientsOfTheMatryoshkaLoss) {
  const auto [full, plain] = expect_grad_cache_keeps_the_full_batch({{16, 8, 4}, true}, 12, 1);
  EXPECT_GT(full, plain + 1e-3) << "three sizes' losses, not one";
}

// Every loss term through GradCache: all four directions, hardness on the query's own hard negatives.
TEST(GradCache, EqualsFullBatchGradientsOfEveryLossTerm) {
  LossSpec spec;
  spec.terms.doc_to_query = spec.terms.query_to_query = spec.terms.doc_to_doc = true;
  spec.terms.hardness_mode = "hard_negatives";
  spec.terms.hardness_strength = 5;
  const auto [full, infonce] = expect_grad_cache_keeps_the_full_batch(spec, 13, 2);
  EXPECT_GT(std::abs(full - infonce), 1e-3);
}

TEST(GradCache, ReplaysDropoutMasksChunkForChunk) {
  // With dropout on, the reference is the same chunked forward kept in one graph: GradCache must match it,
  // which it can only do if its second pass draws the first pass's masks. Unpadded, each call's chunk of queries
  // and chunk of passages go through one forward pass.
  for (const bool unpad : {false, true}) {
    torch::manual_seed(5);
    TestEncoder s(tiny_spec(0.3, true), unpad);
    const PairBatch batch = random_batch(12, 1);
    const int64_t chunk = 4;
    auto scale = torch::full({}, 10.0);

    const model::RngState start = model::capture_rng_state();
    s.net->zero_grad();
    std::vector<torch::Tensor> qs, ps;
    for (int64_t b = 0; b < 24; b += chunk) {  // GradCache's calls: the next chunk of each while it lasts
      std::vector<TowerInput> call;
      const auto rows = [&](const torch::Tensor& x) { return x.slice(0, b, b + chunk); };
      if (b < 12) call.push_back({rows(batch.q_ids), rows(batch.q_mask), Tower::Query});
      call.push_back({rows(batch.p_ids), rows(batch.p_mask), Tower::Passage});
      const auto e = s.encode(call);
      if (b < 12) qs.push_back(e.front());
      ps.push_back(e.back());
    }
    auto p = torch::cat(ps);
    auto ref_loss = info_nce_loss(torch::cat(qs), p.slice(0, 0, 12), p.slice(0, 12), scale);
    ref_loss.backward();
    const auto g_ref = grads_of(s.net);

    model::restore_rng_state(start);
    s.net->zero_grad();
    const double loss = backward_grad_cache(s.encode, batch, scale, chunk).item<double>();
    EXPECT_NEAR(loss, ref_loss.item<double>(), 1e-6) << "unpad " << unpad;
    EXPECT_LT(max_diff(g_ref, grads_of(s.net)), 1e-5) << "unpad " << unpad;
  }
}

// One forward pass over a step's queries and passages (shared unpadded towers) gives the loss and gradients of a
// pass per tower, for the full batch, GradCache and plain accumulation (float64, no dropout).
TEST(OnePass, GivesTheLossAndGradientsOfAPassPerTower) {
  torch::manual_seed(21);
  TestEncoder s(tiny_spec(0.0, true), true);
  s.net->to(torch::kFloat64);
  ASSERT_TRUE(s.net->joins_pairs());
  const PairBatch batch = random_batch(12, 1);
  const auto scale = torch::full({}, 20.0, torch::kFloat64);
  const EncodeFn per_tower = [&](const std::vector<TowerInput>& inputs) {
    return encode_towers(s.net, inputs, false);
  };
  const std::vector<std::function<torch::Tensor(const EncodeFn&)>> steps = {
      [&](const EncodeFn& e) { return backward_full(e, batch, scale); },
      [&](const EncodeFn& e) { return backward_grad_cache(e, batch, scale, 5); },
      [&](const EncodeFn& e) { return backward_plain(e, batch, scale, 4); }};
  for (size_t i = 0; i < steps.size(); ++i) {
    s.net->zero_grad();
    const double apart = steps[i](per_tower).item<double>();
    const auto g_apart = grads_of(s.net);
    s.net->zero_grad();
    const double joint = steps[i](s.encode).item<double>();
    EXPECT_NEAR(apart, joint, 1e-12) << "step kind " << i;
    EXPECT_LT(max_diff(g_apart, grads_of(s.net)), 1e-10) << "step kind " << i;
  }
}

// The casts (aten::_to_copy) this thread makes in `run`. By name only: RecordFunction's inputs() is unusable from
// a build with assertions on (the class's layout differs from the release LibTorch's).
int64_t casts_in(const std::function<void()>& run) {
  static thread_local int64_t casts = 0;
  casts = 0;
  const auto handle = at::addThreadLocalCallback(
      at::RecordFunctionCallback([](const at::RecordFunction& fn) -> std::unique_ptr<at::ObserverContext> {
        if (std::string(fn.name()) == "aten::_to_copy") ++casts;
        return nullptr;
      }).scopes({at::RecordScope::FUNCTION}));
  run();
  at::removeCallback(handle);
  return casts;
}

// Under bf16 autocast, GradCache and plain accumulation cast each weight once per pass over their chunks, not once
// per chunk, and get the gradients that casting it afresh for every call gives, bit for bit (autocast_guard.h says
// why GradCache's two passes do not share one cache).
TEST(Autocast, EachWeightIsCastOncePerPassOverTheChunks) {
  torch::manual_seed(17);
  TestEncoder s(tiny_spec(0.1, true));
  const PairBatch batch = random_batch(12, 1);
  const auto scale = torch::full({}, 20.0);
  const torch::Device cpu(torch::kCPU);
  const EncodeFn in_autocast = [&](const std::vector<TowerInput>& inputs) {
    AutocastGuard autocast(cpu, true);
    return encode_towers(s.net, inputs);
  };
  const EncodeFn cast_every_call = [&](const std::vector<TowerInput>& inputs) {
    AutocastGuard autocast(cpu, true);
    auto out = encode_towers(s.net, inputs);
    at::autocast::clear_cache();
    return out;
  };
  // One call's weight casts: a first call's casts less a second's in the same pass (which casts activations only).
  int64_t weight_casts = 0;
  {
    torch::NoGradGuard no_grad;
    const AutocastPass pass;
    const std::vector<TowerInput> call = {{batch.q_ids.slice(0, 0, 4), batch.q_mask.slice(0, 0, 4), Tower::Query}};
    weight_casts = casts_in([&] { in_autocast(call); });
    weight_casts -= casts_in([&] { in_autocast(call); });
  }
  ASSERT_GE(weight_casts, 2 * 3 * 2) << "2 layers, each with at least 3 products' weights and biases";
  struct Kind {
    int64_t calls, passes;  // encoder calls, passes over the chunks
    std::function<torch::Tensor(const EncodeFn&)> step;
  };
  const std::vector<Kind> kinds = {
      {12, 2, [&](const EncodeFn& e) { return backward_grad_cache(e, batch, scale, 4); }},  // 6 calls a pass
      {3, 1, [&](const EncodeFn& e) { return backward_plain(e, batch, scale, 4); }}};
  for (size_t i = 0; i < kinds.size(); ++i) {
    torch::manual_seed(3);
    s.net->zero_grad();
    double fresh = 0, cached = 0;
    const int64_t fresh_casts = casts_in([&] { fresh = kinds[i].step(cast_every_call).item<double>(); });
    const auto g_fresh = grads_of(s.net);
    torch::manual_seed(3);
    s.net->zero_grad();
    const int64_t pass_casts = casts_in([&] { cached = kinds[i].step(in_autocast).item<double>(); });
    EXPECT_EQ(fresh_casts - pass_casts, weight_casts * (kinds[i].calls - kinds[i].passes)) << "kind " << i;
    EXPECT_EQ(fresh, cached) << "kind " << i;
    EXPECT_EQ(max_diff(g_fresh, grads_of(s.net)), 0.0) << "kind " << i;
    for (const auto& g : grads_of(s.net)) EXPECT_GT(g.abs().max().item<double>(), 0.0) << "kind " << i;
  }
}

TEST(PlainAccumulation, SumsMicroBatchLosses) {
  torch::manual_seed(7);
  TestEncoder s(tiny_spec(0.0, true));
  const PairBatch batch = random_batch(8, 2);
  auto scale = torch::full({}, 20.0);
  s.net->zero_grad();
  const double plain = backward_plain(s.encode, batch, scale, 4).item<double>();
  const auto g_plain = grads_of(s.net);

  // Reference: each half of the batch with its own positives and hard negatives, weighted by its share.
  s.net->zero_grad();
  double expected = 0;
  for (int64_t b = 0; b < 8; b += 4) {
    auto q = s(batch.q_ids.slice(0, b, b + 4), batch.q_mask.slice(0, b, b + 4), Tower::Query);
    auto pos = s(batch.p_ids.slice(0, b, b + 4), batch.p_mask.slice(0, b, b + 4), Tower::Passage);
    auto neg = s(batch.p_ids.slice(0, 8 + 2 * b, 8 + 2 * (b + 4)),
                        batch.p_mask.slice(0, 8 + 2 * b, 8 + 2 * (b + 4)), Tower::Passage);
    auto loss = info_nce_loss(q, pos, neg, scale) * 0.5;
    loss.backward();
    expected += loss.item<double>();
  }
  EXPECT_NEAR(plain, expected, 1e-6);
  EXPECT_LT(max_diff(g_plain, grads_of(s.net)), 1e-5);

  // And it is a different objective from the full batch (fewer negatives): a larger... or at least another loss.
  s.net->zero_grad();
  EXPECT_GT(std::abs(backward_full(s.encode, batch, scale).item<double>() - plain), 1e-4);
}

}  // namespace
}  // namespace ragmig::train
