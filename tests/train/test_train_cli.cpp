// `ragmig train` on bad input: exit 2, one clear message naming the file:line or key, and no run folder
// left behind. Plus the documented help.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <sstream>

#include "core/atomic_file.h"
#include "model/bert_config.h"
#include "model/lora.h"
#include "model/model_folder.h"
#include "support/byte_level_tokenizers.h"
#include "text/tokenizer.h"
#include "train/train_config.h"
#include "train_fixture.h"

namespace ragmig::testing {
namespace {

struct BadInput {
  friend std::ostream& operator<<(std::ostream& os, const BadInput& c) { return os << c.name; }
  std::string name;
  std::string config_extra;      // appended to [train] of the tiny config
  std::string pairs_text;        // content of pairs.jsonl ("" = real SQuAD pairs)
  std::vector<std::string> set;  // --set arguments
  std::string expected;          // substring of the message
};

class BadInputTest : public ::testing::TestWithParam<BadInput> {};

TEST_P(BadInputTest, ExitsTwoWithOneMessageAndWritesNothing) {
  const BadInput& c = GetParam();
  ScratchDir dir;
  if (c.pairs_text.empty()) {
    RAGMIG_REQUIRE_DATA("beir/squad-train");
    write_squad_pairs(dir / "pairs.jsonl", 240);
  } else {
    write_file_atomic(dir / "pairs.jsonl", c.pairs_text == "EMPTY" ? "" : c.pairs_text);
  }
  write_file_atomic(dir / "cfg.toml", tiny_config(dir / "pairs.jsonl", c.config_extra));
  std::vector<std::string> args = {"train", (dir / "cfg.toml").string(), "--run-dir", (dir / "run").string()};
  for (const auto& s : c.set) {
    args.push_back("--set");
    args.push_back(s);
  }
  auto r = run_ragmig(args);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find(c.expected), std::string::npos) << "expected '" << c.expected << "' in:\n" << r.output;
  // One message: said once, on one line, with no LibTorch backtrace.
  EXPECT_EQ(r.output.find(c.expected), r.output.rfind(c.expected)) << "said twice:\n" << r.output;
  EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << r.output;
  EXPECT_EQ(r.output.find("frame #"), std::string::npos) << r.output;
  EXPECT_FALSE(std::filesystem::exists(dir / "run")) << "a run folder was left behind";
}

INSTANTIATE_TEST_SUITE_P(
    Cases, BadInputTest,
    ::testing::Values(
        BadInput{"unknown_key", "colour = 3", "", {}, "unknown key 'train.colour'"},
        BadInput{"wrong_type", "keep_checkpoints = \"two\"", "", {}, "'train.keep_checkpoints' expects an integer, got a string"},
        BadInput{"bad_value", "accumulation = \"sometimes\"", "", {}, "train.accumulation"},
        BadInput{"bad_unpad", "unpad = \"maybe\"", "", {}, "config key 'train.unpad': must be \"on\", \"off\" or \"auto\""},
        BadInput{"zero_profile_steps", "", "", {"train.profile_steps=0"}, "config key 'train.profile_steps': must be >= 1"},
        BadInput{"unknown_set", "", "", {"train.nope=1"}, "unknown key 'train.nope'"},
        BadInput{"missing_file", "", "", {"data.pairs=/no/such/pairs.jsonl"}, "/no/such/pairs.jsonl"},
        BadInput{"pairs_is_a_folder", "", "", {"data.pairs=/etc"},
                 "config key 'data.pairs': /etc is a folder, not a file"},
        BadInput{"malformed_jsonl", "", "{\"query\": \"a\", \"positive\": \"b\"}\n{\"query\": \"c\", \"positive\": \"d\"}\n{oops\n",
                 {}, "pairs.jsonl:3"},
        BadInput{"missing_field", "", "{\"query\": \"a\", \"positive\": \"b\"}\n{\"query\": \"c\"}\n", {}, "pairs.jsonl:2"},
        BadInput{"empty_data", "", "EMPTY", {}, "empty"},
        BadInput{"too_few_for_a_batch", "", "{\"query\": \"a\", \"positive\": \"b\"}\n", {},
                 "batch_size 16 exceeds the 1 distinct positives"},
        BadInput{"missing_vocab", "", "", {"model.vocab=/no/such/vocab.txt"}, "/no/such/vocab.txt"},
        BadInput{"profile_trace_folder", "", "", {"train.profile_trace=\"/no/such/trace.json\""},
                 "config key 'train.profile_trace': no such folder: /no/such"},
        BadInput{"matryoshka_zero", "matryoshka_dims = [64, 0]", "", {},
                 "config key 'train.matryoshka_dims': sizes must be positive"},
        BadInput{"matryoshka_twice", "matryoshka_dims = [8, 4, 8]", "", {}, "train.matryoshka_dims': lists 8 twice"},
        BadInput{"matryoshka_too_large", "matryoshka_dims = [999, 8]", "", {},
                 "'train.matryoshka_dims': 999 exceeds the model's 32 embedding dimensions"},
        BadInput{"dense_activation", "", "", {"model.dense_dim=8", "model.dense_activation=\"swish\""},
                 "config key 'model.dense_activation': must be identity, tanh, relu, gelu, sigmoid or silu"},
        BadInput{"dense_with_lora", "", "", {"model.dense_dim=8", "model.init=x", "lora.rank=4"},
                 "config key 'model.dense_dim': a new Dense layer must train"},
        BadInput{"lora_without_init", "", "", {"lora.rank=4"}, "lora.rank': needs model.init"},
        BadInput{"init_not_a_model_folder", "", "", {"model.init=\"/\""},
                 "input error: config key 'model.init': /: not a model folder: no /config.json"},
        BadInput{"lora_bad_dropout", "", "", {"lora.dropout=1.5"}, "lora.dropout"},
        BadInput{"holdout_negative", "", "", {"data.holdout_queries=-1"}, "data.holdout_queries': must be >= 0"},
        BadInput{"holdout_without_query_ids", "", "", {"data.holdout_queries=10"},
                 "pairs.jsonl: data.holdout_queries needs a query id for every example; example 1 has none"},
        BadInput{"holdout_of_everything", "",
                 "{\"query\": \"a\", \"positive\": \"b\", \"query_id\": \"1\"}\n"
                 "{\"query\": \"c\", \"positive\": \"d\", \"query_id\": 2}\n",
                 {"data.holdout_queries=5"}, "holds out all 2 queries"}),
    [](const auto& info) { return info.param.name; });

// A --run-dir that is a file was found only when the run folder was written, after the data and model were read
// (exit 1, "filesystem error: cannot create directories").
TEST(TrainCli, ARunDirThatIsAFileIsRefusedFirst) {
  ScratchDir dir;
  write_file_atomic(dir / "cfg.toml", tiny_config(dir / "pairs.jsonl", ""));
  write_file_atomic(dir / "run", "a file\n");
  for (const std::vector<std::string>& extra : {std::vector<std::string>{}, {"--replicas", "2"}}) {
    std::vector<std::string> args = {"train", (dir / "cfg.toml").string(), "--run-dir", (dir / "run").string()};
    args.insert(args.end(), extra.begin(), extra.end());
    const auto r = run_ragmig(args);
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find("--run-dir: " + (dir / "run").string() + " is a file, not a folder"), std::string::npos)
        << r.output;
  }
  EXPECT_EQ(read_file(dir / "run"), "a file\n");
}

TEST(TrainCli, QrelsNamingAMissingCorpusIdNameFileAndLine) {
  ScratchDir dir;
  std::filesystem::create_directories(dir / "beir/qrels");
  write_file_atomic(dir / "beir/corpus.jsonl",
                    "{\"_id\": \"d1\", \"title\": \"\", \"text\": \"alpha beta\"}\n"
                    "{\"_id\": \"d2\", \"title\": \"\", \"text\": \"gamma delta\"}\n");
  write_file_atomic(dir / "beir/queries.jsonl", "{\"_id\": \"q1\", \"text\": \"alpha\"}\n{\"_id\": \"q2\", \"text\": \"gamma\"}\n");
  write_file_atomic(dir / "beir/qrels/train.tsv", "query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td9\t1\n");
  write_file_atomic(dir / "cfg.toml", "[data]\nbeir = \"" + (dir / "beir").string() + "\"\n[train]\nbatch_size = 2\n");
  auto r = run_ragmig({"train", (dir / "cfg.toml").string(), "--run-dir", (dir / "run").string()});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("train.tsv:3"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("d9"), std::string::npos) << r.output;
  EXPECT_FALSE(std::filesystem::exists(dir / "run"));
}

// An eval.split the folder has no qrels for is refused before training, not at its end.
TEST(TrainCli, AnEvalSplitWithoutQrelsIsRefusedBeforeTraining) {
  ScratchDir dir;
  std::filesystem::create_directories(dir / "beir/qrels");
  write_file_atomic(dir / "beir/corpus.jsonl", "{\"_id\": \"d1\", \"text\": \"alpha beta\"}\n");
  write_file_atomic(dir / "beir/queries.jsonl", "{\"_id\": \"q1\", \"text\": \"alpha\"}\n");
  write_file_atomic(dir / "beir/qrels/train.tsv", "q1\td1\t1\n");
  write_file_atomic(dir / "beir/qrels/test.tsv", "q1\td1\t1\n");
  write_file_atomic(dir / "cfg.toml", "[data]\nbeir = \"" + (dir / "beir").string() + "\"\n[eval]\nsplit = \"dev\"\n");
  auto r = run_ragmig({"train", (dir / "cfg.toml").string(), "--run-dir", (dir / "run").string()});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("config key 'eval.split': no qrels for split 'dev' in " + (dir / "beir").string() +
                          "/qrels (found: test.tsv, train.tsv)"),
            std::string::npos)
      << r.output;
  EXPECT_FALSE(std::filesystem::exists(dir / "run"));
}

// Examples with fewer negatives of their own than train.hard_negatives get random passages for the rest: the start
// event and line count them (a BEIR folder's qrels carry none; the pairs here carry one each).
TEST(TrainCli, ExamplesShortOfHardNegativesAreCounted) {
  RAGMIG_REQUIRE_DATA("beir/squad-train");
  ScratchDir dir;
  write_squad_pairs(dir / "pairs.jsonl", 240);
  write_file_atomic(dir / "cfg.toml", tiny_config(dir / "pairs.jsonl"));
  for (const int64_t asked : {1, 2}) {
    const std::string run = "run" + std::to_string(asked);
    const auto r = run_ragmig({"train", (dir / "cfg.toml").string(), "--run-dir", (dir / run).string(), "--set",
                               "train.max_steps=1", "--set", "train.hard_negatives=" + std::to_string(asked)});
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_EQ(start_event(dir / run)["short_of_negatives"], asked == 1 ? 0 : 240) << r.output;
    EXPECT_EQ(r.output.find("(240 with fewer than 2 negatives of their own: random passages make up the rest)") !=
                  std::string::npos,
              asked == 2)
        << r.output;
  }
}

TEST(TrainCli, VocabularyLargerThanTheModelIsAMismatch) {
  RAGMIG_REQUIRE_DATA("beir/squad-train");
  ScratchDir dir;
  write_squad_pairs(dir / "pairs.jsonl", 240);
  write_file_atomic(dir / "cfg.toml", tiny_config(dir / "pairs.jsonl"));
  auto untrained = run_ragmig({"train", (dir / "cfg.toml").string(), "--run-dir", (dir / "base").string(), "--quiet",
                               "--set", "train.max_steps=0"});
  ASSERT_EQ(untrained.exit_code, 0) << untrained.output;
  // A vocabulary with more tokens than the model has embeddings.
  std::string vocab = read_file(dir / "base/model/vocab.txt");
  for (int i = 0; i < 50; ++i) vocab += "extra" + std::to_string(i) + "\n";
  write_file_atomic(dir / "base/model/vocab.txt", vocab);
  auto r = run_ragmig({"train", (dir / "cfg.toml").string(), "--run-dir", (dir / "run").string(), "--set",
                       "model.init=" + (dir / "base/model").string()});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("mismatch"), std::string::npos) << r.output;
  EXPECT_FALSE(std::filesystem::exists(dir / "run"));
}

TEST(TrainCli, LoraOnAnAdapterFolderAsksForAMergeFirst) {
  RAGMIG_REQUIRE_DATA("beir/squad-train");
  ScratchDir dir;
  write_squad_pairs(dir / "pairs.jsonl", 240);
  write_file_atomic(dir / "cfg.toml", tiny_config(dir / "pairs.jsonl"));
  std::filesystem::create_directories(dir / "adapter");
  write_file_atomic(dir / "adapter/adapter_config.json", R"({"peft_type": "LORA", "r": 4})");
  auto r = run_ragmig({"train", (dir / "cfg.toml").string(), "--run-dir", (dir / "run").string(), "--set",
                       "model.init=" + (dir / "adapter").string(), "--set", "lora.rank=4"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("ragmig lora merge"), std::string::npos) << r.output;
  EXPECT_FALSE(std::filesystem::exists(dir / "run"));
}

// model.dense_dim on a model from scratch: a Dense layer after pooling, written as sentence-transformers' 2_Dense
// module, and embeddings of its size from the folder.
TEST(TrainCli, ADenseDimGivesANewModelADenseModule) {
  RAGMIG_REQUIRE_DATA("beir/squad-train");
  ScratchDir dir;
  write_squad_pairs(dir / "pairs.jsonl", 240);
  write_file_atomic(dir / "cfg.toml", tiny_config(dir / "pairs.jsonl"));
  const auto r = run_ragmig({"train", (dir / "cfg.toml").string(), "--run-dir", (dir / "run").string(), "--quiet",
                             "--set", "train.max_steps=3", "--set", "model.dense_dim=8"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto modules = nlohmann::json::parse(read_file(dir / "run/model/modules.json"));
  ASSERT_EQ(modules.size(), 4u);
  EXPECT_EQ(modules[2]["path"], "2_Dense");
  EXPECT_EQ(nlohmann::json::parse(read_file(dir / "run/model/2_Dense/config.json")),
            nlohmann::json::parse(R"({"in_features": 32, "out_features": 8, "bias": true,
                                      "activation_function": "torch.nn.modules.activation.Tanh"})"));
  EXPECT_TRUE(std::filesystem::exists(dir / "run/model/2_Dense/model.safetensors"));
}

// Recall after the given steps and, unless eval.at_end = false (a sweep's trials: their evaluation job scores
// the model), after the last one; a step asked for in eval.at_steps is evaluated once either way.
TEST(TrainCli, EvaluationsAtTheStepsAskedAndAtTheEndUnlessTurnedOff) {
  RAGMIG_REQUIRE_DATA("beir/squad-train");
  ScratchDir dir;
  write_squad_pairs(dir / "pairs.jsonl", 240);
  std::string config = tiny_config(dir / "pairs.jsonl");
  config.replace(config.find("pairs = "), 0, "beir = \"" + (data_dir() / "beir/squad-train").string() + "\"\n");
  config += "\n[eval]\nsplit = \"test\"\nmax_queries = 20\nmax_passages = 200\nk = 5\n";
  write_file_atomic(dir / "cfg.toml", config);
  const auto evaluated = [&](const std::string& run, const std::vector<std::string>& set) {
    std::vector<std::string> argv = {"train", (dir / "cfg.toml").string(), "--run-dir", (dir / run).string(), "--quiet",
                                     "--set", "train.max_steps=4", "--set", "data.pairs="};
    for (const auto& s : set) argv.insert(argv.end(), {"--set", s});
    const auto r = run_ragmig(argv);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    std::vector<int64_t> steps;
    std::istringstream events(read_file(dir / run / "events.jsonl"));
    for (std::string line; std::getline(events, line);) {
      const auto e = nlohmann::json::parse(line);
      if (e["event"] == "eval") steps.push_back(e["step"].get<int64_t>());
    }
    const auto result = nlohmann::json::parse(read_file(dir / run / "result.json"));
    const bool at_end = std::find(set.begin(), set.end(), "eval.at_end=false") == set.end();
    EXPECT_EQ(result.contains("recall@5"), at_end) << result.dump();  // the end's recall, in result.json
    return steps;
  };
  EXPECT_EQ(evaluated("both", {"eval.at_steps=[2]"}), (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(evaluated("rungs", {"eval.at_steps=[2]", "eval.at_end=false"}), (std::vector<int64_t>{2}));
  EXPECT_EQ(evaluated("last", {"eval.at_steps=[2, 4]", "eval.at_end=false"}), (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(evaluated("once", {"eval.at_steps=[4]"}), (std::vector<int64_t>{4}));
}

// `ragmig train DIR/cfg.toml --run-dir DIR/RUN` with `set` as --set overrides; a failure is recorded.
void train_in(const std::filesystem::path& dir, const std::string& run, const std::vector<std::string>& set) {
  std::vector<std::string> argv = {"train", (dir / "cfg.toml").string(), "--run-dir", (dir / run).string(), "--quiet"};
  for (const auto& s : set) argv.insert(argv.end(), {"--set", s});
  const auto r = run_ragmig(argv);
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

// Prompts: the config's where given, else model.init's; logged in the start event and saved with the model,
// where sentence-transformers' encode_query / encode_document find them.
TEST(TrainCli, PromptsComeFromTheConfigOrTheInitFolderAndAreSaved) {
  RAGMIG_REQUIRE_DATA("beir/squad-train");
  ScratchDir dir;
  write_squad_pairs(dir / "pairs.jsonl", 240);
  write_file_atomic(dir / "cfg.toml", tiny_config(dir / "pairs.jsonl"));
  const auto train = [&](const std::string& run, std::vector<std::string> set) {
    set.insert(set.begin(), "train.max_steps=0");
    train_in(dir.path(), run, set);
    const auto saved = nlohmann::json::parse(read_file(dir / run / "model" / "config_sentence_transformers.json"));
    EXPECT_EQ(start_event(dir / run)["prompts"], nlohmann::json({{"query", saved["prompts"]["query"]},
                                                                 {"passage", saved["prompts"]["document"]}}))
        << "the start event says what the model was saved with";
    return saved["prompts"];
  };
  EXPECT_EQ(train("scratch", {}), nlohmann::json::parse(R"({"query": "", "document": ""})")) << "none by default";
  EXPECT_EQ(train("base", {"model.query_prompt=query: ", "model.passage_prompt=passage: "}),
            nlohmann::json::parse(R"({"query": "query: ", "document": "passage: "})"));
  const std::string init = "model.init=" + (dir / "base" / "model").string();
  EXPECT_EQ(train("inherited", {init}), nlohmann::json::parse(R"({"query": "query: ", "document": "passage: "})"));
  EXPECT_EQ(train("replaced", {init, "model.query_prompt=search_query: ", "model.passage_prompt="}),
            nlohmann::json::parse(R"({"query": "search_query: ", "document": ""})"))
      << "an empty prompt in the config drops the folder's";
}

// model.pooling, model.normalize and model.add_eos_token over model.init's: a base decoder (Qwen3-Base's bare $A, mean
// pooling) fine-tuned the way e5-mistral and Qwen3-Embedding were (its eos appended, pooled from there) saves a
// folder that frames and pools so; a WordPiece folder does not take add_eos_token, and a new model neither.
TEST(TrainCli, PoolingNormalizeAndEosFramingOverrideTheInitFolders) {
  RAGMIG_REQUIRE_DATA("beir/squad-train");
  ScratchDir dir;
  write_squad_pairs(dir / "pairs.jsonl", 240);
  write_file_atomic(dir / "cfg.toml", tiny_config(dir / "pairs.jsonl"));
  model::EncoderSpec spec;
  spec.bert = model::bert_config_from_json({{"model_type", "qwen3"},
                                            {"vocab_size", 257},
                                            {"hidden_size", 16},
                                            {"num_hidden_layers", 1},
                                            {"num_attention_heads", 2},
                                            {"num_key_value_heads", 1},
                                            {"head_dim", 8},
                                            {"intermediate_size", 24},
                                            {"max_position_embeddings", 64}},
                                           "config.json");
  spec.normalize = false;  // mean pooling, as sentence-transformers makes of a plain transformers folder
  text::TokenizerSpec base = testing::qwen_style_tokenizer();
  base.sep_last = false;
  model::DualEncoder net(spec);
  model::save_model_folder((dir / "qwen3-base").string(), net, base);
  const std::string init = "model.init=" + (dir / "qwen3-base").string();
  const auto saved = [&](const std::string& run, std::vector<std::string> set) {
    set.insert(set.begin(), "train.max_steps=2");
    train_in(dir.path(), run, set);
    return model::load_model_folder((dir / run / "model").string());
  };
  const auto as_is = saved("as-is", {init});
  EXPECT_EQ(as_is.model->spec().pooling, model::Pooling::Mean);
  EXPECT_FALSE(as_is.model->spec().normalize);
  EXPECT_FALSE(as_is.tokenizer.sep_last);
  const auto embedder =
      saved("embedder", {init, "model.pooling=\"lasttoken\"", "model.normalize=true", "model.add_eos_token=true"});
  EXPECT_EQ(embedder.model->spec().pooling, model::Pooling::LastToken);
  EXPECT_TRUE(embedder.model->spec().normalize);
  EXPECT_TRUE(embedder.tokenizer.sep_last);
  EXPECT_EQ(text::make_tokenizer(embedder.tokenizer)->encode("", 4), std::vector<int32_t>{256}) << "<|endoftext|>";
  const std::string again = "model.init=" + (dir / "embedder" / "model").string();
  EXPECT_FALSE(saved("without", {again, "model.add_eos_token=false"}).tokenizer.sep_last);
  // With LoRA (an adapter is loaded with its base's framing and pooling): the base saved so first, untrained.
  train_in(dir.path(), "framed",
           {"train.max_steps=0", init, "model.pooling=\"lasttoken\"", "model.add_eos_token=true"});
  const auto adapter = saved("adapter", {"model.init=" + (dir / "framed" / "model").string(), "lora.rank=2"});
  EXPECT_TRUE(model::is_adapter_folder((dir / "adapter" / "model").string()));
  EXPECT_TRUE(adapter.tokenizer.sep_last);
  EXPECT_EQ(adapter.model->spec().pooling, model::Pooling::LastToken);

  train_in(dir.path(), "bert", {"train.max_steps=0"});
  const std::string wordpiece = "model.init=" + (dir / "bert" / "model").string();
  EXPECT_EQ(saved("cls", {wordpiece, "model.pooling=\"cls\"", "model.normalize=false"}).model->spec().pooling,
            model::Pooling::Cls);
  for (const auto& [set, message] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{wordpiece, "model.add_eos_token=true"},
            "config key 'model.add_eos_token': " + (dir / "bert" / "model").string() +
                "'s tokenizer is not SentencePiece BPE"},
           {{"model.add_eos_token=true"}, "model.add_eos_token"},
           {{init, "model.pooling=\"last\""}, "model.pooling"},
           {{init, "lora.rank=2", "model.add_eos_token=true"},
            "config key 'model.add_eos_token': is model.init's with lora.rank"}}) {
    std::vector<std::string> argv = {"train", (dir / "cfg.toml").string(), "--run-dir", (dir / "refused").string()};
    for (const auto& s : set) argv.insert(argv.end(), {"--set", s});
    const auto r = run_ragmig(argv);
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find(message), std::string::npos) << r.output;
    EXPECT_FALSE(std::filesystem::exists(dir / "refused" / "model"));
  }
}

// The sizes a model is meant to be cut to are saved with it: the Matryoshka sizes this training covered (ragmig.json,
// of a model or an adapter folder), and model.init's truncate_dim, kept as sentence-transformers keeps it.
TEST(TrainCli, MatryoshkaSizesAndTheInitFoldersTruncateDimAreSaved) {
  RAGMIG_REQUIRE_DATA("beir/squad-train");
  ScratchDir dir;
  write_squad_pairs(dir / "pairs.jsonl", 240);
  write_file_atomic(dir / "cfg.toml", tiny_config(dir / "pairs.jsonl"));
  const auto train = [&](const std::string& run, std::vector<std::string> set) {
    set.insert(set.begin(), "train.max_steps=2");
    train_in(dir.path(), run, set);
    return model::folder_embedding_sizes((dir / run / "model").string());
  };
  EXPECT_EQ(train("plain", {}), model::EmbeddingSizes{});
  EXPECT_EQ(train("matryoshka", {"train.matryoshka_dims=[32, 8]"}), (model::EmbeddingSizes{0, {32, 8}}));

  const std::filesystem::path st = dir / "matryoshka" / "model" / "config_sentence_transformers.json";
  auto config = nlohmann::json::parse(read_file(st));
  config["truncate_dim"] = 8;
  write_file_atomic(st, config.dump());
  const std::string init = "model.init=" + (dir / "matryoshka" / "model").string();
  EXPECT_EQ(train("tuned", {init}), (model::EmbeddingSizes{8, {}}))
      << "a training without the Matryoshka loss does not vouch for the base's sizes";
  EXPECT_EQ(train("adapter", {init, "lora.rank=2", "train.matryoshka_dims=[16]"}), (model::EmbeddingSizes{8, {16}}));
  EXPECT_TRUE(model::is_adapter_folder((dir / "adapter" / "model").string()));
}

// A run folder's result.json that is not what a finished run writes: named, and the folder left as it was.
TEST(TrainCli, AMalformedResultFileIsNamed) {
  RAGMIG_REQUIRE_DATA("beir/squad-train");
  ScratchDir dir;
  write_squad_pairs(dir / "pairs.jsonl", 240);
  write_file_atomic(dir / "cfg.toml", tiny_config(dir / "pairs.jsonl"));
  for (const std::string bad : {"{\"step\": \"40\"}", "[40]", "{\"step\": 4"}) {
    std::filesystem::create_directories(dir / "run");
    write_file_atomic(dir / "run/result.json", bad);
    auto r = run_ragmig({"train", (dir / "cfg.toml").string(), "--run-dir", (dir / "run").string()});
    EXPECT_EQ(r.exit_code, 2) << bad << "\n" << r.output;
    EXPECT_NE(r.output.find("result.json: expected the JSON object a finished run writes"), std::string::npos)
        << bad << "\n" << r.output;
    EXPECT_EQ(read_file(dir / "run/result.json"), bad);
    EXPECT_FALSE(std::filesystem::exists(dir / "run/events.jsonl"));
  }
}

TEST(TrainCli, HelpDocumentsEveryOptionAndKey) {
  auto top = run_ragmig({"--help"});
  EXPECT_EQ(top.exit_code, 0);
  EXPECT_NE(top.output.find("train"), std::string::npos);
  auto help = run_ragmig({"train", "--help"});
  EXPECT_EQ(help.exit_code, 0);
  for (const char* option : {"--run-dir", "--set", "--quiet", "--print-config", "--replicas"})
    EXPECT_NE(help.output.find(option), std::string::npos) << option;
  train::TrainConfig cfg;
  const ConfigTable table = train::make_config_table(cfg);
  for (const auto& field : table.fields())
    EXPECT_NE(help.output.find(field.key), std::string::npos) << field.key;
  auto none = run_ragmig({});
  EXPECT_EQ(none.exit_code, 2);
}

}  // namespace
}  // namespace ragmig::testing
