// The LibTorch paths of eval against their plain references: exact search (chunked matmul + top-k) against
// index::exact_search, and the batched, length-sorted embedder against embedding one text at a time.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <random>

#include "core/atomic_file.h"
#include "core/error.h"
#include "eval/dense_retrieval.h"
#include "eval/encoder.h"
#include "eval/torch_search.h"
#include "eval_fixture.h"
#include "index/exact_search.h"
#include "model/model_folder.h"
#include "support/tiny_bert.h"
#include "search_check.h"

namespace ragmig::eval {
namespace {

using testing::random_matrix;

void expect_same(const index::SearchResult& got, const index::SearchResult& ref) { testing::expect_same_search(got, ref); }

struct ChunkCase {
  friend std::ostream& operator<<(std::ostream& os, const ChunkCase& c) { return os << c.query_chunk << "x" << c.doc_chunk; }
  int64_t query_chunk, doc_chunk;
};
class TorchSearch : public ::testing::TestWithParam<ChunkCase> {};

// Chunks smaller than the data exercise the merge of running top-k lists across document chunks.
TEST_P(TorchSearch, EqualsTheExactReference) {
  const auto docs = random_matrix(1500, 24, 1), queries = random_matrix(130, 24, 2);
  TorchSearchOptions o;
  o.device = "cpu";
  o.query_chunk = GetParam().query_chunk;
  o.doc_chunk = GetParam().doc_chunk;
  expect_same(torch_exact_search(queries, docs, 20, o), index::exact_search(queries, docs, 20, 2));
}

INSTANTIATE_TEST_SUITE_P(Chunks, TorchSearch,
                         ::testing::Values(ChunkCase{1024, 1 << 18}, ChunkCase{7, 100}, ChunkCase{64, 15}, ChunkCase{1, 1499}));

TEST(TorchSearchEdges, KIsCappedAndDimensionsMustAgree) {
  const auto docs = random_matrix(5, 4, 3), queries = random_matrix(2, 4, 4);
  TorchSearchOptions o;
  o.device = "cpu";
  EXPECT_EQ(torch_exact_search(queries, docs, 50, o).k, 5);
  EXPECT_EQ(torch_exact_search(index::FloatMatrix(0, 4), docs, 3, o).queries, 0);
  EXPECT_THROW(torch_exact_search(random_matrix(2, 3, 5), docs, 3, o), DataError);
  o.device = "tpu";
  EXPECT_THROW(torch_exact_search(queries, docs, 3, o), ConfigError);
}

// A prefix of unit vectors is renormalised (cosine, as a normalising model compares); a prefix of raw vectors is
// kept as it is (dot product).
TEST(LeadingDimensions, RenormalisesThePrefixesOfUnitVectorsOnly) {
  index::FloatMatrix unit(2, 4), raw(2, 4);
  unit.data = {0.5f, 0.5f, 0.5f, 0.5f, 0.6f, 0.0f, 0.8f, 0.0f};
  raw.data = {3.0f, 4.0f, 1.0f, 2.0f, 1.0f, 1.0f, 1.0f, 1.0f};
  const index::FloatMatrix u = leading_dimensions(unit, 2), r = leading_dimensions(raw, 2);
  ASSERT_EQ(u.cols, 2);
  EXPECT_NEAR(u.data[0], std::sqrt(0.5), 1e-6);
  EXPECT_NEAR(u.data[1], std::sqrt(0.5), 1e-6);
  EXPECT_NEAR(u.data[2], 1.0, 1e-6);
  EXPECT_NEAR(u.data[3], 0.0, 1e-6);
  EXPECT_EQ(r.data, (std::vector<float>{3.0f, 4.0f, 1.0f, 1.0f}));
  EXPECT_EQ(leading_dimensions(unit, 4).data, unit.data);
}

TEST(Encoder, BatchedEmbeddingEqualsOneTextAtATime) {
  testing::ScratchDir dir;
  testing::write_random_model(dir / "model");
  EmbedOptions o;
  o.batch_size = 3;
  o.max_passage_tokens = 1000;  // capped at the model's 64 positions
  Encoder encoder((dir / "model").string(), "cpu", o);
  EXPECT_EQ(encoder.max_passage_tokens(), 64);
  const std::vector<std::string> texts = {"lava", "glaciers carve valleys slowly over centuries and more", "",
                                          "the coral", "rivers carry sediment to the sea", "forests"};
  const index::FloatMatrix batched = encoder.embed(texts, false);
  ASSERT_EQ(batched.rows, 6);
  EXPECT_EQ(batched.cols, 32);
  for (int64_t i = 0; i < batched.rows; ++i) {
    const index::FloatMatrix one = encoder.embed({texts[static_cast<size_t>(i)]}, false);
    double norm = 0;
    for (int64_t j = 0; j < one.cols; ++j) {
      EXPECT_NEAR(batched.row(i)[j], one.row(0)[j], 2e-5) << "text " << i << " dim " << j;
      norm += batched.row(i)[j] * batched.row(i)[j];
    }
    EXPECT_NEAR(norm, 1.0, 1e-4) << "the model folder normalises";
  }
  EXPECT_EQ(encoder.embed({}, true).rows, 0);
  EXPECT_THROW(Encoder((dir / "nowhere").string(), "cpu", o), Error);
}

// The folder's prompts (config_sentence_transformers.json) go before every text of their side; the options'
// replace them, "" with none.
TEST(Encoder, PromptsFromTheFolderOrTheOptionsGoBeforeEveryText) {
  testing::ScratchDir dir;
  const auto model = dir / "model";
  testing::write_random_model(model);
  write_file_atomic(model / "config_sentence_transformers.json",
                    R"({"prompts": {"query": "lava ", "document": "the coral "}})");
  EmbedOptions o;
  Encoder prompted(model.string(), "cpu", o);
  EXPECT_EQ(prompted.prompts(), (text::Prompts{"lava ", "the coral "}));
  o.query_prompt = "";
  o.passage_prompt = "";
  Encoder plain(model.string(), "cpu", o);
  EXPECT_EQ(plain.prompts(), text::Prompts{});

  const std::vector<std::string> texts = {"forests", "rivers carry sediment to the sea", ""};
  const auto prefixed = [&](const std::string& prompt) {
    std::vector<std::string> out;
    for (const auto& t : texts) out.push_back(prompt + t);
    return out;
  };
  const auto max_diff = [](const index::FloatMatrix& a, const index::FloatMatrix& b) {
    EXPECT_EQ(a.data.size(), b.data.size());
    double d = 0;
    for (size_t i = 0; i < a.data.size() && i < b.data.size(); ++i)
      d = std::max(d, static_cast<double>(std::abs(a.data[i] - b.data[i])));
    return d;
  };
  EXPECT_LE(max_diff(prompted.embed(texts, true), plain.embed(prefixed("lava "), true)), 1e-6);
  EXPECT_LE(max_diff(prompted.embed(texts, false), plain.embed(prefixed("the coral "), false)), 1e-6);
  EXPECT_GT(max_diff(prompted.embed(texts, true), plain.embed(texts, true)), 1e-3)
      << "the prompt changes the embedding";

  o.query_prompt = "glaciers ";
  o.passage_prompt.reset();
  EXPECT_EQ(Encoder(model.string(), "cpu", o).prompts(), (text::Prompts{"glaciers ", "the coral "}));
}

TEST(Encoder, NanEmbeddingsAreAnErrorNotScores) {
  // Finite weights past float range: the embeddings' LayerNorm overflows to NaN.
  testing::ScratchDir dir;
  model::EncoderSpec spec;
  spec.bert = testing::tiny_bert_config(80, 32, 2, 64);  // as write_random_model
  model::DualEncoder net(spec);
  {
    torch::NoGradGuard no_grad;
    net->named_parameters()["query.embeddings.word_embeddings.weight"].fill_(3e38f);
  }
  model::save_model_folder((dir / "model").string(), net, ragmig::text::word_piece_spec(testing::toy_vocab()));
  Encoder encoder((dir / "model").string(), "cpu", EmbedOptions{});
  try {
    encoder.embed({"lava", "the coral"}, true);
    ADD_FAILURE() << "NaN embeddings came back as numbers";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("NaN or infinite embeddings for 2 of 2 queries"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ragmig::eval
