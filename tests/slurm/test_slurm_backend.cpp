// The Slurm backend against a real Slurm (slurm_cluster.h; one node, or two on this host): `ragmig run --backend
// slurm` submits each attempt with sbatch onto the cluster's GRES, and the job protocol holds there — exit codes,
// logs, a training run with the local backend's weights, Slurm's own requeue and the scheduler's stop resuming
// from checkpoints with every step trained once, gangs as srun tasks on one node or two, a sweep's trials as job
// arrays, and sbatch's refusals named.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <map>

#include "core/atomic_file.h"
#include "sched/sched_fixture.h"
#include "slurm_cluster.h"
#include "support/squad_subset.h"
#include "train/train_fixture.h"

namespace ragmig::testing {
namespace {

class SlurmBackend : public SchedFixture {
 protected:
  void SetUp() override {
    // A skip where Slurm cannot run; a failure where it must (.ci/run sets RAGMIG_REQUIRE_SLURM when it is root).
    const std::string why = SlurmCluster::unavailable();
    if (!why.empty() && std::getenv("RAGMIG_REQUIRE_SLURM")) FAIL() << why;
    if (!why.empty()) GTEST_SKIP() << why;
    cluster_ = std::make_unique<SlurmCluster>();
  }
  void TearDown() override {
    if (cluster_) run_process({find_program("scancel"), "--user=root"});  // nothing outlives the test
    cluster_.reset();
  }

  // `ragmig run --backend slurm` with 2 CPU slots beside the 7 MIG slots, until the queue is empty.
  ProcessResult run_slurm(const std::vector<std::string>& extra = {}) {
    std::vector<std::string> args = {"run", "--backend", "slurm", "--cpu-slots", "2", "--tick", "0.2", "--until-empty"};
    args.insert(args.end(), extra.begin(), extra.end());
    return ragmig(args);
  }

  // The Slurm job id of job `id`'s newest attempt, as `ragmig status` shows it.
  std::string slurm_id(int64_t id) { return job(id)["attempt_list"].back().value("slurm_job", ""); }

  // Loss by step from the progress events of job `id`'s run.
  std::map<int64_t, double> loss_curve(int64_t id) {
    std::map<int64_t, double> curve;
    for (const auto& e : events_of(id))
      if (e["event"] == "progress") curve[e["step"]] = e["loss"].get<double>();
    return curve;
  }
  std::vector<nlohmann::json> events_of(int64_t id) {
    return read_events(job(id)["run_dir"].get<std::string>());
  }
  // The largest loss difference between two runs' curves, each of `steps` steps.
  double worst_loss_gap(int64_t a, int64_t b, size_t steps) {
    const auto x = loss_curve(a), y = loss_curve(b);
    EXPECT_EQ(x.size(), steps);
    EXPECT_EQ(y.size(), steps);
    double worst = x.size() == steps && y.size() == steps ? 0 : 1e9;
    for (const auto& [step, loss] : x)
      if (y.count(step)) worst = std::max(worst, std::abs(loss - y.at(step)));
    return worst;
  }

  std::string train_cmd(int64_t steps) {
    return "ragmig train " + (dir_ / "train.toml").string() + " --quiet --set train.max_steps=" + std::to_string(steps);
  }
  void write_train_config() {
    write_squad_pairs(dir_ / "pairs.jsonl", 200);
    write_file_atomic(dir_ / "train.toml", tiny_config(dir_ / "pairs.jsonl"));
  }

  std::unique_ptr<SlurmCluster> cluster_;
};

TEST_F(SlurmBackend, JobsRunOnTheClustersGresAndFailuresAreNamed) {
  const int64_t mig = submit({"--slots", "1g.18gb:1", "--cmd",
                              "sh -c 'echo $CUDA_VISIBLE_DEVICES $RAGMIG_SLOT $RAGMIG_JOB_ID > $RAGMIG_RUN_DIR/env.txt'"});
  const int64_t fails = submit({"--slots", "cpu:1", "--max-retries", "0", "--cmd", "sh -c 'echo nope; exit 3'"});
  // A gang on MIG slots: one Slurm task per replica, each with a GRES device of its own; rank 1 logs apart.
  const int64_t gang = submit({"--replicas", "2", "--slots", "1g.18gb:1", "--cmd",
                               "sh -c 'echo rank $SLURM_PROCID of $SLURM_NTASKS on $CUDA_VISIBLE_DEVICES $RAGMIG_SLOT'"});
  auto r = run_slurm();
  ASSERT_EQ(r.exit_code, 0) << r.output;

  EXPECT_EQ(job(mig)["state"], "done");
  const std::string env = read_file(std::filesystem::path(job(mig)["run_dir"].get<std::string>()) / "env.txt");
  EXPECT_EQ(env, fmt::format("0 {}:1g.18gb:0 {}\n", cluster_->host(), mig)) << "Slurm's GRES device, ragmig's slot";
  const auto failed = job(fails);
  EXPECT_EQ(failed["state"], "failed");
  EXPECT_NE(failed["reason"].get<std::string>().find("exit code 3"), std::string::npos) << failed.dump(1);
  EXPECT_NE(failed["reason"].get<std::string>().find("log: nope"), std::string::npos) << failed.dump(1);
  const std::string script = read_file(std::filesystem::path(job(mig)["run_dir"].get<std::string>()) / "attempts/1.sbatch");
  EXPECT_NE(script.find("--gres=gpu:1g.18gb:1"), std::string::npos) << script;
  ASSERT_EQ(job(gang)["state"], "done") << job(gang).dump(1);
  const auto gang_run = std::filesystem::path(job(gang)["run_dir"].get<std::string>());
  const std::string rank0 = read_file(gang_run / "worker.log"), rank1 = read_file(gang_run / "worker.rank1.log");
  const auto slots = job(gang)["attempt_list"][0]["slots"];
  ASSERT_EQ(slots.size(), 2u);
  EXPECT_NE(rank0.find("rank 0 of 2 on "), std::string::npos) << rank0;
  EXPECT_EQ(rank1.substr(0, 15), "rank 1 of 2 on ") << rank1;
  const auto device = [](const std::string& line) { return line.substr(line.find(" on ") + 4, 1); };
  EXPECT_NE(device(rank0.substr(rank0.find("rank 0 of 2"))), device(rank1)) << "a device per task";
  EXPECT_NE(rank0.find(slots[0].get<std::string>() + "\n"), std::string::npos) << "RAGMIG_SLOT by rank: " << rank0;
  EXPECT_NE(rank1.find(slots[1].get<std::string>() + "\n"), std::string::npos) << "RAGMIG_SLOT by rank: " << rank1;
  for (const auto& f : std::filesystem::directory_iterator(gang_run / "attempts"))
    if (f.path().extension() == ".sbatch") {
      EXPECT_NE(read_file(f.path()).find("--gpus-per-task=1g.18gb:1"), std::string::npos);
    }

  // sbatch's own refusal, named, and not retried; an unknown partition refused before anything is submitted.
  const int64_t odd = submit({"--slots", "cpu:1", "--cmd", "true"});
  r = run_slurm({"--sbatch=--constraint=nosuchfeature"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto o = job(odd);
  EXPECT_EQ(o["state"], "failed");
  EXPECT_NE(o["reason"].get<std::string>().find("sbatch refused the job: sbatch: error:"), std::string::npos) << o.dump(1);
  EXPECT_EQ(o["attempts"], 1);
  r = run_slurm({"--partition", "nosuchpartition"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("partition nosuchpartition"), std::string::npos) << r.output;
}

TEST_F(SlurmBackend, ATrainingJobGivesTheLocalBackendsWeights) {
  RAGMIG_REQUIRE_DATA("beir/squad-train");
  write_train_config();
  const int64_t on_slurm = submit({"--cmd", train_cmd(30)});
  auto r = run_slurm();
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const int64_t local = submit({"--cmd", train_cmd(30)});
  r = ragmig({"run", "--cpu-slots", "1", "--tick", "0.2", "--until-empty"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ASSERT_EQ(job(on_slurm)["state"], "done") << job(on_slurm).dump(1);
  ASSERT_EQ(job(local)["state"], "done");
  const auto model = [&](int64_t id) {
    return read_file(std::filesystem::path(job(id)["run_dir"].get<std::string>()) / "model/model.safetensors");
  };
  EXPECT_TRUE(model(on_slurm) == model(local)) << "the same job trains the same weights on either backend";
}

// Slurm's own requeue (what a preemption or a node failure does): the worker gets SIGTERM, checkpoints and
// exits 75; Slurm runs the script again and the worker resumes. ragmig sees one attempt that ends done.
TEST_F(SlurmBackend, RequeuedBySlurmItResumesFromItsCheckpoint) {
  RAGMIG_REQUIRE_DATA("beir/squad-train");
  write_train_config();
  const int64_t id = submit({"--cmd", train_cmd(300)});
  auto scheduler = start_scheduler({"--backend", "slurm", "--cpu-slots", "2", "--tick", "0.2", "--until-empty"}, "slurm");
  ASSERT_TRUE(wait_for([&](const auto& s) { return s["jobs"][0]["checkpoint_step"] >= 9; }, 120))
      << status().dump(1) << read_file(dir_ / "scheduler-slurm.log");
  const auto requeue = run_process({find_program("scontrol"), "requeue", slurm_id(id)});
  ASSERT_EQ(requeue.exit_code, 0) << requeue.output;
  EXPECT_EQ(scheduler->wait(), 0) << read_file(dir_ / "scheduler-slurm.log");

  const auto j = job(id);
  EXPECT_EQ(j["state"], "done") << j.dump(1);
  EXPECT_EQ(j["attempts"], 1) << "Slurm's requeue is inside one attempt";
  auto [trained, starts, checkpoint_before] = trained_steps(j["run_dir"].get<std::string>());
  ASSERT_EQ(starts.size(), 2u) << "started by Slurm twice";
  EXPECT_GT(starts[1], 0) << "the second start resumed from a checkpoint";
  for (int64_t step = starts[1] + 1; step <= 300; ++step) EXPECT_EQ(trained[step], 1) << "step " << step;
}

// The scheduler stopped (SIGTERM): its Slurm jobs get SIGTERM through scancel, checkpoint and exit 75, and
// are requeued in ragmig's store; a new `ragmig run --backend slurm` resumes them, every step trained once.
TEST_F(SlurmBackend, AStoppedSchedulerCheckpointsItsJobsAndANewOneResumesThem) {
  RAGMIG_REQUIRE_DATA("beir/squad-train");
  write_train_config();
  const int64_t a = submit({"--cmd", train_cmd(300)}), b = submit({"--cmd", train_cmd(300)});
  auto first = start_scheduler({"--backend", "slurm", "--cpu-slots", "2", "--tick", "0.2"}, "first");
  ASSERT_TRUE(wait_for(
      [&](const auto& s) {
        for (const auto& j : s["jobs"])
          if (j["checkpoint_step"] < 9) return false;
        return true;
      },
      120))
      << status().dump(1) << read_file(dir_ / "scheduler-first.log");
  first->signal(SIGTERM);
  EXPECT_EQ(first->wait(), 0) << read_file(dir_ / "scheduler-first.log");
  for (int64_t id : {a, b}) EXPECT_EQ(job(id)["state"], "queued") << job(id).dump(1);
  const auto squeue = run_process({find_program("squeue"), "-h"});
  EXPECT_EQ(squeue.output, "") << "no Slurm job left behind";

  auto r = run_slurm();
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (int64_t id : {a, b}) {
    const auto j = job(id);
    EXPECT_EQ(j["state"], "done") << j.dump(1);
    EXPECT_EQ(j["attempt_list"][0]["outcome"], "preempted");
    auto [trained, starts, checkpoint_before] = trained_steps(j["run_dir"].get<std::string>());
    ASSERT_EQ(starts.size(), 2u);
    for (int64_t step = starts[1] + 1; step <= 300; ++step) EXPECT_EQ(trained[step], 1) << "job " << id << " step " << step;
    for (int64_t step = 1; step <= starts[1]; ++step) EXPECT_GE(trained[step], 1) << "job " << id << " step " << step;
  }
}

// The scheduler killed outright (SIGKILL: no stop reaches its jobs) and started again adopts the Slurm job it
// had submitted, by the job id in its store: one attempt, never submitted twice, every step trained once.
TEST_F(SlurmBackend, AKilledSchedulerAdoptsItsSlurmJobs) {
  RAGMIG_REQUIRE_DATA("beir/squad-train");
  write_train_config();
  const int64_t id = submit({"--cmd", train_cmd(400)});
  auto first = start_scheduler({"--backend", "slurm", "--cpu-slots", "2", "--tick", "0.2"}, "killed");
  ASSERT_TRUE(wait_for([&](const auto& s) { return s["jobs"][0]["step"] >= 10; }, 120))
      << status().dump(1) << read_file(dir_ / "scheduler-killed.log");
  first->signal(SIGKILL);
  first->wait();
  auto r = run_slurm();
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto j = job(id);
  EXPECT_EQ(j["state"], "done") << j.dump(1);
  EXPECT_EQ(j["attempts"], 1) << "adopted, not submitted again";
  auto [trained, starts, checkpoint_before] = trained_steps(j["run_dir"].get<std::string>());
  EXPECT_EQ(starts.size(), 1u);
  for (int64_t step = 1; step <= 400; ++step) EXPECT_EQ(trained[step], 1) << "step " << step;
}

// Slurm's daemons go away mid-run and come back: running jobs go on under their slurmstepd, a job submitted
// meanwhile waits (sbatch cannot reach the controller: not the job's fault) and is submitted once it answers;
// nothing is lost and no step is trained twice.
TEST_F(SlurmBackend, TheDaemonsGoingAwayAndComingBackLoseNothing) {
  RAGMIG_REQUIRE_DATA("beir/squad-train");
  write_train_config();
  const int64_t a = submit({"--cmd", train_cmd(600)});
  auto scheduler = start_scheduler({"--backend", "slurm", "--cpu-slots", "2", "--tick", "0.2", "--until-empty",
                                    "--backoff", "1"}, "daemons");
  ASSERT_TRUE(wait_for([&](const auto& s) { return s["jobs"][0]["checkpoint_step"] >= 9; }, 120))
      << status().dump(1) << read_file(dir_ / "scheduler-daemons.log");
  cluster_->stop_daemons();
  const int64_t b = submit({"--cmd", train_cmd(30)});
  // Down until the scheduler has tried to submit the new job (squeue and sbatch wait out their own timeouts).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(90);
  while (read_file(dir_ / "scheduler-daemons.log").find("the attempt could not start: sbatch:") == std::string::npos &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  cluster_->start_daemons();
  EXPECT_EQ(scheduler->wait(), 0) << read_file(dir_ / "scheduler-daemons.log");
  const std::string log = read_file(dir_ / "scheduler-daemons.log");
  EXPECT_NE(log.find("the attempt could not start: sbatch:"), std::string::npos) << log;
  for (int64_t id : {a, b}) {
    const auto j = job(id);
    EXPECT_EQ(j["state"], "done") << j.dump(1);
    EXPECT_EQ(j["failures"], 0) << j.dump(1);
  }
  // b's tries while the controller was away never started: "unavailable", which no crash_loop alert counts.
  const auto attempts = job(b)["attempt_list"];
  ASSERT_GE(attempts.size(), 2u) << attempts.dump(1);
  for (size_t k = 0; k + 1 < attempts.size(); ++k) EXPECT_EQ(attempts[k]["outcome"], "unavailable") << attempts.dump(1);
  EXPECT_EQ(attempts.back()["outcome"], "done");
  auto [trained, starts, checkpoint_before] = trained_steps(job(a)["run_dir"].get<std::string>());
  EXPECT_EQ(starts.size(), 1u) << "the running job was never interrupted";
  for (int64_t step = 1; step <= 600; ++step) EXPECT_EQ(trained[step], 1) << "step " << step;
}

// A data-parallel job (`--replicas 2`) as one Slurm job on one node: srun starts both ranks as the job's tasks,
// and in sync mode they follow one process with the combined batch.
TEST_F(SlurmBackend, TwoReplicasInOneSlurmJobFollowOneProcess) {
  RAGMIG_REQUIRE_DATA("beir/squad-train");
  write_train_config();
  const std::string exact = " --set model.dropout=0 --set train.precision=fp32 --set train.log_every=1";
  const int64_t gang = submit({"--replicas", "2", "--slots", "cpu:1", "--cmd", train_cmd(20) + exact});
  const int64_t one = submit({"--slots", "cpu:1", "--cmd", train_cmd(20) + exact});
  auto r = run_slurm();
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ASSERT_EQ(job(gang)["state"], "done") << job(gang).dump(1);
  for (const auto& e : events_of(gang))
    if (e["event"] == "start") {
      EXPECT_EQ(e["parallel"]["replicas"], 2);
      EXPECT_EQ(e["parallel"]["rendezvous"], "slurm") << "ranks from srun's SLURM_PROCID/SLURM_NTASKS";
    }
  const double worst = worst_loss_gap(gang, one, 20);
  std::printf("2 replicas in one Slurm job vs 1 process, 20 steps: max |loss diff| = %.3g\n", worst);
  EXPECT_LT(worst, 1e-4);
  const auto run = std::filesystem::path(job(gang)["run_dir"].get<std::string>());
  const std::string script = read_file(run / "attempts/1.sbatch");
  EXPECT_NE(script.find("--ntasks=2 --requeue --signal=TERM@120"), std::string::npos) << script;
  EXPECT_NE(script.find("-- srun --kill-on-bad-exit=1 "), std::string::npos) << script;
  EXPECT_TRUE(std::filesystem::exists(run / "worker.rank1.log")) << "rank 1 logs beside rank 0's worker.log";
}

// A gang over two nodes (a second node daemon on this host, one CPU each): the scheduler's slots lie on both, so
// the job may take two nodes, and Slurm places one task on each; the ranks meet at the first node of the step
// and follow one process with the combined batch, as on one node.
TEST_F(SlurmBackend, AGangAcrossTwoNodesFollowsOneProcess) {
  RAGMIG_REQUIRE_DATA("beir/squad-train");
  cluster_.reset();
  cluster_ = std::make_unique<SlurmCluster>(2);
  write_train_config();
  const std::string exact = " --set model.dropout=0 --set train.precision=fp32 --set train.log_every=1";
  const int64_t gang = submit({"--replicas", "2", "--slots", "cpu:1", "--cmd", train_cmd(20) + exact});
  const int64_t one = submit({"--slots", "cpu:1", "--cmd", train_cmd(20) + exact});
  auto r = ragmig({"run", "--backend", "slurm", "--cpu-slots", "1", "--tick", "0.2", "--until-empty"});  // one per node
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ASSERT_EQ(job(gang)["state"], "done") << job(gang).dump(1);
  const auto nodes = run_process({find_program("squeue"), "-h", "-t", "all", "-j", slurm_id(gang), "-o", "%N"});
  EXPECT_EQ(nodes.output, fmt::format("{0},{0}b\n", cluster_->host())) << "one task on each node";
  for (const auto& e : events_of(gang))
    if (e["event"] == "start") {
      EXPECT_EQ(e["parallel"]["master"].get<std::string>().substr(0, cluster_->host().size() + 1), cluster_->host() + ":")
          << "rank 0 listens on the first node of the step";
    }
  const double worst = worst_loss_gap(gang, one, 20);
  std::printf("2 replicas on 2 Slurm nodes vs 1 process, 20 steps: max |loss diff| = %.3g\n", worst);
  EXPECT_LT(worst, 1e-4);
}

// A gang stopped with its scheduler: SIGTERM reaches both tasks as the job's steps (scancel --signal=TERM; srun
// itself would end its step); they checkpoint and exit 75, and a new scheduler resumes the gang with every
// step trained once.
TEST_F(SlurmBackend, AStoppedGangCheckpointsThroughSrunAndResumes) {
  RAGMIG_REQUIRE_DATA("beir/squad-train");
  write_train_config();
  const int64_t gang = submit({"--replicas", "2", "--slots", "cpu:1", "--cmd", train_cmd(300)});
  auto first = start_scheduler({"--backend", "slurm", "--cpu-slots", "2", "--tick", "0.2"}, "first");
  ASSERT_TRUE(wait_for([&](const auto& s) { return s["jobs"][0]["checkpoint_step"] >= 9; }, 120))
      << status().dump(1) << read_file(dir_ / "scheduler-first.log");
  first->signal(SIGTERM);
  EXPECT_EQ(first->wait(), 0) << read_file(dir_ / "scheduler-first.log");
  EXPECT_EQ(job(gang)["state"], "queued") << job(gang).dump(1);
  EXPECT_EQ(run_process({find_program("squeue"), "-h"}).output, "") << "no Slurm job left behind";

  auto r = run_slurm();
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto j = job(gang);
  EXPECT_EQ(j["state"], "done") << j.dump(1);
  EXPECT_EQ(j["attempt_list"][0]["outcome"], "preempted") << "exit 75 from both tasks through srun";
  auto [trained, starts, checkpoint_before] = trained_steps(j["run_dir"].get<std::string>());
  ASSERT_EQ(starts.size(), 2u);
  EXPECT_GT(starts[1], 0) << "resumed from a checkpoint";
  for (int64_t step = starts[1] + 1; step <= 300; ++step) EXPECT_EQ(trained[step], 1) << "step " << step;
}

// A sweep (`ragmig batch --backend slurm --array-limit 1`): the trials started together go as one job array,
// whose tasks Slurm runs one at a time; each evaluation is a job too; the same results.json as the local
// backend, trial by trial, and a second `ragmig batch` on the finished state submits nothing.
TEST_F(SlurmBackend, ASweepGivesTheLocalBackendsResults) {
  RAGMIG_REQUIRE_DATA("beir/squad-train");
  write_squad_subset(dir_ / "beir");
  write_file_atomic(dir_ / "base.toml", "[data]\nbeir = \"" + (dir_ / "beir").string() +
                                            "\"\nmax_query_tokens = 24\nmax_passage_tokens = 48\n"
                                            "[model]\nvocab_size = 2000\nhidden_size = 64\nlayers = 1\nheads = 2\n"
                                            "intermediate_size = 128\n"
                                            "[train]\nmax_steps = 30\nbatch_size = 32\nwarmup_steps = 0\nlog_every = 5\n"
                                            "checkpoint_every = 10\n[eval]\nk = 10\n");
  write_file_atomic(dir_ / "sweep.toml", "[sweep]\nname = \"slurm\"\nbase = \"base.toml\"\nsearch = \"grid\"\n"
                                             "[space]\n\"train.lr\" = { choice = [5e-3, 1e-3] }\n"
                                             "\"train.seed\" = { choice = [1, 2] }\n"
                                             "[eval]\ndata = \"" + (dir_ / "beir").string() + "\"\nsplit = \"test\"\n"
                                             "metric = \"ndcg@10\"\nmax_queries = 50\n"
                                             "[slurm]\nsbatch = [\"--comment=from-the-sweep-file\"]\n");
  const auto sweep = [&](const std::string& state, const std::vector<std::string>& backend) {
    std::vector<std::string> argv = {RAGMIG_BINARY, "batch", (dir_ / "sweep.toml").string(), "--state",
                                     (dir_ / state).string(), "--cpu-slots", "2", "--tick", "0.2"};
    argv.insert(argv.end(), backend.begin(), backend.end());
    return run_process(argv);
  };
  auto r = sweep("on-slurm", {"--backend", "slurm", "--array-limit", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // The trials of each array (ids "<array>_<task>" beside the attempts) and when each trained: first to last event.
  std::map<std::string, std::vector<std::pair<double, double>>> arrays;
  for (const auto& f : std::filesystem::recursive_directory_iterator(dir_ / "on-slurm")) {
    if (f.path().extension() != ".slurm-id") continue;
    const std::string id = read_file(f.path());
    const auto events_file = f.path().parent_path().parent_path() / "events.jsonl";
    if (id.find('_') == std::string::npos || !std::filesystem::exists(events_file)) continue;  // evaluations: no events
    const std::string events = read_file(events_file);
    const auto first = nlohmann::json::parse(events.substr(0, events.find('\n')));
    const auto last = nlohmann::json::parse(events.substr(events.rfind('\n', events.size() - 2) + 1));
    arrays[id.substr(0, id.find('_'))].push_back({first["time"], last["time"]});
  }
  size_t most = 0;  // an evaluation started beside a trial shares its array
  for (const auto& [array, tasks] : arrays) most = std::max(most, tasks.size());
  EXPECT_EQ(most, 2u) << "2 CPU slots: the first two trials started together, as one job array";
  for (auto& [array, tasks] : arrays) {
    std::sort(tasks.begin(), tasks.end());
    for (size_t i = 1; i < tasks.size(); ++i)
      EXPECT_GE(tasks[i].first, tasks[i - 1].second) << "--array-limit 1: array " << array << "'s tasks one at a time";
  }
  r = sweep("local", {});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto slurm = nlohmann::json::parse(read_file(dir_ / "on-slurm/results.json"));
  const auto local = nlohmann::json::parse(read_file(dir_ / "local/results.json"));
  ASSERT_EQ(slurm["trials"].size(), 4u) << slurm.dump(1);
  for (size_t i = 0; i < 4; ++i) {
    const auto &a = slurm["trials"][i], &b = local["trials"][i];
    EXPECT_EQ(a["id"], b["id"]);
    EXPECT_EQ(a["state"], "done") << a.dump(1);
    EXPECT_EQ(a["params"], b["params"]);
    ASSERT_TRUE(a["metric"].is_number()) << a.dump(1);
    EXPECT_EQ(a["metric"], b["metric"]) << "trial " << a["id"];
  }
  EXPECT_NE(read_file(dir_ / "on-slurm/report.html").find("Slurm"), std::string::npos) << "the report says where it ran";
  bool told = false;  // the sweep's [slurm] table reached sbatch
  for (const auto& f : std::filesystem::recursive_directory_iterator(dir_ / "on-slurm"))
    if (f.path().extension() == ".sbatch") told = told || read_file(f.path()).find("--comment=from-the-sweep-file") != std::string::npos;
  EXPECT_TRUE(told);

  const auto squeue_before = run_process({find_program("squeue"), "-h", "-t", "all", "-o", "%i"}).output;
  r = sweep("on-slurm", {"--backend", "slurm", "--array-limit", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(run_process({find_program("squeue"), "-h", "-t", "all", "-o", "%i"}).output, squeue_before)
      << "a finished sweep run again submits nothing";
}

}  // namespace
}  // namespace ragmig::testing
