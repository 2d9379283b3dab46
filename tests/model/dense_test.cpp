// sentence-transformers' Dense module in ragmig: its config.json read and written, the layer's arithmetic, the
// dual encoder with it (embedding size, separate towers), model folders that carry it both ways, and the errors
// a foreign or damaged Dense module gives. Parity with sentence-transformers itself: tests/hf.
#include "model/dense.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/atomic_file.h"
#include "core/error.h"
#include "model/model_folder.h"
#include "model/torch_safetensors.h"
#include "model_test_support.h"
#include "support/test_support.h"
#include "support/tiny_bert.h"

// A namespace of its own: the test binary's files compile as one unity translation unit.
namespace ragmig::model::dense_test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using ragmig::testing::ScratchDir;

// --- config.json ---------------------------------------------------------------------------------------------

TEST(DenseConfig, ReadsWhatSentenceTransformersWrites) {
  // LaBSE's 2_Dense/config.json, and distiluse-base-multilingual-cased-v2's.
  EXPECT_EQ(dense_config_from_json(json::parse(R"({"in_features": 768, "out_features": 768, "bias": true,
                                                   "activation_function": "torch.nn.modules.activation.Tanh"})"),
                                   "c.json"),
            (DenseConfig{768, 768, true, Activation::Tanh, false}));
  EXPECT_EQ(dense_config_from_json(json::parse(R"({"in_features": 768, "out_features": 512, "bias": true,
                                                   "activation_function": "torch.nn.modules.activation.Tanh"})"),
                                   "c.json")
                .out_features,
            512);
  // Defaults as Dense's constructor has them; the newer keys at their values for the pooled embedding.
  EXPECT_EQ(dense_config_from_json(json::parse(R"({"in_features": 4, "out_features": 2})"), "c.json"),
            (DenseConfig{4, 2, true, Activation::Tanh, false}));
  EXPECT_EQ(dense_config_from_json(json::parse(R"({"in_features": 4, "out_features": 2, "bias": false,
      "activation_function": "torch.nn.modules.linear.Identity", "use_residual": true,
      "module_input_name": "sentence_embedding", "module_output_name": null})"), "c.json"),
            (DenseConfig{4, 2, false, Activation::Identity, true}));
  EXPECT_EQ(dense_config_from_json(json::parse(R"({"in_features": 4, "out_features": 2,
      "activation_function": "torch.nn.GELU"})"), "c.json").activation, Activation::GELU);
}

TEST(DenseConfig, RoundTripsEveryActivation) {
  for (Activation a : {Activation::Identity, Activation::Tanh, Activation::ReLU, Activation::GELU, Activation::Sigmoid,
                       Activation::SiLU}) {
    EXPECT_EQ(activation_named(torch_class_name(a)), a) << torch_class_name(a);
    EXPECT_EQ(activation_from_string(to_string(a)), a) << to_string(a);
    for (bool residual : {false, true}) {
      const DenseConfig c{8, 3, !residual, a, residual};
      EXPECT_EQ(dense_config_from_json(to_json(c), "c.json"), c) << to_json(c).dump();
    }
  }
  EXPECT_FALSE(to_json(DenseConfig{8, 3}).contains("use_residual")) << "omitted at its default, as ST does";
  EXPECT_FALSE(activation_from_string("Tanh"));
  EXPECT_FALSE(activation_named("tanh"));
}

TEST(DenseConfig, RefusalsNameTheFileAndKey) {
  const std::pair<const char*, const char*> cases[] = {
      {R"([1])", "expected a JSON object"},
      {R"({"out_features": 2})", "key \"in_features\": missing"},
      {R"({"in_features": 4, "out_features": 0})", "key \"out_features\": expected a positive integer, got 0"},
      {R"({"in_features": 4.5, "out_features": 2})", "key \"in_features\": expected a positive integer"},
      {R"({"in_features": 4, "out_features": 2, "bias": "yes"})", "key \"bias\": expected true or false"},
      {R"({"in_features": 4, "out_features": 2, "activation_function": "torch.nn.modules.activation.Softmax"})",
       "\"torch.nn.modules.activation.Softmax\" is not supported"},
      {R"({"in_features": 4, "out_features": 2, "activation_function": "my_package.Swish"})",
       "key \"activation_function\""},
      {R"({"in_features": 4, "out_features": 2, "activation_function": 3})", "expected a class name"},
      {R"({"in_features": 4, "out_features": 2, "module_input_name": "token_embeddings"})",
       "key \"module_input_name\": expected \"sentence_embedding\""},
  };
  for (const auto& [text, message] : cases) {
    try {
      dense_config_from_json(json::parse(text), "dir/2_Dense/config.json");
      ADD_FAILURE() << text << ": no error";
    } catch (const DataError& e) {
      EXPECT_THAT(e.what(),
                  ::testing::AllOf(::testing::HasSubstr("dir/2_Dense/config.json"), ::testing::HasSubstr(message)))
          << text;
    }
  }
}

// --- the layer -----------------------------------------------------------------------------------------------

TEST(Dense, ComputesTheActivationOfTheLinearLayerPlusTheResidual) {
  torch::manual_seed(3);
  const auto x = torch::randn({5, 6}, torch::kDouble);
  for (Activation a : {Activation::Identity, Activation::Tanh, Activation::ReLU, Activation::GELU, Activation::Sigmoid,
                       Activation::SiLU})
    for (int64_t out : {6, 4})
      for (bool residual : {false, true}) {
        Dense dense(DenseConfig{6, out, true, a, residual});
        dense->to(torch::kDouble);
        auto p = dense->named_parameters();
        const auto z = torch::addmm(p["linear.bias"], x, p["linear.weight"].t());
        torch::Tensor y = a == Activation::Identity ? z
                          : a == Activation::Tanh   ? torch::tanh(z)
                          : a == Activation::ReLU   ? z.clamp_min(0)
                          : a == Activation::GELU   ? 0.5 * z * (1 + torch::erf(z / std::sqrt(2.0)))
                          : a == Activation::Sigmoid ? 1 / (1 + torch::exp(-z))
                                                     : z / (1 + torch::exp(-z));
        if (residual) y = y + (out == 6 ? x : torch::mm(x, p["residual.weight"].t()));
        EXPECT_TRUE(torch::allclose(dense->forward(x), y, 1e-12, 1e-12))
            << torch_class_name(a) << " out " << out << " residual " << residual;
        EXPECT_EQ(p.contains("residual.weight"), residual && out != 6);
      }
  EXPECT_FALSE(Dense(DenseConfig{6, 4, false})->named_parameters().contains("linear.bias"));
}

// --- in the dual encoder and its folders ----------------------------------------------------------------------

EncoderSpec dense_spec(bool shared, DenseConfig dense = {16, 12, true, Activation::Tanh, false}) {
  EncoderSpec s;
  s.bert = testing::tiny_bert_config(40, 16, 2, 24);
  s.shared_towers = shared;
  s.dense = {dense};
  return s;
}

text::TokenizerSpec tiny_tokenizer() { return text::word_piece_spec(test::tiny_vocab(40)); }

DualEncoder random_dense_encoder(const EncoderSpec& spec, uint64_t seed) {
  torch::manual_seed(seed);
  DualEncoder m(spec);
  test::randomize(m);
  return m;
}

TEST(DenseEncoder, EmbedsThroughTheLayerOfEachTower) {
  for (bool shared : {true, false}) {
    EncoderSpec spec = dense_spec(shared);
    spec.normalize = false;
    DualEncoder m = random_dense_encoder(spec, 4);
    m->eval();
    EXPECT_EQ(spec.embedding_dim(), 12);
    const test::Batch b = test::sample_batch();
    torch::NoGradGuard no_grad;
    const auto q = m->encode_queries(b.ids, b.mask), p = m->encode_passages(b.ids, b.mask);
    EXPECT_EQ(q.sizes(), (std::vector<int64_t>{3, 12}));
    EXPECT_EQ(q.scalar_type(), torch::kFloat);
    const auto pooled_q = pool(m->query_tower()->forward(b.ids, b.mask), b.mask, spec.pooling);
    EXPECT_TRUE(torch::allclose(q, m->query_dense()[0]->forward(pooled_q)));
    const auto pooled_p = pool(m->passage_tower()->forward(b.ids, b.mask), b.mask, spec.pooling);
    EXPECT_TRUE(torch::allclose(p, m->passage_dense()[0]->forward(pooled_p)));
    EXPECT_EQ(m->passage_dense()[0].ptr() == m->query_dense()[0].ptr(), shared);
    EXPECT_EQ(m->named_parameters().contains("passage_dense.linear.weight"), !shared);
  }
  // With Normalize after it, unit vectors of the Dense layer's size.
  DualEncoder normalised = random_dense_encoder(dense_spec(true), 4);
  const test::Batch b = test::sample_batch();
  torch::NoGradGuard no_grad;
  EXPECT_TRUE(torch::allclose(normalised->encode_queries(b.ids, b.mask).norm(2, 1), torch::ones({3})));
  // A bf16 model (as serve runs it) takes float32 pooled vectors and gives float32.
  normalised->to(torch::kBFloat16);
  EXPECT_EQ(normalised->project(torch::randn({2, 16}), false).scalar_type(), torch::kFloat);
}

TEST(DenseEncoder, FoldersCarryItAsSentenceTransformersModulesBothWays) {
  for (bool shared : {true, false}) {
    SCOPED_TRACE(shared ? "shared" : "separate");
    ScratchDir scratch;
    const fs::path dir = scratch / "model";
    const EncoderSpec spec = dense_spec(shared, {16, 12, false, Activation::GELU, true});
    DualEncoder m = random_dense_encoder(spec, 5);
    save_model_folder(dir.string(), m, tiny_tokenizer());
    for (const fs::path& tower : {dir, dir / "passage"}) {
      if (shared && tower != dir) continue;
      EXPECT_EQ(json::parse(read_file(tower / "modules.json"))[2],
                json({{"idx", 2}, {"name", "2"}, {"path", "2_Dense"}, {"type", "sentence_transformers.models.Dense"}}));
      EXPECT_EQ(json::parse(read_file(tower / "modules.json"))[3]["path"], "3_Normalize");
      EXPECT_TRUE(fs::is_directory(tower / "3_Normalize"));
      EXPECT_EQ(json::parse(read_file(tower / "2_Dense" / "config.json")), to_json(spec.dense[0]));
      EXPECT_EQ(json::parse(read_file(tower / "1_Pooling" / "config.json"))["word_embedding_dimension"], 16);
      const auto weights = read_safetensors((tower / "2_Dense" / "model.safetensors").string());
      EXPECT_EQ(weights.metadata.at("format"), "pt");
      std::vector<std::string> names;
      for (const auto& [name, t] : weights.tensors) names.push_back(name);
      EXPECT_EQ(names, (std::vector<std::string>{"linear.weight", "residual.weight"}));
      const std::string prefix = tower == dir ? "query_dense." : "passage_dense.";
      EXPECT_TRUE(torch::equal(from_raw(weights.tensors.at("linear.weight")),
                               m->named_parameters()[prefix + "linear.weight"]));
    }
    const auto layout = read_sentence_transformer_layout(dir.string());
    ASSERT_TRUE(layout);
    EXPECT_EQ(layout->dense, spec.dense);
    EXPECT_EQ(layout->dense_paths, std::vector<std::string>{"2_Dense"});
    EXPECT_TRUE(layout->normalize);

    // Back, bit for bit; also as sentence-transformers' own folder (no ragmig.json).
    for (bool without_ragmig_json : {false, true}) {
      if (without_ragmig_json && !shared) continue;  // separate towers need ragmig.json
      if (without_ragmig_json) fs::remove(dir / "ragmig.json");
      auto loaded = load_model_folder(dir.string());
      EXPECT_EQ(loaded.model->spec().dense, spec.dense);
      auto pa = m->named_parameters(), pb = loaded.model->named_parameters();
      ASSERT_EQ(pa.size(), pb.size());
      for (const auto& p : pa) EXPECT_TRUE(torch::equal(p.value(), pb[p.key()])) << p.key();
    }
  }
}

// EmbeddingGemma's layout: two Dense modules after pooling (768 -> 3072 -> 768 there, bias-free, the identity), each
// in its own folder (2_Dense, 3_Dense), Normalize after them; both towers' chains, both ways, bit for bit.
TEST(DenseEncoder, AChainOfDenseModulesRunsInOrderAndRoundTrips) {
  for (bool shared : {true, false}) {
    SCOPED_TRACE(shared);
    EncoderSpec spec = dense_spec(shared, {16, 24, false, Activation::Identity, false});
    spec.dense.push_back({24, 12, true, Activation::Tanh, false});
    DualEncoder m = random_dense_encoder(spec, 7);
    m->eval();
    EXPECT_EQ(spec.embedding_dim(), 12);
    EXPECT_EQ(m->named_parameters().contains("query_dense2.linear.weight"), true);
    EXPECT_EQ(m->named_parameters().contains("passage_dense2.linear.weight"), !shared);
    const test::Batch b = test::sample_batch();
    torch::NoGradGuard no_grad;
    const auto pooled = pool(m->passage_tower()->forward(b.ids, b.mask), b.mask, spec.pooling);
    const auto through = m->passage_dense()[1]->forward(m->passage_dense()[0]->forward(pooled));
    EXPECT_TRUE(torch::allclose(
        m->encode_passages(b.ids, b.mask),
        torch::nn::functional::normalize(through, torch::nn::functional::NormalizeFuncOptions().dim(1))));

    ScratchDir scratch;
    const fs::path dir = scratch / "model";
    save_model_folder(dir.string(), m, tiny_tokenizer());
    const json modules = json::parse(read_file(dir / "modules.json"));
    ASSERT_EQ(modules.size(), 5u);
    EXPECT_EQ(modules[3]["path"], "3_Dense");
    EXPECT_EQ(modules[4]["path"], "4_Normalize");
    EXPECT_EQ(json::parse(read_file(dir / "3_Dense" / "config.json")), to_json(spec.dense[1]));
    const auto layout = read_sentence_transformer_layout(dir.string());
    ASSERT_TRUE(layout);
    EXPECT_EQ(layout->dense_paths, (std::vector<std::string>{"2_Dense", "3_Dense"}));
    auto loaded = load_model_folder(dir.string());
    EXPECT_EQ(loaded.model->spec().dense, spec.dense);
    auto pa = m->named_parameters(), pb = loaded.model->named_parameters();
    ASSERT_EQ(pa.size(), pb.size());
    for (const auto& p : pa) EXPECT_TRUE(torch::equal(p.value(), pb[p.key()])) << p.key();
  }
}

// dir's model, edited by `edit`, fails to load with `message`.
void expect_refused(const fs::path& dir, const std::function<void()>& edit, const std::string& message) {
  edit();
  try {
    load_model_folder(dir.string());
    ADD_FAILURE() << "no error; expected one mentioning " << message;
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr(message));
  }
}

TEST(DenseEncoder, FoldersWhoseDenseModuleRagmigCannotRunAreRefusedByName) {
  ScratchDir scratch;
  int copies = 0;
  // A new copy of a shared-tower or a separate-tower folder with a Dense module.
  const auto fresh = [&](bool shared) {
    const fs::path original = scratch / (shared ? "shared" : "separate");
    if (!fs::exists(original)) {
      DualEncoder m = random_dense_encoder(dense_spec(shared), 6);
      save_model_folder(original.string(), m, tiny_tokenizer());
    }
    const fs::path dir = scratch / ("copy" + std::to_string(copies++));
    fs::copy(original, dir, fs::copy_options::recursive);
    return dir;
  };
  // modules.json listing sentence-transformers' classes, each in sentence-transformers' folder for it.
  const auto modules = [](std::initializer_list<const char*> classes) {
    json j = json::array();
    for (const char* c : classes) {
      const std::string i = std::to_string(j.size());
      j.push_back({{"idx", j.size()},
                   {"path", std::string(c) == "Transformer" ? "" : i + "_" + c},
                   {"type", std::string("sentence_transformers.models.") + c}});
    }
    return j.dump();
  };

  fs::path dir = fresh(true);
  const fs::path config = dir / "2_Dense" / "config.json";
  expect_refused(dir, [&] { write_file_atomic(config, R"({"in_features": 8, "out_features": 12})"); },
                 config.string() + ": key \"in_features\": 8, but the encoder's hidden_size is 16");
  expect_refused(dir, [&] { write_file_atomic(config, R"({"in_features": 16, "out_features": 10})"); },
                 "has shape [12], the model expects [10]");
  expect_refused(dir, [&] { write_file_atomic(config, R"({"in_features": 16, "out_features": 12, "bias": false})"); },
                 (dir / "2_Dense" / "model.safetensors").string() + ": unexpected tensor \"linear.bias\"");
  expect_refused(dir, [&] {
    write_file_atomic(config, R"({"in_features": 16, "out_features": 12, "use_residual": true})");
  }, "tensor \"residual.weight\" missing");
  write_file_atomic(config, to_json(dense_spec(true).dense[0]).dump());
  expect_refused(dir, [&] {
    auto w = load_tensors((dir / "2_Dense" / "model.safetensors").string());
    w["linear.bias"][0] = NAN;
    save_tensors((dir / "2_Dense" / "model.safetensors").string(), w);
  }, "tensor \"linear.bias\" holds NaN or infinite values");
  expect_refused(dir, [&] { fs::rename(dir / "2_Dense" / "model.safetensors", dir / "2_Dense" / "pytorch_model.bin"); },
                 (dir / "2_Dense" / "pytorch_model.bin").string() +
                     ": a pickled PyTorch file, which ragmig does not read");

  dir = fresh(false);
  expect_refused(dir, [&] {
    write_file_atomic(dir / "passage" / "2_Dense" / "config.json",
                      R"({"in_features": 16, "out_features": 12, "activation_function": "torch.nn.Sigmoid"})");
  }, (dir / "passage" / "modules.json").string() + ": the passage tower's Dense module differs from the query tower's");
  dir = fresh(false);
  expect_refused(dir, [&] {
    write_file_atomic(dir / "passage" / "modules.json", modules({"Transformer", "Pooling", "Normalize"}));
  }, "the passage tower's Dense module differs");

  // A second Dense module that does not take what the first gives.
  dir = fresh(true);
  fs::copy(dir / "2_Dense", dir / "3_Dense");
  expect_refused(
      dir, [&] { write_file_atomic(dir / "modules.json", modules({"Transformer", "Pooling", "Dense", "Dense"})); },
      (dir / "3_Dense" / "config.json").string() +
          ": key \"in_features\": 16, but the Dense module before it gives 12");

  // Modules out of order, or twice.
  for (const auto& [order, message] :
       {std::pair{modules({"Transformer", "Pooling", "Normalize", "Dense"}), "models.Dense is not supported here"},
        std::pair{modules({"Transformer", "Dense", "Pooling"}), "comes before the Pooling module"},
        std::pair{modules({"Pooling", "Transformer"}), "models.Transformer is not supported here"},
        std::pair{modules({"Transformer", "Pooling", "LayerNorm"}), "models.LayerNorm is not supported ("}}) {
    dir = fresh(true);
    if (order.find("0_Pooling") != std::string::npos) fs::rename(dir / "1_Pooling", dir / "0_Pooling");
    expect_refused(dir, [&] { write_file_atomic(dir / "modules.json", order); }, message);
  }
  // Normalize twice is harmless: a no-op the second time.
  dir = fresh(true);
  write_file_atomic(dir / "modules.json", modules({"Transformer", "Pooling", "Dense", "Normalize", "Normalize"}));
  EXPECT_NO_THROW(load_model_folder(dir.string()));
}

}  // namespace
}  // namespace ragmig::model::dense_test
