// `ragmig run`: the scheduler in the foreground on this machine's slots, with the process executor. One
// scheduler per state folder (a lock); a scheduler killed at any moment is restarted with the same command
// and adopts or requeues what its predecessor left.
#include <unistd.h>

#include <fmt/format.h>
#include <filesystem>

#include "apps/command.h"
#include "apps/scheduler_host.h"
#include "core/error.h"
#include "core/file_lock.h"
#include "core/stop_signal.h"
#include "exec/process_executor.h"
#include "gpu/inventory.h"
#include "monitor/alert_config.h"
#include "sched/scheduler.h"

namespace ragmig::apps {
namespace {

struct RunArgs {
  std::string state = sched::default_state_dir();
  sched::SchedulerOptions options;
  bool until_empty = false;
  int cpu_slots = 0;  ///< 0: gpu::InventoryOptions decides
  MigFlags mig;
  MonitoringArgs monitoring;
  BackendArgs backend;
};

int run_scheduler(RunArgs& args) {
  const monitor::AlertThresholds thresholds = args.monitoring.alerts_file.empty()
                                                  ? monitor::AlertThresholds{}
                                                  : monitor::read_alert_config(args.monitoring.alerts_file);
  sched::Store store(args.state);
  const FileLock lock = take_scheduler_lock(store, args.state);
  install_stop_handlers();
  Host host = open_host(args.backend, args.cpu_slots, args.mig, args.options.policy, "ragmig run");
  if (host.inventory.cpu_fallback && !host.mig.partitioner) log_line("ragmig run: " + host.inventory.fallback_reason);
  const auto& slots = host.backend.slots;
  args.options.slots_fixed = !host.mig.partitioner;
  sched::WallClock clock;
  sched::Scheduler scheduler(store, *host.backend.executor, clock, slots, args.options, log_line);
  log_line(fmt::format("ragmig run: policy {}, state {}, {}{} slots: {}", sched::to_string(scheduler.policy().spec),
                       args.state, host.slurm ? "Slurm, " : "", slots.size(), describe_slots(slots)));
  scheduler.recover();
  Monitoring monitoring = start_monitoring(store, scheduler, args.monitoring, thresholds,
                                           nvml_slot_probe(host.nvml, host.inventory), "ragmig run");
  scheduler.run(
      args.until_empty, [] { return stop_requested(); },
      [&] {
        host.mig.after_pass(scheduler);
        monitoring.after_pass(scheduler, clock.now());
      },
      [] { return stop_signals_received() >= 2; });
  monitoring.monitor->sample(scheduler, clock.now());  // alerts of jobs now gone clear
  log_line(stop_requested() ? "ragmig run: stopped" : "ragmig run: queue empty");
  return kOk;
}

}  // namespace

Command add_run_command(CLI::App& root) {
  auto args = std::make_shared<RunArgs>();
  CLI::App* sub = root.add_subcommand("run", "Run the scheduler in the foreground on this machine's slots");
  sub->add_option("--policy", args->options.policy,
                  "fifo | priority[(aging=1,preempt=0,min_run=60)] | rr[(quantum=300)] | sjf | ljf | "
                  "srtf[(min_run=60)] | las[(thresholds=3600:36000,min_run=60)], each optionally +dynbatch (resizable "
                  "jobs start smaller on slices with less memory)")
      ->capture_default_str();
  sub->add_flag("--until-empty", args->until_empty, "exit when no job is queued or running");
  sub->add_option("--state", args->state, "state folder (default ./.ragmig or $RAGMIG_STATE)");
  sub->add_option("--cpu-slots", args->cpu_slots,
                  "CPU slots (default: one per core where there is no GPU, none beside GPUs;"
                  " a number given is offered beside GPUs too)")
      ->check(CLI::Range(1, 4096));
  add_mig_options(sub, args->mig);
  add_backend_options(sub, args->backend);
  add_monitoring_options(sub, args->monitoring, /*alerts_file_option=*/true);
  sub->add_option("--grace", args->options.grace_s, "seconds between SIGTERM and SIGKILL when stopping a job")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  sub->add_option("--backoff", args->options.backoff_s, "first retry delay after a failure (doubles per failure)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  sub->add_option("--tick", args->options.tick_s, "longest pause between two scheduling passes")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  sub->footer(
      "SIGTERM or Ctrl-C stops running jobs (they checkpoint and are requeued) and exits; a second one\n"
      "kills the jobs still checkpointing at once (they resume from their last checkpoint).\n"
      "With --mig auto, instances no job holds are destroyed and created as the queue needs (ragmig mig\n"
      "apply's checks and order); GPUs with MIG mode off are left alone.\n"
      "Restarted after a crash, it adopts jobs still running and requeues the rest.\n"
      "Alerts (stalls, NaN or exploding loss, idle slots while jobs wait, memory, OOM, crash loops, a missed\n"
      "deadline) go to the log, the store (`ragmig status`) and [alerts] exec; --alerts FILE's [alerts] keys:\n" +
      monitor::alert_config_help());
  return Command{sub, [args] { return run_scheduler(*args); }};
}

}  // namespace ragmig::apps
