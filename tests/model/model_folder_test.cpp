// Tests of Hugging Face-compatible model folders: layout and file contents, bit-identical save -> load for
// shared and separate towers, replacing an old folder, and the errors a foreign or damaged folder gives.
#include "model/model_folder.h"
#include "model/st_folder.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>

#include "core/atomic_file.h"
#include "core/error.h"
#include "model_test_support.h"
#include "support/byte_level_tokenizers.h"
#include "support/test_support.h"
#include "support/tiny_bert.h"
#include "text/wordpiece.h"

namespace ragmig::model {
namespace {

namespace fs = std::filesystem;
using ragmig::testing::ScratchDir;

EncoderSpec tiny_spec(bool shared) {
  EncoderSpec s;
  s.bert = testing::tiny_bert_config(40, 16, 2, 24);
  s.shared_towers = shared;
  return s;
}

using test::randomize;
using test::sample_batch;
using test::tiny_vocab;

void expect_same_outputs(DualEncoder& a, DualEncoder& b) {
  a->eval();
  b->eval();
  auto batch = sample_batch();
  torch::NoGradGuard no_grad;
  EXPECT_TRUE(torch::equal(a->encode_queries(batch.ids, batch.mask), b->encode_queries(batch.ids, batch.mask)));
  EXPECT_TRUE(torch::equal(a->encode_passages(batch.ids, batch.mask), b->encode_passages(batch.ids, batch.mask)));
}

void expect_data_error(const std::string& dir, const std::string& must_contain) {
  try {
    load_model_folder(dir);
    ADD_FAILURE() << "no DataError; expected one mentioning " << must_contain;
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find(must_contain), std::string::npos) << e.what();
  }
}

// Each edit of `tj`, written as dir/tokenizer.json, makes loading the folder fail with its message.
void expect_edits_refused(const fs::path& dir, const nlohmann::json& tj,
                          const std::vector<std::pair<std::function<void(nlohmann::json&)>, std::string>>& edits) {
  for (const auto& [edit, message] : edits) {
    nlohmann::json bad = tj;
    edit(bad);
    write_file_atomic(dir / "tokenizer.json", bad.dump());
    expect_data_error(dir.string(), message);
  }
}

// Rewrites dir/model.safetensors through `edit`.
template <typename F>
void edit_weights(const fs::path& dir, F edit) {
  auto file = read_safetensors((dir / "model.safetensors").string());
  edit(file);
  write_safetensors((dir / "model.safetensors").string(), file);
}

TEST(ModelFolder, SharedTowersLayoutAndRoundTrip) {
  ScratchDir scratch;
  const auto dir = scratch / "model";
  torch::manual_seed(1);
  DualEncoder model(tiny_spec(true));
  randomize(model);
  save_model_folder(dir.string(), model, text::word_piece_spec(tiny_vocab()));

  for (const char* f : {"config.json", "vocab.txt", "model.safetensors", "ragmig.json", "modules.json",
                        "sentence_bert_config.json", "1_Pooling/config.json", "2_Normalize", "tokenizer_config.json",
                        "special_tokens_map.json"})
    EXPECT_TRUE(fs::exists(dir / f)) << f;
  EXPECT_FALSE(fs::exists(dir / "passage"));
  const auto st = read_sentence_transformer_layout(dir.string());
  ASSERT_TRUE(st);
  EXPECT_EQ(st->pooling, "mean");
  EXPECT_TRUE(st->normalize);
  EXPECT_EQ(nlohmann::json::parse(read_file(dir / "sentence_bert_config.json"))["max_seq_length"], 24)
      << "the model's positions when the trainer says no length";
  for (const auto& entry : fs::directory_iterator(scratch.path()))
    EXPECT_EQ(entry.path().filename(), "model") << "left behind: " << entry.path();

  auto config = nlohmann::json::parse(read_file(dir / "config.json"));
  EXPECT_EQ(config["model_type"], "bert");
  EXPECT_EQ(config["hidden_size"], 16);
  EXPECT_EQ(config["vocab_size"], 40);
  auto info = nlohmann::json::parse(read_file(dir / "ragmig.json"));
  EXPECT_EQ(info, nlohmann::json({{"pooling", "mean"}, {"normalize", true}, {"shared_towers", true}, {"format_version", 1}}));
  EXPECT_EQ(read_vocab_file((dir / "vocab.txt").string()), tiny_vocab());

  auto weights = read_safetensors((dir / "model.safetensors").string());
  EXPECT_EQ(weights.metadata, (std::map<std::string, std::string>{{"format", "pt"}}));
  std::vector<std::string> names;
  for (const auto& [name, t] : weights.tensors) {
    names.push_back(name);
    EXPECT_EQ(t.dtype, DType::F32) << name;
  }
  std::vector<std::string> expected;
  for (const auto& p : model->query_tower()->named_parameters()) expected.push_back(p.key());
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(names, expected);  // plain HF BertModel names, no "query." prefix
  EXPECT_TRUE(torch::equal(from_raw(weights.tensors.at("encoder.layer.1.output.dense.weight")),
                           model->named_parameters()["query.encoder.layer.1.output.dense.weight"]));

  auto loaded = load_model_folder(dir.string());
  EXPECT_EQ(loaded.tokenizer.vocab, tiny_vocab());
  EXPECT_EQ(loaded.model->spec().bert, model->spec().bert);
  EXPECT_TRUE(loaded.model->spec().shared_towers);
  EXPECT_EQ(loaded.model->spec().pooling, Pooling::Mean);
  expect_same_outputs(model, loaded.model);
  auto pa = model->named_parameters(), pb = loaded.model->named_parameters();
  ASSERT_EQ(pa.size(), pb.size());
  for (const auto& p : pa) EXPECT_TRUE(torch::equal(p.value(), pb[p.key()])) << p.key();
}

TEST(ModelFolder, SeparateTowersRoundTrip) {
  ScratchDir scratch;
  const auto dir = scratch / "model";
  EncoderSpec spec = tiny_spec(false);
  spec.pooling = Pooling::Cls;
  spec.normalize = false;
  torch::manual_seed(2);
  DualEncoder model(spec);
  randomize(model);
  save_model_folder(dir.string() + "/", model, text::word_piece_spec(tiny_vocab()));  // a trailing slash names the same folder

  for (const char* f : {"config.json", "vocab.txt", "model.safetensors", "ragmig.json", "passage/config.json",
                        "passage/vocab.txt", "passage/model.safetensors"})
    EXPECT_TRUE(fs::exists(dir / f)) << f;
  auto info = nlohmann::json::parse(read_file(dir / "ragmig.json"));
  EXPECT_EQ(info["shared_towers"], false);
  EXPECT_EQ(info["pooling"], "cls");
  EXPECT_EQ(info["normalize"], false);
  // The top-level weights are the query tower's, the passage/ ones the passage tower's.
  auto top = load_tensors((dir / "model.safetensors").string());
  auto passage = load_tensors((dir / "passage" / "model.safetensors").string());
  auto params = model->named_parameters();
  EXPECT_TRUE(torch::equal(top.at("embeddings.word_embeddings.weight"), params["query.embeddings.word_embeddings.weight"]));
  EXPECT_TRUE(torch::equal(passage.at("embeddings.word_embeddings.weight"), params["passage.embeddings.word_embeddings.weight"]));

  auto loaded = load_model_folder(dir.string());
  EXPECT_FALSE(loaded.model->spec().shared_towers);
  EXPECT_EQ(loaded.model->spec().pooling, Pooling::Cls);
  EXPECT_FALSE(loaded.model->spec().normalize);
  expect_same_outputs(model, loaded.model);
}

TEST(ModelFolder, SavingReplacesAnOldFolder) {
  ScratchDir scratch;
  const auto dir = scratch / "model";
  torch::manual_seed(3);
  DualEncoder first(tiny_spec(false));
  save_model_folder(dir.string(), first, text::word_piece_spec(tiny_vocab()));
  DualEncoder second(tiny_spec(true));
  randomize(second);
  save_model_folder(dir.string(), second, text::word_piece_spec(tiny_vocab(40)));
  EXPECT_FALSE(fs::exists(dir / "passage"));  // nothing of the old folder survives
  auto loaded = load_model_folder(dir.string());
  EXPECT_EQ(loaded.tokenizer.vocab.size(), 40u);
  expect_same_outputs(second, loaded.model);
  for (const auto& entry : fs::directory_iterator(scratch.path()))
    EXPECT_EQ(entry.path().filename(), "model") << "left behind: " << entry.path();
}

TEST(ModelFolder, VocabularyAndModelMismatch) {
  ScratchDir scratch;
  const auto dir = scratch / "model";
  DualEncoder model(tiny_spec(true));
  EXPECT_THROW(save_model_folder(dir.string(), model, text::word_piece_spec(tiny_vocab(41))), DataError);
  EXPECT_FALSE(fs::exists(dir));
  EXPECT_THROW(save_model_folder(dir.string(), model, text::word_piece_spec({"a", "b\nc"})), DataError);

  save_model_folder(dir.string(), model, text::word_piece_spec(tiny_vocab()));
  // More vocab.txt lines than vocab_size.
  std::string vocab = read_file(dir / "vocab.txt");
  write_file_atomic(dir / "vocab.txt", vocab + "x1\nx2\nx3\n");
  expect_data_error(dir.string(), "vocabulary and model mismatch");
  write_file_atomic(dir / "vocab.txt", vocab);
  // config.json's vocab_size disagrees with the word embeddings' rows.
  auto config = nlohmann::json::parse(read_file(dir / "config.json"));
  config["vocab_size"] = 50;
  write_file_atomic(dir / "config.json", config.dump());
  expect_data_error(dir.string(), "vocabulary and model mismatch");
}

TEST(ModelFolder, MissingExtraAndMisShapedTensorsAreNamed) {
  ScratchDir scratch;
  const auto dir = scratch / "model";
  DualEncoder model(tiny_spec(true));
  save_model_folder(dir.string(), model, text::word_piece_spec(tiny_vocab()));
  const auto good = read_file(dir / "model.safetensors");

  edit_weights(dir, [](SafetensorsFile& f) { f.tensors.erase("encoder.layer.1.attention.self.key.bias"); });
  expect_data_error(dir.string(), "encoder.layer.1.attention.self.key.bias");
  write_file_atomic(dir / "model.safetensors", good);

  edit_weights(dir, [](SafetensorsFile& f) { f.tensors["encoder.layer.2.output.dense.bias"] = f.tensors.at("encoder.layer.1.output.dense.bias"); });
  expect_data_error(dir.string(), "unexpected tensor \"encoder.layer.2.output.dense.bias\"");
  write_file_atomic(dir / "model.safetensors", good);

  edit_weights(dir, [](SafetensorsFile& f) {
    f.tensors["encoder.layer.0.intermediate.dense.weight"] = to_raw(torch::zeros({16, 32}));
  });
  expect_data_error(dir.string(), "\"encoder.layer.0.intermediate.dense.weight\" has shape [16, 32], the model expects [32, 16]");
  write_file_atomic(dir / "model.safetensors", good);

  edit_weights(dir, [](SafetensorsFile& f) {
    f.tensors["embeddings.LayerNorm.bias"] = to_raw(torch::zeros({16}, torch::kLong));
  });
  expect_data_error(dir.string(), "has dtype I64");
  write_file_atomic(dir / "model.safetensors", good);

  write_file_atomic(dir / "model.safetensors", good.substr(0, good.size() / 2));
  expect_data_error(dir.string(), "model.safetensors");
  fs::remove(dir / "model.safetensors");
  EXPECT_THROW(load_model_folder(dir.string()), IoError);
  EXPECT_THROW(load_model_folder((scratch / "nowhere").string()), IoError);
}

TEST(ModelFolder, ReadsHuggingFaceCheckpoints) {
  // A BertForMaskedLM-style folder: "bert." prefix, pooler and MLM head, position_ids buffer, fp16 weights,
  // no ragmig.json.
  ScratchDir scratch;
  const auto dir = scratch / "hf";
  torch::manual_seed(4);
  DualEncoder model(tiny_spec(true));
  randomize(model);
  save_model_folder(dir.string(), model, text::word_piece_spec(tiny_vocab()));
  fs::remove(dir / "ragmig.json");
  edit_weights(dir, [](SafetensorsFile& f) {
    SafetensorsFile hf;
    for (auto& [name, raw] : f.tensors) hf.tensors["bert." + name] = to_raw(from_raw(raw).to(torch::kHalf));
    hf.tensors["bert.pooler.dense.weight"] = to_raw(torch::zeros({16, 16}));
    hf.tensors["bert.pooler.dense.bias"] = to_raw(torch::zeros({16}));
    hf.tensors["bert.embeddings.position_ids"] = to_raw(torch::arange(24, torch::kLong).unsqueeze(0));
    hf.tensors["cls.predictions.bias"] = to_raw(torch::zeros({40}));
    f = hf;
  });
  auto loaded = load_model_folder(dir.string());
  EXPECT_EQ(loaded.model->spec().pooling, Pooling::Mean);
  EXPECT_TRUE(loaded.model->spec().normalize);
  EXPECT_TRUE(loaded.model->spec().shared_towers);
  auto pa = model->named_parameters(), pb = loaded.model->named_parameters();
  for (const auto& p : pa) {
    EXPECT_EQ(pb[p.key()].scalar_type(), torch::kFloat);
    EXPECT_TRUE(torch::equal(p.value().to(torch::kHalf).to(torch::kFloat), pb[p.key()])) << p.key();
  }

  // BF16 without a prefix loads too; an unknown head without the prefix is an error.
  edit_weights(dir, [](SafetensorsFile& f) {
    SafetensorsFile plain;
    for (auto& [name, raw] : f.tensors)
      if (name.starts_with("bert.")) plain.tensors[name.substr(5)] = to_raw(from_raw(raw).to(torch::kBFloat16));
    f = plain;
  });
  auto from_bf16 = load_model_folder(dir.string());
  auto pc = from_bf16.model->named_parameters();
  for (const auto& p : pa) {
    EXPECT_EQ(pc[p.key()].scalar_type(), torch::kFloat);
    const auto expected = p.value().to(torch::kHalf).to(torch::kBFloat16).to(torch::kFloat);
    EXPECT_TRUE(torch::equal(expected, pc[p.key()])) << p.key();
  }
  edit_weights(dir, [](SafetensorsFile& f) { f.tensors["cls.predictions.bias"] = to_raw(torch::zeros({40})); });
  expect_data_error(dir.string(), "cls.predictions.bias");
}

TEST(ModelFolder, BadRagmigJsonAndConfig) {
  ScratchDir scratch;
  const auto dir = scratch / "model";
  DualEncoder model(tiny_spec(true));
  save_model_folder(dir.string(), model, text::word_piece_spec(tiny_vocab()));
  write_file_atomic(dir / "ragmig.json", R"({"pooling": "weightedmean"})");
  expect_data_error(dir.string(), "\"pooling\"");
  write_file_atomic(dir / "ragmig.json", R"({"normalize": "yes"})");
  expect_data_error(dir.string(), "\"normalize\"");
  write_file_atomic(dir / "ragmig.json", R"({"format_version": 9})");
  expect_data_error(dir.string(), "\"format_version\"");
  write_file_atomic(dir / "ragmig.json", R"({"shared_towers": false})");
  EXPECT_THROW(load_model_folder(dir.string()), IoError);  // no passage/ folder
  write_file_atomic(dir / "ragmig.json", "{");
  expect_data_error(dir.string(), "ragmig.json");
  fs::remove(dir / "ragmig.json");
  write_file_atomic(dir / "config.json", R"({"hidden_size": "16"})");
  expect_data_error(dir.string(), "config.json: key \"hidden_size\"");
}

// A folder that is no model folder (a run folder, the wrong level of a download, a typo) is named as such, by
// check_model_folder before any data is read, and by load_model_folder; adapter and sentence-transformers folders
// pass.
TEST(ModelFolder, AFolderWithoutConfigJsonIsNotAModelFolder) {
  ScratchDir scratch;
  const auto expect_refused = [](const fs::path& dir) {
    for (const auto& call : {std::function<void()>([&] { check_model_folder(dir.string()); }),
                             std::function<void()>([&] { load_model_folder(dir.string()); })}) {
      try {
        call();
        ADD_FAILURE() << dir << " passed";
      } catch (const InputFileError& e) {
        EXPECT_THAT(e.what(), ::testing::HasSubstr(dir.string() + ": not a model folder: no "));
        EXPECT_THAT(e.what(), ::testing::HasSubstr("config.json (expected a folder written by ragmig"));
      }
    }
  };
  fs::create_directories(scratch / "run/model");
  expect_refused(scratch / "run");
  EXPECT_THROW(check_model_folder((scratch / "nothing").string()), InputFileError);

  const auto st = scratch / "st";
  fs::create_directories(st / "0_Transformer");
  fs::create_directories(st / "1_Pooling");
  write_file_atomic(st / "modules.json", R"([
    {"idx": 0, "name": "0", "path": "0_Transformer", "type": "sentence_transformers.models.Transformer"},
    {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"}])");
  write_file_atomic(st / "1_Pooling/config.json", R"({"pooling_mode_mean_tokens": true})");
  expect_refused(st);  // its Transformer module has no config.json
  write_file_atomic(st / "0_Transformer/config.json", "{}");
  EXPECT_NO_THROW(check_model_folder(st.string()));
  write_file_atomic(scratch / "run/adapter_config.json", "{}");
  EXPECT_NO_THROW(check_model_folder((scratch / "run").string()));

  DualEncoder model(tiny_spec(true));
  save_model_folder((scratch / "run/model").string(), model, text::word_piece_spec(tiny_vocab()));
  EXPECT_NO_THROW(check_model_folder((scratch / "run/model").string()));
  // A training run's folder (its config.json is the training's): its model is named.
  fs::remove(scratch / "run/adapter_config.json");
  write_file_atomic(scratch / "run/config.json", "{}");
  EXPECT_THAT([&] { check_model_folder((scratch / "run").string()); },
              ::testing::ThrowsMessage<InputFileError>(::testing::HasSubstr(
                  "a training run's folder, not a model folder: its model is " + (scratch / "run/model").string())));
}

// A config whose sizes promise more weights than the file holds (a typo, a config from another model, or a
// mutation: tests/model/folder_fuzz_test.cpp) is refused before anything is allocated for it — here 10^12 x 16
// floats (64 TB), and a Dense module of 16 x 10^12.
TEST(ModelFolder, SizesTheWeightsCannotHoldAreRefusedBeforeAllocating) {
  ScratchDir scratch;
  const auto dir = scratch / "model";
  EncoderSpec spec = tiny_spec(true);
  spec.dense = {DenseConfig{16, 8}};
  DualEncoder model(spec);
  save_model_folder(dir.string(), model, text::word_piece_spec(tiny_vocab()));
  double weights = 0;
  for (const auto& p : model->query_tower()->parameters()) weights += static_cast<double>(p.numel());
  EXPECT_LE(spec.bert.minimum_weight_count(), weights) << "a lower bound";
  EXPECT_GT(spec.bert.minimum_weight_count(), 0.8 * weights) << "and a close one: all but biases and LayerNorms";
  const auto edited = [&](const fs::path& file, const char* key, int64_t value) {
    const std::string before = read_file(file);
    auto j = nlohmann::json::parse(before);
    j[key] = value;
    write_file_atomic(file, j.dump());
    return before;
  };
  const std::string config = edited(dir / "config.json", "vocab_size", 1'000'000'000'000);
  expect_data_error(dir.string(), (dir / "config.json").string() + ": its sizes make at least 1.6e+13 weights, but " +
                                      (dir / "model.safetensors").string() + " holds ");
  write_file_atomic(dir / "config.json", config);
  edited(dir / "2_Dense" / "config.json", "out_features", 1'000'000'000'000);
  expect_data_error(dir.string(), (dir / "2_Dense" / "config.json").string() + ": its sizes make at least 1.6e+13");
}

TEST(ModelFolder, TrainingQueriesRoundTripAndBadOnesAreNamed) {
  ScratchDir scratch;
  const auto dir = scratch / "model";
  DualEncoder model(tiny_spec(false));
  save_model_folder(dir.string(), model, text::word_piece_spec(tiny_vocab()));
  EXPECT_FALSE(read_training_queries(dir.string())) << "no training recorded, none read";
  SaveOptions options;
  options.training = TrainingQueries{"train", {"q1", "q7"}};
  save_model_folder(dir.string(), model, text::word_piece_spec(tiny_vocab()), options);
  const auto back = read_training_queries(dir.string());
  ASSERT_TRUE(back);
  EXPECT_EQ(back->split, "train");
  EXPECT_EQ(back->held_out, (std::vector<std::string>{"q1", "q7"}));
  EXPECT_NO_THROW(load_model_folder(dir.string())) << "the record does not disturb loading";
  EXPECT_FALSE(read_training_queries((scratch / "nowhere").string()));
  const auto expect_named = [&](const std::string& json, const std::string& key) {
    write_file_atomic(dir / "ragmig.json", json);
    try {
      read_training_queries(dir.string());
      ADD_FAILURE() << "accepted " << json;
    } catch (const DataError& e) {
      EXPECT_NE(std::string(e.what()).find((dir / "ragmig.json").string()), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(key), std::string::npos) << e.what();
    }
  };
  expect_named(R"({"training": []})", "\"training\": expected an object");
  expect_named(R"({"training": {"held_out_queries": []}})", "\"training\".split");
  expect_named(R"({"training": {"split": "train", "held_out_queries": "q1"}})", "\"training\".held_out_queries");
  expect_named(R"({"training": {"split": "train", "held_out_queries": ["q1", 7]}})", "held_out_queries[1]");
}

TEST(EmbeddingSizes, DefaultAndTrainedSizesStayWithinTheEmbedding) {
  EXPECT_EQ(default_size({}, 16), 16);
  EXPECT_EQ(default_size({8, {}}, 16), 8);
  EXPECT_EQ(default_size({32, {}}, 16), 16) << "sentence-transformers cuts nothing past the end";
  EXPECT_EQ(trained_sizes({}, 16), (std::vector<int64_t>{16}));
  EXPECT_EQ(trained_sizes({8, {4, 16, 8, 32}}, 16), (std::vector<int64_t>{16, 8, 4}));
}

// truncate_dim travels in config_sentence_transformers.json (each tower's), the Matryoshka sizes in ragmig.json;
// neither is written unless given, and a bad value is named by file and key.
TEST(ModelFolder, EmbeddingSizesRoundTripAndBadOnesAreNamed) {
  ScratchDir scratch;
  const auto dir = scratch / "model";
  DualEncoder model(tiny_spec(false));
  save_model_folder(dir.string(), model, text::word_piece_spec(tiny_vocab()));
  EXPECT_EQ(load_model_folder(dir.string()).sizes, EmbeddingSizes{});
  EXPECT_FALSE(nlohmann::json::parse(read_file(dir / "ragmig.json")).contains("matryoshka_dims"));
  EXPECT_FALSE(nlohmann::json::parse(read_file(dir / "config_sentence_transformers.json")).contains("truncate_dim"));

  SaveOptions options;
  options.sizes = {8, {16, 8, 4}};
  save_model_folder(dir.string(), model, text::word_piece_spec(tiny_vocab()), options);
  for (const auto& folder : {dir, dir / "passage"})
    EXPECT_EQ(nlohmann::json::parse(read_file(folder / "config_sentence_transformers.json"))["truncate_dim"], 8);
  EXPECT_EQ(nlohmann::json::parse(read_file(dir / "ragmig.json"))["matryoshka_dims"],
            nlohmann::json::array({16, 8, 4}));
  const LoadedModel loaded = load_model_folder(dir.string());
  EXPECT_EQ(loaded.sizes, options.sizes);
  EXPECT_EQ(folder_embedding_sizes(dir.string()), options.sizes) << "the same without loading weights";
  EXPECT_EQ(save_options_of(loaded).sizes, options.sizes) << "written back as read";

  const auto expect_named = [&](const fs::path& file, const std::string& json, const std::string& message) {
    const std::string before = read_file(file);
    write_file_atomic(file, json);
    expect_data_error(dir.string(), file.string() + ": key " + message);
    write_file_atomic(file, before);
  };
  const fs::path st = dir / "config_sentence_transformers.json", info = dir / "ragmig.json";
  expect_named(st, R"({"truncate_dim": "8"})", "\"truncate_dim\": expected a positive integer or null, got \"8\"");
  expect_named(st, R"({"truncate_dim": 0})", "\"truncate_dim\": expected a positive integer or null, got 0");
  expect_named(st, R"({"truncate_dim": 2.5})", "\"truncate_dim\"");
  expect_named(info, R"({"shared_towers": false, "matryoshka_dims": 8})", "\"matryoshka_dims\": expected an array");
  expect_named(info, R"({"shared_towers": false, "matryoshka_dims": [8, 0]})",
               "\"matryoshka_dims\"[1]: expected a positive integer, got 0");
  expect_named(info, R"({"shared_towers": false, "matryoshka_dims": [8, 4, 8]})", "\"matryoshka_dims\": lists 8 twice");
  expect_named(info, R"({"shared_towers": false, "matryoshka_dims": [32, 8]})",
               "\"matryoshka_dims\": 32 exceeds the model's 16 embedding dimensions");
  write_file_atomic(st, R"({"truncate_dim": null})");
  EXPECT_EQ(load_model_folder(dir.string()).sizes.truncate_dim, 0) << "null is sentence-transformers' none";
}

TEST(TorchSafetensors, ConversionsAreBitExact) {
  torch::manual_seed(5);
  std::map<std::string, torch::Tensor> in = {
      {"f32", torch::randn({3, 4})},
      {"bf16", torch::randn({5}).to(torch::kBFloat16)},
      {"f16", torch::randn({2, 2}).to(torch::kHalf)},
      {"f64", torch::randn({2}, torch::kDouble)},
      {"i64", torch::randint(-1000, 1000, {4}, torch::kLong)},
      {"i32", torch::randint(-1000, 1000, {4}, torch::kInt)},
      {"i16", torch::randint(-1000, 1000, {4}, torch::kShort)},
      {"i8", torch::randint(-100, 100, {4}, torch::kChar)},
      {"u8", torch::randint(0, 255, {4}, torch::kByte)},
      {"bool", torch::rand({6}) > 0.5},
      {"scalar", torch::tensor(3.5f)},
      {"empty", torch::zeros({0, 3})},
      {"transposed", torch::randn({3, 5}).t()},
  };
  ScratchDir scratch;
  save_tensors((scratch / "t.safetensors").string(), in, {{"k", "v"}});
  auto out = load_tensors((scratch / "t.safetensors").string());
  ASSERT_EQ(out.size(), in.size());
  for (const auto& [name, t] : in) {
    EXPECT_EQ(out.at(name).scalar_type(), t.scalar_type()) << name;
    EXPECT_EQ(out.at(name).sizes(), t.sizes()) << name;
    EXPECT_TRUE(torch::equal(out.at(name), t)) << name;
  }
  EXPECT_EQ(read_safetensors((scratch / "t.safetensors").string()).metadata.at("k"), "v");
  EXPECT_THROW(to_raw(torch::zeros({2}, torch::kComplexFloat)), DataError);
}

TEST(ModelFolder, NanOrInfiniteWeightsAreNamed) {
  for (const float bad : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity()}) {
    ScratchDir scratch;
    const auto dir = scratch / "model";
    DualEncoder model(tiny_spec(true));
    {
      torch::NoGradGuard no_grad;
      model->named_parameters()["query.encoder.layer.1.intermediate.dense.weight"][3][5] = bad;
    }
    save_model_folder(dir.string(), model, text::word_piece_spec(tiny_vocab()));
    try {
      load_model_folder(dir.string());
      ADD_FAILURE() << "loaded a model with " << bad;
    } catch (const DataError& e) {
      EXPECT_THAT(e.what(), ::testing::AllOf(::testing::HasSubstr((dir / "model.safetensors").string()),
                                             ::testing::HasSubstr("encoder.layer.1.intermediate.dense.weight"),
                                             ::testing::HasSubstr("NaN or infinite")));
    }
  }
}

// A tiny shared-tower folder as sentence-transformers would have saved it: ragmig's files less ragmig.json.
fs::path sentence_transformers_folder(const ScratchDir& scratch) {
  const auto dir = scratch / "model";
  DualEncoder model(tiny_spec(true));
  save_model_folder(dir.string(), model, text::word_piece_spec(tiny_vocab()));
  fs::remove(dir / "ragmig.json");
  return dir;
}

TEST(SentenceTransformerFolder, LayoutWithoutRagmigJsonDecidesPoolingAndNormalisation) {
  ScratchDir scratch;
  const auto dir = sentence_transformers_folder(scratch);
  write_file_atomic(dir / "1_Pooling" / "config.json", R"({"embedding_dimension": 16, "pooling_mode": "cls"})");
  write_file_atomic(dir / "modules.json", R"([{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.base.modules.transformer.Transformer"},
    {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.sentence_transformer.modules.pooling.Pooling"}])");
  auto loaded = load_model_folder(dir.string());
  EXPECT_EQ(loaded.model->spec().pooling, Pooling::Cls);
  EXPECT_FALSE(loaded.model->spec().normalize);
}

TEST(SentenceTransformerFolder, WhatRagmigCannotRunIsNamed) {
  ScratchDir scratch;
  const auto dir = sentence_transformers_folder(scratch);
  const auto message_of = [&] {
    try {
      load_model_folder(dir.string());
    } catch (const std::exception& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string pooling = (dir / "1_Pooling" / "config.json").string();
  write_file_atomic(pooling, R"({"pooling_mode_max_tokens": true, "pooling_mode_mean_tokens": true})");
  EXPECT_THAT(message_of(), ::testing::AllOf(::testing::HasSubstr(pooling),
                                             ::testing::HasSubstr("pooling_mode_max_tokens, pooling_mode_mean_tokens")));
  write_file_atomic(pooling, R"({"pooling_mode_max_tokens": true})");
  EXPECT_EQ(load_model_folder(dir.string()).model->spec().pooling, Pooling::Max);
  write_file_atomic(pooling, R"({"pooling_mode": "mean_sqrt_len_tokens"})");
  EXPECT_EQ(load_model_folder(dir.string()).model->spec().pooling, Pooling::MeanSqrtLen);
  write_file_atomic(pooling, R"({"pooling_mode": "lasttoken"})");
  EXPECT_EQ(load_model_folder(dir.string()).model->spec().pooling, Pooling::LastToken);
  write_file_atomic(pooling, R"({"pooling_mode": "weightedmean"})");
  EXPECT_THAT(message_of(), ::testing::HasSubstr("\"weightedmean\" is not supported"));
  write_file_atomic(pooling, R"({"pooling_mode": "mean"})");
  write_file_atomic(dir / "modules.json", R"([{"type": "sentence_transformers.models.Transformer", "path": ""},
    {"type": "sentence_transformers.models.Pooling", "path": "1_Pooling"},
    {"type": "sentence_transformers.models.WeightedLayerPooling", "path": "2_W"}])");
  EXPECT_THAT(message_of(),
              ::testing::HasSubstr("module sentence_transformers.models.WeightedLayerPooling is not supported"));
  write_file_atomic(dir / "modules.json", "[{}");
  EXPECT_THAT(message_of(), ::testing::HasSubstr("modules.json: not valid JSON"));
  write_file_atomic(dir / "modules.json", R"([{"type": "sentence_transformers.models.Transformer", "path": ""},
    {"type": "sentence_transformers.models.Pooling", "path": "1_Pooling"}])");
  write_file_atomic(dir / "tokenizer_config.json", R"({"do_lower_case": "yes"})");
  EXPECT_THAT(message_of(), ::testing::HasSubstr("tokenizer_config.json: key \"do_lower_case\": expected true, false or null"));
  write_file_atomic(dir / "tokenizer_config.json", R"({"do_lower_case": false})");
  EXPECT_FALSE(load_model_folder(dir.string()).tokenizer.normalization.lower_case);
}

TEST(SentenceTransformerFolder, PromptsRoundTripAndFollowSentenceTransformersNames) {
  ScratchDir scratch;
  const auto dir = scratch / "model";
  DualEncoder model(tiny_spec(false));
  save_model_folder(dir.string(), model, text::word_piece_spec(tiny_vocab()));
  EXPECT_EQ(load_model_folder(dir.string()).prompts, text::Prompts{}) << "none unless given";
  SaveOptions options;
  options.prompts = {"query: ", "passage: "};
  save_model_folder(dir.string(), model, text::word_piece_spec(tiny_vocab()), options);
  EXPECT_EQ(load_model_folder(dir.string()).prompts, (text::Prompts{"query: ", "passage: "}));
  // Under the names sentence-transformers' encode_query and encode_document look up, in both towers' folders.
  for (const auto& folder : {dir, dir / "passage"}) {
    const auto st = nlohmann::json::parse(read_file(folder / "config_sentence_transformers.json"));
    EXPECT_EQ(st["prompts"], nlohmann::json::parse(R"({"query": "query: ", "document": "passage: "})")) << folder;
  }

  const auto prompts_of = [&](const std::string& config) {
    write_file_atomic(dir / "config_sentence_transformers.json", config);
    return read_prompts(dir.string());
  };
  // e5's names; "document" before "passage" before "corpus"; empty and null ones are no prompt.
  EXPECT_EQ(prompts_of(R"({"prompts": {"query": "query: ", "passage": "passage: "}})"),
            (text::Prompts{"query: ", "passage: "}));
  EXPECT_EQ(prompts_of(R"({"prompts": {"corpus": "c: ", "document": "d: ", "passage": "p: "}})"),
            (text::Prompts{"", "d: "}));
  EXPECT_EQ(prompts_of(R"({"prompts": {"query": null, "document": "", "passage": "p: "}, "default_prompt_name": null})"),
            (text::Prompts{"", "p: "}));
  EXPECT_EQ(prompts_of(R"({"prompts": {"classification": "c: "}})"), text::Prompts{});
  EXPECT_EQ(prompts_of(R"({"similarity_fn_name": "cosine"})"), text::Prompts{});
  fs::remove(dir / "config_sentence_transformers.json");
  EXPECT_EQ(read_prompts(dir.string()), text::Prompts{}) << "no file, no prompts";

  const auto message_of = [&](const std::string& config) {
    try {
      prompts_of(config);
    } catch (const DataError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string file = (dir / "config_sentence_transformers.json").string();
  EXPECT_EQ(message_of(R"({"prompts": ["query: "]})"), file + ": key \"prompts\": expected an object of name: prompt");
  EXPECT_EQ(message_of(R"({"prompts": {"query": "q: ", "clustering": 3}})"),
            file + ": key \"prompts.clustering\": expected a string or null");
  EXPECT_THAT(message_of(R"({"prompts": )"), ::testing::HasSubstr(file + ": not valid JSON"));
}

TEST(SentenceTransformerFolder, PoolingWithoutThePromptIsRefusedByName) {
  ScratchDir scratch;
  const auto dir = sentence_transformers_folder(scratch);
  const fs::path pooling = dir / "1_Pooling" / "config.json";
  write_file_atomic(pooling, R"({"pooling_mode_mean_tokens": true, "include_prompt": true})");
  EXPECT_NO_THROW(load_model_folder(dir.string()));
  write_file_atomic(pooling, R"({"pooling_mode_mean_tokens": true, "include_prompt": false})");
  try {
    load_model_folder(dir.string());
    ADD_FAILURE() << "include_prompt = false loaded";
  } catch (const DataError& e) {
    EXPECT_THAT(e.what(),
                ::testing::AllOf(::testing::HasSubstr(pooling.string()), ::testing::HasSubstr("include_prompt")));
  }
}

TEST(SentenceTransformerFolder, VocabularyFromTokenizerJson) {
  ScratchDir scratch;
  const auto dir = scratch / "model";
  DualEncoder model(tiny_spec(true));
  save_model_folder(dir.string(), model, text::word_piece_spec(tiny_vocab()));
  fs::remove(dir / "vocab.txt");  // as transformers 5 saves a tokenizer
  nlohmann::json vocab = nlohmann::json::object();
  for (size_t i = 0; i < tiny_vocab().size(); ++i) vocab[tiny_vocab()[i]] = i;
  nlohmann::json tj = {{"normalizer", {{"type", "BertNormalizer"}, {"lowercase", false}, {"strip_accents", nullptr},
                                       {"handle_chinese_chars", false}}},
                       {"model", {{"type", "WordPiece"}, {"vocab", vocab}}}};
  write_file_atomic(dir / "tokenizer.json", tj.dump());
  auto loaded = load_model_folder(dir.string());
  EXPECT_EQ(loaded.tokenizer.vocab, tiny_vocab());
  EXPECT_EQ(loaded.tokenizer.normalization, (text::TextNormalization{false, false, false})) << "tokenizer.json wins";

  tj["model"]["vocab"]["[PAD]"] = 1;  // two tokens with id 1, none with 0
  write_file_atomic(dir / "tokenizer.json", tj.dump());
  EXPECT_THROW(
      {
        try {
          load_model_folder(dir.string());
        } catch (const DataError& e) {
          EXPECT_THAT(e.what(), ::testing::HasSubstr("tokenizer.json: key \"model.vocab\""));
          throw;
        }
      },
      DataError);
  tj["model"]["type"] = "WordLevel";
  write_file_atomic(dir / "tokenizer.json", tj.dump());
  expect_data_error(dir.string(), "expected a WordPiece (BERT), BPE (RoBERTa) or Unigram (XLM-R) tokenizer, got WordLevel");
  fs::remove(dir / "tokenizer.json");
  EXPECT_THROW(load_model_folder(dir.string()), IoError);
}

// RoBERTa's special tokens, the 256 byte characters, and "ab" from the one merge.
text::TokenizerSpec byte_level_spec() {
  text::TokenizerSpec spec = testing::roberta_style_tokenizer();
  spec.vocab.push_back("ab");
  spec.merges = {{"a", "b"}};
  return spec;
}

// A RoBERTa folder: vocab.json + merges.txt (what transformers' RobertaTokenizer reads), model_type "roberta",
// positions from pad + 1; read back as written, also from a tokenizer.json (transformers 5's only tokenizer file),
// whose BPE pipelines ragmig does not run are refused by key.
TEST(ModelFolder, RobertaFoldersKeepTheirByteLevelTokenizer) {
  ScratchDir scratch;
  const auto dir = scratch / "model";
  EncoderSpec spec = tiny_spec(false);
  spec.bert.model_type = "roberta";
  spec.bert.vocab_size = 262;
  spec.bert.pad_token_id = 1;
  DualEncoder model(spec);
  randomize(model);
  text::TokenizerSpec tokenizer = byte_level_spec();
  tokenizer.add_prefix_space = true;
  tokenizer.lstrip = {"<mask>"};  // kept in tokenizer_config.json's added_tokens_decoder
  save_model_folder(dir.string(), model, tokenizer);
  for (const fs::path& folder : {dir, dir / "passage"}) {
    EXPECT_TRUE(fs::exists(folder / "vocab.json"));
    EXPECT_EQ(read_file(folder / "merges.txt"), "#version: 0.2\na b\n");
    EXPECT_FALSE(fs::exists(folder / "vocab.txt"));
    const auto tc = nlohmann::json::parse(read_file(folder / "tokenizer_config.json"));
    EXPECT_EQ(tc["tokenizer_class"], "RobertaTokenizer");
    EXPECT_EQ(tc["add_prefix_space"], true);
    EXPECT_EQ(tc["bos_token"], "<s>");
    EXPECT_FALSE(tc.contains("do_lower_case"));
    EXPECT_EQ(tc["added_tokens_decoder"]["4"]["lstrip"], true);
  }
  EXPECT_EQ(nlohmann::json::parse(read_file(dir / "config.json"))["model_type"], "roberta");
  auto loaded = load_model_folder(dir.string());
  EXPECT_EQ(loaded.tokenizer, tokenizer);
  EXPECT_TRUE(loaded.model->spec().bert.roberta());
  expect_same_outputs(model, loaded.model);
  EXPECT_EQ(text::make_tokenizer(loaded.tokenizer)->encode("ab", 8), (std::vector<int32_t>{0, 37, 261, 2}))
      << "<s> Ġ ab </s>: the prefix space";

  // merges.txt's lines are checked; the passage tower's vocabulary must be the query tower's.
  write_file_atomic(dir / "merges.txt", "#version: 0.2\na b\nab\n");
  expect_data_error(dir.string(), "merges.txt:3: expected a merge \"left right\", got \"ab\"");
  write_file_atomic(dir / "merges.txt", "a b\n");
  auto vocab = nlohmann::json::parse(read_file(dir / "passage" / "vocab.json"));
  vocab.erase("ab");
  vocab["ba"] = 261;
  write_file_atomic(dir / "passage" / "vocab.json", vocab.dump());
  expect_data_error(dir.string(), "passage/vocab.json differs from");
  fs::remove(dir / "passage" / "vocab.json");

  // transformers 5 writes tokenizer.json alone; it wins over vocab.json + merges.txt.
  nlohmann::json ids = nlohmann::json::object();
  for (size_t i = 0; i < tokenizer.vocab.size(); ++i) ids[tokenizer.vocab[i]] = i;
  nlohmann::json tj = {{"normalizer", nullptr},
                       {"pre_tokenizer", {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", true}}},
                       {"model", {{"type", "BPE"}, {"vocab", ids}, {"merges", nlohmann::json::array({nlohmann::json::array({"a", "b"})})}, {"dropout", nullptr},
                                  {"continuing_subword_prefix", ""}, {"end_of_word_suffix", ""}}}};
  write_file_atomic(dir / "tokenizer.json", tj.dump());
  fs::remove(dir / "tokenizer_config.json");
  auto from_json = read_folder_tokenizer(dir.string());
  EXPECT_EQ(from_json.vocab_file, (dir / "tokenizer.json").string());
  EXPECT_FALSE(from_json.spec.add_prefix_space) << "the pre-tokenizer's, with no tokenizer_config.json";
  from_json.spec.add_prefix_space = true;
  from_json.spec.lstrip = {"<mask>"};
  EXPECT_EQ(from_json.spec, tokenizer);
  tj["model"]["merges"] = nlohmann::json::array({"a b"});  // the older form of a merge
  write_file_atomic(dir / "tokenizer.json", tj.dump());
  EXPECT_EQ(read_folder_tokenizer(dir.string()).spec.merges, tokenizer.merges);

  // ModernBERT's layout: NFC, tokens added after training past model.vocab (in id order, without gaps), the
  // unnormalised ones and the normalised ones (runs of spaces) apart.
  nlohmann::json modern = tj;
  modern["normalizer"] = {{"type", "NFC"}};
  const auto n = static_cast<int64_t>(tokenizer.vocab.size());
  modern["added_tokens"] = nlohmann::json::array({{{"id", n}, {"content", "[unused0]"}, {"special", true}},
                                                  {{"id", n + 1}, {"content", "  "}, {"special", false}}});
  write_file_atomic(dir / "tokenizer.json", modern.dump());
  const auto modern_spec = read_folder_tokenizer(dir.string()).spec;
  EXPECT_EQ(modern_spec.normalizer.size(), 1u);
  EXPECT_EQ(modern_spec.vocab.size(), tokenizer.vocab.size() + 2);
  EXPECT_EQ(modern_spec.added_tokens, std::vector<std::string>{"[unused0]"});
  EXPECT_EQ(modern_spec.normalized_added_tokens, std::vector<std::string>{"  "});
  modern["added_tokens"][1]["id"] = n + 2;
  write_file_atomic(dir / "tokenizer.json", modern.dump());
  expect_data_error(dir.string(), "ids must follow it without gaps");
  modern["added_tokens"][1]["id"] = 0;
  write_file_atomic(dir / "tokenizer.json", modern.dump());
  expect_data_error(dir.string(), "which model.vocab gives");
  write_file_atomic(dir / "tokenizer.json", tj.dump());

  const std::vector<std::pair<std::function<void(nlohmann::json&)>, std::string>> refused = {
      {[](nlohmann::json& j) { j["model"]["merges"] = nlohmann::json::array({"ab"}); }, "key \"model.merges[0]\""},
      {[](nlohmann::json& j) { j["normalizer"] = {{"type", "NFKC"}}; }, "key \"normalizer\": a NFKC normalizer"},
      {[](nlohmann::json& j) {
         j["normalizer"] = {{"type", "Sequence"}, {"normalizers", {{{"type", "NFC"}}, {{"type", "Lowercase"}}}}};
       },
       "key \"normalizer\": a Lowercase normalizer"},
      {[](nlohmann::json& j) { j["pre_tokenizer"] = {{"type", "Metaspace"}}; }, "key \"pre_tokenizer\""},
      {[](nlohmann::json& j) { j["model"]["continuing_subword_prefix"] = "##"; }, "model.continuing_subword_prefix"},
      {[](nlohmann::json& j) { j["model"]["dropout"] = 0.1; }, "model.dropout"},
      // Byte fallback makes it SentencePiece BPE, which has no ByteLevel pre-tokenizer.
      {[](nlohmann::json& j) { j["model"]["byte_fallback"] = true; }, "key \"pre_tokenizer\": expected none"},
      {[](nlohmann::json& j) { j["model"]["vocab"]["<s>"] = 1; }, "key \"model.vocab\": token"},
  };
  expect_edits_refused(dir, tj, refused);
}

// An XLM-R folder: the Unigram tokenizer (scores, normaliser steps, Metaspace) written as tokenizer.json, which is
// also where transformers 5 keeps it, and read back as written; pipelines ragmig does not run are refused by key.
TEST(ModelFolder, XlmRobertaFoldersKeepTheirUnigramTokenizer) {
  ScratchDir scratch;
  const auto dir = scratch / "model";
  EncoderSpec spec = tiny_spec(true);
  spec.bert.model_type = "xlm-roberta";
  spec.bert.pad_token_id = 1;
  DualEncoder model(spec);
  text::TokenizerSpec tokenizer;
  tokenizer.kind = text::TokenizerKind::kUnigram;
  tokenizer.special = text::roberta_special_tokens();
  tokenizer.vocab = {"<s>", "<pad>", "</s>", "<unk>", "\u2581a", "b", "<mask>"};
  tokenizer.scores = {0, 0, 0, 0, -1.5, -2.25, 0};
  tokenizer.normalizer = {{text::NormalizerStep::Kind::kPrecompiled, std::string(4, '\0'), "", false, false},
                          {text::NormalizerStep::Kind::kReplaceSpaceRuns, "", " ", false, false},
                          {text::NormalizerStep::Kind::kStrip, "", "", false, true}};
  tokenizer.pre_tokenizer.whitespace_split = true;
  tokenizer.pre_tokenizer.prepend = text::MetaspaceSplit::Prepend::kFirst;
  tokenizer.lstrip = {"<mask>"};
  tokenizer.rstrip = {"</s>"};
  save_model_folder(dir.string(), model, tokenizer);
  EXPECT_FALSE(fs::exists(dir / "vocab.txt"));
  EXPECT_EQ(nlohmann::json::parse(read_file(dir / "tokenizer_config.json"))["tokenizer_class"], "XLMRobertaTokenizer");
  EXPECT_EQ(nlohmann::json::parse(read_file(dir / "config.json"))["architectures"][0], "XLMRobertaModel");
  auto loaded = load_model_folder(dir.string());
  EXPECT_EQ(loaded.tokenizer, tokenizer);
  EXPECT_EQ(loaded.model->spec().bert.position_offset(), 2);
  EXPECT_EQ(text::make_tokenizer(loaded.tokenizer)->encode("a b", 8), (std::vector<int32_t>{0, 4, 5, 2}));

  const auto tj = nlohmann::json::parse(read_file(dir / "tokenizer.json"));
  const std::vector<std::pair<std::function<void(nlohmann::json&)>, std::string>> refused = {
      {[](nlohmann::json& j) { j["normalizer"] = {{"type", "NFKC"}}; }, "key \"normalizer\": normalizer NFKC"},
      {[](nlohmann::json& j) { j["normalizer"]["normalizers"][1]["pattern"] = {{"Regex", "\\s+"}}; },
       "key \"normalizer.normalizers[1].pattern\""},
      {[](nlohmann::json& j) { j["normalizer"]["normalizers"][0]["precompiled_charsmap"] = "!!"; }, "not base64"},
      {[](nlohmann::json& j) { j["pre_tokenizer"] = {{"type", "Whitespace"}}; }, "key \"pre_tokenizer\""},
      {[](nlohmann::json& j) { j["pre_tokenizer"]["pretokenizers"][1]["prepend_scheme"] = "sometimes"; },
       "pre_tokenizer.prepend_scheme"},
      {[](nlohmann::json& j) { j["model"]["vocab"][4] = {"\u2581a"}; }, "key \"model.vocab[4]\": expected [piece, score]"},
      {[](nlohmann::json& j) { j["model"]["byte_fallback"] = true; }, "model.byte_fallback"},
      {[](nlohmann::json& j) { j["added_tokens"].push_back({{"id", 9}, {"content", "<extra>"}}); },
       "token \"<extra>\" has id 9, expected 7"},
  };
  expect_edits_refused(dir, tj, refused);
}

// A Gemma 3 folder: SentencePiece BPE (Gemma's layout: " " -> "▁", byte fallback, <bos> $A <eos>) written as
// tokenizer.json with GemmaTokenizer's tokenizer_config.json, read back as written; framing by add_bos_token /
// add_eos_token where tokenizer_config.json has them (as transformers), else by the post-processor; what ragmig does
// not run is refused by key.
TEST(ModelFolder, GemmaFoldersKeepTheirSentencePieceBpeTokenizer) {
  ScratchDir scratch;
  const auto dir = scratch / "model";
  EncoderSpec spec;
  spec.bert = bert_config_from_json({{"model_type", "gemma3_text"},
                                     {"vocab_size", 264},
                                     {"hidden_size", 16},
                                     {"num_hidden_layers", 2},
                                     {"num_attention_heads", 2},
                                     {"num_key_value_heads", 1},
                                     {"head_dim", 8},
                                     {"intermediate_size", 24},
                                     {"sliding_window", 4},
                                     {"sliding_window_pattern", 2},
                                     {"use_bidirectional_attention", true}},
                                    "config.json");
  DualEncoder model(spec);
  text::TokenizerSpec tokenizer = testing::gemma_style_tokenizer();
  tokenizer.vocab.insert(tokenizer.vocab.end(), {"\u2581", "a", "\u2581a"});
  tokenizer.merges = {{"\u2581", "a"}};
  save_model_folder(dir.string(), model, tokenizer);
  const auto tc = nlohmann::json::parse(read_file(dir / "tokenizer_config.json"));
  EXPECT_EQ(tc["tokenizer_class"], "GemmaTokenizer");
  EXPECT_EQ(tc["add_bos_token"], true);
  EXPECT_EQ(tc["add_eos_token"], true);
  EXPECT_EQ(tc["bos_token"], "<bos>");
  auto loaded = load_model_folder(dir.string());
  EXPECT_EQ(loaded.tokenizer, tokenizer);
  EXPECT_EQ(text::make_tokenizer(loaded.tokenizer)->encode("a a\u00e9", 8),
            (std::vector<int32_t>{2, 262, 263, 5 + 0xC3, 5 + 0xA9, 1}));

  auto no_flags = tc;
  no_flags.erase("add_bos_token");
  no_flags.erase("add_eos_token");
  write_file_atomic(dir / "tokenizer_config.json", no_flags.dump());
  EXPECT_EQ(load_model_folder(dir.string()).tokenizer, tokenizer) << "framed by the post-processor";
  const auto tj = nlohmann::json::parse(read_file(dir / "tokenizer.json"));
  const std::vector<std::pair<std::function<void(nlohmann::json&)>, std::string>> refused = {
      {[](nlohmann::json& j) {
         j["pre_tokenizer"] = {{"type", "Whitespace"}};
       },
       "key \"pre_tokenizer\": expected none"},
      {[](nlohmann::json& j) {
         j["pre_tokenizer"] = {{"type", "Metaspace"}, {"replacement", "_"}, {"split", true}};
       },
       "key \"pre_tokenizer.split\": true is not supported"},
      {[](nlohmann::json& j) {
         j["pre_tokenizer"] = {{"type", "Metaspace"}, {"prepend_scheme", "first"}};
       },
       "key \"pre_tokenizer.replacement\": expected a string"},
      {[](nlohmann::json& j) {
         j["normalizer"] = {{"type", "NFKC"}};
       },
       "key \"normalizer\": normalizer NFKC"},
      {[](nlohmann::json& j) {
         j["normalizer"]["normalizers"][0] = {{"type", "Strip"}};
       },
       "key \"normalizer\": only Replace"},
      {[](nlohmann::json& j) { j["model"]["ignore_merges"] = true; }, "key \"model.ignore_merges\""},
      {[](nlohmann::json& j) { j["post_processor"]["single"].push_back(j["post_processor"]["single"][1]); },
       "key \"post_processor\": expected [bos] $A [eos]"},
      {[](nlohmann::json& j) { j["post_processor"]["single"][0]["SpecialToken"]["id"] = "<start>"; },
       "key \"post_processor\": \"<start>\" is not in the vocabulary"},
      {[](nlohmann::json& j) {
         j["model"]["vocab"]["<0x41/>"] = j["model"]["vocab"]["<0x41>"];
         j["model"]["vocab"].erase("<0x41>");
       },
       "byte token \"<0x41>\" is not in the vocabulary"},
  };
  expect_edits_refused(dir, tj, refused);
  // Base Gemma's <bos> $A, by the post-processor and by the keys (the one missing as transformers 4's default).
  auto bos_only = tj;
  bos_only["post_processor"]["single"].erase(2);
  write_file_atomic(dir / "tokenizer.json", bos_only.dump());
  const text::TokenizerSpec base = load_model_folder(dir.string()).tokenizer;
  EXPECT_TRUE(base.cls_first);
  EXPECT_FALSE(base.sep_last);
  EXPECT_EQ(base.special.sep, "<eos>") << "named, not added";
  EXPECT_EQ(text::make_tokenizer(base)->encode("a a", 8), (std::vector<int32_t>{2, 262, 263}));
  EXPECT_EQ(text::make_tokenizer(base)->encode("", 8), (std::vector<int32_t>{2}));
  write_file_atomic(dir / "tokenizer.json", tj.dump());
  for (const auto& keys : {nlohmann::json{{"add_eos_token", false}}, nlohmann::json{{"add_bos_token", true}}}) {
    auto framed = no_flags;
    framed.update(keys);
    write_file_atomic(dir / "tokenizer_config.json", framed.dump());
    EXPECT_EQ(load_model_folder(dir.string()).tokenizer, base) << keys.dump();
  }
  auto neither = no_flags;
  neither["add_bos_token"] = false;
  write_file_atomic(dir / "tokenizer_config.json", neither.dump());
  EXPECT_EQ(text::make_tokenizer(load_model_folder(dir.string()).tokenizer)->encode("", 8), std::vector<int32_t>{});
  // Written back as read: add_eos_token false, a post-processor without <eos>.
  save_model_folder((scratch / "base").string(), model, base);
  EXPECT_EQ(nlohmann::json::parse(read_file(scratch / "base" / "tokenizer_config.json"))["add_eos_token"], false);
  EXPECT_EQ(nlohmann::json::parse(read_file(scratch / "base" / "tokenizer.json"))["post_processor"]["single"].size(),
            2u);
  EXPECT_EQ(load_model_folder((scratch / "base").string()).tokenizer, base);
}

// A Mistral folder (e5-mistral's layout, small): its Metaspace tokenizer (Llama's names, no pad token: </s> pads) is
// written as tokenizer.json under PreTrainedTokenizerFast, so that transformers 5 runs the file's pipeline, and read
// back as written; the hub's legacy layout (a Prepend normaliser) reads as the file says; base Mistral's <s> $A
// (add_eos_token false) frames without </s>.
TEST(ModelFolder, MistralFoldersKeepTheirMetaspaceTokenizer) {
  ScratchDir scratch;
  const auto dir = scratch / "model";
  EncoderSpec spec;
  spec.bert = bert_config_from_json({{"model_type", "mistral"},
                                     {"vocab_size", 262},
                                     {"hidden_size", 16},
                                     {"num_hidden_layers", 1},
                                     {"num_attention_heads", 2},
                                     {"num_key_value_heads", 1},
                                     {"intermediate_size", 24},
                                     {"sliding_window", 32}},
                                    "config.json");
  spec.pooling = Pooling::LastToken;
  DualEncoder model(spec);
  text::TokenizerSpec tokenizer = testing::llama_style_tokenizer();
  tokenizer.vocab.insert(tokenizer.vocab.end(), {"\u2581", "a", "\u2581a"});
  tokenizer.merges = {{"\u2581", "a"}};
  save_model_folder(dir.string(), model, tokenizer);
  const auto tc = nlohmann::json::parse(read_file(dir / "tokenizer_config.json"));
  EXPECT_EQ(tc["tokenizer_class"], kFastTokenizerClass);
  EXPECT_EQ(tc["bos_token"], "<s>");
  EXPECT_EQ(tc["pad_token"], "</s>");
  auto loaded = load_model_folder(dir.string());
  EXPECT_EQ(loaded.tokenizer, tokenizer);
  EXPECT_EQ(loaded.max_length, 32) << "Mistral's window bounds the input";
  EXPECT_EQ(text::make_tokenizer(loaded.tokenizer)->encode(" a</s>a", 8), (std::vector<int32_t>{1, 261, 2, 260, 2}));

  auto tj = nlohmann::json::parse(read_file(dir / "tokenizer.json"));
  EXPECT_EQ(tj["pre_tokenizer"]["prepend_scheme"], "first");
  tj["pre_tokenizer"] = nullptr;
  tj["normalizer"] = {{"type", "Sequence"},
                      {"normalizers",
                       {{{"type", "Prepend"}, {"prepend", "\u2581"}},
                        {{"type", "Replace"}, {"pattern", {{"String", " "}}}, {"content", "\u2581"}}}}};
  write_file_atomic(dir / "tokenizer.json", tj.dump());
  EXPECT_EQ(text::make_tokenizer(load_model_folder(dir.string()).tokenizer)->encode(" a</s>a", 8),
            (std::vector<int32_t>{1, 259, 261, 2, 261, 2}))
      << "the legacy normaliser: a \"\u2581\" before every part, the space's own after it";
  auto no_eos = tc;
  no_eos["add_eos_token"] = false;
  write_file_atomic(dir / "tokenizer_config.json", no_eos.dump());
  EXPECT_EQ(text::make_tokenizer(load_model_folder(dir.string()).tokenizer)->encode(" a</s>a", 8),
            (std::vector<int32_t>{1, 259, 261, 2, 261}));
}

// MPNet's tokenizer names its special tokens (<s>, </s>, <pad>) in tokenizer_config.json, as a string or as
// transformers 4's AddedToken object, else in special_tokens_map.json; a ragmig-written folder keeps them.
TEST(SentenceTransformerFolder, SpecialTokensAreTheFoldersOwn) {
  ScratchDir scratch;
  const auto dir = scratch / "model";
  EncoderSpec spec = tiny_spec(true);
  spec.bert = testing::as_mpnet(spec.bert);
  DualEncoder model(spec);
  std::vector<std::string> vocab = {"<s>", "<pad>", "</s>", "<unk>", "[UNK]"};
  for (int i = 5; i < 39; ++i) vocab.push_back("tok" + std::to_string(i));
  vocab.push_back("<mask>");
  const text::SpecialTokens mpnet{"<s>", "</s>", "<pad>", "[UNK]", "<mask>"};
  save_model_folder(dir.string(), model, text::word_piece_spec(vocab, {}, mpnet));
  EXPECT_EQ(read_folder_tokenizer(dir.string()).spec.special, mpnet);
  const auto tc = nlohmann::json::parse(read_file(dir / "tokenizer_config.json"));
  EXPECT_EQ(tc["tokenizer_class"], "MPNetTokenizer");
  EXPECT_EQ(tc["pad_token"], "<pad>");
  EXPECT_EQ(nlohmann::json::parse(read_file(dir / "special_tokens_map.json"))["mask_token"], "<mask>");
  auto loaded = load_model_folder(dir.string());
  EXPECT_EQ(loaded.tokenizer.special, mpnet);
  const auto tok_ptr = text::make_tokenizer(loaded.tokenizer);
  const text::Tokenizer& tok = *tok_ptr;
  EXPECT_EQ(tok.encode("tok7", 8), (std::vector<int32_t>{0, 7, 2}));
  EXPECT_EQ(tok.pad_id(), 1);
  EXPECT_EQ(tok.mask_id(), 39);

  // transformers 4's AddedToken objects; without tokenizer_config.json's names, special_tokens_map.json's.
  nlohmann::json objects = tc;
  objects["cls_token"] = {{"__type", "AddedToken"}, {"content", "<s>"}, {"lstrip", false}};
  write_file_atomic(dir / "tokenizer_config.json", objects.dump());
  EXPECT_EQ(read_folder_tokenizer(dir.string()).spec.special, mpnet);
  nlohmann::json bare = {{"do_lower_case", true}};
  write_file_atomic(dir / "tokenizer_config.json", bare.dump());
  EXPECT_EQ(read_folder_tokenizer(dir.string()).spec.special, mpnet);
  fs::remove(dir / "special_tokens_map.json");
  EXPECT_EQ(read_folder_tokenizer(dir.string()).spec.special, text::SpecialTokens{}) << "BERT's by default";
  try {
    const text::WordPieceTokenizer bert_tokens(vocab, {}, read_folder_tokenizer(dir.string()).spec.special);
    ADD_FAILURE() << "no DataError";
  } catch (const DataError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("no [CLS] token (the cls token)"));
  }

  bare["sep_token"] = 3;
  write_file_atomic(dir / "tokenizer_config.json", bare.dump());
  try {
    read_folder_tokenizer(dir.string());
    ADD_FAILURE() << "no DataError";
  } catch (const DataError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("tokenizer_config.json: key \"sep_token\""));
  }
}

// An MPNet folder holds MPNet's tensor names (attention.attn.q, ...), and an MPNetForMaskedLM checkpoint's
// "mpnet." prefix and lm_head are read as BertForMaskedLM's are.
TEST(ModelFolder, MPNetTensorsHaveMPNetsNames) {
  ScratchDir scratch;
  const auto dir = scratch / "mpnet";
  EncoderSpec spec = tiny_spec(true);
  spec.bert = testing::as_mpnet(spec.bert);
  spec.bert.max_position_embeddings = 26;
  torch::manual_seed(12);
  DualEncoder model(spec);
  randomize(model);
  save_model_folder(dir.string(), model, text::word_piece_spec(tiny_vocab()));
  const auto file = read_safetensors((dir / "model.safetensors").string());
  for (const char* name : {"encoder.layer.1.attention.attn.q.weight", "encoder.layer.1.attention.attn.o.bias",
                           "encoder.layer.0.attention.LayerNorm.weight", "encoder.layer.0.intermediate.dense.weight",
                           "encoder.relative_attention_bias.weight"})
    EXPECT_TRUE(file.tensors.count(name)) << name;
  EXPECT_FALSE(file.tensors.count("encoder.layer.0.attention.self.query.weight"));
  EXPECT_FALSE(file.tensors.count("embeddings.token_type_embeddings.weight"));
  EXPECT_EQ(nlohmann::json::parse(read_file(dir / "sentence_bert_config.json"))["max_seq_length"], 24)
      << "26 positions less MPNet's first two";
  auto loaded = load_model_folder(dir.string());
  expect_same_outputs(model, loaded.model);

  edit_weights(dir, [](SafetensorsFile& f) {
    SafetensorsFile lm;
    for (auto& [name, raw] : f.tensors) lm.tensors["mpnet." + name] = raw;
    lm.tensors["lm_head.bias"] = to_raw(torch::zeros({40}));
    f = lm;
  });
  auto from_lm = load_model_folder(dir.string());
  expect_same_outputs(model, from_lm.model);
  edit_weights(dir, [](SafetensorsFile& f) { f.tensors.erase("mpnet.encoder.layer.1.attention.attn.k.bias"); });
  expect_data_error(dir.string(), "encoder.layer.1.attention.attn.k.bias");
}

}  // namespace
}  // namespace ragmig::model
