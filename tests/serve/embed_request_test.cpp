// The request schemas: what OpenAI's and TEI's clients send is understood, what they should not send gets the
// schema's status and names its field, responses have the clients' shapes; and a fuzz loop over mutated bodies
// only ever ends in a request or a RequestError.
#include "serve/embed_request.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>

namespace ragmig::serve {
namespace {

using nlohmann::json;

void expect_error(const std::function<void()>& parse, int status, const std::string& field, const std::string& words) {
  try {
    parse();
    ADD_FAILURE() << "accepted; expected " << status << " about " << field;
  } catch (const RequestError& e) {
    EXPECT_EQ(e.status(), status) << e.what();
    EXPECT_EQ(e.field(), field) << e.what();
    EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
  }
}

TEST(OpenAiRequest, TakesAStringOrAListAndTheOptionalFields) {
  auto r = parse_openai_request(R"({"input": "one text", "model": "legal-v2"})");
  EXPECT_EQ(r.texts, std::vector<std::string>{"one text"});
  EXPECT_EQ(r.model, "legal-v2");
  EXPECT_FALSE(r.base64);
  EXPECT_EQ(r.mode, Mode::Passage);
  r = parse_openai_request(R"({"input": ["a", "b"], "model": "m", "encoding_format": "base64", "dimensions": 128,
                              "input_type": "query", "user": "someone"})");
  EXPECT_EQ(r.texts.size(), 2u);
  EXPECT_TRUE(r.base64);
  EXPECT_EQ(r.dimensions, 128);
  EXPECT_EQ(r.mode, Mode::Query);
}

TEST(OpenAiRequest, BadFieldsAre400NamingTheField) {
  expect_error([] { parse_openai_request("{not json"); }, 400, "", "not valid JSON");
  expect_error([] { parse_openai_request("[1, 2]"); }, 400, "", "JSON object");
  expect_error([] { parse_openai_request(R"({"model": "m"})"); }, 400, "input", "required");
  expect_error([] { parse_openai_request(R"({"input": []})"); }, 400, "input", "empty");
  expect_error([] { parse_openai_request(R"({"input": [[101, 2023]]})"); }, 400, "input", "token ids");
  expect_error([] { parse_openai_request(R"({"input": ["a", 3]})"); }, 400, "input", "token ids");
  expect_error([] { parse_openai_request(R"({"input": ["a", null]})"); }, 400, "input", "[1] must be a string");
  expect_error([] { parse_openai_request(R"({"input": "a", "model": 7})"); }, 400, "model", "string");
  expect_error([] { parse_openai_request(R"({"input": "a", "encoding_format": "int8"})"); }, 400, "encoding_format", "float or base64");
  expect_error([] { parse_openai_request(R"({"input": "a", "dimensions": 0})"); }, 400, "dimensions", "positive");
  expect_error([] { parse_openai_request(R"({"input": "a", "dimensions": 1.5})"); }, 400, "dimensions", "positive");
  expect_error([] { parse_openai_request(R"({"input": "a", "input_type": "question"})"); }, 400, "input_type", "query, passage");
  RequestLimits limits;
  limits.max_inputs = 2;
  expect_error([&] { parse_openai_request(R"({"input": ["a", "b", "c"]})", limits); }, 400, "input", "at most 2");
  limits.max_text_bytes = 3;
  expect_error([&] { parse_openai_request(R"({"input": ["abcd"]})", limits); }, 413, "input", "at most 3");
}

TEST(TeiRequest, TakesInputsNormalizeTruncateAndAnswers422) {
  auto r = parse_tei_request(R"({"inputs": ["x"], "normalize": false, "truncate": true, "prompt_name": "query"})");
  EXPECT_EQ(r.texts, std::vector<std::string>{"x"});
  EXPECT_FALSE(r.normalize);
  EXPECT_EQ(r.truncate, true);
  EXPECT_EQ(r.mode, Mode::Query);
  r = parse_tei_request(R"({"inputs": "y"})");
  EXPECT_TRUE(r.normalize);
  EXPECT_FALSE(r.truncate.has_value());
  expect_error([] { parse_tei_request(R"({"input": "y"})"); }, 422, "inputs", "required");
  expect_error([] { parse_tei_request(R"({"inputs": "y", "normalize": "yes"})"); }, 422, "normalize", "true or false");
}

TEST(Responses, HaveTheClientsShapes) {
  const std::vector<float> rows = {1.0f, -0.5f, 0.25f, 3.0f};
  const json o = json::parse(openai_response(rows, 2, "m", false, 9));
  EXPECT_EQ(o["object"], "list");
  EXPECT_EQ(o["model"], "m");
  EXPECT_EQ(o["usage"]["prompt_tokens"], 9);
  ASSERT_EQ(o["data"].size(), 2u);
  EXPECT_EQ(o["data"][1]["index"], 1);
  EXPECT_EQ(o["data"][1]["object"], "embedding");
  EXPECT_EQ(o["data"][1]["embedding"], json::parse("[0.25, 3.0]"));
  const json b = json::parse(openai_response(rows, 2, "m", true, 9));
  // base64 of little-endian float32 1.0, -0.5: 00 00 80 3f 00 00 00 bf
  EXPECT_EQ(b["data"][0]["embedding"], "AACAPwAAAL8=");
  EXPECT_EQ(json::parse(tei_response(rows, 2)), json::parse("[[1.0, -0.5], [0.25, 3.0]]"));
  const json e = json::parse(openai_error("bad", "invalid_request_error", "input"));
  EXPECT_EQ(e["error"]["param"], "input");
  EXPECT_TRUE(e["error"]["code"].is_null());
  // Floats print as the shortest text that reads back to the same float.
  const std::vector<float> odd = {0.1f, 1e-8f, 3.4028235e38f};
  const json back = json::parse(tei_response(odd, 3));
  for (size_t i = 0; i < odd.size(); ++i) EXPECT_EQ(back[0][i].get<float>(), odd[i]);
}

TEST(RequestFuzz, MutatedBodiesEndInARequestOrARequestError) {
  const std::vector<std::string> seeds = {
      R"({"input": ["a b", "c"], "model": "m", "encoding_format": "base64", "dimensions": 3})",
      R"({"inputs": "x", "normalize": false, "truncate": true, "prompt_name": "query"})"};
  std::mt19937 rng(42);
  int parsed = 0, refused = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string body = seeds[static_cast<size_t>(i) % seeds.size()];
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits && !body.empty(); ++e) {
      const size_t at = rng() % body.size();
      switch (rng() % 3) {
        case 0: body[at] = static_cast<char>(rng() % 256); break;
        case 1: body.erase(at, 1 + rng() % 3); break;
        default: body.insert(at, 1, "{}[]\",:0-e\\u"[rng() % 13]); break;
      }
    }
    try {
      (i % 2 ? parse_tei_request(body) : parse_openai_request(body));
      ++parsed;
    } catch (const RequestError& e) {
      EXPECT_GE(e.status(), 400);
      EXPECT_LT(e.status(), 500);
      ++refused;
    }
  }
  EXPECT_GT(parsed, 100);
  EXPECT_GT(refused, 100);
}

}  // namespace
}  // namespace ragmig::serve
