// The trace readers on small hand-made files (every column's meaning and every kind of bad line, named by
// file:line), a fuzz test (random mutations give a DataError or a parse, never a crash), and the real
// traces of the shared data folder.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "core/atomic_file.h"
#include "core/error.h"
#include "sim/cluster.h"
#include "sim/traces.h"
#include "support/test_support.h"

namespace ragmig::sim {
namespace {

using ::testing::HasSubstr;

class Traces : public ::testing::Test {
 protected:
  std::string write(const std::string& name, const std::string& text) {
    const auto path = dir_ / name;
    write_file_atomic(path, text);
    return path.string();
  }
  testing::ScratchDir dir_;
};

const char* kPhilly =
    "timestamp,duration,num_gpus,gpu_time,cluster\n"
    "2017-10-09 07:01:55,66.0,1,66.0,11cb48\n"
    "2017-10-09 06:13:03,2951.0,8,23608.0,6214e9\n"
    "2017-10-10 06:13:03,10,2,20,6214e9\n";

const char* kOpenb =
    "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n"
    "p0,12000,16384,1,1000,,LS,Running,0,1000,10\n"
    "p1,6000,12288,1,460,,BE,Running,100,700,200\n"
    "p2,6000,12288,0,0,,BE,Running,100,700,200\n"
    "p3,6000,12288,1,460,,Burstable,Pending,100,700,\n"
    "p4,6000,12288,2,1000,,Guaranteed,Running,50,250,50\n"
    "p5,6000,12288,1,100,,LS,Running,60,160,60\n";

TEST_F(Traces, Philly) {
  const auto w = read_philly(write("philly.csv", kPhilly));
  ASSERT_EQ(w.jobs.size(), 3u);
  // Sorted by arrival, in seconds after the earliest timestamp.
  EXPECT_EQ(w.jobs[0].arrival, 0);
  EXPECT_EQ(w.jobs[0].name, "philly-2");
  EXPECT_EQ(sched::to_string(w.jobs[0].need), "gpu:8");
  EXPECT_EQ(w.jobs[0].iterations, 2951);
  EXPECT_EQ(w.jobs[0].estimate_s, 2951);
  EXPECT_EQ(w.jobs[0].type, "");
  EXPECT_EQ(w.jobs[1].arrival, 48 * 60 + 52);
  EXPECT_EQ(w.jobs[2].arrival, 86400);
  EXPECT_EQ(sched::to_string(w.jobs[2].need), "gpu:2");
}

TEST_F(Traces, OpenbOnMigAndWholeGpus) {
  const std::string path = write("openb.csv", kOpenb);
  const auto mig = read_openb(path, build_cluster(parse_cluster_spec("1xH200:mig=auto")), 0.5);
  ASSERT_EQ(mig.jobs.size(), 4u);
  EXPECT_THAT(mig.notes, ::testing::ElementsAre(HasSubstr("1 pods without a GPU"), HasSubstr("1 pods never scheduled")));
  EXPECT_EQ(mig.jobs[0].name, "p0");
  EXPECT_EQ(sched::to_string(mig.jobs[0].need), "gpu:1");
  EXPECT_EQ(mig.jobs[0].iterations, 990);
  EXPECT_EQ(mig.jobs[0].priority, 2);
  EXPECT_EQ(mig.jobs[1].name, "p4");
  EXPECT_EQ(sched::to_string(mig.jobs[1].need), "gpu:2");
  EXPECT_EQ(mig.jobs[1].priority, 3);
  EXPECT_EQ(mig.jobs[2].name, "p5");  // 10% of a GPU: one slice of seven
  EXPECT_EQ(sched::to_string(mig.jobs[2].need), "1g.18gb:1");
  EXPECT_NEAR(mig.jobs[2].iterations, 100 * std::sqrt(0.1), 1e-9);
  EXPECT_EQ(mig.jobs[3].name, "p1");  // 46%: 3.22 slices, so the 4g profile
  EXPECT_EQ(mig.jobs[3].arrival, 100);
  EXPECT_EQ(sched::to_string(mig.jobs[3].need), "4g.71gb:1");
  EXPECT_NEAR(mig.jobs[3].iterations, 500 * std::sqrt(0.46), 1e-9);
  EXPECT_EQ(mig.jobs[3].priority, 0);
  const auto whole = read_openb(path, build_cluster(parse_cluster_spec("4xV100")), 0.5);
  EXPECT_EQ(sched::to_string(whole.jobs[3].need), "gpu:1");
}

TEST_F(Traces, JobsCsvRoundTrips) {
  const std::string text =
      "arrival_s,name,type,iterations,slots,priority,estimate_s\n"
      "0,a,sleep,1,cpu:1,2,3.5\n"
      "1.5,b,bert_train2,1000,1g.18gb:2,0,0\n";
  const auto w = read_jobs_csv(write("jobs.csv", text));
  ASSERT_EQ(w.jobs.size(), 2u);
  EXPECT_EQ(w.jobs[1].arrival, 1.5);
  EXPECT_EQ(w.jobs[1].need.replicas, 2);
  EXPECT_EQ(w.jobs[0].estimate_s, 3.5);
  EXPECT_EQ(format_jobs_csv(w.jobs), text);
}

TEST_F(Traces, BadLinesNameFileLineAndColumn) {
  const std::string philly_header = "timestamp,duration,num_gpus\n";
  const std::vector<std::pair<std::string, std::string>> philly = {
      {"2017-10-09 07:01:55,66,1\n2017-10-09,66,1\n", ":3: timestamp"},
      {"2017-10-09 07:01:55,-1,1\n", ":2: duration"},
      {"2017-10-09 07:01:55,x,1\n", ":2: duration"},
      {"2017-10-09 07:01:55,nan,1\n", ":2: duration"},
      {"2017-10-09 07:01:55,5,0\n", ":2: num_gpus"},
      {"2017-10-09 07:01:55,5,1.5\n", ":2: num_gpus"},
      {"2017-10-09 07:01:55,5\n", ":2: 2 fields"},
      {"2017-13-09 07:01:55,5,1\n", ":2: timestamp"},
  };
  for (const auto& [rows, why] : philly) {
    try {
      read_philly(write("p.csv", philly_header + rows));
      ADD_FAILURE() << rows;
    } catch (const DataError& e) {
      EXPECT_THAT(e.what(), HasSubstr("p.csv" + why)) << rows;
    }
  }
  EXPECT_THROW(read_philly(write("h.csv", "time,duration,num_gpus\n")), DataError);
  EXPECT_THROW(read_philly(write("e.csv", "")), DataError);
  EXPECT_THROW(read_philly(write("n.csv", philly_header)), DataError);

  const std::string openb_header =
      "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n";
  const Cluster cluster = build_cluster(parse_cluster_spec("1xH200:mig=auto"));
  const std::vector<std::pair<std::string, std::string>> openb = {
      {"p,1,1,1,1200,,LS,Running,0,10,0\n", ":2: gpu_milli"},
      {"p,1,1,1,500,,XX,Running,0,10,0\n", ":2: qos"},
      {"p,1,1,1,500,,LS,Running,0,10,20\n", ":2: deletion_time is before"},
      {"p,1,1,1,500,,LS,Running,30,40,20\n", ":2: scheduled_time is before"},
      {"p,1,1,x,500,,LS,Running,0,10,0\n", ":2: num_gpu"},
  };
  for (const auto& [rows, why] : openb) {
    try {
      read_openb(write("o.csv", openb_header + rows), cluster, 0.7);
      ADD_FAILURE() << rows;
    } catch (const DataError& e) {
      EXPECT_THAT(e.what(), HasSubstr("o.csv" + why)) << rows;
    }
  }
  try {
    read_jobs_csv(write("j.csv", "arrival_s,name,type,iterations,slots,priority,estimate_s\n0,a,t,1,tpu:1,0,0\n"));
    ADD_FAILURE();
  } catch (const DataError& e) {
    EXPECT_THAT(e.what(), HasSubstr("j.csv:2: slots 'tpu:1'"));
  }
}

// Random byte edits of valid files: every result is a workload or a DataError, never a crash or another error.
TEST_F(Traces, FuzzedFilesParseOrFailWithDataError) {
  std::mt19937_64 rng(42);
  const std::string jobs = "arrival_s,name,type,iterations,slots,priority,estimate_s\n0,a,sleep,1,cpu:1,2,3.5\n"
                           "1.5,b,bert_train2,1000,1g.18gb:2,0,0\n";
  const Cluster cluster = build_cluster(parse_cluster_spec("1xH200:mig=auto"));
  const std::string alphabet = "0123456789,.:-x \n\tgbcpu";
  int parsed = 0, rejected = 0;
  for (int round = 0; round < 600; ++round) {
    const int which = round % 3;
    std::string text = which == 0 ? kPhilly : which == 1 ? kOpenb : jobs;
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      const size_t pos = rng() % text.size();
      switch (rng() % 3) {
        case 0: text[pos] = alphabet[rng() % alphabet.size()]; break;
        case 1: text.erase(pos, 1 + rng() % 3); break;
        default: text.insert(pos, 1, alphabet[rng() % alphabet.size()]); break;
      }
      if (text.empty()) text.push_back('\n');
    }
    const std::string path = write("fuzz.csv", text);
    try {
      if (which == 0) read_philly(path);
      else if (which == 1) read_openb(path, cluster, 0.7);
      else read_jobs_csv(path);
      ++parsed;
    } catch (const DataError& e) {
      EXPECT_THAT(e.what(), HasSubstr("fuzz.csv:"));
      ++rejected;
    }
  }
  EXPECT_GT(parsed, 0);
  EXPECT_GT(rejected, 0);
}

TEST(RealTraces, PhillyAndOpenb) {
  RAGMIG_REQUIRE_DATA("traces/philly-pollux.csv");
  RAGMIG_REQUIRE_DATA("traces/alibaba-openb-default.csv");
  const auto philly = read_philly((testing::data_dir() / "traces/philly-pollux.csv").string());
  ASSERT_EQ(philly.jobs.size(), 82247u);
  EXPECT_EQ(philly.jobs.front().arrival, 0);
  EXPECT_GT(philly.jobs.back().arrival, 100 * 86400.0);  // Sept to Dec 2017
  const auto openb = read_openb((testing::data_dir() / "traces/alibaba-openb-default.csv").string(),
                                build_cluster(parse_cluster_spec("8xH200:mig=auto")), 0.73);
  EXPECT_EQ(openb.jobs.size(), 6203u);  // the GPU pods that were scheduled
  int fractions = 0;
  for (const auto& j : openb.jobs) fractions += j.need.what != "gpu";
  EXPECT_EQ(fractions, 2573);
}

}  // namespace
}  // namespace ragmig::sim
