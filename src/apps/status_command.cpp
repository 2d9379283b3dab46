// `ragmig status [ID] [--json] [--watch]`: jobs (state, slot, attempts, progress, loss and ETA from their
// events), slots (who runs there, utilisation), the alerts firing and whether a scheduler is running; with an
// id, that job's attempts and history. --watch redraws the overview in place until Ctrl-C.
#include <unistd.h>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <chrono>
#include <cmath>
#include <thread>

#include "apps/command.h"
#include "core/error.h"
#include "core/file_lock.h"
#include "core/shell_words.h"
#include "core/stop_signal.h"
#include "exec/slurm_executor.h"
#include "monitor/alert.h"
#include "monitor/job_watch.h"
#include "report/svg.h"
#include "sched/clock.h"
#include "sched/store.h"

namespace ragmig::apps {
namespace {

nlohmann::json job_json(const sched::JobRecord& j) {
  nlohmann::json out = {{"id", j.id},
                        {"name", j.spec.name},
                        {"state", sched::to_string(j.state)},
                        {"priority", j.spec.priority},
                        {"slots_needed", sched::to_string(j.spec.need)},
                        {"slots", j.slots},
                        {"attempts", j.attempts},
                        {"failures", j.failures},
                        {"step", j.step},
                        {"checkpoint_step", j.checkpoint_step},
                        {"samples_per_s", j.samples_per_s},
                        {"submitted_at", j.submitted_at},
                        {"reason", j.reason},
                        {"argv", j.spec.argv}};
  if (j.spec.estimate_s > 0) out["estimate_s"] = j.spec.estimate_s;  // what sjf, ljf and srtf rank it by
  if (j.spec.work.flops > 0) out["work_flops"] = j.spec.work.flops;  // what the scheduler prices estimate_s from
  if (j.work_s > 0) out["work_s"] = j.work_s;  // what its ended attempts ran: seconds x slot speed
  if (j.cancel_requested) out["cancel_requested"] = true;
  if (sched::is_terminal(j.state)) out["finished_at"] = j.finished_at;
  return out;
}

std::string age(double seconds) {
  if (seconds < 120) return fmt::format("{:.0f}s", seconds);
  if (seconds < 7200) return fmt::format("{:.0f}m", seconds / 60);
  return fmt::format("{:.1f}h", seconds / 3600);
}

// Alerts firing now, from the store's log of changes.
std::vector<monitor::AlertChange> firing_alerts(sched::Store& store) {
  std::vector<monitor::AlertChange> log;
  for (const auto& stored : store.alerts())
    log.push_back(monitor::alert_change_from_json(nlohmann::json::parse(stored.body, nullptr, false),
                                                  fmt::format("{} alert {}", store.dir(), stored.seq)));
  return monitor::still_firing(log);
}

// A running job's loss and ETA, folded from its stored events.
monitor::JobWatch watch_of(sched::Store& store, sched::JobId id) {
  monitor::JobWatch w;
  for (const auto& body : store.events(id)) monitor::fold_event(w, nlohmann::json::parse(body, nullptr, false), 0);
  return w;
}

// Whether `job`'s estimate is the scheduler's placeholder: work it stated, priced before any job measured a rate
// (the median job an hour until then).
bool placeholder_estimate(const sched::JobRecord& job, const std::optional<sched::SchedulerInfo>& info) {
  return job.spec.work.flops > 0 && job.spec.estimate_s > 0 && !(info && info->work_rate);
}

struct Overview {
  bool running = false;
  std::optional<sched::SchedulerInfo> info;
};

Overview scheduler_state(sched::Store& store, const std::string& state_dir) {
  Overview o;
  o.running = is_locked(sched::scheduler_lock_path(state_dir));
  o.info = store.scheduler_info();
  return o;
}

// The overview as text. `compact` (--watch) shows running jobs, the first queued ones and the last finished
// ones instead of every job, so that a long queue fits a terminal.
std::string overview_text(sched::Store& store, const std::string& state_dir, double now, bool compact) {
  std::string out;
  const Overview s = scheduler_state(store, state_dir);
  if (s.running && s.info)
    out += fmt::format("scheduler: running (pid {}, policy {}, heartbeat {} ago{})\n", s.info->pid, s.info->policy,
                       age(now - s.info->heartbeat),
                       s.info->metrics_url.empty() ? "" : ", metrics " + s.info->metrics_url);
  else
    out += "scheduler: not running (start one with `ragmig run`)\n";

  auto jobs = store.jobs(/*active_only=*/false);
  size_t hidden_queued = 0, hidden_finished = 0;
  if (compact) {
    std::vector<sched::JobRecord> shown;
    size_t queued = 0, finished = 0;
    for (const auto& j : jobs) finished += sched::is_terminal(j.state);
    size_t finished_seen = 0;
    for (auto& j : jobs) {
      if (j.state == sched::JobState::Queued && queued++ >= 10) {
        ++hidden_queued;
        continue;
      }
      if (sched::is_terminal(j.state) && finished_seen++ + 5 < finished) {
        ++hidden_finished;
        continue;
      }
      shown.push_back(std::move(j));
    }
    jobs = std::move(shown);
  }
  // EST: the seconds the scheduler expects the job's work to take on a speed-1 slot (what sjf, ljf and srtf order
  // by), for the jobs still waiting or running; ETA: what a running job's steps say is left; REASON: why a job is
  // where it is, or for a running one without a reason what its worker last said it was doing (an evaluation's
  // "embedding 5183 passages").
  out += fmt::format("{:>4}  {:<24} {:<9} {:<10} {:>3} {:>4} {:>7} {:>9} {:>8} {:>6} {:>6}  {}\n", "ID", "NAME",
                     "STATE", "SLOT", "PRI", "ATT", "STEP", "SAMPLES/S", "LOSS", "EST", "ETA", "REASON");
  for (const auto& j : jobs) {
    std::string loss = "-", eta = "-", reason = j.reason;
    if (j.state == sched::JobState::Running) {
      const monitor::JobWatch w = watch_of(store, j.id);
      if (w.loss)
        loss = std::isfinite(*w.loss) ? fmt::format("{:.4f}", *w.loss) : "nan";
      else if (w.loss_not_finite)
        loss = w.loss_text;
      if (const auto left = monitor::eta_seconds(w)) eta = age(*left);
      if (reason.empty()) reason = w.message;  // what a job without steps says it is doing (an evaluation)
    }
    const std::string slot = j.slots.empty() ? "-" : fmt::format("{}", fmt::join(j.slots, ","));
    std::string estimate = "-";
    if (!sched::is_terminal(j.state) && j.spec.estimate_s > 0)
      estimate = placeholder_estimate(j, s.info) ? "?" : age(j.spec.estimate_s);
    out += fmt::format("{:>4}  {:<24.24} {:<9} {:<10.10} {:>3} {:>4} {:>7} {:>9} {:>8} {:>6} {:>6}  {}\n", j.id,
                       j.spec.name, sched::to_string(j.state), slot, j.spec.priority, j.attempts,
                       j.step >= 0 ? std::to_string(j.step) : "-",
                       j.samples_per_s > 0 ? fmt::format("{:.1f}", j.samples_per_s) : "-", loss, estimate, eta,
                       compact ? reason.substr(0, 60) : reason);
  }
  if (hidden_queued || hidden_finished)
    out += fmt::format("      ... and {} more queued, {} more finished (`ragmig status` lists all)\n", hidden_queued,
                       hidden_finished);
  const auto slots = store.slots();
  if (!slots.empty()) {
    out += fmt::format("\n{:<12} {:<10} {:>5} {:>6}\n", "SLOT", "PROFILE", "JOB", "UTIL");
    for (const auto& sl : slots)
      out += fmt::format("{:<12} {:<10} {:>5} {:>6}\n", sl.id, sl.profile, sl.job ? std::to_string(sl.job) : "-",
                         sl.utilization >= 0 ? fmt::format("{:.0f}%", 100 * sl.utilization) : "-");
  }
  const auto alerts = firing_alerts(store);
  if (!alerts.empty()) {
    out += fmt::format("\nALERTS ({} firing{})\n", alerts.size(), s.running ? "" : " when the scheduler stopped");
    for (const auto& a : alerts)
      out += fmt::format("  {:>6} ago  {:<15} {}\n", age(now - a.at), a.alert.rule, a.alert.message);
  }
  return out;
}

nlohmann::json overview_json(sched::Store& store, const std::string& state_dir, double now) {
  const Overview s = scheduler_state(store, state_dir);
  nlohmann::json scheduler = {{"running", s.running}};
  if (s.running && s.info) {
    scheduler["pid"] = s.info->pid;
    scheduler["policy"] = s.info->policy;
    scheduler["heartbeat_age_s"] = now - s.info->heartbeat;
    if (!s.info->metrics_url.empty()) scheduler["metrics_url"] = s.info->metrics_url;
  }
  // The FLOP/s the estimates of stated work are priced at; null: none measured yet (they are placeholders).
  if (s.info) scheduler["work_rate"] = s.info->work_rate ? nlohmann::json(*s.info->work_rate) : nlohmann::json(nullptr);
  nlohmann::json out = {{"scheduler", scheduler},
                        {"jobs", nlohmann::json::array()},
                        {"slots", nlohmann::json::array()},
                        {"alerts", nlohmann::json::array()}};
  for (const auto& j : store.jobs(/*active_only=*/false)) {
    nlohmann::json row = job_json(j);
    if (j.state == sched::JobState::Running) {
      const monitor::JobWatch w = watch_of(store, j.id);
      if (w.loss && std::isfinite(*w.loss)) row["loss"] = *w.loss;
      if (const auto left = monitor::eta_seconds(w)) row["eta_s"] = *left;
    }
    out["jobs"].push_back(std::move(row));
  }
  for (const auto& sl : store.slots())
    out["slots"].push_back(
        {{"id", sl.id},
         {"kind", sl.kind},
         {"profile", sl.profile},
         {"job", sl.job ? nlohmann::json(sl.job) : nlohmann::json(nullptr)},
         {"utilization", sl.utilization < 0 ? nlohmann::json(nullptr) : nlohmann::json(sl.utilization)}});
  for (const auto& a : firing_alerts(store)) out["alerts"].push_back(monitor::to_json(a));
  return out;
}

// Redraws in place on a terminal (cursor home, each line cleared to its end, the rest of the screen cleared:
// no blank frame between two, so no flicker); elsewhere prints one overview after another.
int watch(sched::Store& store, const std::string& state_dir, double interval_s, int64_t count) {
  install_stop_handlers();
  const bool tty = ::isatty(STDOUT_FILENO) != 0;
  if (tty) fmt::print("\x1b[2J");
  for (int64_t frame = 0; !stop_requested() && (count == 0 || frame < count); ++frame) {
    const double now = sched::WallClock().now();
    std::string text = overview_text(store, state_dir, now, /*compact=*/true);
    if (tty) {
      std::string drawn = "\x1b[H";
      size_t start = 0;
      while (start < text.size()) {
        const size_t end = text.find('\n', start);
        drawn += text.substr(start, end - start) + "\x1b[K\n";
        start = end == std::string::npos ? text.size() : end + 1;
      }
      fmt::print("{}\x1b[J", drawn);
    } else {
      fmt::print("{}{}\n", frame ? "\n" : "", text);
    }
    std::fflush(stdout);
    if (count != 0 && frame + 1 >= count) break;
    const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(interval_s);
    while (!stop_requested() && std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return kOk;
}

struct StatusArgs {
  int64_t id = 0;
  bool json = false, watch = false;
  double interval = 2;
  int64_t count = 0;
  std::string state = sched::default_state_dir();
};

// One job: its row, attempts (with Slurm's job ids) and history, as JSON or as text.
void show_job(sched::Store& store, const std::string& state_dir, sched::JobId id, bool json, double now) {
  const auto job = store.job(id);
  if (!job) throw DataError(fmt::format("no job {} in {}", id, state_dir));
  nlohmann::json out = job_json(*job);
  out["run_dir"] = store.run_dir(job->id);
  for (const auto& a : store.attempts(job->id)) {
    nlohmann::json row = {{"number", a.number},     {"slots", a.slots},    {"started_at", a.started_at},
                          {"ended_at", a.ended_at}, {"pid", a.pid},        {"exit_code", a.exit_code},
                          {"signal", a.signal},     {"outcome", a.outcome}};
    const std::string slurm = exec::recorded_slurm_id(out["run_dir"], a.id);
    if (!slurm.empty()) row["slurm_job"] = slurm;  // --backend slurm: "123", an array task "123_4"
    out["attempt_list"].push_back(row);
  }
  for (const auto& t : store.transitions(job->id))
    out["history"].push_back({{"from", t.from}, {"to", t.to}, {"reason", t.reason}, {"at", t.at}});
  if (json) {
    fmt::print("{}\n", out.dump(2));
    return;
  }
  fmt::print("job {} ({}): {}{}\n  command: {}\n  needs {} priority {}  run folder {}\n", job->id, job->spec.name,
             sched::to_string(job->state), job->reason.empty() ? "" : " — " + job->reason,
             join_shell_words(job->spec.argv), sched::to_string(job->spec.need), job->spec.priority,
             store.run_dir(job->id));
  // What sjf, ljf and srtf rank it by, and the work a scheduler priced it from.
  const auto& work = job->spec.work;
  if (job->spec.estimate_s > 0 || work.flops > 0)
    fmt::print(
        "  estimate {}{}{}\n",
        job->spec.estimate_s > 0 ? report::format_duration(job->spec.estimate_s) : "not priced yet",
        work.flops > 0 ? " (" + report::format_flops(work.flops) + " of work)" : "",
        placeholder_estimate(*job, store.scheduler_info()) ? ", a placeholder until a job measures its rate" : "");
  if (job->state == sched::JobState::Running)  // what its worker last said it was doing
    if (const auto w = watch_of(store, job->id); !w.message.empty()) fmt::print("  now: {}\n", w.message);
  for (const auto& a : store.attempts(job->id))
    fmt::print("  attempt {} on {}: {} ({})\n", a.number, fmt::join(a.slots, ","),
               a.outcome.empty() ? "running" : a.outcome,
               a.ended_at > 0 ? age(a.ended_at - a.started_at) : age(now - a.started_at));
  for (const auto& t : store.transitions(job->id))
    fmt::print("  {:>6} ago  {} -> {}  {}\n", age(now - t.at), t.from.empty() ? "-" : t.from, t.to, t.reason);
}

int show_status(StatusArgs& args) {
  sched::Store store(args.state, sched::Store::Mode::MustExist);
  const double now = sched::WallClock().now();
  if (args.watch) {
    if (args.id || args.json) throw ConfigError("--watch shows the overview: give no job id and no --json");
    return watch(store, args.state, args.interval, args.count);
  }
  if (args.id) {
    show_job(store, args.state, args.id, args.json, now);
    return kOk;
  }
  if (args.json) {
    fmt::print("{}\n", overview_json(store, args.state, now).dump(2));
    return kOk;
  }
  fmt::print("{}", overview_text(store, args.state, now, /*compact=*/false));
  return kOk;
}

}  // namespace

Command add_status_command(CLI::App& root) {
  auto args = std::make_shared<StatusArgs>();
  CLI::App* sub = root.add_subcommand("status", "Show jobs, slots, alerts and the scheduler (or one job in detail)");
  sub->add_option("id", args->id, "one job's attempts, history and last events");
  sub->add_flag("--json", args->json, "print JSON");
  sub->add_flag("--watch", args->watch, "redraw the overview every --interval seconds until Ctrl-C");
  sub->add_option("--interval", args->interval, "seconds between redraws (--watch)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  sub->add_option("--count", args->count, "stop after this many redraws (--watch; 0: until Ctrl-C)")
      ->check(CLI::NonNegativeNumber);
  sub->add_option("--state", args->state, "state folder (default ./.ragmig or $RAGMIG_STATE)");
  return Command{sub, [args] { return show_status(*args); }};
}

}  // namespace ragmig::apps
