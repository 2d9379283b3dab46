// The embedding server on a tiny real model: adapters mixed in one forward pass equal one at a time, the
// adapter cache evicts the least recently used, the batcher answers every request with its own rows and refuses
// past its queue; then the real `ragmig serve` process over real HTTP: both schemas, base64, bad requests,
// oversize inputs, unknown adapters, an XLM-R folder (Unigram tokenizer), overload 503, slow clients and SIGTERM
// draining. The Python clients (openai, prometheus-client) and curl: serve_clients_test.cpp.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <unistd.h>

#include <atomic>
#include <future>
#include <map>
#include <nlohmann/json.hpp>

#include "core/base64.h"
#include "core/error.h"
#include "core/stop_signal.h"
#include "model/embed.h"
#include "serve/adapter_cache.h"
#include "serve/batcher.h"
#include "serve/embedder.h"
#include "serve/server.h"
#include "serve_fixture.h"
#include "support/byte_level_tokenizers.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace ragmig::serve {
namespace {

using testing::ScratchDir;

struct Fixture {
  ScratchDir dir;
  Fixture() {
    testing::write_tiny_model(dir / "model");
    fs::create_directories(dir / "adapters");
    testing::write_tiny_adapter(dir / "model", dir / "adapters", "alpha", 1);
    testing::write_tiny_adapter(dir / "model", dir / "adapters", "beta", 2, {"key", "intermediate.dense"});
    testing::write_tiny_adapter(dir / "model", dir / "adapters", "gamma", 3);
  }
  fs::path model() const { return dir / "model"; }
  fs::path adapters() const { return dir / "adapters"; }
};

EmbedderOptions fp32() {
  EmbedderOptions o;
  o.device = "cpu";
  o.precision = "fp32";
  return o;
}

// Row i of a batch's embeddings (32-dimensional, as the tiny models here).
std::vector<float> row_of(const std::vector<float>& batch, size_t i) {
  return {batch.begin() + static_cast<int64_t>(i * 32), batch.begin() + static_cast<int64_t>((i + 1) * 32)};
}

double max_diff(const std::vector<float>& a, const std::vector<float>& b) {
  EXPECT_EQ(a.size(), b.size());
  double d = 0;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) d = std::max(d, static_cast<double>(std::abs(a[i] - b[i])));
  return d;
}

TEST(Embedder, MixedAdaptersInOneBatchEqualOneByOne) {
  Fixture f;
  Embedder e(f.model().string(), fp32());
  auto alpha = e.load_adapter((f.adapters() / "alpha").string(), "alpha");
  auto beta = e.load_adapter((f.adapters() / "beta").string(), "beta");
  const std::vector<std::string> texts = {"the cat sat on the mat", "a red house", "protein cell gene",
                                          "the dog", "drug trial on a river house blue"};
  std::vector<std::shared_ptr<const ServedAdapter>> uses = {alpha, nullptr, beta, alpha, beta};
  std::vector<TextItem> items;
  for (size_t i = 0; i < texts.size(); ++i) items.push_back({e.tokenize(texts[i], Mode::Passage, true), uses[i], Mode::Passage});
  std::vector<const TextItem*> all;
  for (const auto& item : items) all.push_back(&item);
  const auto mixed = e.embed(all);
  ASSERT_EQ(mixed.size(), texts.size() * 32);
  for (size_t i = 0; i < items.size(); ++i) {
    const auto alone = e.embed({&items[i]});
    const std::vector<float> row = row_of(mixed, i);
    EXPECT_LT(max_diff(row, alone), 1e-5) << texts[i];
  }
  // The adapters change the rows they route to.
  TextItem base_item{items[0].ids, nullptr, Mode::Passage};
  EXPECT_GT(max_diff(e.embed({&base_item}), e.embed({&items[0]})), 1e-3);
}

// Serves three texts of different lengths from `model`, two through the adapter at `adapter` and one without, in
// one batch: each row is what the text gets alone, the adapter changes its rows, and a routed adapter gives what the
// merged model (the adapter folder loaded as a model) gives.
void expect_routed_batches_as_alone_and_merged(const fs::path& model, const fs::path& adapter_folder) {
  Embedder e(model.string(), fp32());
  const auto adapter = e.load_adapter(adapter_folder.string(), "a");
  const std::vector<std::string> texts = {"the cat sat on the mat with a red house", "gene", "drug trial on a river"};
  std::vector<TextItem> items;
  for (size_t i = 0; i < texts.size(); ++i)
    items.push_back({e.tokenize(texts[i], Mode::Passage, true), i == 1 ? nullptr : adapter, Mode::Passage});
  const auto mixed = e.embed({&items[0], &items[1], &items[2]});
  Embedder merged(adapter_folder.string(), fp32());
  for (size_t i = 0; i < items.size(); ++i) {
    const std::vector<float> row = row_of(mixed, i);
    EXPECT_LT(max_diff(row, e.embed({&items[i]})), 1e-5) << texts[i];
    if (i == 1) continue;
    const TextItem plain{items[i].ids, nullptr, Mode::Passage};
    EXPECT_GT(max_diff(row, e.embed({&plain})), 1e-3) << "the adapter changes " << texts[i];
    EXPECT_LT(max_diff(row, merged.embed({&plain})), 1e-5) << "routed = merged, " << texts[i];
  }
}

// A ModernBERT folder (rotary positions, a window of 2 tokens each side, gated MLP) with an adapter on Wqkv,
// attn.Wo and mlp.Wi: its routed rows of a mixed batch equal each text alone, differ from the base's, and equal the
// adapter merged into the model (the adapter folder loaded as a model).
TEST(Embedder, AModernBertFolderServesRoutedAdaptersAsMerged) {
  ScratchDir dir;
  std::vector<std::string> vocab = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"};
  for (const auto& w : testing::fixture_words()) vocab.push_back(w);
  torch::manual_seed(5);
  model::EncoderSpec spec;
  spec.bert = model::bert_config_from_json(
      {{"model_type", "modernbert"}, {"vocab_size", static_cast<int64_t>(vocab.size())}, {"hidden_size", 32},
       {"num_attention_heads", 4}, {"num_hidden_layers", 3}, {"intermediate_size", 48},
       {"max_position_embeddings", 32}, {"pad_token_id", 0}, {"local_attention", 4}},
      "serve_test");
  model::DualEncoder net(spec);
  model::SaveOptions options;
  options.max_length = 32;
  model::save_model_folder((dir / "model").string(), net, text::word_piece_spec(vocab), options);
  testing::write_tiny_adapter(dir / "model", dir / "adapters", "a", 11, {"Wqkv", "attn.Wo", "mlp.Wi"});

  expect_routed_batches_as_alone_and_merged(dir / "model", dir / "adapters" / "a");
}

// A Qwen3 folder (last-token pooling, rows padded on the right inside the server's batches): a batch of mixed
// adapters and lengths gives each text what it gets alone, and routed adapters what the merged model gives.
TEST(Embedder, AQwen3FolderServesMixedBatchesAsAloneAndRoutedAdaptersAsMerged) {
  ScratchDir dir;
  torch::manual_seed(6);
  model::EncoderSpec spec;
  const text::TokenizerSpec tokenizer = testing::qwen_style_tokenizer();
  spec.bert = model::bert_config_from_json({{"model_type", "qwen3"},
                                            {"vocab_size", static_cast<int64_t>(tokenizer.vocab.size())},
                                            {"hidden_size", 32},
                                            {"num_attention_heads", 4},
                                            {"num_key_value_heads", 2},
                                            {"head_dim", 16},
                                            {"num_hidden_layers", 2},
                                            {"intermediate_size", 48},
                                            {"max_position_embeddings", 64}},
                                           "serve_test");
  spec.pooling = model::Pooling::LastToken;
  model::DualEncoder net(spec);
  model::SaveOptions options;
  options.max_length = 64;
  model::save_model_folder((dir / "model").string(), net, tokenizer, options);
  testing::write_tiny_adapter(dir / "model", dir / "adapters", "a", 12, {"q_proj", "v_proj", "mlp.gate_proj"});

  expect_routed_batches_as_alone_and_merged(dir / "model", dir / "adapters" / "a");
}

// The model folder's prompts go before query and passage texts alike (input_type / TEI's prompt_name choose the
// side); --query-prompt / --passage-prompt replace them, "" with none.
TEST(Embedder, TheFolderPromptsGoFirstUnlessTheOptionsReplaceThem) {
  Fixture f;
  write_file_atomic(f.model() / "config_sentence_transformers.json",
                    R"({"prompts": {"query": "gene ", "document": "the red "}})");
  Embedder e(f.model().string(), fp32());
  EXPECT_EQ(e.prompts(), (text::Prompts{"gene ", "the red "}));
  EmbedderOptions none = fp32();
  none.query_prompt = "";
  none.passage_prompt = "";
  Embedder plain(f.model().string(), none);
  EXPECT_EQ(e.tokenize("cat", Mode::Query, true), plain.tokenize("gene cat", Mode::Query, true));
  EXPECT_EQ(e.tokenize("cat", Mode::Passage, true), plain.tokenize("the red cat", Mode::Passage, true));
  EXPECT_NE(e.tokenize("cat", Mode::Query, true), plain.tokenize("cat", Mode::Query, true));
  EmbedderOptions replaced = fp32();
  replaced.query_prompt = "drug ";
  Embedder r(f.model().string(), replaced);
  EXPECT_EQ(r.prompts(), (text::Prompts{"drug ", "the red "}));

  // An adapter folder's own prompts (written where its training's differ from the base's) go before its texts;
  // one without has the base's; the command line's replace either.
  const auto alpha = e.load_adapter((f.adapters() / "alpha").string(), "alpha");
  EXPECT_EQ(alpha->prompts, e.prompts());
  model::DualAdapter own = model::load_adapter_folder((f.adapters() / "alpha").string());
  own.prompts = text::Prompts{"protein ", ""};
  model::save_adapter_folder((f.adapters() / "own").string(), own);
  const auto with_own = e.load_adapter((f.adapters() / "own").string(), "own");
  EXPECT_EQ(with_own->prompts, (text::Prompts{"protein ", ""}));
  EXPECT_EQ(e.tokenize("cat", Mode::Query, true, with_own.get()), plain.tokenize("protein cat", Mode::Query, true));
  EXPECT_EQ(e.tokenize("cat", Mode::Passage, true, with_own.get()), plain.tokenize("cat", Mode::Passage, true));
  EXPECT_EQ(e.tokenize("cat", Mode::Query, true, alpha.get()), e.tokenize("cat", Mode::Query, true));
  EXPECT_EQ(r.load_adapter((f.adapters() / "own").string(), "own")->prompts, (text::Prompts{"drug ", ""}));
}

TEST(Embedder, AnAdapterOfAnotherModelIsRefusedOnLoad) {
  Fixture f;
  ScratchDir other;
  testing::write_tiny_model(other / "model");
  // Same shapes but a layer the tiny model lacks: written by hand into a PEFT folder.
  model::LoraAdapter a;
  a.spec.rank = 2;
  a.layers["encoder.layer.5.attention.self.query"] = {torch::zeros({2, 32}), torch::zeros({32, 2})};
  fs::create_directories(other / "bad");
  model::write_peft_adapter((other / "bad").string(), a, (other / "model").string());
  Embedder e(f.model().string(), fp32());
  try {
    e.load_adapter((other / "bad").string(), "bad");
    FAIL() << "loaded an adapter for layer 5 of a 2-layer model";
  } catch (const DataError& err) {
    EXPECT_NE(std::string(err.what()).find("encoder.layer.5"), std::string::npos) << err.what();
  }
}

// A folder with a Dense layer after pooling (sentence-transformers' Dense module) and separate towers: served rows
// have the Dense layer's size and are what the eval path embeds, the query side through an adapter's query part.
TEST(Embedder, EachTowersDenseLayerFollowsPoolingAndTheAdapter) {
  ScratchDir dir;
  std::vector<std::string> vocab = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"};
  for (const auto& w : testing::fixture_words()) vocab.push_back(w);
  torch::manual_seed(6);
  model::EncoderSpec spec;
  spec.bert = testing::tiny_bert_config(static_cast<int64_t>(vocab.size()), 32, 4, 32);
  spec.dense = {model::DenseConfig{32, 20, true, model::Activation::Tanh, false}};
  spec.normalize = false;  // rows as served, before the server's normalisation
  spec.shared_towers = false;
  model::DualEncoder net(spec);
  model::save_model_folder((dir / "model").string(), net, text::word_piece_spec(vocab));
  testing::write_tiny_adapter(dir / "model", dir.path(), "alpha", 1);

  Embedder e((dir / "model").string(), fp32());
  EXPECT_EQ(e.dim(), 20);
  const auto alpha = e.load_adapter((dir / "alpha").string(), "alpha");
  const std::vector<std::string> texts = {"the cat sat on the mat", "protein cell gene", "a red house"};
  auto merged = model::load_model_folder((dir / "alpha").string());
  const auto tokenizer = text::make_tokenizer(merged.tokenizer);
  for (const Mode mode : {Mode::Query, Mode::Passage}) {
    std::vector<TextItem> items;
    for (const auto& t : texts) items.push_back({e.tokenize(t, mode, true), alpha, mode});
    std::vector<const TextItem*> all;
    for (const auto& item : items) all.push_back(&item);
    const auto served = e.embed(all);
    const torch::Tensor mine =
        model::embed_texts(merged.model, *tokenizer, texts, mode == Mode::Query, 32, 8, torch::kCPU).contiguous();
    EXPECT_LT(max_diff(served, std::vector<float>(mine.data_ptr<float>(), mine.data_ptr<float>() + mine.numel())), 1e-5)
        << (mode == Mode::Query ? "queries" : "passages");
  }
}

TEST(AdapterCache, KeepsTheMostRecentlyUsedUnderTheBudgetAndCounts) {
  Fixture f;
  Embedder e(f.model().string(), fp32());
  const size_t one = e.load_adapter((f.adapters() / "alpha").string(), "alpha")->bytes;
  int loads = 0;
  monitor::Registry metrics;
  AdapterCache cache(2 * one + 1, [&](const std::string& name) {
    ++loads;
    return e.load_adapter((f.adapters() / name).string(), name);
  }, &metrics);
  cache.get("alpha");
  cache.get("gamma");
  cache.get("alpha");  // hit: alpha is now the most recent
  EXPECT_EQ(cache.names(), (std::vector<std::string>{"alpha", "gamma"}));
  cache.get("beta");  // beta is smaller (other layers): alpha and beta fit, gamma goes
  const auto s = cache.stats();
  EXPECT_EQ(s.hits, 1u);
  EXPECT_EQ(s.misses, 3u);
  EXPECT_EQ(s.evictions, 1u);
  EXPECT_LE(s.bytes, 2 * one + 1);
  EXPECT_EQ(cache.names(), (std::vector<std::string>{"beta", "alpha"})) << "gamma, the least recently used, was evicted";
  cache.get("gamma");
  EXPECT_EQ(loads, 4) << "an evicted adapter is loaded again";
  EXPECT_NE(metrics.render().find("ragmig_serve_adapter_cache_evictions_total"), std::string::npos);
  EXPECT_THROW(cache.get("missing"), IoError);
  EXPECT_EQ(cache.stats().misses, 4u) << "a failed load caches nothing";
}

TEST(Batcher, ConcurrentRequestsGetTheirOwnRowsAndAFullQueueRefuses) {
  Fixture f;
  Embedder e(f.model().string(), fp32());
  auto alpha = e.load_adapter((f.adapters() / "alpha").string(), "alpha");
  const auto& words = testing::fixture_words();
  std::vector<std::vector<TextItem>> requests;
  for (int r = 0; r < 24; ++r) {
    std::vector<TextItem> texts;
    for (int t = 0; t <= r % 4; ++t) {
      std::string text;
      for (int w = 0; w <= (r * 7 + t * 3) % 11; ++w) text += words[static_cast<size_t>(r + t + w) % words.size()] + " ";
      texts.push_back({e.tokenize(text, Mode::Passage, true), r % 3 ? alpha : nullptr, Mode::Passage});
    }
    requests.push_back(texts);
  }
  std::vector<std::vector<float>> got(requests.size());
  {
    Batcher batcher(e, BatcherOptions{64, 20, 4096}, nullptr);
    std::vector<std::future<std::vector<float>>> futures(requests.size());
    std::vector<std::thread> clients;
    for (size_t r = 0; r < requests.size(); ++r)
      clients.emplace_back([&, r] { futures[r] = batcher.submit(requests[r]); });
    for (auto& c : clients) c.join();
    for (size_t r = 0; r < requests.size(); ++r) got[r] = futures[r].get();
  }
  // Compared once the batcher's worker is gone: an Embedder is used by one thread at a time.
  for (size_t r = 0; r < requests.size(); ++r) {
    std::vector<const TextItem*> items;
    for (const auto& t : requests[r]) items.push_back(&t);
    EXPECT_LT(max_diff(got[r], e.embed(items)), 1e-5) << "request " << r;
  }
  // A queue of 3 texts with a long wait: the first request of 2 waits, the next of 2 does not fit.
  Batcher small(e, BatcherOptions{1 << 20, 3000, 3}, nullptr);
  auto first = small.submit({requests[1][0], requests[1][1]});
  EXPECT_THROW(small.submit({requests[1][0], requests[1][1]}), Overloaded);
  small.stop();  // answers what is queued without waiting out max_wait
  EXPECT_EQ(first.get().size(), 2u * 32);
}

// A text that comes to a server idle for max_wait goes at once (no company is coming: waiting would only add max_wait
// to a lone query's latency); one that comes while the server is busy, or was within max_wait, waits for company.
TEST(Batcher, ALoneTextAfterAnIdleSpellDoesNotWaitForCompany) {
  Fixture f;
  Embedder e(f.model().string(), fp32());
  const auto text = [&](const std::string& s) { return std::vector<TextItem>{{e.tokenize(s, Mode::Query, true), nullptr, Mode::Query}};
  };
  constexpr int kWaitMs = 2000;
  Batcher batcher(e, BatcherOptions{1 << 20, kWaitMs, 4096}, nullptr);
  std::this_thread::sleep_for(std::chrono::milliseconds(kWaitMs + 200));  // idle since the batcher started
  auto lone = batcher.submit(text("first after a quiet spell"));
  ASSERT_EQ(lone.wait_for(std::chrono::milliseconds(kWaitMs / 2)), std::future_status::ready)
      << "a text after an idle spell waited for company";
  EXPECT_EQ(lone.get().size(), 32u);
  // The server was busy a moment ago: the next text waits for company, and one that comes meanwhile joins it.
  auto next = batcher.submit(text("right after it"));
  EXPECT_EQ(next.wait_for(std::chrono::milliseconds(kWaitMs / 4)), std::future_status::timeout);
  auto company = batcher.submit(text("company"));
  EXPECT_EQ(next.get().size(), 32u);
  // In the same round it is answered with `next`; in a round of its own it would wait max_wait more.
  EXPECT_EQ(company.wait_for(std::chrono::milliseconds(kWaitMs / 4)), std::future_status::ready);
}

// A stop asked for before the server listens (SIGTERM while its model loads) ends it once it listens: an HTTP
// stop before listening is none, and the server would serve on.
TEST(Server, AStopAskedForBeforeItListensEndsItOnceItListens) {
  Fixture f;
  ServeOptions o;
  o.model = f.model().string();
  o.port = 0;
  o.threads = 1;
  request_stop();
  auto result = std::make_shared<std::promise<int>>();
  auto port = std::make_shared<std::atomic<int>>(0);
  std::thread([o, result, port] {  // detached: a server that serves on must not hang the test
    try {
      result->set_value(run_server(o, [port](int p) { port->store(p); }));
    } catch (...) {
      result->set_exception(std::current_exception());
    }
  }).detach();
  auto done = result->get_future();
  ASSERT_EQ(done.wait_for(std::chrono::seconds(30)), std::future_status::ready) << "the server served on";
  EXPECT_EQ(done.get(), 0);
  EXPECT_GT(port->load(), 0) << "it listened first";
  clear_stop();
}

// --- the real process over HTTP --------------------------------------------------------------------------

json post_json(httplib::Client& c, const std::string& path, const json& body, int expect) {
  auto res = c.Post(path, body.dump(), "application/json");
  EXPECT_TRUE(res) << path << ": no response";
  if (!res) return {};
  EXPECT_EQ(res->status, expect) << path << " " << body.dump() << " -> " << res->body;
  return json::parse(res->body, nullptr, false);
}

// A folder the user named that is not there is bad input (exit 2, the path named), for the server's adapters and
// for `ragmig lora merge`'s adapter alike.
TEST(ServeProcess, AMissingAdaptersFolderIsBadInput) {
  Fixture f;
  const auto serve = testing::run_process({RAGMIG_BINARY, "serve", "--model", f.model().string(), "--adapters",
                                           (f.dir / "no-adapters").string(), "--port", "0"});
  EXPECT_EQ(serve.exit_code, 2) << serve.output;
  EXPECT_NE(serve.output.find("input error: " + (f.dir / "no-adapters").string() + ": adapters folder not found"),
            std::string::npos)
      << serve.output;
  const auto merge = testing::run_process({RAGMIG_BINARY, "lora", "merge", f.model().string(),
                                           (f.dir / "model").string(), (f.dir / "merged").string()});
  EXPECT_EQ(merge.exit_code, 2) << merge.output;
  EXPECT_NE(merge.output.find("adapter_config.json: not found (not a PEFT adapter folder)"), std::string::npos)
      << merge.output;
  EXPECT_FALSE(fs::exists(f.dir / "merged"));
}

TEST(ServeProcess, AnswersBothSchemasAdaptersAndBadRequests) {
  Fixture f;
  testing::Server server(f.dir / "serve.log", {"--model", f.model().string(), "--adapters", f.adapters().string(),
                                               "--precision", "fp32", "--oversize", "refuse", "--max-body-mb", "1"});
  ASSERT_GT(server.port(), 0) << server.log();
  auto c = server.client();
  auto health = c.Get("/health");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);

  const json texts = {"the cat sat", "protein gene trial", "a"};
  const json openai = post_json(c, "/v1/embeddings", {{"input", texts}, {"model", "model"}}, 200);
  ASSERT_EQ(openai["data"].size(), 3u);
  EXPECT_EQ(openai["usage"]["prompt_tokens"], 5 + 5 + 3);  // [CLS] words [SEP] per text
  const json tei = post_json(c, "/embed", {{"inputs", texts}}, 200);
  ASSERT_EQ(tei.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(openai["data"][i]["index"], i);
    EXPECT_EQ(openai["data"][i]["embedding"], tei[i]);
    double norm = 0;
    for (const auto& v : tei[i]) norm += v.get<double>() * v.get<double>();
    EXPECT_NEAR(norm, 1.0, 1e-5);
  }
  // base64 is the same floats, little-endian.
  const json b64 = post_json(c, "/v1/embeddings", {{"input", texts}, {"encoding_format", "base64"}}, 200);
  const std::string s = b64["data"][1]["embedding"];
  const std::string raw = base64_decode(s).value_or("");
  ASSERT_EQ(raw.size(), 32 * sizeof(float));
  for (size_t k = 0; k < 32; ++k) {
    float v;
    std::memcpy(&v, raw.data() + k * sizeof(float), sizeof v);
    EXPECT_EQ(v, tei[1][k].get<float>());
  }
  // TEI's normalize=false gives the raw mean-pooled vector.
  const json raw_rows = post_json(c, "/embed", {{"inputs", texts}, {"normalize", false}}, 200);
  double norm = 0;
  for (const auto& v : raw_rows[1]) norm += v.get<double>() * v.get<double>();
  EXPECT_GT(std::abs(norm - 1.0), 1e-3);

  // Adapters by name, loaded on first use; the base's rows differ from an adapter's.
  const json with_alpha = post_json(c, "/v1/embeddings", {{"input", texts}, {"model", "alpha"}}, 200);
  EXPECT_EQ(with_alpha["model"], "alpha");
  EXPECT_NE(with_alpha["data"][0]["embedding"], openai["data"][0]["embedding"]);
  const json models = json::parse(c.Get("/v1/models")->body);
  EXPECT_EQ(models["data"].size(), 4u) << models.dump();

  // Bad requests name the field.
  auto bad = c.Post("/v1/embeddings", "{\"input\": [\"a\", 5", "application/json");
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 400);
  EXPECT_EQ(post_json(c, "/v1/embeddings", {{"input", {{101, 102}}}}, 400)["error"]["param"], "input");
  const json unknown = post_json(c, "/v1/embeddings", {{"input", "a"}, {"model", "no-such-adapter"}}, 404);
  EXPECT_EQ(unknown["error"]["param"], "model");
  EXPECT_EQ(unknown["error"]["code"], "model_not_found");
  post_json(c, "/v1/embeddings", {{"input", "a"}, {"model", "../model"}}, 404);
  EXPECT_EQ(post_json(c, "/v1/embeddings", {{"input", "a"}, {"dimensions", 8}}, 400)["error"]["param"], "dimensions");
  EXPECT_EQ(post_json(c, "/embed", {{"inputs", 3}}, 422)["error_type"], "Validation");
  auto missing = c.Get("/v2/nothing");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);

  // Oversize: refused (--oversize refuse) unless the request asks TEI's truncate.
  std::string longer;
  for (int i = 0; i < 40; ++i) longer += "river ";
  EXPECT_EQ(post_json(c, "/v1/embeddings", {{"input", longer}}, 400)["error"]["param"], "input");
  post_json(c, "/embed", {{"inputs", longer}}, 413);
  EXPECT_EQ(post_json(c, "/embed", {{"inputs", longer}, {"truncate", true}}, 200).size(), 1u);

  // A body over --max-body-mb is refused before it is parsed.
  auto huge = c.Post("/embed", json{{"inputs", std::string(2 << 20, 'a')}}.dump(), "application/json");
  ASSERT_TRUE(huge);
  EXPECT_EQ(huge->status, 413);
  EXPECT_NE(huge->body.find("the request body is larger than this server's limit of 1 MB (--max-body-mb)"),
            std::string::npos)
      << huge->body;
  EXPECT_EQ(c.Get("/health")->status, 200) << "and the server goes on";

  const std::string metrics = c.Get("/metrics")->body;
  EXPECT_NE(metrics.find("ragmig_serve_requests_total{endpoint=\"/v1/embeddings\",code=\"200\"}"), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("ragmig_serve_adapter_cache_misses_total 1"), std::string::npos) << metrics;

  server.process().signal(SIGTERM);
  EXPECT_EQ(server.process().wait(), 0) << server.log();
}

// An XLM-R folder (Unigram tokenizer, positions from pad + 1) served: the rows equal the eval path's embeddings of
// the same texts, and the token counts are the tokenizer's.
// The folder's sizes without --matryoshka: its truncate_dim is the default (OpenAI's and TEI's), `dimensions` may name
// the whole, truncate_dim or a Matryoshka size ragmig trained it for (an adapter's own, not its base's), and
// nothing else; each cut is a prefix of the whole, renormalised.
TEST(ServeProcess, TheFoldersOwnSizesAreServedWithoutMatryoshka) {
  Fixture f;
  const auto edit = [](const fs::path& file, const std::string& key, const json& value) {
    json j = json::parse(read_file(file));
    j[key] = value;
    write_file_atomic(file, j.dump());
  };
  edit(f.model() / "config_sentence_transformers.json", "truncate_dim", 16);
  edit(f.model() / "ragmig.json", "matryoshka_dims", {32, 16, 8});
  edit(f.adapters() / "alpha" / "ragmig.json", "matryoshka_dims", {32, 4});
  testing::Server server(f.dir / "serve.log", {"--model", f.model().string(), "--adapters", f.adapters().string(),
                                               "--precision", "fp32"});
  ASSERT_GT(server.port(), 0) << server.log();
  auto c = server.client();
  const json texts = {"the cat sat", "protein gene trial"};
  const auto rows = [&](json body) {
    body["input"] = texts;
    std::vector<std::vector<double>> out;
    const json response = post_json(c, "/v1/embeddings", body, 200);
    for (const auto& d : response["data"]) out.push_back(d["embedding"]);
    return out;
  };
  const auto whole = rows({{"dimensions", 32}});
  ASSERT_EQ(whole.size(), 2u) << server.log();
  ASSERT_EQ(whole[0].size(), 32u);
  const auto expect_prefix = [&](const std::vector<std::vector<double>>& cut, size_t dims) {
    ASSERT_EQ(cut.size(), whole.size());
    for (size_t i = 0; i < cut.size(); ++i) {
      ASSERT_EQ(cut[i].size(), dims);
      double norm = 0;
      for (size_t k = 0; k < dims; ++k) norm += whole[i][k] * whole[i][k];
      for (size_t k = 0; k < dims; ++k) EXPECT_NEAR(cut[i][k], whole[i][k] / std::sqrt(norm), 1e-5) << i << "," << k;
    }
  };
  expect_prefix(rows(json::object()), 16);
  EXPECT_EQ(post_json(c, "/embed", {{"inputs", texts}}, 200)[0].size(), 16u) << "TEI's default too";
  expect_prefix(rows({{"dimensions", 8}}), 8);
  const json refused = post_json(c, "/v1/embeddings", {{"input", texts}, {"dimensions", 4}}, 400);
  EXPECT_EQ(refused["error"]["param"], "dimensions");
  EXPECT_NE(refused["error"]["message"].get<std::string>().find("embeddings of 32, 16, 8 dimensions"),
            std::string::npos) << refused.dump();
  EXPECT_NE(post_json(c, "/v1/embeddings", {{"input", texts}, {"dimensions", 33}}, 400)["error"]["message"]
                .get<std::string>().find("32-dimensional embeddings at most"), std::string::npos);

  EXPECT_EQ(rows({{"model", "alpha"}, {"dimensions", 4}})[0].size(), 4u) << "the adapter's own size";
  EXPECT_EQ(rows({{"model", "alpha"}})[0].size(), 16u) << "its base's truncate_dim";
  EXPECT_NE(post_json(c, "/v1/embeddings", {{"input", texts}, {"model", "alpha"}, {"dimensions", 8}}, 400)["error"]
                ["message"].get<std::string>().find("embeddings of 32, 16, 4 dimensions"), std::string::npos);

  // The list says the same of each model: its default size, the sizes it may be asked for, its longest input.
  const json models = json::parse(c.Get("/v1/models")->body);
  std::map<std::string, json> by_id;
  for (const auto& m : models["data"]) by_id[m["id"]] = m;
  ASSERT_EQ(by_id.count("model"), 1u) << models.dump();
  ASSERT_EQ(by_id.count("alpha"), 1u) << models.dump();
  EXPECT_EQ(by_id["model"]["dimensions"], 16);
  EXPECT_EQ(by_id["model"]["trained_dimensions"], json({32, 16, 8}));
  EXPECT_EQ(by_id["model"]["any_dimensions"], false);
  EXPECT_EQ(by_id["alpha"]["dimensions"], 16);
  EXPECT_EQ(by_id["alpha"]["trained_dimensions"], json({32, 16, 4}));
  EXPECT_EQ(by_id["alpha"]["parent"], "model");
  EXPECT_EQ(by_id["model"]["max_input_tokens"], 32);  // the fixture's max_length
  EXPECT_EQ(by_id["alpha"]["max_input_tokens"], 32);
}

TEST(ServeProcess, ServesAnXlmRobertaFolderAsTheEvalPathEmbedsIt) {
  ScratchDir dir;
  testing::write_tiny_xlmr_model(dir / "xlmr");
  testing::Server server(dir / "serve.log", {"--model", (dir / "xlmr").string(), "--precision", "fp32"});
  ASSERT_GT(server.port(), 0) << server.log();
  auto c = server.client();
  const std::vector<std::string> texts = {"the cat sat", "protein  gene trial", "a zebra!", ""};
  const json served = post_json(c, "/v1/embeddings", {{"input", texts}, {"input_type", "passage"}}, 200);
  ASSERT_EQ(served["data"].size(), texts.size());

  auto loaded = model::load_model_folder((dir / "xlmr").string());
  loaded.model->eval();
  const auto tokenizer = text::make_tokenizer(loaded.tokenizer);
  int64_t tokens = 0;
  for (const auto& t : texts) tokens += static_cast<int64_t>(tokenizer->encode(t, 32).size());
  EXPECT_EQ(served["usage"]["prompt_tokens"], tokens);
  // <s> ▁a ▁ z e b r a <unk> </s>: "▁a" is a word of the vocabulary, "zebra" only its letters, "!" nothing.
  EXPECT_EQ(tokenizer->encode("a zebra!", 32), (std::vector<int32_t>{0, 12, 5, 47, 26, 23, 39, 22, 3, 2}));
  const torch::Tensor mine = model::embed_texts(loaded.model, *tokenizer, texts, false, 32, 8, torch::kCPU);
  for (size_t i = 0; i < texts.size(); ++i)
    for (int64_t k = 0; k < mine.size(1); ++k)
      EXPECT_NEAR(served["data"][i]["embedding"][k].get<double>(), mine[static_cast<int64_t>(i)][k].item<double>(), 1e-5)
          << texts[i];
}

TEST(ServeProcess, OverloadIs503WithRetryAfterAndSigtermDrainsInFlightRequests) {
  Fixture f;
  // Texts wait 3 s for company and the queue holds 4: the first request of 3 texts waits (the server started less
  // than 3 s before: not an idle spell), the next is refused.
  testing::Server server(f.dir / "serve.log", {"--model", f.model().string(), "--precision", "fp32", "--max-queue", "4",
                                               "--max-wait-ms", "3000"});
  ASSERT_GT(server.port(), 0) << server.log();
  auto in_flight = std::async(std::launch::async, [&] {
    auto c = server.client();
    return c.Post("/embed", json{{"inputs", {"the cat", "a dog", "red"}}}.dump(), "application/json");
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  auto c = server.client();
  auto refused = c.Post("/v1/embeddings", json{{"input", {"the", "mat"}}}.dump(), "application/json");
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 503) << refused->body;
  EXPECT_EQ(refused->get_header_value("Retry-After"), "1");
  // SIGTERM while the first request waits: it is still answered, in full, and the server exits 0.
  server.process().signal(SIGTERM);
  auto answered = in_flight.get();
  ASSERT_TRUE(answered) << server.log();
  EXPECT_EQ(answered->status, 200);
  EXPECT_EQ(json::parse(answered->body).size(), 3u);
  EXPECT_EQ(server.process().wait(), 0) << server.log();
}

// A TCP connection to the server on this machine, or -1.
int connect_to(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  ::inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) return fd;
  ::close(fd);
  return -1;
}

TEST(ServeProcess, ASlowClientIsDroppedWithoutHoldingOthersUp) {
  Fixture f;
  testing::Server server(f.dir / "serve.log", {"--model", f.model().string(), "--precision", "fp32", "--read-timeout", "1"});
  ASSERT_GT(server.port(), 0) << server.log();
  // Bytes that are not HTTP: a 400 that says so, in the OpenAI error shape.
  const int bad = connect_to(server.port());
  ASSERT_GE(bad, 0);
  const std::string garbage = "GARBAGE\r\n\r\n";
  ASSERT_EQ(::send(bad, garbage.data(), garbage.size(), 0), static_cast<ssize_t>(garbage.size()));
  // httplib sends the headers and the body apart: read until the body's Content-Length bytes are in.
  timeval patience{10, 0};
  ::setsockopt(bad, SOL_SOCKET, SO_RCVTIMEO, &patience, sizeof patience);
  std::string said;
  const auto whole = [&] {
    const size_t end = said.find("\r\n\r\n");
    const size_t length = said.find("Content-Length: ");
    return end != std::string::npos && length != std::string::npos &&
           said.size() >= end + 4 + std::stoul(said.substr(length + 16));
  };
  char answer[1024];
  ssize_t got = 0;
  while (!whole() && (got = ::recv(bad, answer, sizeof answer, 0)) > 0) said.append(answer, static_cast<size_t>(got));
  ::close(bad);
  ASSERT_TRUE(whole()) << said;
  EXPECT_EQ(said.rfind("HTTP/1.1 400", 0), 0u) << said;
  EXPECT_NE(said.find(R"("message":"malformed HTTP request (its request line, a header or the body's length or )"),
            std::string::npos)
      << said;
  // A client that announces 200 bytes and sends 10.
  const int fd = connect_to(server.port());
  ASSERT_GE(fd, 0);
  const std::string head = "POST /embed HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 200\r\n\r\n{\"inputs\":";
  ASSERT_EQ(::send(fd, head.data(), head.size(), 0), static_cast<ssize_t>(head.size()));
  // Others are served meanwhile.
  auto c = server.client();
  const auto t0 = std::chrono::steady_clock::now();
  auto res = c.Post("/embed", json{{"inputs", "the cat"}}.dump(), "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));
  // The stalled connection is closed by the server after the read timeout.
  timeval wait{10, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof wait);
  char buf[512];
  ssize_t n;
  std::string reply;
  while ((n = ::recv(fd, buf, sizeof buf, 0)) > 0) reply.append(buf, static_cast<size_t>(n));
  EXPECT_EQ(n, 0) << "the server closed the connection (recv returned " << n << ", errno " << errno << ")";
  ::close(fd);
  server.process().signal(SIGTERM);
  EXPECT_EQ(server.process().wait(), 0) << server.log();
}

}  // namespace
}  // namespace ragmig::serve
