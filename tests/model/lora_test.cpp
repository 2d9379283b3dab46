// LoRA on the BERT tower: PEFT's target rule and parameter counts, frozen base weights, merging, adapters routed
// to rows of one batch (the serving path) against one adapter at a time, and PEFT folders written and read.
// Parity with the real peft library: tests/hf/test_hf_parity.cpp.
#include "model/lora.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <map>
#include <string>

#include "core/atomic_file.h"
#include "core/error.h"
#include "model/keyed_dropout.h"
#include "model/lora_linear.h"
#include "model/model_folder.h"
#include "support/random_adapter.h"
#include "support/test_support.h"
#include "support/tiny_bert.h"
#include "train/autocast_guard.h"

namespace fs = std::filesystem;

namespace ragmig::model {
namespace {

constexpr int64_t kHidden = 32, kInter = 64, kLayers = 2;

BertModel tiny_tower() {
  torch::manual_seed(3);
  BertModel m(testing::tiny_bert_config(50, kHidden, 4, 16));
  m->eval();
  return m;
}

LoraSpec spec(int64_t r, std::vector<std::string> targets) {
  LoraSpec s;
  s.rank = r;
  s.alpha = 2.0 * static_cast<double>(r);
  s.targets = std::move(targets);
  return s;
}

std::pair<torch::Tensor, torch::Tensor> tiny_batch(int64_t rows) {
  torch::manual_seed(11);
  auto ids = torch::randint(5, 50, {rows, 9}, torch::kLong);
  auto mask = torch::ones({rows, 9}, torch::kLong);
  mask.index_put_({0, torch::indexing::Slice(6)}, 0);  // one padded row
  return {ids, mask};
}

// A random adapter (B not zero, unlike a fresh one) fitting the tiny tower.
LoraAdapter random_adapter(const LoraSpec& s, uint64_t seed) {
  BertModel t = tiny_tower();
  return testing::random_lora_adapter(t, s, seed, 0.2);
}

TEST(Lora, TargetsFollowPeftsSuffixRule) {
  const LoraSpec s = spec(4, {"query", "output.dense"});
  EXPECT_TRUE(targets_module(s, "encoder.layer.0.attention.self.query"));
  EXPECT_TRUE(targets_module(s, "encoder.layer.1.attention.output.dense"));
  EXPECT_TRUE(targets_module(s, "encoder.layer.1.output.dense"));
  EXPECT_FALSE(targets_module(s, "encoder.layer.1.intermediate.dense"));
  EXPECT_FALSE(targets_module(s, "encoder.layer.0.attention.self.key"));
  LoraSpec regex;
  regex.target_regex = R"(.*layer\.1\..*(query|value))";
  EXPECT_TRUE(targets_module(regex, "encoder.layer.1.attention.self.value"));
  EXPECT_FALSE(targets_module(regex, "encoder.layer.0.attention.self.value"));
}

TEST(Lora, RankRHasExactlyTheExpectedTrainableParameters) {
  for (int64_t r : {1, 4, 8}) {
    BertModel t = tiny_tower();
    const int64_t n = attach_lora(t, spec(r, {"query", "key", "value", "dense"}));
    // Per layer: query, key, value, attention.output.dense (H -> H), intermediate (H -> 2H), output (2H -> H).
    const int64_t per_layer = 4 * r * (kHidden + kHidden) + r * (kHidden + kInter) + r * (kInter + kHidden);
    EXPECT_EQ(n, kLayers * per_layer) << "r = " << r;
    int64_t trainable = 0;
    for (const auto& p : t->parameters())
      if (p.requires_grad()) trainable += p.numel();
    EXPECT_EQ(trainable, n);
    EXPECT_EQ(own_adapter(t, spec(r, {})).parameter_count(), n);
  }
  BertModel t = tiny_tower();
  EXPECT_EQ(attach_lora(t, spec(2, {"query", "value"})), kLayers * 2 * 2 * (kHidden + kHidden));
  BertModel none = tiny_tower();
  EXPECT_THROW(attach_lora(none, spec(2, {"qkv"})), ConfigError);
}

TEST(Lora, AFreshAdapterChangesNothingAndOnlyAdaptersGetGradients) {
  BertModel t = tiny_tower();
  const auto [ids, mask] = tiny_batch(3);
  const auto before = t->forward(ids, mask).detach();
  attach_lora(t, spec(4, {"query", "value", "intermediate.dense"}));
  EXPECT_TRUE(torch::equal(t->forward(ids, mask), before)) << "lora_B starts at zero, as PEFT's does";

  t->train();
  t->forward(ids, mask).pow(2).sum().backward();
  int64_t adapters_with_gradient = 0;
  for (const auto& p : t->named_parameters()) {
    if (is_lora_parameter(p.key())) {
      ASSERT_TRUE(p.value().requires_grad()) << p.key();
      // B's gradient is x A^T (non-zero); A's is B^T (...) = 0 while B is zero, exactly as in PEFT.
      if (p.key().find("lora_B") != std::string::npos) {
        ASSERT_TRUE(p.value().grad().defined()) << p.key();
        EXPECT_GT(p.value().grad().abs().sum().item<double>(), 0) << p.key();
        ++adapters_with_gradient;
      }
    } else {
      EXPECT_FALSE(p.value().requires_grad()) << p.key();
      EXPECT_TRUE(!p.value().grad().defined() || p.value().grad().abs().sum().item<double>() == 0) << p.key();
    }
  }
  EXPECT_EQ(adapters_with_gradient, kLayers * 3);
}

// With dropout, the adapter's down-projection is one graph node that keeps x and the mask's key and drops x
// again in backward: one draw of the generator per call as before, the same output as the plain graph (which
// keeps x * mask) and its gradients for x, A and B, in float32 and under CPU bf16 autocast.
TEST(Lora, TheDroppedInputIsMadeAgainInBackwardWithThePlainGraphsGradients) {
  for (const bool bf16 : {false, true}) {
    torch::manual_seed(3);
    LoraLinear layer(16, 12);
    layer->add_lora(4, 2.0, 0.25);
    {
      torch::NoGradGuard no_grad;
      layer->lora_B->weight.normal_();  // a fresh B is zero: A's gradient would be too
    }
    layer->train();
    const torch::Tensor x = torch::randn({2, 5, 16}).requires_grad_(true);
    const torch::Tensor w = torch::randn({2, 5, 12});
    auto run = [&](const std::function<torch::Tensor()>& forward) {
      for (const torch::Tensor& t : {x, layer->weight, layer->lora_A->weight, layer->lora_B->weight})
        t.mutable_grad().reset();
      torch::manual_seed(9);
      torch::Tensor y;
      {
        train::AutocastGuard autocast(torch::kCPU, bf16);
        y = forward();
      }
      (y.to(torch::kFloat) * w).sum().backward();
      return std::vector<torch::Tensor>{y.detach(), x.grad(), layer->weight.grad(), layer->lora_A->weight.grad(),
                                        layer->lora_B->weight.grad(), torch::tensor(static_cast<int64_t>(
                                                                          keyed_dropout_key()))};
    };
    const auto ours = run([&] { return layer->forward(x); });
    const auto plain = run([&] {
      const torch::Tensor mask = keyed_dropout_mask_like(x, 0.25, keyed_dropout_key());
      const torch::Tensor y = torch::linear(x, layer->weight, layer->bias);
      const torch::Tensor down = torch::linear(x * mask, layer->lora_A->weight).reshape({-1, 4});
      return torch::addmm(y.reshape({-1, 12}), down, layer->lora_B->weight.t(), 1.0, 2.0).view({2, 5, 12});
    });
    EXPECT_TRUE(torch::equal(ours[0], plain[0])) << bf16;
    const double tol = bf16 ? 2e-2 : 1e-5;
    for (size_t i = 1; i < 5; ++i) EXPECT_TRUE(torch::allclose(ours[i], plain[i], tol, tol)) << bf16 << " " << i;
    EXPECT_GT(ours[3].abs().sum().item<double>(), 0);
    EXPECT_EQ(ours[5].item<int64_t>(), plain[5].item<int64_t>()) << "one draw of the generator per call";
  }
}

TEST(Lora, MergedWeightsEmbedAsBasePlusAdapter) {
  const LoraSpec s = spec(4, {"query", "key", "value", "dense"});
  const LoraAdapter a = random_adapter(s, 5);
  const auto [ids, mask] = tiny_batch(4);

  BertModel routed = tiny_tower();
  torch::Tensor with_adapter;
  {
    torch::NoGradGuard no_grad;
    AdapterRouting routing(routed, {{0, 4, &a}});
    with_adapter = routed->forward(ids, mask);
  }
  BertModel merged = tiny_tower();
  merge_adapter(merged, a);
  torch::NoGradGuard no_grad;
  const auto m = merged->forward(ids, mask);
  EXPECT_LT((m - with_adapter).abs().max().item<double>(), 1e-5);
  EXPECT_GT((m - tiny_tower()->forward(ids, mask)).abs().max().item<double>(), 1e-2) << "the adapter matters";
}

// q, k and v come from one product over the three weights, which under autocast runs in bf16: every adapter still
// counts, its own (trained: gradients reach each A and B) and routed ones (serving). Checked against the fp32 tower
// within bf16 rounding, far below what the adapters change.
TEST(Lora, UnderAutocastQKeyAndValueFromOneProductKeepEveryAdapter) {
  const LoraSpec s = spec(4, {"query", "key", "value"});
  const auto [ids, mask] = tiny_batch(4);
  const auto keep = mask.unsqueeze(-1).to(torch::kFloat);
  // Against a fixed direction: LayerNorm's outputs have squares summing to a constant.
  const auto direction = torch::randn({4, 9, kHidden});
  BertModel t = tiny_tower();
  attach_lora(t, s);
  {
    torch::NoGradGuard no_grad;
    torch::manual_seed(8);
    for (auto& p : t->named_parameters())
      if (is_lora_parameter(p.key())) p.value().normal_(0, 0.3);
  }
  const auto run = [&](bool bf16) {
    t->zero_grad();
    torch::Tensor out;
    {
      train::AutocastGuard autocast(torch::kCPU, bf16);
      out = t->forward(ids, mask).to(torch::kFloat) * keep;
    }
    (out * direction).sum().backward();
    std::map<std::string, torch::Tensor> grads;
    for (const auto& p : t->named_parameters())
      if (is_lora_parameter(p.key())) grads[p.key()] = p.value().grad().clone();
    return std::make_pair(out.detach(), grads);
  };
  const auto [exact, exact_grads] = run(false);
  const auto [bf16, bf16_grads] = run(true);
  const double rounding = (bf16 - exact).abs().max().item<double>();
  const double adapters = (exact - tiny_tower()->forward(ids, mask) * keep).abs().max().item<double>();
  EXPECT_LT(rounding, 0.1);
  EXPECT_GT(adapters, 10 * rounding) << "the adapters change far more than bf16 rounds";
  ASSERT_EQ(bf16_grads.size(), static_cast<size_t>(kLayers * 3 * 2));
  for (const auto& [name, g] : exact_grads) {
    const auto& b = bf16_grads.at(name);
    EXPECT_GT(g.abs().sum().item<double>(), 0) << name;
    EXPECT_LT((b - g).norm().item<double>() / g.norm().item<double>(), 5e-2) << name;
  }

  // Routed (serving): the same adapter given to the base tower for all rows, under autocast.
  const LoraAdapter a = own_adapter(t, s);
  BertModel base = tiny_tower();
  torch::NoGradGuard no_grad;
  AdapterRouting routing(base, {{0, 4, &a}});
  train::AutocastGuard autocast(torch::kCPU, true);
  const auto routed = base->forward(ids, mask).to(torch::kFloat) * keep;
  EXPECT_LT((routed - exact).abs().max().item<double>(), 0.1);
  EXPECT_LT((routed - bf16).abs().max().item<double>(), 0.1);
}

TEST(Lora, MixedAdaptersInOneBatchEqualOneByOne) {
  const LoraSpec s = spec(4, {"query", "value", "output.dense"});
  const LoraAdapter a = random_adapter(s, 21), b = random_adapter(spec(2, {"key", "intermediate.dense"}), 22);
  const auto [ids, mask] = tiny_batch(5);
  BertModel t = tiny_tower();
  torch::NoGradGuard no_grad;
  torch::Tensor mixed;
  {
    // Rows 0-1 adapter a, row 2 the base model, rows 3-4 adapter b.
    AdapterRouting routing(t, {{0, 2, &a}, {2, 3, nullptr}, {3, 5, &b}});
    mixed = t->forward(ids, mask);
  }
  const auto alone = [&](const LoraAdapter* adapter, int64_t begin, int64_t end) {
    AdapterRouting routing(t, {{0, end - begin, adapter}});
    return t->forward(ids.slice(0, begin, end), mask.slice(0, begin, end));
  };
  EXPECT_LT((mixed.slice(0, 0, 2) - alone(&a, 0, 2)).abs().max().item<double>(), 1e-5);
  EXPECT_LT((mixed.slice(0, 2, 3) - alone(nullptr, 2, 3)).abs().max().item<double>(), 1e-5);
  EXPECT_LT((mixed.slice(0, 3, 5) - alone(&b, 3, 5)).abs().max().item<double>(), 1e-5);
  EXPECT_TRUE(torch::equal(t->forward(ids, mask).slice(0, 2, 3), mixed.slice(0, 2, 3)))
      << "the routing ends with its scope";
  // The routes' pieces are shared out among the threads (their sizes follow the thread count): one thread or
  // three give what two did.
  const int threads = at::get_num_threads();
  for (const int n : {1, 3}) {
    at::set_num_threads(n);
    AdapterRouting routing(t, {{0, 2, &a}, {2, 3, nullptr}, {3, 5, &b}});
    EXPECT_LT((t->forward(ids, mask) - mixed).abs().max().item<double>(), 1e-6) << n << " threads";
  }
  at::set_num_threads(threads);
}

// Serving: one adapter for every row of a batch with at least as many token rows as the layer has inputs or
// outputs runs the product with W + s B A; a smaller batch, or an adapter for only some rows, adds the low-rank
// products to the base product. Both give the same outputs.
TEST(Lora, OneAdapterForEveryRowOfALargeBatchRunsWithTheMergedWeight) {
  torch::manual_seed(5);
  LoraLinear layer(32, 48);
  layer->eval();
  const auto a = torch::randn({4, 32}), b = torch::randn({48, 4});
  const auto large = torch::randn({3, 16, 32}), small = torch::randn({3, 2, 32});  // 48 and 6 token rows
  const auto expected = [&](const torch::Tensor& x) {
    return torch::linear(x, layer->weight, layer->bias) + 0.5 * torch::linear(torch::linear(x, a), b);
  };
  torch::NoGradGuard no_grad;
  layer->set_routes({{0, 3, a, b, 0.5}});
  EXPECT_TRUE(torch::allclose(layer->product_weight(large), layer->weight + 0.5 * b.mm(a), 1e-6, 1e-6));
  EXPECT_TRUE(layer->product_weight(small).is_same(layer->weight)) << "6 rows: routed";
  EXPECT_TRUE(torch::allclose(layer->forward(large), expected(large), 1e-5, 1e-5));
  EXPECT_TRUE(torch::allclose(layer->forward(small), expected(small), 1e-5, 1e-5));

  layer->set_routes({{0, 2, a, b, 0.5}});  // not row 2
  EXPECT_TRUE(layer->product_weight(large).is_same(layer->weight));
  const auto out = layer->forward(large);
  EXPECT_TRUE(torch::allclose(out.slice(0, 0, 2), expected(large).slice(0, 0, 2), 1e-5, 1e-5));
  EXPECT_TRUE(torch::equal(out.slice(0, 2), torch::linear(large.slice(0, 2), layer->weight, layer->bias)));
  layer->set_routes({});
  EXPECT_TRUE(layer->product_weight(large).is_same(layer->weight));

  // A whole tower: q, k and v from one product over merged weights (BertSelfAttention::project) embed as routes.
  const LoraAdapter adapter = random_adapter(spec(4, {"query", "key", "value", "dense"}), 31);
  const auto [ids, mask] = tiny_batch(8);  // 72 token rows: every layer merges
  BertModel t = tiny_tower();
  torch::Tensor merged, routed;
  {
    AdapterRouting routing(t, {{0, 8, &adapter}});
    merged = t->forward(ids, mask);
  }
  {
    AdapterRouting routing(t, {{0, 4, &adapter}, {4, 8, &adapter}});  // two routes: no merge
    routed = t->forward(ids, mask);
  }
  EXPECT_LT((merged - routed).abs().max().item<double>(), 1e-5);
  EXPECT_GT((merged - t->forward(ids, mask)).abs().max().item<double>(), 1e-2) << "the adapter matters";
}

TEST(Lora, AnAdapterForAnotherShapeIsRefusedNamingTheLayer) {
  const LoraAdapter a = random_adapter(spec(2, {"query"}), 1);
  LoraAdapter wrong = a;
  wrong.layers.begin()->second.a = torch::zeros({2, kHidden + 1});
  BertModel t = tiny_tower();
  try {
    merge_adapter(t, wrong);
    FAIL() << "merged an adapter of the wrong shape";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("encoder.layer.0.attention.self.query"), std::string::npos) << e.what();
  }
  LoraAdapter unknown = a;
  unknown.layers["encoder.layer.7.attention.self.query"] = a.layers.begin()->second;
  EXPECT_THROW({ AdapterRouting routing(t, {{0, 1, &unknown}}); }, DataError);
}

TEST(LoraFolder, PeftFilesRoundTripExactly) {
  testing::ScratchDir dir;
  LoraSpec s = spec(4, {"query", "output.dense"});
  s.dropout = 0.05;
  s.rslora = true;
  const LoraAdapter a = random_adapter(s, 9);
  write_peft_adapter(dir.path().string(), a, "/models/base");
  const auto config = nlohmann::json::parse(read_file(dir / "adapter_config.json"));
  EXPECT_EQ(config["peft_type"], "LORA");
  EXPECT_EQ(config["r"], 4);
  EXPECT_EQ(config["base_model_name_or_path"], "/models/base");
  const auto names = load_tensors((dir / "adapter_model.safetensors").string());
  EXPECT_EQ(names.size(), 2u * a.layers.size());
  EXPECT_TRUE(names.count("base_model.model.encoder.layer.1.output.dense.lora_B.weight"));

  const LoraAdapter back = read_peft_adapter(dir.path().string());
  EXPECT_EQ(back.spec.rank, 4);
  EXPECT_DOUBLE_EQ(back.spec.scaling(), 8.0 / 2.0) << "rsLoRA: alpha / sqrt(r)";
  EXPECT_EQ(back.spec.targets, s.targets);
  ASSERT_EQ(back.layers.size(), a.layers.size());
  for (const auto& [name, f] : a.layers) {
    EXPECT_TRUE(torch::equal(back.layers.at(name).a, f.a)) << name;
    EXPECT_TRUE(torch::equal(back.layers.at(name).b, f.b)) << name;
  }
}

TEST(LoraFolder, WhatRagmigCannotApplyIsRefusedNamingTheKey) {
  testing::ScratchDir dir;
  write_peft_adapter(dir.path().string(), random_adapter(spec(2, {"query"}), 2), "/base");
  const auto path = dir / "adapter_config.json";
  const auto good = nlohmann::json::parse(read_file(path));
  for (const auto& [key, value] : std::vector<std::pair<std::string, nlohmann::json>>{
           {"use_dora", true}, {"bias", "all"}, {"fan_in_fan_out", true}, {"peft_type", "IA3"},
           {"modules_to_save", {"classifier"}}, {"rank_pattern", {{"query", 8}}}, {"r", "four"}}) {
    auto bad = good;
    bad[key] = value;
    write_file_atomic(path, bad.dump());
    try {
      read_peft_adapter(dir.path().string());
      ADD_FAILURE() << key << " = " << value.dump() << " was accepted";
    } catch (const DataError& e) {
      EXPECT_NE(std::string(e.what()).find("adapter_config.json"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(key == "r" ? "r" : key), std::string::npos) << e.what();
    }
  }
  write_file_atomic(path, good.dump());
  fs::remove(dir / "adapter_model.safetensors");
  EXPECT_THROW(read_peft_adapter(dir.path().string()), IoError);
}

TEST(LoraFolder, AnAdapterFolderLoadsAsItsBaseWithTheAdapterMerged) {
  testing::ScratchDir dir;
  // The base: a tiny model folder; the adapter folder names it.
  torch::manual_seed(3);
  EncoderSpec es;
  es.bert = testing::tiny_bert_config(50, kHidden, 4, 16);
  DualEncoder base(es);
  std::vector<std::string> vocab = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"};
  for (int i = 5; i < 50; ++i) vocab.push_back("w" + std::to_string(i));
  save_model_folder((dir / "base").string(), base, text::word_piece_spec(vocab));

  const LoraSpec s = spec(4, {"query", "value"});
  DualAdapter adapter;
  adapter.base = (dir / "base").string();
  adapter.query = random_adapter(s, 17);
  save_adapter_folder((dir / "adapter").string(), adapter);
  EXPECT_TRUE(is_adapter_folder((dir / "adapter").string()));
  EXPECT_FALSE(fs::exists(dir / "adapter" / "config.json"));

  LoadedModel loaded = load_model_folder((dir / "adapter").string());
  LoadedModel expected = load_model_folder((dir / "base").string());
  BertModel q = expected.model->query_tower();
  merge_adapter(q, adapter.query);
  const auto [ids, mask] = tiny_batch(3);
  loaded.model->eval();
  expected.model->eval();
  torch::NoGradGuard no_grad;
  EXPECT_LT((loaded.model->encode_queries(ids, mask) - expected.model->encode_queries(ids, mask)).abs().max().item<double>(), 1e-6);
  EXPECT_EQ(loaded.tokenizer.vocab, vocab);

  // Shared towers take no passage adapter.
  adapter.passage = adapter.query;
  EXPECT_THROW(merge_dual_adapter(loaded.model, adapter), DataError);

  // Without ragmig.json the base is PEFT's base_model_name_or_path; a null one is refused naming the key.
  fs::remove(dir / "adapter" / "ragmig.json");
  EXPECT_EQ(adapter_base((dir / "adapter").string()), fs::absolute(dir / "base").lexically_normal().string());
  auto config = nlohmann::json::parse(read_file(dir / "adapter" / "adapter_config.json"));
  config["base_model_name_or_path"] = nullptr;
  write_file_atomic(dir / "adapter" / "adapter_config.json", config.dump());
  try {
    load_model_folder((dir / "adapter").string());
    ADD_FAILURE() << "loaded an adapter that names no base";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("base_model_name_or_path"), std::string::npos) << e.what();
  }
  // A model folder that also holds an adapter config is a model folder.
  EXPECT_FALSE(is_adapter_folder((dir / "base").string()));
  fs::copy_file(dir / "adapter" / "adapter_config.json", dir / "base" / "adapter_config.json");
  EXPECT_FALSE(is_adapter_folder((dir / "base").string()));
  EXPECT_NO_THROW(load_model_folder((dir / "base").string()));
}

// A tiny base model folder (hidden kHidden, 50 tokens) saved with `options`, for adapters of it.
void write_base_folder(const fs::path& dir, const SaveOptions& options) {
  EncoderSpec es;
  es.bert = testing::tiny_bert_config(50, kHidden, 4, 16);
  DualEncoder base(es);
  std::vector<std::string> vocab = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"};
  for (int i = 5; i < 50; ++i) vocab.push_back("w" + std::to_string(i));
  save_model_folder(dir.string(), base, text::word_piece_spec(vocab), options);
}

// An adapter folder brings its base's prompts unless it records its own (a training whose prompts differed).
TEST(LoraFolder, AnAdapterHasItsBasesPromptsUnlessItRecordsItsOwn) {
  testing::ScratchDir dir;
  SaveOptions options;
  options.prompts = {"query: ", "passage: "};
  write_base_folder(dir / "base", options);

  DualAdapter adapter;
  adapter.base = (dir / "base").string();
  adapter.query = random_adapter(spec(4, {"query", "value"}), 17);
  save_adapter_folder((dir / "inherits").string(), adapter);
  EXPECT_FALSE(fs::exists(dir / "inherits" / "config_sentence_transformers.json"));
  EXPECT_EQ(load_adapter_folder((dir / "inherits").string()).prompts, std::nullopt);
  EXPECT_EQ(load_model_folder((dir / "inherits").string()).prompts, options.prompts);
  EXPECT_EQ(folder_prompts((dir / "inherits").string()), options.prompts) << "the same without loading weights";

  adapter.prompts = text::Prompts{"search_query: ", ""};
  save_adapter_folder((dir / "own").string(), adapter);
  EXPECT_EQ(load_adapter_folder((dir / "own").string()).prompts, adapter.prompts);
  EXPECT_EQ(load_model_folder((dir / "own").string()).prompts, *adapter.prompts);
  EXPECT_EQ(folder_prompts((dir / "own").string()), *adapter.prompts);
  EXPECT_EQ(folder_prompts((dir / "base").string()), options.prompts);
}

// An adapter's embedding sizes: its base's truncate_dim (sentence-transformers loads an adapter into its base's
// configuration) and its own Matryoshka sizes, never its base's (they were its base's training's).
TEST(LoraFolder, AnAdapterHasItsBasesTruncateDimAndItsOwnMatryoshkaSizes) {
  testing::ScratchDir dir;
  SaveOptions options;
  options.sizes = {16, {32, 16}};
  write_base_folder(dir / "base", options);

  DualAdapter adapter;
  adapter.base = (dir / "base").string();
  adapter.query = random_adapter(spec(4, {"query", "value"}), 17);
  save_adapter_folder((dir / "plain").string(), adapter);
  const EmbeddingSizes inherited{16, {}};
  EXPECT_EQ(load_model_folder((dir / "plain").string()).sizes, inherited);
  EXPECT_EQ(folder_embedding_sizes((dir / "plain").string()), inherited) << "the same without loading weights";

  adapter.matryoshka_dims = {32, 8};
  save_adapter_folder((dir / "matryoshka").string(), adapter);
  EXPECT_EQ(nlohmann::json::parse(read_file(dir / "matryoshka" / "ragmig.json"))["matryoshka_dims"],
            nlohmann::json::array({32, 8}));
  EXPECT_EQ(load_adapter_folder((dir / "matryoshka").string()).matryoshka_dims, adapter.matryoshka_dims);
  const EmbeddingSizes own{16, {32, 8}};
  EXPECT_EQ(load_model_folder((dir / "matryoshka").string()).sizes, own);
  EXPECT_EQ(folder_embedding_sizes((dir / "matryoshka").string()), own);

  adapter.matryoshka_dims = {64};
  save_adapter_folder((dir / "too-large").string(), adapter);
  try {
    load_model_folder((dir / "too-large").string());
    ADD_FAILURE() << "loaded an adapter whose Matryoshka size exceeds its base's embeddings";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find((dir / "too-large" / "ragmig.json").string() +
                                         ": key \"matryoshka_dims\": 64 exceeds the model's 32"),
              std::string::npos)
        << e.what();
  }
}

TEST(LoraFolder, SeparateTowersTrainAndSaveAnAdapterEach) {
  testing::ScratchDir dir;
  torch::manual_seed(4);
  EncoderSpec es;
  es.bert = testing::tiny_bert_config(50, kHidden, 4, 16);
  es.shared_towers = false;
  DualEncoder base(es);
  std::vector<std::string> vocab = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"};
  for (int i = 5; i < 50; ++i) vocab.push_back("w" + std::to_string(i));
  save_model_folder((dir / "base").string(), base, text::word_piece_spec(vocab));

  // What the trainer does: an adapter on each tower, trained apart (here: set apart).
  LoadedModel net = load_model_folder((dir / "base").string());
  const LoraSpec s = spec(2, {"query", "dense"});
  BertModel q = net.model->query_tower(), p = net.model->passage_tower();
  const int64_t per_tower = attach_lora(q, s);
  EXPECT_EQ(attach_lora(p, s), per_tower);
  torch::manual_seed(8);
  {
    torch::NoGradGuard no_grad;
    for (auto& t : net.model->named_parameters())
      if (is_lora_parameter(t.key())) t.value().normal_(0, 0.2);
  }
  const DualAdapter adapter = own_dual_adapter(net.model, s, (dir / "base").string());
  ASSERT_TRUE(adapter.passage.has_value());
  EXPECT_FALSE(torch::equal(adapter.query.layers.begin()->second.b, adapter.passage->layers.begin()->second.b));
  save_adapter_folder((dir / "adapter").string(), adapter);
  EXPECT_TRUE(is_adapter_folder((dir / "adapter" / "passage").string()));

  // Loaded back, each tower embeds as the trained one did.
  LoadedModel loaded = load_model_folder((dir / "adapter").string());
  const auto [ids, mask] = tiny_batch(3);
  net.model->eval();
  loaded.model->eval();
  torch::NoGradGuard no_grad;
  EXPECT_LT((loaded.model->encode_queries(ids, mask) - net.model->encode_queries(ids, mask)).abs().max().item<double>(), 1e-5);
  EXPECT_LT((loaded.model->encode_passages(ids, mask) - net.model->encode_passages(ids, mask)).abs().max().item<double>(), 1e-5);
}

}  // namespace
}  // namespace ragmig::model
