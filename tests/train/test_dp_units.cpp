// The pure parts of data parallelism, table-driven: rendezvous from torchrun or Slurm variables, the first
// host of a Slurm node list, per-replica slices of the sampler's batches (no sample repeated or dropped,
// also when the replica count changes mid-epoch), the batch balancer, and the launcher's exit code.
#include <gtest/gtest.h>

#include <map>
#include <numeric>
#include <set>

#include "core/error.h"
#include "text/batch_sampler.h"
#include "train/batch_balancer.h"
#include "train/data_shard.h"
#include "train/process_group.h"
#include "core/replica_exit.h"
#include "train/replica_launcher.h"

namespace ragmig::train {
namespace {

EnvLookup env_of(std::map<std::string, std::string> vars) {
  return [vars](const std::string& key) -> std::optional<std::string> {
    auto it = vars.find(key);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

TEST(Rendezvous, FromEnvironmentTable) {
  struct Case {
    std::map<std::string, std::string> env;
    std::optional<Rendezvous> want;
  };
  const std::vector<Case> cases = {
      {{}, std::nullopt},
      {{{"RANK", "1"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "10.0.0.5"}, {"MASTER_PORT", "29400"}},
       Rendezvous{1, 2, 1, "10.0.0.5", 29400, "env"}},
      {{{"RANK", "3"}, {"WORLD_SIZE", "4"}, {"LOCAL_RANK", "1"}, {"MASTER_PORT", "1234"}},
       Rendezvous{3, 4, 1, "127.0.0.1", 1234, "env"}},
      {{{"RANK", "0"}, {"WORLD_SIZE", "1"}}, Rendezvous{0, 1, 0, "127.0.0.1", 29500, "env"}},
      // torchrun's variables win over Slurm's.
      {{{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_PORT", "5000"}, {"SLURM_PROCID", "1"}, {"SLURM_NTASKS", "2"}},
       Rendezvous{0, 2, 0, "127.0.0.1", 5000, "env"}},
      {{{"SLURM_PROCID", "2"}, {"SLURM_NTASKS", "4"}, {"SLURM_LOCALID", "0"}, {"SLURM_JOB_ID", "123456"},
        {"SLURM_STEP_NODELIST", "gpu[07-08]"}},
       Rendezvous{2, 4, 0, "gpu07", 20000 + 123456 % 10000, "slurm"}},
      {{{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "2"}, {"SLURM_JOB_NODELIST", "a,b"}, {"MASTER_PORT", "7777"}},
       Rendezvous{0, 2, 0, "a", 7777, "slurm"}},
      {{{"SLURM_PROCID", "1"}, {"SLURM_NTASKS", "2"}, {"SLURM_JOB_NODELIST", "a,b"}, {"MASTER_ADDR", "head"}},
       Rendezvous{1, 2, 0, "head", 20000, "slurm"}},
      {{{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "1"}}, Rendezvous{0, 1, 0, "127.0.0.1", 20000, "slurm"}},
  };
  for (const auto& c : cases) {
    const auto got = rendezvous_from_env(env_of(c.env));
    ASSERT_EQ(got.has_value(), c.want.has_value()) << c.env.size();
    if (got) {
      EXPECT_EQ(*got, *c.want) << got->rank << " " << got->world_size << " " << got->master_addr << ":"
                               << got->master_port << " " << got->source;
    }
  }
}

TEST(Rendezvous, BadValuesNameTheVariable) {
  const std::vector<std::pair<std::map<std::string, std::string>, std::string>> cases = {
      {{{"RANK", "2"}, {"WORLD_SIZE", "2"}, {"MASTER_PORT", "1"}}, "RANK"},
      {{{"RANK", "x"}, {"WORLD_SIZE", "2"}, {"MASTER_PORT", "1"}}, "RANK"},
      {{{"RANK", "0"}}, "WORLD_SIZE"},
      {{{"RANK", "0"}, {"WORLD_SIZE", "2"}}, "MASTER_PORT"},
      {{{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_PORT", "70000"}}, "MASTER_PORT"},
      {{{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "2"}}, "NODELIST"},
      {{{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "2"}, {"SLURM_JOB_NODELIST", "n[1-2"}}, "unbalanced"},
  };
  for (const auto& [env, word] : cases) {
    try {
      rendezvous_from_env(env_of(env));
      ADD_FAILURE() << "no error, expected one naming " << word;
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find(word), std::string::npos) << e.what();
    }
  }
}

TEST(Rendezvous, FirstSlurmHostTable) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"node1", "node1"},           {"a,b,c", "a"},
      {"gpu[03-05,9],cpu1", "gpu03"}, {"gpu[9,03-05]", "gpu9"},
      {"n[1-2]-ib[7]", "n1-ib7"},   {"rack1-node[10-12]", "rack1-node10"},
      {"x[001],y", "x001"},
  };
  for (const auto& [list, host] : cases) EXPECT_EQ(first_slurm_host(list), host) << list;
  for (const std::string bad : {"", "[", "a]", "n[]"}) EXPECT_THROW(first_slurm_host(bad), ConfigError) << bad;
}

TEST(Backend, NcclOnlyBetweenDistinctWholeGpus) {
  const RankGpu a{"host/0000:1A:00.0", false}, b{"host/0000:1B:00.0", false}, other_host{"other/0000:1A:00.0", false};
  const RankGpu mig_a{"host/0000:1A:00.0", true}, mig_b{"host/0000:1B:00.0", true};
  struct Case {
    std::string requested;
    bool cuda, nccl;
    std::vector<RankGpu> gpus;
    std::string backend, reason_has;
  };
  const std::vector<Case> cases = {
      {"auto", true, true, {a, b}, "nccl", "one whole GPU per rank"},
      {"auto", true, true, {a, other_host}, "nccl", "one whole GPU per rank"},
      {"nccl", true, true, {a, b}, "nccl", "one whole GPU per rank"},
      {"auto", true, true, {a, a}, "gloo", "ranks 0 and 1 share GPU host/0000:1A:00.0"},
      {"nccl", true, true, {a, b, a}, "gloo", "ranks 0 and 2 share GPU"},
      {"auto", true, true, {mig_a, mig_b}, "gloo", "rank 0 is on a MIG instance"},
      {"nccl", true, true, {a, mig_b}, "gloo", "rank 1 is on a MIG instance"},
      {"auto", false, true, {}, "gloo", "the model is on the CPU"},
      {"auto", true, false, {a, b}, "gloo", "this LibTorch has no NCCL"},
      {"gloo", true, true, {a, b}, "gloo", "parallel.backend = gloo"},
  };
  for (const auto& c : cases) {
    const BackendChoice got = choose_backend(c.requested, c.cuda, c.nccl, c.gpus);
    EXPECT_EQ(got.backend, c.backend) << c.requested << " " << c.reason_has;
    EXPECT_NE(got.reason.find(c.reason_has), std::string::npos) << got.reason;
  }
  EXPECT_THROW(choose_backend("nccl", true, false, {a, b}), DeviceError);
  EXPECT_THROW(choose_backend("mpi", true, true, {a, b}), ConfigError);
}

TEST(Shard, EvenSplitAndSlices) {
  EXPECT_EQ(even_split(16, 2), (std::vector<int64_t>{8, 8}));
  EXPECT_EQ(even_split(10, 3), (std::vector<int64_t>{4, 3, 3}));
  EXPECT_EQ(even_split(5, 1), (std::vector<int64_t>{5}));
  EXPECT_THROW(even_split(5, 0), ConfigError);
  const std::vector<int64_t> batch = {10, 11, 12, 13, 14, 15};
  const std::vector<int64_t> sizes = {1, 3, 2};
  const std::vector<std::vector<int64_t>> want = {{10}, {11, 12, 13}, {14, 15}};
  for (int r = 0; r < 3; ++r) {
    const auto got = shard_of(batch, sizes, r);
    EXPECT_EQ(std::vector<int64_t>(got.begin(), got.end()), want[static_cast<size_t>(r)]) << r;
  }
  EXPECT_EQ(shard_offset(sizes, 2), 4);
  EXPECT_THROW(shard_of(batch, {3, 2}, 0), ConfigError);
}

// One epoch of the real sampler over keys with duplicates, consumed by 2 replicas with changing splits,
// "checkpointed" mid-epoch and finished by 3 replicas: every sample of the sampler's epoch is trained on
// exactly once, and nothing outside it.
TEST(Shard, NoSampleRepeatedOrDroppedAcrossAResumeWithAnotherReplicaCount) {
  std::vector<int64_t> keys;
  for (int64_t i = 0; i < 203; ++i) keys.push_back(i % 150);  // 53 repeated positives
  const int64_t global = 12;
  const auto batches = text::unique_positive_batches(keys, global, 7, 0);
  std::multiset<int64_t> expected;
  for (const auto& b : batches) expected.insert(b.begin(), b.end());

  std::multiset<int64_t> trained;
  int64_t batch_in_epoch = 0;
  const std::vector<std::vector<int64_t>> splits2 = {{6, 6}, {8, 4}, {3, 9}};
  for (; batch_in_epoch < static_cast<int64_t>(batches.size()) / 2; ++batch_in_epoch) {
    const auto& sizes = splits2[static_cast<size_t>(batch_in_epoch) % splits2.size()];
    for (int r = 0; r < 2; ++r)
      for (int64_t x : shard_of(batches[static_cast<size_t>(batch_in_epoch)], sizes, r)) trained.insert(x);
  }
  for (int64_t b = batch_in_epoch; b < static_cast<int64_t>(batches.size()); ++b)
    for (int r = 0; r < 3; ++r)
      for (int64_t x : shard_of(batches[static_cast<size_t>(b)], even_split(global, 3), r)) trained.insert(x);
  EXPECT_EQ(trained, expected);
  for (int64_t x : expected) EXPECT_EQ(expected.count(x), 1u);
}

TEST(Balancer, RebalanceTable) {
  struct Case {
    std::vector<int64_t> sizes;
    std::vector<double> seconds;
    int64_t total, lo, hi;
    std::vector<int64_t> want;
  };
  const std::vector<Case> cases = {
      {{8, 8}, {1.0, 1.0}, 16, 2, 14, {8, 8}},
      {{8, 8}, {1.0, 2.0}, 16, 2, 14, {11, 5}},      // rank 1 half as fast: 2/3 vs 1/3 (10.67 / 5.33)
      {{8, 8}, {1.0, 100.0}, 16, 4, 12, {12, 4}},    // bounded
      {{11, 5}, {1.0, 1.0}, 16, 2, 14, {11, 5}},     // balanced already: stays
      {{4, 4, 4}, {1.0, 1.0, 2.0}, 12, 1, 10, {5, 5, 2}},  // 4.8 4.8 2.4: largest remainders
      {{6, 6}, {0.0, 1.0}, 12, 2, 10, {6, 6}},       // no measurement yet: keeps its share
      {{10, 10}, {1.0, 3.0}, 20, 6, 14, {14, 6}},
  };
  for (const auto& c : cases) {
    const auto got = rebalance(c.sizes, c.seconds, c.total, c.lo, c.hi);
    EXPECT_EQ(got, c.want) << c.sizes[0] << "," << c.sizes[1] << " " << c.seconds[0] << "," << c.seconds[1];
    EXPECT_EQ(std::accumulate(got.begin(), got.end(), int64_t{0}), c.total);
  }
  EXPECT_THROW(rebalance({8, 8}, {1, 1}, 16, 9, 14), ConfigError);
}

TEST(Balancer, DeadbandAndSmoothing) {
  EXPECT_EQ(rebalance({9, 7}, {1.0, 1.02}, 16, 2, 14, 0.03), (std::vector<int64_t>{9, 7}));  // 2 % gap: left alone
  EXPECT_EQ(rebalance({8, 8}, {1.0, 2.0}, 16, 2, 14, 0.03), (std::vector<int64_t>{11, 5}));
  EXPECT_EQ(smooth_cost({}, {10, 5}, {1.0, 1.0}, 0.5), (std::vector<double>{0.1, 0.2}));
  EXPECT_EQ(smooth_cost({0.1, 0.2}, {10, 5}, {3.0, 0.0}, 0.5), (std::vector<double>{0.2, 0.2}));
}

TEST(Balancer, GapAndMedian) {
  EXPECT_DOUBLE_EQ(step_time_gap({1.0, 1.0}), 0.0);
  EXPECT_DOUBLE_EQ(step_time_gap({1.0, 2.0}), 0.5);
  EXPECT_DOUBLE_EQ(median({3, 1, 2}), 2.0);
  EXPECT_DOUBLE_EQ(median({4, 1, 3, 2}), 2.5);
  EXPECT_DOUBLE_EQ(median({}), 0.0);
}

// Converges on a model of a slow replica with a fixed per-step overhead (not purely proportional).
TEST(Balancer, ClosesTheGapOnAModelWithOverhead) {
  std::vector<int64_t> sizes = {16, 16};
  const auto time_of = [](int r, int64_t b) { return (r == 1 ? 2.0 : 1.0) * (0.05 + 0.01 * static_cast<double>(b)); };
  for (int i = 0; i < 6; ++i) sizes = rebalance(sizes, {time_of(0, sizes[0]), time_of(1, sizes[1])}, 32, 4, 28);
  EXPECT_LT(step_time_gap({time_of(0, sizes[0]), time_of(1, sizes[1])}), 0.10) << sizes[0] << "/" << sizes[1];
}

TEST(Launcher, ExitCodeTable) {
  const std::vector<std::pair<std::vector<int>, int>> cases = {
      {{0, 0}, 0},  {{75, 75}, 75}, {{0, 75}, 75}, {{137, 75}, 75}, {{75, 137}, 75},
      {{2, 2}, 2},  {{2, 75}, 2},   {{1, 75}, 1},  {{0, 1}, 1},     {{139, 0}, 75},
  };
  for (const auto& [codes, want] : cases) EXPECT_EQ(combine_replica_exit_codes(codes), want) << codes[0] << "," << codes[1];
}

}  // namespace
}  // namespace ragmig::train
