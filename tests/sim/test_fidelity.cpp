// Fidelity: twelve real CPU jobs run by `ragmig run` under the priority policy, then the same workload
// simulated by `ragmig sim` with the seconds per job that `ragmig sim measure` took from that run's store.
// The average JCTs and the makespans must agree within 10 %; the figures are printed for the record.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/atomic_file.h"
#include "sched/store.h"
#include "sim/throughput.h"
#include "support/process.h"
#include "support/test_support.h"

namespace ragmig::testing {
namespace {

ProcessResult ragmig(std::vector<std::string> args) {
  args.insert(args.begin(), RAGMIG_BINARY);
  return run_process(args);
}

TEST(SimFidelity, RealRunAndItsSimulationAgreeOnAverageJctAndMakespan) {
  ScratchDir dir;
  const std::string state = (dir / "state").string();
  // Three kinds of job (1, 2 and 3 seconds of sleep), four of each, priorities that mix the kinds.
  std::string csv = "arrival_s,name,type,iterations,slots,priority,estimate_s\n";
  for (int i = 0; i < 12; ++i) {
    const int seconds = 1 + i % 3;
    const std::string type = fmt::format("sleep{}", seconds);
    const int priority = (i * 7) % 5;
    const auto r = ragmig({"submit", "--state", state, "--cmd", fmt::format("sh -c 'sleep {}'", seconds), "--name", type,
                           "--priority", std::to_string(priority)});
    ASSERT_EQ(r.exit_code, 0) << r.output;
    csv += fmt::format("0,job{},{},1,cpu:1,{},0\n", i, type, priority);
  }
  const auto run = ragmig({"run", "--state", state, "--until-empty", "--cpu-slots", "3", "--policy", "priority",
                           "--tick", "0.2"});
  ASSERT_EQ(run.exit_code, 0) << run.output;

  // Real JCTs, counted from the scheduler's first start: all twelve were waiting when it began.
  double first_start = 1e300;
  std::vector<double> ends;
  {
    sched::Store store(state);
    for (const auto& job : store.jobs(false)) {
      ASSERT_EQ(job.state, sched::JobState::Done) << job.reason;
      const auto attempts = store.attempts(job.id);
      ASSERT_EQ(attempts.size(), 1u);
      first_start = std::min(first_start, attempts.front().started_at);
      ends.push_back(job.finished_at);
    }
  }
  ASSERT_EQ(ends.size(), 12u);
  double real = 0;
  for (double e : ends) real += (e - first_start) / 12;
  const double real_makespan = *std::max_element(ends.begin(), ends.end()) - first_start;

  const std::string measurements = (dir / "measured.txt").string();
  auto r = ragmig({"sim", "measure", "--state", state, "--out", measurements});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto table = sim::read_throughput_table(measurements);
  ASSERT_EQ(table.size(), 3u);
  for (const auto& [type, entries] : table) {
    ASSERT_EQ(entries.size(), 1u);
    EXPECT_EQ(entries.begin()->first, "cpu");
    const double nominal = type.back() - '0';
    EXPECT_GT(entries.begin()->second, nominal) << type;  // measured: the sleep plus starting and reaping
    EXPECT_LT(entries.begin()->second, nominal + 1.5) << type;
  }

  write_file_atomic(dir / "jobs.csv", csv);
  r = ragmig({"sim", "--workload", "jobs:" + (dir / "jobs.csv").string(), "--cluster", "3xcpu", "--policy", "priority",
              "--throughputs", measurements, "--tick", "0.2", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto json = nlohmann::json::parse(r.output.substr(r.output.find('[')));
  ASSERT_EQ(json.size(), 1u);
  EXPECT_EQ(json[0]["policy"], "priority");
  EXPECT_EQ(json[0]["jobs"], 12);
  const double simulated = json[0]["avg_jct"], simulated_makespan = json[0]["makespan"];
  const double error = std::abs(simulated - real) / real;
  const double makespan_error = std::abs(simulated_makespan - real_makespan) / real_makespan;
  std::cout << fmt::format("[ fidelity ] 12 CPU jobs under priority on 3 slots: real average JCT {:.3f} s, "
                           "makespan {:.3f} s; simulated {:.3f} s, {:.3f} s; error {:.1f} % and {:.1f} %\n",
                           real, real_makespan, simulated, simulated_makespan, 100 * error, 100 * makespan_error);
  RecordProperty("real_avg_jct", std::to_string(real));
  RecordProperty("simulated_avg_jct", std::to_string(simulated));
  EXPECT_LT(error, 0.10);
  EXPECT_LT(makespan_error, 0.10);
}

}  // namespace
}  // namespace ragmig::testing
