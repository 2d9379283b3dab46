// The scheduler's monitoring for real: `ragmig run` with --metrics-port and [alerts], jobs that fault on
// purpose (a worker that stops reporting while a job waits, a trainer whose loss becomes NaN, a trainer that
// runs out of memory, a command that crashes over and over), /metrics scraped over HTTP and parsed by the
// real prometheus-client (and promtool where installed), alerts seen by `ragmig status` and by the exec hook.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>

#include "core/atomic_file.h"
#include "sched/sched_fixture.h"
#include "support/sanitizers.h"
#include "support/squad_subset.h"

namespace ragmig::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

bool python_has_prometheus_client() {
  static const bool ok = run_process({RAGMIG_PYTHON_PATH, "-c", "import prometheus_client"}).exit_code == 0;
  return ok;
}

bool have_promtool() {
  static const bool ok = run_process({"/bin/sh", "-c", "command -v promtool"}).exit_code == 0;
  return ok;
}

class MonitorCli : public SchedFixture {
 protected:
  std::string hook_file() const { return (dir_ / "hook.jsonl").string(); }

  std::string write_alerts(const std::string& keys) {
    const fs::path path = dir_ / "alerts.toml";
    write_file_atomic(path, "[alerts]\nexec = \"cat >> '" + hook_file() + "'\"\ninterval_s = 0.2\n" + keys);
    return path.string();
  }

  /// The exec hook's JSON lines so far.
  std::vector<json> hook_lines() {
    std::vector<json> out;
    std::ifstream in(hook_file());
    std::string line;
    while (std::getline(in, line)) {
      const auto j = json::parse(line, nullptr, false);
      if (!j.is_discarded()) out.push_back(j);
    }
    return out;
  }

  /// The first hook line of `rule` in `state` ("firing" or "cleared"), or null.
  json hook_line(const std::string& rule, const std::string& state) {
    for (const auto& j : hook_lines())
      if (j["rule"] == rule && j["state"] == state) return j;
    return nullptr;
  }

  bool wait_for_hook(const std::vector<std::pair<std::string, std::string>>& wanted, double seconds) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (std::chrono::steady_clock::now() < deadline) {
      bool all = true;
      for (const auto& [rule, state] : wanted) all = all && !hook_line(rule, state).is_null();
      if (all) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    return false;
  }

  /// /metrics parsed by prometheus-client: sample name -> [{labels, value}].
  json scrape(const std::string& url) {
    const auto r = run_process({RAGMIG_PYTHON_PATH, RAGMIG_SOURCE_DIR "/tests/monitor/scrape.py", url});
    EXPECT_EQ(r.exit_code, 0) << r.output;
    if (have_promtool()) {
      const auto lint = run_process({"/bin/sh", "-c",
                                     std::string("'") + RAGMIG_PYTHON_PATH + "' '" + RAGMIG_SOURCE_DIR +
                                         "/tests/monitor/scrape.py' --raw '" + url + "' | promtool check metrics"});
      EXPECT_EQ(lint.exit_code, 0) << "promtool check metrics: " << lint.output;
    }
    return json::parse(r.output);
  }

  static std::optional<double> value(const json& metrics, const std::string& name,
                                     const std::map<std::string, std::string>& labels = {}) {
    if (!metrics.contains(name)) return std::nullopt;
    for (const auto& s : metrics[name]) {
      bool match = true;
      for (const auto& [k, v] : labels) match = match && s["labels"].value(k, std::string("\x01")) == v;
      if (match) return s["value"].get<double>();
    }
    return std::nullopt;
  }

  static std::vector<std::string> firing_rules(const json& status) {
    std::vector<std::string> out;
    for (const auto& a : status["alerts"]) out.push_back(a["rule"]);
    return out;
  }

  static bool has(const std::vector<std::string>& v, const std::string& x) {
    return std::find(v.begin(), v.end(), x) != v.end();
  }
};

// A worker that reports four steps, the last with 16x its loss, then sleeps holding the only slot while another
// job waits: loss_exploding, stall and slot_idle fire, and deadline (the queue cannot finish by 1970); all four
// clear once the queue is done.
TEST_F(MonitorCli, StallIdleSlotAndDeadlineFireAndClearOnARealScheduler) {
  if (!python_has_prometheus_client()) {
    if (std::getenv("RAGMIG_REQUIRE_PYTHON")) FAIL() << RAGMIG_PYTHON_PATH << " lacks prometheus-client";
    GTEST_SKIP() << RAGMIG_PYTHON_PATH << " lacks prometheus-client";
  }
  const std::string alerts = write_alerts("stall_factor = 3\nstall_min_s = 1\nidle_s = 1\ndeadline = 1000\n");
  write_file_atomic(dir_ / "worker.sh",
                    "ev() { echo \"$1\" >> \"$RAGMIG_RUN_DIR/events.jsonl\"; }\n"
                    "ev '{\"event\":\"start\",\"step\":0,\"config\":{\"train\":{\"max_steps\":100}}}'\n"
                    "for s in 1 2 3 4; do sleep 0.3; loss=2.5; [ $s = 4 ] && loss=40; "
                    "ev \"{\\\"event\\\":\\\"progress\\\",\\\"step\\\":$s,\\\"loss\\\":$loss,"
                    "\\\"samples_per_s\\\":10,\\\"time\\\":$(date +%s.%N)}\"; done\n"
                    "sleep 10\n");
  const int64_t sleepy = submit({"--cmd", "sh " + (dir_ / "worker.sh").string(), "--name", "sleepy"});
  const int64_t waiter = submit({"--cmd", "sleep 0.5", "--name", "waiter"});
  auto scheduler = start_scheduler({"--cpu-slots", "1", "--until-empty", "--tick", "0.2", "--alerts", alerts,
                                    "--metrics-port", "0"},
                                   "faults");
  json seen;
  ASSERT_TRUE(wait_for(
      [&](const json& s) {
        seen = s;
        const auto r = firing_rules(s);
        return has(r, "stall") && has(r, "slot_idle") && has(r, "deadline") && has(r, "loss_exploding");
      },
      30))
      << seen.dump(1) << read_file(dir_ / "scheduler-faults.log");
  for (const auto& a : seen["alerts"]) {
    if (a["rule"] == "stall") {
      EXPECT_EQ(a["job"], sleepy);
      EXPECT_EQ(a["slot"], "cpu:0");
      EXPECT_GE(a["value"].get<double>(), a["threshold"].get<double>());
    }
    if (a["rule"] == "slot_idle") {
      EXPECT_NE(a["message"].get<std::string>().find("1 job(s) wait"), std::string::npos) << a;
    }
  }

  const std::string url = seen["scheduler"].value("metrics_url", "");
  ASSERT_FALSE(url.empty()) << seen.dump(1);
  const json m = scrape(url);
  EXPECT_EQ(value(m, "ragmig_alerts_firing", {{"rule", "stall"}}), 1.0);
  EXPECT_EQ(value(m, "ragmig_alerts_firing", {{"rule", "slot_idle"}}), 1.0);
  EXPECT_EQ(value(m, "ragmig_alerts_firing", {{"rule", "oom"}}), 0.0);
  EXPECT_EQ(value(m, "ragmig_alerts_total", {{"rule", "deadline"}}), 1.0);
  EXPECT_EQ(value(m, "ragmig_jobs", {{"state", "queued"}}), 1.0);
  EXPECT_EQ(value(m, "ragmig_jobs", {{"state", "running"}}), 1.0);
  EXPECT_EQ(value(m, "ragmig_queue_waiting_jobs"), 1.0);
  EXPECT_EQ(value(m, "ragmig_job_step", {{"name", "sleepy"}, {"slot", "cpu:0"}}), 4.0);
  EXPECT_EQ(value(m, "ragmig_job_max_steps", {{"job_id", std::to_string(sleepy)}}), 100.0);
  EXPECT_EQ(value(m, "ragmig_job_loss", {{"job_id", std::to_string(sleepy)}}), 40.0);
  EXPECT_EQ(value(m, "ragmig_alert_firing_since_timestamp_seconds",
                  {{"rule", "loss_exploding"}, {"job_id", std::to_string(sleepy)}, {"slot", "cpu:0"}})
                .has_value(),
            true);
  EXPECT_GT(value(m, "ragmig_job_last_progress_age_seconds", {{"job_id", std::to_string(sleepy)}}).value_or(0), 1.0);
  EXPECT_GT(value(m, "ragmig_queue_finish_timestamp_seconds").value_or(0), 1e9);
  EXPECT_EQ(value(m, "ragmig_queue_deadline_timestamp_seconds"), 1000.0);
  EXPECT_EQ(value(m, "ragmig_slot_busy", {{"slot", "cpu:0"}, {"kind", "cpu"}}), 1.0);
  EXPECT_LT(value(m, "ragmig_slot_utilization_ratio", {{"slot", "cpu:0"}}).value_or(1), 0.1);
  EXPECT_GT(value(m, "ragmig_scheduler_pass_duration_seconds_count").value_or(0), 5.0);
  EXPECT_GT(value(m, "ragmig_host_memory_total_bytes").value_or(0), 1e8);

  // status --watch: piped, one plain overview after another; on a terminal (script(1) gives it one), redrawn in
  // place: the screen is cleared once, then each frame goes home and clears each line's end.
  const auto piped = ragmig({"status", "--watch", "--count", "2", "--interval", "0.2"});
  EXPECT_EQ(piped.exit_code, 0) << piped.output;
  EXPECT_EQ(piped.output.find('\x1b'), std::string::npos) << piped.output;
  EXPECT_NE(piped.output.find("ALERTS"), std::string::npos) << piped.output;
  EXPECT_NE(piped.output.find("scheduler: running"), piped.output.rfind("scheduler: running")) << "two frames";
  if (run_process({"/bin/sh", "-c", "command -v script"}).exit_code == 0) {
    const auto tty = run_process({"/usr/bin/script", "-qec",
                                  std::string(RAGMIG_BINARY) + " status --watch --count 2 --interval 0.2 --state " + state(),
                                  "/dev/null"});
    EXPECT_EQ(tty.exit_code, 0) << tty.output;
    const auto count = [&](const std::string& what) {
      size_t n = 0;
      for (size_t at = tty.output.find(what); at != std::string::npos; at = tty.output.find(what, at + 1)) ++n;
      return n;
    };
    EXPECT_EQ(count("\x1b[2J"), 1u) << tty.output;
    EXPECT_EQ(count("\x1b[H"), 2u) << tty.output;
    EXPECT_GT(count("\x1b[K"), 6u) << tty.output;
  }

  ASSERT_TRUE(scheduler->wait_exit(40)) << read_file(dir_ / "scheduler-faults.log");
  EXPECT_EQ(state_of(status(), waiter), "done");
  // Each fired once and cleared once; the hook heard both, in order.
  for (const std::string rule : {"stall", "slot_idle", "deadline", "loss_exploding"}) {
    int fired = 0, cleared = 0;
    for (const auto& j : hook_lines()) {
      if (j["rule"] != rule) continue;
      if (j["state"] == "firing") {
        EXPECT_EQ(cleared, fired) << "fired twice: " << j;
      }
      (j["state"] == "firing" ? fired : cleared)++;
    }
    EXPECT_EQ(fired, 1) << rule;
    EXPECT_EQ(cleared, 1) << rule;
  }
  EXPECT_TRUE(status()["alerts"].empty()) << status().dump(1);
  const std::string text = ragmig({"status"}).output;
  EXPECT_EQ(text.find("ALERTS"), std::string::npos) << text;
}

// Real faults of real jobs: a trainer whose loss becomes NaN, one that runs out of memory (under ulimit -v),
// and a command that fails on every attempt. Each alert fires, names its job, and clears once the failed job
// is forgotten (forget_after_s).
TEST_F(MonitorCli, NanLossOutOfMemoryAndCrashLoopFromRealJobs) {
  RAGMIG_REQUIRE_DATA("beir/squad-train");
  RAGMIG_SKIP_UNDER_SANITIZER("its shadow memory cannot be mapped under ulimit -v, so the job dies before it trains");
  write_squad_subset(dir_ / "beir");
  write_file_atomic(dir_ / "train.toml",
                    "[data]\nbeir = \"" + (dir_ / "beir").string() +
                        "\"\nmax_query_tokens = 24\nmax_passage_tokens = 48\n"
                        "[model]\nvocab_size = 2000\nhidden_size = 64\nlayers = 1\nheads = 2\nintermediate_size = 128\n"
                        "[train]\nmax_steps = 200\nbatch_size = 32\nwarmup_steps = 0\nlog_every = 1\nthreads = 1\n"
                        "[eval]\nsplit = \"\"\n");
  const std::string alerts = write_alerts("forget_after_s = 4\ncrash_loop_window_s = 60\n");
  const std::string train = std::string(RAGMIG_BINARY) + " train " + (dir_ / "train.toml").string();
  const int64_t nan = submit({"--cmd", train + " --set train.lr=1e4", "--name", "nan", "--max-retries", "0"});
  // A wide model on passages of 512 tokens needs gigabytes for one step; 3 GB of address space is enough to
  // start, load the data and build it.
  const int64_t oom = submit({"--cmd", "sh -c \"ulimit -v 3000000; exec " + train +
                                           " --set model.hidden_size=1024 --set model.intermediate_size=16384"
                                           " --set data.max_passage_tokens=512 --set train.batch_size=48\"",
                              "--name", "oom", "--max-retries", "0"});
  const int64_t crash = submit({"--cmd", "sh -c \"echo boom; exit 3\"", "--name", "crash", "--max-retries", "3"});
  auto scheduler = start_scheduler({"--cpu-slots", "2", "--tick", "0.2", "--backoff", "0.2", "--alerts", alerts}, "real");
  const bool all = wait_for_hook({{"loss_not_finite", "firing"}, {"oom", "firing"}, {"crash_loop", "firing"},
                                  {"loss_not_finite", "cleared"}, {"oom", "cleared"}, {"crash_loop", "cleared"}},
                                 180);
  scheduler->signal(SIGTERM);
  ASSERT_TRUE(scheduler->wait_exit(60));
  std::string hook;
  for (const auto& j : hook_lines()) hook += j.dump() + "\n";
  ASSERT_TRUE(all) << hook << read_file(dir_ / "scheduler-real.log");
  EXPECT_EQ(hook_line("loss_not_finite", "firing")["job"], nan) << hook;
  EXPECT_NE(hook_line("loss_not_finite", "firing")["message"].get<std::string>().find("nan"), std::string::npos) << hook;
  EXPECT_EQ(hook_line("oom", "firing")["job"], oom) << hook;
  EXPECT_NE(hook_line("oom", "firing")["message"].get<std::string>().find("allocate"), std::string::npos) << hook;
  EXPECT_EQ(hook_line("crash_loop", "firing")["job"], crash) << hook;
  EXPECT_EQ(hook_line("crash_loop", "firing")["threshold"], 3.0) << hook;
  const json s = status();
  EXPECT_EQ(state_of(s, nan), "failed");
  EXPECT_EQ(state_of(s, oom), "failed");
  EXPECT_EQ(state_of(s, crash), "failed");
  EXPECT_NE(job(oom)["reason"].get<std::string>().find("out of memory"), std::string::npos) << job(oom).dump(1);
  EXPECT_TRUE(s["alerts"].empty()) << s.dump(1);
}

// A real sweep (`ragmig batch`, two tiny trials on two CPU slots) scraped over HTTP while it runs: every scrape
// parses, the trials' steps and the done count move, and the report lists the alert the sweep's own [alerts]
// table provoked (a deadline long past).
TEST_F(MonitorCli, SweepMetricsMoveWhileItRunsAndTheReportListsAlerts) {
  RAGMIG_REQUIRE_DATA("beir/squad-train");
  if (!python_has_prometheus_client()) {
    if (std::getenv("RAGMIG_REQUIRE_PYTHON")) FAIL() << RAGMIG_PYTHON_PATH << " lacks prometheus-client";
    GTEST_SKIP() << RAGMIG_PYTHON_PATH << " lacks prometheus-client";
  }
  write_squad_subset(dir_ / "beir");
  write_file_atomic(dir_ / "base.toml",
                    "[data]\nbeir = \"" + (dir_ / "beir").string() +
                        "\"\nmax_query_tokens = 24\nmax_passage_tokens = 48\n"
                        "[model]\nvocab_size = 2000\nhidden_size = 64\nlayers = 1\nheads = 2\nintermediate_size = 128\n"
                        "[train]\nmax_steps = 150\nbatch_size = 32\nwarmup_steps = 0\nlog_every = 5\n[eval]\nk = 10\n");
  write_file_atomic(dir_ / "sweep.toml", "[sweep]\nname = \"watched\"\nbase = \"base.toml\"\nsearch = \"grid\"\n"
                                         "[space]\n\"train.lr\" = { choice = [5e-3, 1e-3] }\n"
                                         "[eval]\ndata = \"" + (dir_ / "beir").string() + "\"\nsplit = \"test\"\n"
                                         "metric = \"ndcg@10\"\n"
                                         "[alerts]\ninterval_s = 0.2\ndeadline = 1000\n");
  const fs::path sweep_state = dir_ / "sweep-state";
  BackgroundProcess batch({RAGMIG_BINARY, "batch", (dir_ / "sweep.toml").string(), "--state", sweep_state.string(),
                           "--cpu-slots", "2", "--tick", "0.2", "--metrics-port", "0"},
                          (dir_ / "batch.log").string());
  std::string url;
  std::vector<json> scrapes;
  while (batch.running()) {
    if (url.empty() && fs::exists(sweep_state / "state.db")) {
      const auto r = run_process({RAGMIG_BINARY, "status", "--json", "--state", sweep_state.string()});
      const auto s = json::parse(r.output, nullptr, false);
      if (!s.is_discarded()) url = s["scheduler"].value("metrics_url", "");
    }
    if (!url.empty()) {
      const auto r = run_process({RAGMIG_PYTHON_PATH, RAGMIG_SOURCE_DIR "/tests/monitor/scrape.py", url});
      // Refused once the sweep has finished is its shutdown (the server closes before the process ends: a window
      // ThreadSanitizer's slower exit widens); before that, a failure.
      if (r.exit_code == 0) scrapes.push_back(json::parse(r.output));
      else if (batch.running() && read_file(dir_ / "batch.log").find("sweep finished") == std::string::npos)
        ADD_FAILURE() << "a scrape failed while the sweep ran: " << r.output;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
  }
  ASSERT_EQ(batch.wait(), 0) << read_file(dir_ / "batch.log");
  ASSERT_GE(scrapes.size(), 3u) << read_file(dir_ / "batch.log");
  // Steps of one job seen growing between scrapes, and more jobs done at the end than at the start.
  std::map<std::string, std::vector<double>> steps;
  for (const auto& m : scrapes)
    if (m.contains("ragmig_job_step"))
      for (const auto& s : m["ragmig_job_step"]) steps[s["labels"]["job_id"].get<std::string>()].push_back(s["value"]);
  bool grew = false;
  for (const auto& [job_id, seen] : steps) grew = grew || (seen.size() >= 2 && seen.back() > seen.front());
  EXPECT_TRUE(grew) << "no job's step moved across " << scrapes.size() << " scrapes";
  const auto done = [&](const json& m) { return value(m, "ragmig_jobs", {{"state", "done"}}).value_or(-1); };
  EXPECT_GT(done(scrapes.back()), done(scrapes.front()));
  // The trials' work priced at the rate their progress measured: the rate, and running trials' estimates.
  bool rate = false, estimate = false;
  for (const auto& m : scrapes) {
    rate = rate || value(m, "ragmig_work_rate_flops_per_second").value_or(0) > 1e6;
    estimate = estimate || (m.contains("ragmig_job_estimate_seconds") && !m["ragmig_job_estimate_seconds"].empty() &&
                            m["ragmig_job_estimate_seconds"][0]["value"].get<double>() > 0);
  }
  EXPECT_TRUE(rate) << "no scrape had the measured work rate";
  EXPECT_TRUE(estimate) << "no scrape had a running trial's estimate";
  EXPECT_GE(value(scrapes.front(), "ragmig_alerts_total", {{"rule", "deadline"}}).value_or(-1), 0.0);
  // Every ragmig series the shipped alert rules and dashboard query is one a real sweep serves (a metric renamed
  // in the code would leave them querying nothing, while promtool's own checks of examples/monitoring pass). Slot
  // memory is served for GPU slots only: MonitorGpu.MigSlotsCarryDcgmLabelsAndMemoryHighFiresAndClears scrapes it.
  std::set<std::string> served = {"ragmig_slot_memory_used_bytes", "ragmig_slot_memory_total_bytes"};
  for (const auto& m : scrapes)
    for (const auto& [name, samples] : m.items()) served.insert(name);
  const std::regex metric_name("\\bragmig_[A-Za-z0-9_]+");
  for (const char* file : {"ragmig-alerts.yml", "grafana-dashboard.json"}) {
    const std::string text = read_file(fs::path(RAGMIG_SOURCE_DIR) / "examples/monitoring" / file);
    size_t named = 0;
    for (std::sregex_iterator it(text.begin(), text.end(), metric_name), end; it != end; ++it, ++named)
      EXPECT_TRUE(served.count(it->str()) || served.count(it->str() + "_bucket"))  // a histogram by its family name
          << file << " queries " << it->str() << ", which no scrape of the sweep served";
    EXPECT_GT(named, 5u) << file;
  }
  const std::string report = read_file(sweep_state / "report.html");
  EXPECT_NE(report.find("<h2>Alerts</h2>"), std::string::npos);
  EXPECT_NE(report.find(">deadline<"), std::string::npos) << "the deadline alert is not in the report";
}

}  // namespace
}  // namespace ragmig::testing
