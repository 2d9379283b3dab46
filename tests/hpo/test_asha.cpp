// ASHA: rung steps, numpy's percentile, the decision rule as a table, and the bookkeeping class on a scripted
// run of nine trials whose decisions were worked out by hand (and replay to the same state); the decision log a
// restarted driver replays.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <set>
#include <string>

#include "core/error.h"
#include "hpo/asha.h"
#include "hpo/asha_log.h"

namespace ragmig::hpo {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr auto C = AshaAction::Continue;
constexpr auto S = AshaAction::Stop;

TEST(Asha, RungSteps) {
  struct Case {
    int64_t min_steps;
    double eta;
    int64_t max_steps;
    std::vector<int64_t> expected;
  };
  const std::vector<Case> cases = {
      {25, 3, 300, {25, 75, 225}},
      {25, 3, 225, {25, 75}},  // rungs lie strictly below the full length
      {25, 2, 300, {25, 50, 100, 200}},
      {10, 4, 1000, {10, 40, 160, 640}},
      {1, 1.5, 10, {1, 2, 3, 5, 8}},  // 1, 1.5, 2.25 (repeats 2: skipped), 3.375, 5.06, 7.59
      {7, 2.5, 100, {7, 18, 44}},     // 17.5 and 43.75 round to nearest
      {0, 3, 300, {}},                // no early stopping
      {300, 3, 300, {}},
      {400, 3, 300, {}},
      {5, 3, 0, {}},
      {1, 1e300, 1000000, {1}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(testing::Message() << c.min_steps << " " << c.eta << " " << c.max_steps);
    EXPECT_EQ(rung_steps({c.min_steps, c.eta, c.max_steps, true}), c.expected);
  }
  for (double eta : {1.0, 0.5, 0.0, -2.0, kNaN, kInf})
    EXPECT_THROW(rung_steps({25, eta, 300, true}), ConfigError) << eta;
  EXPECT_THROW(rung_steps({-1, 3, 300, true}), ConfigError);
  EXPECT_THROW(rung_steps({25, 3, -1, true}), ConfigError);
  EXPECT_THROW(Asha({25, 1, 300, true}), ConfigError);
}

TEST(Asha, QuantileMatchesNumpyPercentile) {
  struct Case {
    std::vector<double> values;
    double q, expected;
  };
  // numpy.percentile(values, 100 q), linear: sorted v, h = (n-1) q, v[floor h] + frac(h) (v[floor h + 1] - v[floor h]).
  const std::vector<Case> cases = {
      {{1, 2, 3, 4}, 2.0 / 3, 3.0},         // h = 2
      {{1, 2, 3, 4}, 0.5, 2.5},             // h = 1.5
      {{0.1, 0.2, 0.3}, 2.0 / 3, 0.7 / 3},  // h = 4/3: 0.2 + 0.1/3
      {{0.1, 0.2, 0.3}, 1.0 / 3, 0.5 / 3},  // h = 2/3: 0.1 + 0.2/3
      {{3, 1, 2}, 0.5, 2},                  // unsorted input
      {{1, 10}, 0.25, 3.25},
      {{5}, 0.7, 5},
      {{4, 8, 1}, 0, 1},
      {{4, 8, 1}, 1, 8},
      {{-kInf, 1, 2}, 0.25, -kInf},  // next to -inf
      {{1, 2, kInf}, 0.75, kInf},
      {{-kInf, 1, 2}, 0.5, 1},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(testing::Message() << "q = " << c.q << ", expected " << c.expected);
    if (std::isinf(c.expected))
      EXPECT_EQ(quantile(c.values, c.q), c.expected);
    else
      EXPECT_NEAR(quantile(c.values, c.q), c.expected, 1e-12);
  }
}

TEST(Asha, DecideTable) {
  struct Case {
    std::vector<double> earlier;
    double value, eta;
    bool maximize;
    AshaAction expected;
  };
  const std::vector<Case> cases = {
      {{}, 0.0, 3, true, C},  // the first report at a rung always goes on
      {{}, kNaN, 3, true, C},
      {{}, 9.0, 3, false, C},
      // eta 3, maximize: cutoff = percentile 66.7 of [0.1, 0.2, 0.3] = 0.2333
      {{0.1, 0.2, 0.3}, 0.25, 3, true, C},
      {{0.1, 0.2, 0.3}, 0.23, 3, true, S},
      {{0.1, 0.2, 0.3}, 0.3, 3, true, C},
      {{0.3, 0.1, 0.2}, 0.1, 3, true, S},
      {{0.5}, 0.5, 3, true, C},  // ties go on
      {{0.5}, 0.4999, 3, true, S},
      // eta 2: the median
      {{1, 2, 3, 4}, 2.5, 2, true, C},
      {{1, 2, 3, 4}, 2.4, 2, true, S},
      // minimize: cutoff = percentile 33.3 of [0.1, 0.2, 0.3] = 0.1667, lower is better
      {{0.1, 0.2, 0.3}, 0.15, 3, false, C},
      {{0.1, 0.2, 0.3}, 0.2, 3, false, S},
      {{0.1, 0.2, 0.3}, 0.05, 3, false, C},
      // NaN is the worst value: it stops unless first, and never raises the bar for others
      {{0.1, 0.2, 0.3}, kNaN, 3, true, S},
      {{0.1, 0.2, 0.3}, kNaN, 3, false, S},
      {{0.5, kNaN}, 0.0, 2, true, C},   // [-inf, 0.5]: median -inf
      {{0.5}, 0.0, 2, true, S},         // the same without the NaN
      {{0.5, kNaN}, 1.0, 2, false, C},  // minimize: [0.5, +inf]: median +inf
      {{kNaN, kNaN}, kNaN, 3, true, S},
      {{kNaN, kNaN}, -1e300, 3, true, C},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    EXPECT_EQ(asha_decide(c.earlier, c.value, c.eta, c.maximize), c.expected) << "case " << i;
  }
  EXPECT_EQ(to_string(C), "continue");
  EXPECT_EQ(to_string(S), "stop");
}

struct Report {
  std::string trial;
  int64_t step;
  double value;
  AshaAction expected;
};

// Rungs 10, 30, 90 (eta 3, max 100). Cutoffs, percentile 66.7 of what the rung held before:
const std::vector<Report> kScript = {
    {"t0", 10, 0.50, C},  // first at rung 10
    {"t1", 10, 0.40, S},  // [0.5] -> 0.5
    {"t2", 10, 0.60, C},  // [0.4 0.5] -> 0.4667
    {"t3", 10, 0.30, S},  // [0.4 0.5 0.6] -> 0.5333
    {"t4", 10, 0.70, C},  // [0.3 0.4 0.5 0.6] -> 0.5
    {"t0", 30, 0.60, C},  // first at rung 30
    {"t5", 10, 0.55, S},  // [0.3 0.4 0.5 0.6 0.7] -> 0.5667
    {"t2", 30, 0.50, S},  // [0.6] -> 0.6
    {"t6", 12, 0.20, S},  // late report, counts for rung 10: [0.3 .. 0.7, 0.55] -> 0.5667
    {"t1", 30, 0.99, S},  // stopped stays stopped, records nothing
    {"t7", 10, 0.65, C},  // [0.2 0.3 0.4 0.5 0.55 0.6 0.7] -> 0.55
    {"t4", 30, 0.80, C},  // [0.5 0.6] -> 0.5667
    {"t8", 10, 0.45, S},  // [0.2 .. 0.7, 0.65] -> 0.5833
    {"t0", 20, 0.10, C},  // rung 10 again: already reported, not recorded
    {"t7", 5, 0.00, C},   // below the first rung: nothing recorded
    {"t7", 30, 0.70, C},  // [0.5 0.6 0.8] -> 0.6667
    {"t0", 90, 0.70, C},  // first at rung 90
    {"t4", 95, 0.75, C},  // late, for rung 90: [0.7] -> 0.7
    {"t7", 90, 0.72, S},  // [0.7 0.75] -> 0.7333
    {"t7", 99, 0.90, S},
};

std::vector<AshaAction> run_script(Asha& asha) {
  std::vector<AshaAction> out;
  for (const Report& r : kScript) out.push_back(asha.report(r.trial, r.step, r.value));
  return out;
}

TEST(Asha, ScriptedNineTrials) {
  Asha asha({10, 3, 100, true});
  EXPECT_EQ(asha.rungs(), (std::vector<int64_t>{10, 30, 90}));
  const auto actions = run_script(asha);
  for (size_t i = 0; i < kScript.size(); ++i)
    EXPECT_EQ(actions[i], kScript[i].expected)
        << "report " << i << " (" << kScript[i].trial << " at " << kScript[i].step << ")";
  const auto& rec = asha.recorded();
  ASSERT_EQ(rec.size(), 3u);
  EXPECT_EQ(rec.at(10).size(), 9u);
  EXPECT_EQ(rec.at(10).at("t0"), 0.50);  // the duplicate at step 20 did not overwrite
  EXPECT_EQ(rec.at(10).at("t6"), 0.20);
  EXPECT_EQ(rec.at(30), (std::map<std::string, double>{{"t0", 0.6}, {"t2", 0.5}, {"t4", 0.8}, {"t7", 0.7}}));
  EXPECT_EQ(rec.at(90), (std::map<std::string, double>{{"t0", 0.7}, {"t4", 0.75}, {"t7", 0.72}}));
  for (const char* t : {"t1", "t2", "t3", "t5", "t6", "t7", "t8"}) EXPECT_TRUE(asha.stopped(t)) << t;
  for (const char* t : {"t0", "t4", "never-reported"}) EXPECT_FALSE(asha.stopped(t)) << t;
}

// A sweep restarted after a crash rebuilds its ASHA from asha.jsonl: the script's decisions written as the driver
// logs them and replayed into a fresh Asha give its rungs and stops, and a state the script reached after them
// (one more report) decides as it would have.
TEST(Asha, ReplayOfTheLogGivesTheSameState) {
  Asha first({10, 3, 100, true}), second({10, 3, 100, true});
  const auto actions = run_script(first);
  std::string log;
  std::set<std::string> trials;
  for (size_t i = 0; i < kScript.size(); ++i) {
    log += to_json(AshaLogEntry{kScript[i].trial, kScript[i].step, kScript[i].value, actions[i]}).dump() + "\n";
    trials.insert(kScript[i].trial);
  }
  trials.insert("t9");
  EXPECT_EQ(replay_asha_log(log, "asha.jsonl", trials, second).size(), kScript.size());
  EXPECT_EQ(second.recorded(), first.recorded());
  for (const std::string& t : trials) EXPECT_EQ(second.stopped(t), first.stopped(t)) << t;
  EXPECT_EQ(second.report("t9", 10, 0.45), first.report("t9", 10, 0.45));
  EXPECT_EQ(second.report("t4", 100, 0.9), first.report("t4", 100, 0.9));
}

TEST(Asha, StoppedStaysStoppedAndDuplicatesRecordOnce) {
  Asha asha({10, 2, 100, true});
  EXPECT_EQ(asha.report("a", 10, 1.0), C);
  EXPECT_EQ(asha.report("b", 10, 0.5), S);
  EXPECT_EQ(asha.report("b", 20, 5.0), S);  // stays stopped, even with a great value
  EXPECT_EQ(asha.report("b", 10, 5.0), S);
  EXPECT_EQ(asha.recorded().count(20), 0u);
  EXPECT_EQ(asha.report("a", 10, 0.0), C);  // duplicate: the state, nothing recorded
  EXPECT_EQ(asha.recorded().at(10), (std::map<std::string, double>{{"a", 1.0}, {"b", 0.5}}));
}

TEST(Asha, MinimizeAndNoRungs) {
  Asha low({10, 2, 100, false});
  EXPECT_EQ(low.report("a", 10, 1.0), C);
  EXPECT_EQ(low.report("b", 10, 2.0), S);
  EXPECT_EQ(low.report("c", 10, 0.5), C);  // [1, 2] median 1.5
  EXPECT_EQ(low.report("d", 10, kNaN), S);
  Asha none({0, 3, 100, true});
  EXPECT_TRUE(none.rungs().empty());
  EXPECT_EQ(none.report("a", 50, 0.0), C);
  EXPECT_EQ(none.report("b", 50, kNaN), C);
  EXPECT_TRUE(none.recorded().empty());
}

// asha.jsonl as the driver writes it (with its time field): t01 and t02 fall below t00 at rung 10; t03's NaN is
// the worst value; t00 alone at rung 30.
TEST(AshaLog, ReplaysTheDecisionsAndIgnoresATornLastLine) {
  const std::set<std::string> trials = {"t00", "t01", "t02", "t03"};
  const AshaConfig config{.min_steps = 10, .reduction_factor = 3, .max_steps = 1000};
  std::string log;
  for (const AshaLogEntry& e : std::vector<AshaLogEntry>{
           {"t00", 10, 0.41, C}, {"t01", 12, 0.38, S}, {"t02", 10, 0.2, S}, {"t03", 10, kNaN, S}, {"t00", 30, 0.5, C}}) {
    nlohmann::json j = to_json(e);
    j["time"] = 1764930000.5;
    log += j.dump() + "\n";
  }
  EXPECT_NE(log.find("\"value\":null"), std::string::npos) << "NaN is written as null";
  Asha asha(config);
  const auto entries = replay_asha_log(log + "{\"trial\":\"t01\",\"st", "asha.jsonl", trials, asha);
  ASSERT_EQ(entries.size(), 5u);
  EXPECT_EQ(entries[1].step, 12);
  EXPECT_TRUE(std::isnan(entries[3].value));
  EXPECT_TRUE(asha.stopped("t01") && asha.stopped("t02") && asha.stopped("t03") && !asha.stopped("t00"));
  EXPECT_EQ(asha.recorded().at(30).at("t00"), 0.5);

  const std::vector<std::pair<std::string, std::string>> bad = {
      {"{\"trial\":\"t01\",\"st\n" + log, "asha.jsonl:1: not a JSON line"},  // torn, but not the last line
      {"{\"trial\":\"t00\",\"step\":10,\"value\":0.4,\"action\":\"stop\"}\n",
       "asha.jsonl:1: replaying gives 'continue' where the log says 'stop'"},
      {"\n{\"trial\":\"t09\",\"step\":10,\"value\":0.4,\"action\":\"continue\"}\n", "asha.jsonl:2: expected {trial"},
      {"{\"trial\":\"t00\",\"step\":-10,\"value\":0.4,\"action\":\"continue\"}\n", "asha.jsonl:1: expected"},
      {"{\"trial\":\"t00\",\"step\":18446744073709551615,\"value\":0.4,\"action\":\"continue\"}\n",
       "asha.jsonl:1: expected"},
      {"{\"trial\":\"t00\",\"step\":10,\"value\":\"0.4\",\"action\":\"continue\"}\n", "asha.jsonl:1: expected"},
      {"{\"trial\":\"t00\",\"step\":10,\"value\":0.4,\"action\":\"halt\"}\n", "asha.jsonl:1: expected"},
      {"[1, 2]\n", "asha.jsonl:1: expected"},
  };
  for (const auto& [text, want] : bad) {
    Asha fresh(config);
    try {
      replay_asha_log(text, "asha.jsonl", trials, fresh);
      ADD_FAILURE() << text << " was accepted";
    } catch (const DataError& e) {
      EXPECT_NE(std::string(e.what()).find(want), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace ragmig::hpo
