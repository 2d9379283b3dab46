// `ragmig sim` as a user runs it: several policies simulated at once give each the results it gets alone.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "core/atomic_file.h"
#include "support/process.h"
#include "support/test_support.h"

namespace ragmig::testing {
namespace {

struct SimRun {
  nlohmann::json results;  // wall_s taken out: the one field that may differ
  std::string timeline;
};

SimRun sim(const std::string& threads, const ScratchDir& dir) {
  const std::string timeline = (dir / ("timeline-" + threads + ".csv")).string();
  const ProcessResult r =
      run_process({RAGMIG_BINARY, "sim", "--workload", "sweep:40", "--cluster", "2xH200:mig=auto,1xA100-40GB",
                   "--policy", "fifo,srtf,las+dynbatch,priority,rr(quantum=600)", "--migrate", "--json", "--timeline",
                   timeline, "--threads", threads});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  SimRun run;
  run.results = nlohmann::json::parse(r.output.substr(r.output.find("\n[") + 1), nullptr, false);
  EXPECT_TRUE(run.results.is_array()) << r.output;
  for (auto& result : run.results) result.erase("wall_s");
  run.timeline = read_file(timeline);
  return run;
}

TEST(SimCommand, PoliciesSimulatedAtOnceGetWhatEachGetsAlone) {
  ScratchDir dir;
  const SimRun alone = sim("1", dir);
  ASSERT_EQ(alone.results.size(), 5u);
  EXPECT_EQ(alone.results[2]["policy"], "las+dynbatch");  // in the order given
  EXPECT_GT(alone.results[4]["preemptions"].get<int64_t>(), 0) << "rr preempts: the runs do differ by policy";
  const SimRun together = sim("3", dir);
  EXPECT_EQ(together.results, alone.results);
  EXPECT_EQ(together.timeline, alone.timeline);
  EXPECT_EQ(sim("0", dir).results, alone.results);  // one per usable core
}

}  // namespace
}  // namespace ragmig::testing
