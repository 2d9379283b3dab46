// `ragmig status [ID] [--json]`: jobs (state, slot, attempts, progress from their events), slots (who runs
// there, utilisation) and whether a scheduler is running; with an id, that job's attempts and history.
#include <cmath>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "apps/command.h"
#include "core/error.h"
#include "core/file_lock.h"
#include "core/shell_words.h"
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
  if (j.cancel_requested) out["cancel_requested"] = true;
  if (sched::is_terminal(j.state)) out["finished_at"] = j.finished_at;
  return out;
}

std::string age(double seconds) {
  if (seconds < 120) return fmt::format("{:.0f}s", seconds);
  if (seconds < 7200) return fmt::format("{:.0f}m", seconds / 60);
  return fmt::format("{:.1f}h", seconds / 3600);
}

}  // namespace

Command add_status_command(CLI::App& root) {
  struct Args {
    int64_t id = 0;
    bool json = false;
    std::string state = sched::default_state_dir();
  };
  auto args = std::make_shared<Args>();
  CLI::App* sub = root.add_subcommand("status", "Show jobs, slots and the scheduler (or one job in detail)");
  sub->add_option("id", args->id, "one job's attempts, history and last events");
  sub->add_flag("--json", args->json, "print JSON");
  sub->add_option("--state", args->state, "state folder (default ./.ragmig or $RAGMIG_STATE)");
  return Command{sub, [args]() -> int {
                   sched::Store store(args->state, sched::Store::Mode::MustExist);
                   const double now = sched::WallClock().now();
                   const bool running = is_locked(sched::scheduler_lock_path(args->state));
                   const auto info = store.scheduler_info();
                   nlohmann::json scheduler = {{"running", running}};
                   if (running && info) {
                     scheduler["pid"] = info->pid;
                     scheduler["policy"] = info->policy;
                     scheduler["heartbeat_age_s"] = now - info->heartbeat;
                   }

                   if (args->id) {
                     const auto job = store.job(args->id);
                     if (!job) throw DataError(fmt::format("no job {} in {}", args->id, args->state));
                     nlohmann::json out = job_json(*job);
                     out["run_dir"] = store.run_dir(job->id);
                     for (const auto& a : store.attempts(job->id))
                       out["attempt_list"].push_back({{"number", a.number}, {"slots", a.slots}, {"started_at", a.started_at},
                                                      {"ended_at", a.ended_at}, {"pid", a.pid}, {"exit_code", a.exit_code},
                                                      {"signal", a.signal}, {"outcome", a.outcome}});
                     for (const auto& t : store.transitions(job->id))
                       out["history"].push_back({{"from", t.from}, {"to", t.to}, {"reason", t.reason}, {"at", t.at}});
                     if (args->json) {
                       fmt::print("{}\n", out.dump(2));
                       return kOk;
                     }
                     fmt::print("job {} ({}): {}{}\n  command: {}\n  needs {} priority {}  run folder {}\n", job->id,
                                job->spec.name, sched::to_string(job->state),
                                job->reason.empty() ? "" : " — " + job->reason, join_shell_words(job->spec.argv),
                                sched::to_string(job->spec.need), job->spec.priority, store.run_dir(job->id));
                     for (const auto& a : store.attempts(job->id))
                       fmt::print("  attempt {} on {}: {} ({})\n", a.number, fmt::join(a.slots, ","),
                                  a.outcome.empty() ? "running" : a.outcome,
                                  a.ended_at > 0 ? age(a.ended_at - a.started_at) : age(now - a.started_at));
                     for (const auto& t : store.transitions(job->id))
                       fmt::print("  {:>6} ago  {} -> {}  {}\n", age(now - t.at), t.from.empty() ? "-" : t.from, t.to,
                                  t.reason);
                     return kOk;
                   }

                   const auto jobs = store.jobs(/*active_only=*/false);
                   const auto slots = store.slots();
                   if (args->json) {
                     nlohmann::json out = {{"scheduler", scheduler}, {"jobs", nlohmann::json::array()},
                                           {"slots", nlohmann::json::array()}};
                     for (const auto& j : jobs) out["jobs"].push_back(job_json(j));
                     for (const auto& s : slots)
                       out["slots"].push_back({{"id", s.id}, {"kind", s.kind}, {"profile", s.profile},
                                               {"job", s.job ? nlohmann::json(s.job) : nlohmann::json(nullptr)},
                                               {"utilization", s.utilization < 0 ? nlohmann::json(nullptr)
                                                                                 : nlohmann::json(s.utilization)}});
                     fmt::print("{}\n", out.dump(2));
                     return kOk;
                   }
                   if (running && info)
                     fmt::print("scheduler: running (pid {}, policy {}, heartbeat {} ago)\n", info->pid, info->policy,
                                age(now - info->heartbeat));
                   else
                     fmt::print("scheduler: not running (start one with `ragmig run`)\n");
                   fmt::print("{:>4}  {:<24} {:<9} {:<10} {:>3} {:>4} {:>7} {:>9}  {}\n", "ID", "NAME", "STATE", "SLOT",
                              "PRI", "ATT", "STEP", "SAMPLES/S", "REASON");
                   for (const auto& j : jobs) {
                     const std::string slot = j.slots.empty() ? "-" : fmt::format("{}", fmt::join(j.slots, ","));
                     fmt::print("{:>4}  {:<24.24} {:<9} {:<10.10} {:>3} {:>4} {:>7} {:>9}  {}\n", j.id, j.spec.name,
                                sched::to_string(j.state), slot, j.spec.priority, j.attempts,
                                j.step >= 0 ? std::to_string(j.step) : "-",
                                j.samples_per_s > 0 ? fmt::format("{:.1f}", j.samples_per_s) : "-", j.reason);
                   }
                   if (!slots.empty()) {
                     fmt::print("\n{:<12} {:<10} {:>5} {:>6}\n", "SLOT", "PROFILE", "JOB", "UTIL");
                     for (const auto& s : slots)
                       fmt::print("{:<12} {:<10} {:>5} {:>6}\n", s.id, s.profile, s.job ? std::to_string(s.job) : "-",
                                  s.utilization >= 0 ? fmt::format("{:.0f}%", 100 * s.utilization) : "-");
                   }
                   return kOk;
                 }};
}

}  // namespace ragmig::apps
