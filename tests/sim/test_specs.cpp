// Spec strings of the simulator round-trip and fail clearly: cluster specs, workload specs, policy lists;
// clusters give the slots they describe; the generated sweep is reproducible and as documented.
#include <gmock/gmock.h>
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>

#include "core/error.h"
#include "sim/cluster.h"
#include "sim/miso_trace.h"
#include "sim/simulation.h"
#include "sim/sweep.h"
#include "sim/workload.h"

namespace ragmig::sim {
namespace {

using ::testing::HasSubstr;

TEST(ClusterSpec, RoundTrips) {
  for (const char* s : {"1000xV100", "64xA100-40GB", "8xH200:mig=7x1g.18gb", "8xH200:mig=auto", "3xcpu",
                        "2xH200:mig=3g.71gb+2g.35gb+1g.18gb+1g.18gb,4xV100-16GB,2xcpu", "1xA30:mig=4x1g.6gb"})
    EXPECT_EQ(to_string(parse_cluster_spec(s)), s);
  // Mixes are written canonically.
  EXPECT_EQ(to_string(parse_cluster_spec("1xH200:mig=1g.18gb+3g.71gb")), "1xH200:mig=3g.71gb+1g.18gb");
}

TEST(ClusterSpec, BadSpecsNameThePart) {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"", "empty"},
      {"V100", "no count"},
      {"0xV100", "count"},
      {"-3xV100", "count"},
      {"8xTPU", "unknown model 'TPU'"},
      {"8xA100", "unknown model 'A100'"},  // 40 or 80 GB: ambiguous
      {"8xV100:mig=auto", "no MIG"},
      {"8xH200:mig=8x1g.18gb", "does not fit one H200"},
      {"8xH200:mig=2g.5gb", "mig"},
      {"8xH200:mps=2", "unknown option"},
      {"8xH200,", "no count"}};
  for (const auto& [spec, why] : bad) {
    try {
      build_cluster(parse_cluster_spec(spec));
      ADD_FAILURE() << spec;
    } catch (const ConfigError& e) {
      EXPECT_THAT(e.what(), HasSubstr(why)) << spec;
    }
  }
}

TEST(Cluster, Slots) {
  const Cluster c = build_cluster(parse_cluster_spec("1xH200:mig=3g.71gb+4x1g.18gb,9xV100,1xH200:mig=auto,2xcpu"));
  ASSERT_EQ(c.gpus.size(), 11u);
  EXPECT_EQ(c.cpu_slots, 2);
  EXPECT_EQ(c.capacity(), 7 * 11 + 2);
  EXPECT_TRUE(c.has_auto());
  const auto slots = cluster_slots(c);
  ASSERT_EQ(slots.size(), 5u + 9u + 0u + 2u);  // the auto GPU starts with no instances
  EXPECT_EQ(slots[0].id, "gpu0/3g.71gb@4");
  EXPECT_EQ(slots[0].compute, 3);
  EXPECT_EQ(slots[0].memory_mb, 71 * 1024);
  EXPECT_DOUBLE_EQ(slots[0].speed, 3.0 / 7.0);
  EXPECT_EQ(slots[1].profile, "1g.18gb");
  EXPECT_EQ(slots[1].memory_mb, 18 * 1024);  // what parse_need reads from "1g.18gb"
  EXPECT_TRUE(sched::fits(sched::parse_need("1g.18gb:1"), slots[1]));
  EXPECT_EQ(slots[5].id, "gpu1");
  EXPECT_EQ(slots[5].kind, sched::SlotKind::Gpu);
  EXPECT_EQ(slots[5].compute, 7);
  EXPECT_EQ(slots[5].memory_mb, 32 * 1024);
  EXPECT_EQ(slots[5].group, 0);   // GPUs 0..7 share a host
  EXPECT_EQ(slots[13].id, "gpu9");
  EXPECT_EQ(slots[13].group, 1);
  EXPECT_EQ(slots[14].id, "cpu0");
  EXPECT_EQ(slots[14].kind, sched::SlotKind::Cpu);
  std::set<std::string> ids;
  for (const auto& s : slots) EXPECT_TRUE(ids.insert(s.id).second) << s.id;
}

TEST(Cluster, Placeable) {
  const Cluster mig7 = build_cluster(parse_cluster_spec("2xH200:mig=7x1g.18gb"));
  EXPECT_TRUE(placeable(sched::parse_need("10gb:14"), mig7));
  EXPECT_FALSE(placeable(sched::parse_need("10gb:15"), mig7));
  EXPECT_FALSE(placeable(sched::parse_need("gpu:1"), mig7));
  EXPECT_FALSE(placeable(sched::parse_need("cpu:1"), mig7));
  const Cluster automatic = build_cluster(parse_cluster_spec("2xH200:mig=auto"));
  EXPECT_TRUE(placeable(sched::parse_need("gpu:2"), automatic));
  EXPECT_TRUE(placeable(sched::parse_need("3g.71gb:4"), automatic));
  EXPECT_FALSE(placeable(sched::parse_need("3g.71gb:5"), automatic));
  EXPECT_FALSE(placeable(sched::parse_need("200gb:1"), automatic));
  EXPECT_TRUE(placeable(sched::parse_need("gpu:128"), build_cluster(parse_cluster_spec("1000xV100"))));
}

TEST(WorkloadSpec, RoundTripsAndRejects) {
  for (const char* s : {"philly:/data/philly.csv", "openb:a.csv", "sweep:28", "miso:100", "jobs:x/y.csv"})
    EXPECT_EQ(to_string(parse_workload_spec(s)), s);
  for (const char* bad : {"", "sweep", "sweep:0", "sweep:-1", "sweep:x", "sweep:012", "philly:", "trace:x", "sweep:1e3"})
    EXPECT_THROW(parse_workload_spec(bad), ConfigError) << bad;
  // The range is said: a count past it is no "count from 1".
  EXPECT_THAT([] { parse_workload_spec("miso:99999999999"); },
              ::testing::ThrowsMessage<ConfigError>(
                  ::testing::HasSubstr("miso:N needs a job count from 1 to 10000000")));
}

TEST(PolicyList, SplitsOutsideParentheses) {
  EXPECT_EQ(split_policy_list("fifo"), std::vector<std::string>{"fifo"});
  EXPECT_EQ(split_policy_list("fifo,las(thresholds=60:600,min_run=0),srtf"),
            (std::vector<std::string>{"fifo", "las(thresholds=60:600,min_run=0)", "srtf"}));
  EXPECT_THROW(split_policy_list("fifo,,las"), ConfigError);
  EXPECT_THROW(split_policy_list("fifo,"), ConfigError);
}

TEST(Sweep, ReproducibleAndAsDocumented) {
  const ThroughputModel model = make_throughput_model({});
  const auto a = generate_sweep(500, model, 7), b = generate_sweep(500, model, 7), c = generate_sweep(500, model, 8);
  ASSERT_EQ(a.size(), 500u);
  std::map<std::string, int> types;
  std::set<int64_t> priorities;
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].name, b[i].name);
    EXPECT_EQ(a[i].iterations, b[i].iterations);
    EXPECT_EQ(a[i].type, b[i].type);
    EXPECT_EQ(a[i].arrival, 0);
    EXPECT_GE(a[i].iterations, 300);  // no table: a whole GPU runs 1 s per iteration
    EXPECT_LE(a[i].iterations, 7200);
    const bool small = a[i].type.rfind("embedding_", 0) == 0;
    EXPECT_EQ(sched::to_string(a[i].need), small ? "5gb:1" : "10gb:1");
    EXPECT_DOUBLE_EQ(a[i].estimate_s, a[i].iterations);
    ++types[a[i].type];
    priorities.insert(a[i].priority);
  }
  EXPECT_NEAR(types["embedding_train64"] / 500.0, 0.25, 0.06);
  EXPECT_NEAR(types["embedding_train128"] / 500.0, 0.25, 0.06);
  EXPECT_NEAR(types["bert_train2"] / 500.0, 0.3, 0.06);
  EXPECT_NEAR(types["bert_train4"] / 500.0, 0.2, 0.06);
  EXPECT_EQ(priorities, (std::set<int64_t>{0, 1, 2}));
  int same = 0;
  for (size_t i = 0; i < a.size(); ++i) same += a[i].iterations == c[i].iterations;
  EXPECT_LT(same, 10);
  // Log-uniform: about half of the trials are below the geometric middle, sqrt(300 * 7200).
  int below = 0;
  for (const auto& j : a) below += j.iterations < std::sqrt(300.0 * 7200.0);
  EXPECT_NEAR(below / 500.0, 0.5, 0.07);
}

// A table with ragmig's own types (bench/mig/slice_speed.sh writes one per GPU) makes the sweep draw them, each
// asking for the smallest profile it was measured on; with one of them missing, MISO's types stand in.
TEST(Sweep, DrawsRagmigsOwnTypesWhenTheTablesHaveThem) {
  const std::string table =
      "# bench/mig/slice_speed.sh on an H200\n"
      "ragmig_minilm_b64 {\"1g.18gb\": 0.05, \"2g.35gb\": 0.03, \"7g.141gb\": 0.02}\n"
      "ragmig_minilm_b256 {\"1g.18gb\": 0.16, \"7g.141gb\": 0.05}\n"
      "ragmig_bert_base_b64 {\"1g.18gb\": 0.4, \"7g.141gb\": 0.08}\n"
      "ragmig_bert_base_b256 {\"2g.35gb\": 0.9, \"3g.71gb\": 0.5, \"7g.141gb\": 0.2}\n";
  const ThroughputModel model = make_throughput_model({parse_throughput_table(table, "h200.txt")});
  ASSERT_TRUE(sweep_draws_ragmig_types(model));
  const auto jobs = generate_sweep(400, model, 3);
  const std::map<std::string, std::pair<std::string, int64_t>> expected = {
      {"ragmig_minilm_b64", {"1g.18gb:1", 64}},
      {"ragmig_minilm_b256", {"1g.18gb:1", 256}},
      {"ragmig_bert_base_b64", {"1g.18gb:1", 64}},
      {"ragmig_bert_base_b256", {"2g.35gb:1", 256}}};
  std::map<std::string, int> types;
  for (const auto& j : jobs) {
    ASSERT_TRUE(expected.count(j.type)) << j.type;
    EXPECT_EQ(sched::to_string(j.need), expected.at(j.type).first) << j.type;
    EXPECT_EQ(j.batch_size, expected.at(j.type).second) << j.type;
    EXPECT_EQ(j.min_batch_size, j.batch_size / 4) << j.type;
    // Its length is seconds on the whole GPU (7g), turned into steps of its measured time there.
    const double step_s = model.table.at(j.type).at("7g.141gb");
    EXPECT_GE(j.iterations * step_s, 300 - step_s) << j.type;
    EXPECT_LE(j.iterations * step_s, 7200 + step_s) << j.type;
    EXPECT_NEAR(j.estimate_s, j.iterations * step_s, 1e-9) << j.type;
    ++types[j.type];
  }
  EXPECT_NEAR(types["ragmig_minilm_b64"] / 400.0, 0.25, 0.07);
  EXPECT_NEAR(types["ragmig_bert_base_b256"] / 400.0, 0.2, 0.07);
  const Cluster h200 = build_cluster(parse_cluster_spec("8xH200"));
  const Workload w = load_workload(parse_workload_spec("sweep:10"), h200, model, 3);
  ASSERT_EQ(w.notes.size(), 1u);
  EXPECT_THAT(w.notes[0], HasSubstr("ragmig's job types"));

  // Three of the four measured: MISO's types, as without a table.
  const ThroughputModel partial = make_throughput_model(
      {parse_throughput_table(table.substr(0, table.find("ragmig_bert_base_b256")), "partial.txt")});
  EXPECT_FALSE(sweep_draws_ragmig_types(partial));
  for (const auto& j : generate_sweep(20, partial, 3)) EXPECT_EQ(j.type.rfind("ragmig_", 0), std::string::npos);
  EXPECT_THAT(load_workload(parse_workload_spec("sweep:10"), h200, partial, 3).notes[0],
              HasSubstr("MISO's measured types stand in"));
}

TEST(Sweep, MisoJobsAreMisosTraceArrivingAsItsSimulatorHasThem) {
  // Every type of the trace, with a made-up table: "bert" ones only from 3g on, the rest from 1g.
  std::string table;
  std::set<std::string> listed;
  for (const auto& row : miso_trace()) {
    if (!listed.insert(row.type).second) continue;
    const bool big = std::string(row.type).rfind("bert", 0) == 0;
    table += fmt::format("{} {{{}\"7g.40gb\": 0.5}}\n", row.type, big ? "\"3g.20gb\": 1, " : "\"1g.5gb\": 2, ");
  }
  const ThroughputModel model = make_throughput_model({parse_throughput_table(table, "t")});
  const auto trace = miso_trace();
  ASSERT_EQ(trace.size(), 100u);
  double trace_work = 0;
  for (const auto& row : trace) trace_work += row.seconds;
  EXPECT_NEAR(trace_work, 76383, 1);

  const auto jobs = generate_miso_like(200, model, 3);
  ASSERT_EQ(jobs.size(), 200u);
  std::map<std::string, int> seen;
  double first_gaps = 0, later_gaps = 0, previous = 0;
  for (size_t k = 0; k < jobs.size(); ++k) {
    const auto& job = jobs[k];
    const int i = std::stoi(job.name.substr(job.name.find('-') + 1));
    ASSERT_TRUE(i >= 0 && i < 200) << job.name;
    ++seen[job.name];
    const auto& row = trace[static_cast<size_t>(i % 100)];
    EXPECT_EQ(job.type, row.type);
    EXPECT_DOUBLE_EQ(job.estimate_s, row.seconds);
    EXPECT_NEAR(job.iterations, row.seconds / 0.5, 0.5);  // 0.5 s per iteration on a whole GPU
    EXPECT_EQ(sched::to_string(job.need), job.type.rfind("bert", 0) == 0 ? "3g.20gb:1" : "1g.5gb:1");
    EXPECT_GE(job.arrival, previous);
    (k <= 200 / 3 ? first_gaps : later_gaps) += job.arrival - previous;
    previous = job.arrival;
  }
  EXPECT_EQ(seen.size(), 200u);  // each job once: row i % 100 twice
  EXPECT_NEAR(first_gaps / 67, 30, 3);    // Poisson gaps, mean 30 s for the first third
  EXPECT_NEAR(later_gaps / 133, 60, 4);   // then 60 s
  // The order is a seeded shuffle: another seed, another order; the same seed, the same jobs.
  const auto again = generate_miso_like(200, model, 3), other = generate_miso_like(200, model, 4);
  int same_place = 0;
  for (size_t k = 0; k < jobs.size(); ++k) {
    EXPECT_EQ(again[k].name, jobs[k].name);
    EXPECT_EQ(again[k].arrival, jobs[k].arrival);
    same_place += other[k].name == jobs[k].name;
  }
  EXPECT_LT(same_place, 10);
  int in_trace_order = 0;
  for (size_t k = 0; k < jobs.size(); ++k) in_trace_order += jobs[k].name == fmt::format("miso-{}", k);
  EXPECT_LT(in_trace_order, 10);

  try {
    generate_miso_like(10, make_throughput_model({parse_throughput_table("bert_train2 {\"7g.40gb\": 1}\n", "t")}), 1);
    ADD_FAILURE() << "a table without the trace's types was accepted";
  } catch (const ConfigError& e) {
    EXPECT_THAT(e.what(), HasSubstr("no MIG measurement of"));
  }
}

TEST(Sweep, WorkBoundTakesEachJobAtItsMostEfficientSlice) {
  const ThroughputModel model = make_throughput_model({parse_throughput_table("a {\"1g.5gb\": 0.5, \"7g.40gb\": 0.1}\n", "t")});
  SimJob j;
  j.type = "a";
  j.iterations = 1000;
  j.need = sched::parse_need("5gb:1");
  // On 1g: 1000 x 0.5 s x 1/7 GPU = 71.4 GPU-seconds; on 7g: 100. Two jobs over two GPUs: 71.4 s.
  EXPECT_NEAR(work_bound_s({j, j}, 2, model), 500.0 / 7, 1e-9);
}

}  // namespace
}  // namespace ragmig::sim
