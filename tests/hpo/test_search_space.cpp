// Search spaces: parsing each kind through a sweep file's [space] table, grid order and size, seeded random
// draws (reproducible, in range, independent of the trial count) and --set overrides that round-trip.
#include <gtest/gtest.h>

#include <toml++/toml.h>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <set>

#include "core/error.h"
#include "hpo/search_space.h"
#include "hpo/sweep_spec.h"

namespace ragmig::hpo {
namespace {

using nlohmann::json;

// A minimal valid sweep around a [space] body; parse_search_space lives behind parse_sweep.
SearchSpace parse_space(const std::string& body) {
  const std::string text = "[sweep]\nbase = \"b.toml\"\ntrials = 4\n[eval]\ndata = \"d\"\n[space]\n" + body + "\n";
  return parse_sweep(text, "/tmp/space.toml").space;
}

std::string space_error_of(const std::string& body) {
  try {
    parse_space(body);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

Param choice(const std::string& key, std::vector<json> values) {
  Param p;
  p.key = key;
  p.choices = std::move(values);
  return p;
}
Param range(const std::string& key, ParamKind kind, double low, double high) {
  Param p;
  p.key = key;
  p.kind = kind;
  p.low = low;
  p.high = high;
  return p;
}

TEST(SearchSpace, ParsesEachKind) {
  struct Case {
    std::string body;
    ParamKind kind;
    std::vector<json> choices;
    double low, high;
  };
  const std::vector<Case> cases = {
      {R"("train.lr" = { log_uniform = [1e-4, 3e-3] })", ParamKind::LogUniform, {}, 1e-4, 3e-3},
      {R"("train.lr" = { uniform = [0, 1] })", ParamKind::Uniform, {}, 0, 1},
      {R"("train.lr" = { int = [-2, 5] })", ParamKind::Int, {}, -2, 5},
      {R"("train.lr" = { int = [4, 4] })", ParamKind::Int, {}, 4, 4},
      {R"("train.lr" = { choice = ["mean", 3, 0.5, true] })", ParamKind::Choice, {"mean", 3, 0.5, true}, 0, 0},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.body);
    const SearchSpace space = parse_space(c.body);
    ASSERT_EQ(space.params.size(), 1u);
    const Param& p = space.params[0];
    EXPECT_EQ(p.key, "train.lr");
    EXPECT_EQ(p.kind, c.kind);
    EXPECT_EQ(p.choices, c.choices);
    EXPECT_EQ(p.low, c.low);
    EXPECT_EQ(p.high, c.high);
  }
  // An integer choice stays an integer: `--set train.batch_size=32`, not 32.0.
  EXPECT_TRUE(parse_space(R"("train.b" = { choice = [32] })").params[0].choices[0].is_number_integer());
}

TEST(SearchSpace, QuotedDottedAndNestedKeysFlattenAndSort) {
  const SearchSpace space = parse_space(R"(
"train.lr" = { log_uniform = [1e-4, 3e-3] }
model2.pooling = { choice = ["mean", "cls"] }
[space.model]
layers = { int = [1, 3] }
[space.train.deep]
x = { uniform = [0, 1] }
)");
  std::vector<std::string> keys;
  for (const Param& p : space.params) keys.push_back(p.key);
  EXPECT_EQ(keys, (std::vector<std::string>{"model.layers", "model2.pooling", "train.deep.x", "train.lr"}));
}

TEST(SearchSpace, ErrorsNameTheKey) {
  struct Case {
    std::string body, expected;
  };
  const std::vector<Case> cases = {
      {R"("train.x" = { choice = [] })", R"([space] "train.x": choice needs a non-empty array)"},
      {R"("train.x" = { choice = [[1], [2]] })", R"([space] "train.x": choice values must be numbers)"},
      {R"("train.x" = { choice = ["a", "a"] })", R"([space] "train.x": choice lists "a" twice)"},
      {R"("train.x" = { uniform = [0.1, 0.1] })", R"([space] "train.x": uniform needs low < high (got [0.1, 0.1]))"},
      {R"("train.x" = { uniform = [0.5, 0.1] })", R"("train.x": uniform needs low < high)"},
      {R"("train.x" = { uniform = [0.1] })", R"("train.x": uniform needs two numbers [low, high])"},
      {R"("train.x" = { uniform = ["a", 1] })", R"("train.x": uniform needs two numbers)"},
      {R"("train.x" = { log_uniform = [0, 0.1] })",
       R"([space] "train.x": log_uniform needs 0 < low < high (got [0, 0.1]))"},
      {R"("train.x" = { log_uniform = [-1, 0.1] })", R"("train.x": log_uniform needs 0 < low < high)"},
      {R"("train.x" = { int = [1, 2.5] })", R"([space] "train.x": int needs two integers [low, high] (got [1, 2.5]))"},
      {R"("train.x" = { int = [3, 1] })", R"("train.x": int needs low <= high)"},
      {R"("train.x" = { uniform = [0, 1], int = [1, 2] })", R"("train.x": gives int and uniform; give exactly one)"},
      {R"("train.x" = { normal = [0, 1] })", R"("train.x": unknown kind "normal")"},
      {R"("train.x" = { })", R"("train.x": needs one of choice, uniform, log_uniform, int)"},
      {R"("train.x" = 0.1)", R"([space] "train.x": expected an inline table)"},
      {R"(lr = { uniform = [0, 1] })", R"([space] "lr": expected a `ragmig train` config key)"},
      {R"("train lr" = { uniform = [0, 1] })", R"("train lr": expected a `ragmig train` config key)"},
      {"\"train.lr\" = { uniform = [0, 1] }\n[space.train]\nlr = { uniform = [0, 2] }", R"("train.lr": given twice)"},
      {"", "[space] : expected at least one parameter"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.body);
    const std::string message = space_error_of(c.body);
    EXPECT_NE(message.find(c.expected), std::string::npos) << message;
    EXPECT_EQ(message.rfind("/tmp/space.toml: ", 0), 0u) << message;
  }
}

TEST(SearchSpace, GridIsTheProductWithTheLastKeyFastest) {
  const SearchSpace space{{choice("a.x", {1, 2}), choice("b.y", {"p", "q", "r"})}};
  const auto trials = sample(space, SearchKind::Grid, 0, 0);
  ASSERT_EQ(trials.size(), 6u);
  const std::vector<std::pair<json, json>> expected = {{1, "p"}, {1, "q"}, {1, "r"}, {2, "p"}, {2, "q"}, {2, "r"}};
  for (size_t i = 0; i < trials.size(); ++i) {
    ASSERT_EQ(trials[i].size(), 2u);
    EXPECT_EQ(trials[i][0].first, "a.x");
    EXPECT_EQ(trials[i][1].first, "b.y");
    EXPECT_EQ(trials[i][0].second, expected[i].first) << i;
    EXPECT_EQ(trials[i][1].second, expected[i].second) << i;
  }
  // trials > 0 takes a prefix; the seed plays no part.
  const auto first4 = sample(space, SearchKind::Grid, 4, 99);
  EXPECT_EQ(first4, std::vector<ParamValues>(trials.begin(), trials.begin() + 4));
}

TEST(SearchSpace, GridEnumeratesInts) {
  const SearchSpace space{{range("m.layers", ParamKind::Int, 1, 3), choice("m.pool", {"mean", "cls"})}};
  const auto trials = sample(space, SearchKind::Grid, 0, 0);
  ASSERT_EQ(trials.size(), 6u);
  EXPECT_EQ(trials[0][0].second, json(1));
  EXPECT_EQ(trials[1][0].second, json(1));
  EXPECT_EQ(trials[5][0].second, json(3));
  EXPECT_TRUE(trials[5][0].second.is_number_integer());
}

TEST(SearchSpace, GridErrors) {
  const SearchSpace continuous{{choice("a.x", {1}), range("train.lr", ParamKind::LogUniform, 1e-4, 1e-3)}};
  try {
    sample(continuous, SearchKind::Grid, 0, 0);
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("\"train.lr\" is log_uniform"), std::string::npos) << e.what();
  }
  const SearchSpace small{{choice("a.x", {1, 2}), choice("b.y", {1, 2, 3})}};
  try {
    sample(small, SearchKind::Grid, 7, 0);
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("trials = 7 but the grid has only 6"), std::string::npos) << e.what();
  }
  const SearchSpace huge{{range("a.x", ParamKind::Int, 0, 1000), range("b.y", ParamKind::Int, 0, 1000)}};
  EXPECT_THROW(sample(huge, SearchKind::Grid, 0, 0), ConfigError);
  EXPECT_THROW(sample(small, SearchKind::Random, 0, 0), ConfigError);
  EXPECT_THROW(sample(small, SearchKind::Grid, -1, 0), ConfigError);
}

const SearchSpace kMixed{{range("a.int", ParamKind::Int, 1, 3), range("b.lr", ParamKind::LogUniform, 1e-4, 3e-3),
                          choice("c.pool", {"mean", "cls", "max"}), range("d.temp", ParamKind::Uniform, 0.02, 0.1)}};

TEST(SearchSpace, RandomIsReproducibleAndPrefixStable) {
  const auto a = sample(kMixed, SearchKind::Random, 20, 7);
  EXPECT_EQ(a, sample(kMixed, SearchKind::Random, 20, 7));
  EXPECT_NE(a, sample(kMixed, SearchKind::Random, 20, 8));
  const auto more = sample(kMixed, SearchKind::Random, 50, 7);
  EXPECT_EQ(a, std::vector<ParamValues>(more.begin(), more.begin() + 20));
  const auto one = sample(kMixed, SearchKind::Random, 1, 7);
  EXPECT_EQ(one[0], a[0]);
  // Trials differ from one another.
  EXPECT_EQ(std::set<ParamValues>(a.begin(), a.end()).size(), a.size());
}

TEST(SearchSpace, RandomDrawsStayInRangeAndCoverIt) {
  const auto trials = sample(kMixed, SearchKind::Random, 10000, 123);
  std::set<int64_t> ints;
  std::set<std::string> pools;
  std::vector<double> lrs;
  for (const ParamValues& t : trials) {
    ASSERT_EQ(t.size(), 4u);
    const int64_t i = t[0].second.get<int64_t>();
    ASSERT_TRUE(t[0].second.is_number_integer());
    ASSERT_GE(i, 1);
    ASSERT_LE(i, 3);
    ints.insert(i);
    const double lr = t[1].second.get<double>();
    ASSERT_GE(lr, 1e-4);
    ASSERT_LE(lr, 3e-3);
    lrs.push_back(lr);
    pools.insert(t[2].second.get<std::string>());
    const double temp = t[3].second.get<double>();
    ASSERT_GE(temp, 0.02);
    ASSERT_LE(temp, 0.1);
    // Four significant digits: the value is its own 4-digit rounding.
    for (double v : {lr, temp}) {
      char four_digits[32];
      std::snprintf(four_digits, sizeof four_digits, "%.3e", v);
      ASSERT_EQ(v, std::strtod(four_digits, nullptr)) << v;
    }
    ASSERT_LE(value_text(t[3].second).size(), 7u) << value_text(t[3].second);  // "0.0xxxx" at most
  }
  EXPECT_EQ(ints, (std::set<int64_t>{1, 2, 3}));
  EXPECT_EQ(pools, (std::set<std::string>{"mean", "cls", "max"}));
  std::nth_element(lrs.begin(), lrs.begin() + lrs.size() / 2, lrs.end());
  const double median = lrs[lrs.size() / 2], geometric_mean = std::sqrt(1e-4 * 3e-3);
  EXPECT_NEAR(median / geometric_mean, 1.0, 0.10) << median;
}

TEST(SearchSpace, OverrideText) {
  EXPECT_EQ(to_override("train.lr", 0.0007343), "train.lr=0.0007343");
  EXPECT_EQ(to_override("model.pooling", "cls"), "model.pooling=\"cls\"");
  EXPECT_EQ(to_override("x.flag", true), "x.flag=true");
  EXPECT_EQ(to_override("train.batch_size", 32), "train.batch_size=32");
  EXPECT_EQ(to_override("train.t", 3.0), "train.t=3.0");
  EXPECT_EQ(to_override("m.s", "a\"b\\c"), "m.s=\"a\\\"b\\\\c\"");
  EXPECT_EQ(value_text(0.0007343), "0.0007343");
  EXPECT_EQ(value_text("cls"), "cls");
  EXPECT_EQ(value_text(true), "true");
  EXPECT_EQ(value_text(32), "32");
}

// The right-hand side of an override read as `ragmig train --set` reads it: a TOML value.
json read_back(const std::string& override_text) {
  const std::string rhs = override_text.substr(override_text.find('=') + 1);
  const toml::table t = toml::parse("v = " + rhs);
  const toml::node& v = *t.get("v");
  if (auto s = v.as_string()) return s->get();
  if (auto i = v.as_integer()) return i->get();
  if (auto f = v.as_floating_point()) return f->get();
  if (auto b = v.as_boolean()) return b->get();
  return nullptr;
}

TEST(SearchSpace, OverridesRoundTripThroughToml) {
  std::vector<json> values = {3.0,
                              -0.5,
                              1e-7,
                              1.5e20,
                              0.1,
                              0.0,
                              2.5e-300,
                              32,
                              -7,
                              int64_t{1} << 60,
                              true,
                              false,
                              "cls",
                              "a\"b\\c",
                              "tab\there\nnew line",
                              "caf\xc3\xa9",
                              std::string("ctl\x01\x7f"
                                          "end"),
                              "'single'",
                              "=",
                              ""};
  for (const ParamValues& t : sample(kMixed, SearchKind::Random, 500, 5))
    for (const auto& [key, value] : t) values.push_back(value);
  for (const json& v : values) {
    const std::string o = to_override("k.v", v);
    SCOPED_TRACE(o);
    ASSERT_EQ(o.rfind("k.v=", 0), 0u);
    const json back = read_back(o);
    EXPECT_EQ(back, v);
    EXPECT_EQ(back.type(), v.type());
  }
}

TEST(SearchSpace, SearchKindRoundTrips) {
  for (SearchKind k : {SearchKind::Grid, SearchKind::Random}) EXPECT_EQ(parse_search_kind(to_string(k)), k);
  EXPECT_EQ(to_string(SearchKind::Grid), "grid");
  EXPECT_THROW(parse_search_kind("bayes"), ConfigError);
  EXPECT_THROW(parse_search_kind("Grid"), ConfigError);
}

}  // namespace
}  // namespace ragmig::hpo
