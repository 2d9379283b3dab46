// The Slurm executor (see slurm_executor.h). Client commands only (sbatch, squeue, scancel, sinfo), their
// machine-readable output parsed here; no Slurm library is linked.
#include "exec/slurm_executor.h"

#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>
#include <set>

#include "core/atomic_file.h"
#include "core/error.h"
#include "core/shell_words.h"
#include "core/strings.h"
#include "exec/command_output.h"
#include "exec/event_tail.h"
#include "exec/process_executor.h"
#include "gpu/mig_catalog.h"
#include "sched/clock.h"
#include "sched/job.h"

namespace fs = std::filesystem;

namespace ragmig::exec {
namespace {

using sched::unix_now;

// Command output and files without the blanks and line ends around them.
std::string trimmed(std::string_view s) { return std::string(trim(s, " \t\r\n")); }

// What a client command said when it failed: its stderr, or its exit code when it said nothing.
std::string failure_of(const CommandOutput& r) {
  return trimmed(r.err).empty() ? fmt::format("exit code {}", r.exit_code) : trimmed(r.err);
}

// How many nodes the scheduler's slots lie on (slurm_slots numbers each node's slots as one group).
size_t nodes_of(const std::vector<sched::Slot>& slots) {
  std::set<int> groups;
  for (const auto& s : slots) groups.insert(s.group);
  return groups.size();
}

// What sbatch is told besides the script: name, log, folder, nodes and tasks, the slots' resources, the options.
std::vector<std::string> sbatch_arguments(const sched::Launch& launch, const SlurmOptions& o) {
  const sched::Slot& slot = launch.slots.front();
  const size_t n = launch.slots.size();
  // A gang may spread over as many nodes as the scheduler's slots do, no more; Slurm packs it where it can.
  const size_t nodes = nodes_of(launch.slots);
  std::vector<std::string> args = {"--parsable",
                                   fmt::format("--job-name=ragmig-{}", launch.job),
                                   "--output=" + (fs::absolute(launch.run_dir) / "worker.log").string(),
                                   "--open-mode=append",
                                   nodes == 1 ? "--nodes=1" : fmt::format("--nodes=1-{}", nodes),
                                   fmt::format("--ntasks={}", n),
                                   "--requeue",
                                   // Before a time limit, SIGTERM to the attempt: it checkpoints and exits 75.
                                   fmt::format("--signal={}TERM@{}", n == 1 ? "B:" : "", o.time_limit_signal_s)};
  if (!launch.spec.cwd.empty()) args.push_back("--chdir=" + launch.spec.cwd);
  // One task per replica, each with its slot's resources; srun starts them (see sbatch_script).
  const std::string type = slot.profile.empty() || slot.profile == "gpu" ? "" : slot.profile + ":";
  if (slot.kind == sched::SlotKind::Cpu) args.push_back("--cpus-per-task=1");
  else if (n == 1) args.push_back(fmt::format("--gres=gpu:{}1", type));
  else args.push_back(fmt::format("--gpus-per-task={}1", type));
  if (!o.partition.empty()) args.push_back("--partition=" + o.partition);
  if (!o.account.empty()) args.push_back("--account=" + o.account);
  if (!o.qos.empty()) args.push_back("--qos=" + o.qos);
  if (!o.time_limit.empty()) args.push_back("--time=" + o.time_limit);
  args.insert(args.end(), o.sbatch_options.begin(), o.sbatch_options.end());
  return args;
}

std::string script_path(const sched::Launch& launch) {
  return (fs::absolute(launch.run_dir) / "attempts" / (std::to_string(launch.attempt_id) + ".sbatch")).string();
}

// Slurm states in which a job may still run (squeue lists finished ones for a while under other states).
bool alive(const std::string& state) {
  static const std::set<std::string> kLive = {"PENDING",   "RUNNING",      "SUSPENDED", "COMPLETING", "CONFIGURING",
                                              "REQUEUED",  "REQUEUE_HOLD", "REQUEUE_FED", "RESIZING", "SIGNALING",
                                              "STAGE_OUT", "RESV_DEL_HOLD", "STOPPED"};
  return kLive.count(state) > 0;
}

// What Slurm's commands say when the controller does not answer (down, restarting, unreachable), as opposed
// to refusing a request.
bool controller_unreachable(const std::string& said) {
  for (const char* sign : {"Unable to contact slurm controller", "Socket timed out", "Connection refused",
                           "Zero Bytes were transmitted", "Slurm temporarily unable"})
    if (said.find(sign) != std::string::npos) return true;
  return false;
}

}  // namespace

std::string sbatch_script(const sched::Launch& launch, const SlurmOptions& o) {
  const size_t n = launch.slots.size();
  const bool cpu = launch.slots.front().kind == sched::SlotKind::Cpu;
  std::vector<std::string> worker = launch.spec.argv;
  if (worker[0] == "ragmig") worker[0] = o.ragmig_exe;
  std::vector<std::string> slot_ids;
  for (const auto& s : launch.slots) slot_ids.push_back(s.id);
  // The shim starts one process (the worker, or srun for a gang); RAGMIG_SLOT names the slots it runs on.
  const std::string shim_slots = nlohmann::json(std::vector<std::string>{fmt::format("{}", fmt::join(slot_ids, ","))}).dump();
  const std::string run_dir = fs::absolute(launch.run_dir).string();

  std::string s = "#!/bin/bash\n";
  s += fmt::format("# ragmig job {}, attempt {}: written by ragmig's Slurm executor, submitted as\n", launch.job,
                   launch.attempt_number);
  s += "#   sbatch " + join_shell_words(sbatch_arguments(launch, o)) + " " + script_path(launch) + "\n";
  s += fmt::format("export RAGMIG_JOB_ID={} RAGMIG_ATTEMPT={} RAGMIG_RUN_DIR={}\n", launch.job,
                   launch.attempt_number, join_shell_words({run_dir}));
  if (cpu) {
    // A job's share of the cores is what Slurm gave it; OpenMP threads sleep when idle unless told otherwise.
    s += "export OMP_NUM_THREADS=1\n";
    s += "if [ -z \"${OMP_WAIT_POLICY:-}${GOMP_SPINCOUNT:-}\" ]; then export OMP_WAIT_POLICY=PASSIVE; fi\n";
  }
  if (n > 1) {
    // A gang: one Slurm task per replica, on one node or several, started by srun, which ends the others when
    // one fails. Each rank takes its rank and world size from SLURM_PROCID/SLURM_NTASKS and the rendezvous host
    // from the first node of the step (train/process_group.h); the port is the attempt's. Rank 0 logs to
    // worker.log, rank i to worker.rank<i>.log, as on one machine.
    s += fmt::format("export MASTER_PORT={} RAGMIG_RANK_SLOTS={}\n", sched::rendezvous_port(launch),
                     join_shell_words({fmt::format("{}", fmt::join(slot_ids, " "))}));
    const std::string rank =
        "slots=($RAGMIG_RANK_SLOTS); export RAGMIG_SLOT=${slots[$SLURM_PROCID]}; "
        "if [ \"$SLURM_PROCID\" != 0 ]; then exec >>\"$RAGMIG_RUN_DIR/worker.rank$SLURM_PROCID.log\" 2>&1; fi; "
        "exec \"$@\"";
    std::vector<std::string> srun = {"srun", "--kill-on-bad-exit=1"};
    if (cpu) srun.push_back("--cpus-per-task=1");  // Slurm 22.05's srun does not take it from the job
    srun.insert(srun.end(), {"/bin/bash", "-c", rank, "ragmig-rank"});
    worker.insert(worker.begin(), srun.begin(), srun.end());
  }
  s += fmt::format("echo \"==> attempt {} of job {} on Slurm job $SLURM_JOB_ID ($SLURMD_NODENAME) at $(date +%s.%N): \"{}\n",
                   launch.attempt_number, launch.job, join_shell_words({join_shell_words(worker)}));
  std::vector<std::string> shim = {o.shim_exe, "--lock-fd", "-1", "--exit-file",
                                   attempt_exit_path(run_dir, launch.attempt_id), "--run-dir", run_dir};
  // One worker: SIGTERM to this script (the executor's stop, Slurm's --signal before a time limit) reaches it
  // once; it checkpoints and exits 75, and the shim, which ignores the signal, writes how it ended. A gang's
  // tasks get SIGTERM from Slurm itself (the steps are signalled, not this script: srun would end its step).
  if (n == 1) s += "trap 'trap \"\" TERM; kill -TERM 0' TERM\n";
  s += join_shell_words(shim) + " ";
  // The process the shim starts sees the devices Slurm gave the job ("" for CPU slots).
  s += std::string("--devices ") + (cpu ? "'[\"\"]'" : "\"[\\\"${CUDA_VISIBLE_DEVICES:-}\\\"]\"") + " --slots " +
       join_shell_words({shim_slots}) + " -- " + join_shell_words(worker);
  s += " &\nshim=$!\n";
  s += "wait \"$shim\"  # returns early when the trap runs\nwait \"$shim\"\n";
  return s;
}

std::string slurm_id_path(const std::string& run_dir, int64_t attempt_id) {
  return (fs::path(run_dir) / "attempts" / (std::to_string(attempt_id) + ".slurm-id")).string();
}

std::string recorded_slurm_id(const std::string& run_dir, int64_t attempt_id) {
  const std::string path = slurm_id_path(run_dir, attempt_id);
  std::error_code ec;
  return fs::exists(path, ec) ? trimmed(read_file(path)) : "";
}

std::map<std::string, std::string> parse_squeue(const std::string& text) {
  std::map<std::string, std::string> out;
  int line_no = 0;
  for (const auto& raw : split(text, '\n')) {
    ++line_no;
    const std::string line = trimmed(raw);
    if (line.empty()) continue;
    const auto parts = split(line, '|');
    const bool two = parts.size() == 2;
    const std::string id = two ? trimmed(parts[0]) : "", state = two ? trimmed(parts[1]) : "";
    if (id.empty() || state.empty())
      throw DataError(fmt::format("squeue output line {}: expected \"<job id>|<STATE>\", got \"{}\"", line_no, line));
    out[id] = state;
  }
  return out;
}

std::vector<sched::Slot> slurm_slots(const std::string& sinfo_text, int cpu_slots) {
  constexpr int64_t kMostSlots = 100'000;  // a scheduler pass looks at every slot
  std::vector<sched::Slot> slots;
  std::set<std::string> seen;  // sinfo -N lists a node once per partition
  int line_no = 0, group = 0;
  for (const auto& raw : split(sinfo_text, '\n')) {
    ++line_no;
    const std::string line = trimmed(raw);
    if (line.empty()) continue;
    const auto parts = split(line, '|');
    const auto bad = [&](const std::string& what) {
      return DataError(fmt::format("sinfo output line {}: {} in \"{}\" (expected \"<node>|<cpus>|<gres>\")", line_no, what, line));
    };
    const auto make_room = [&](int64_t more) {
      if (std::ssize(slots) + more > kMostSlots)
        throw bad(fmt::format("more than {} slots by this line (a node without GPUs has a CPU slot per CPU unless "
                              "--cpu-slots says how many)", kMostSlots));
    };
    if (parts.size() != 3 || parts[0].empty()) throw bad("not three fields");
    if (!seen.insert(parts[0]).second) continue;
    const std::string& node = parts[0];
    const auto cpus = whole_number(parts[1], 0, kMostSlots);
    if (!cpus) throw bad("a CPU count that is not a number");
    int64_t gpus = 0;
    std::map<std::string, int64_t> of_type;  // a type listed twice ("gpu:a100:2(S:0),gpu:a100:2(S:1)") counts on
    if (parts[2] != "(null)" && !parts[2].empty())
      for (const auto& gres : split(parts[2], ',')) {
        // gpu[:type]:count[(S:0-1)]
        const auto fields = split(gres.substr(0, gres.find('(')), ':');
        if (fields.empty() || fields[0] != "gpu") continue;
        if (fields.size() < 2) throw bad("a GPU GRES without a count");
        const auto count = whole_number(fields.back(), 0, kMostSlots);
        if (!count) throw bad("a GRES count that is not a number");
        const std::string type = fields.size() >= 3 ? fields[1] : "gpu";
        make_room(*count);
        for (int64_t i = 0; i < *count; ++i) {
          sched::Slot s;
          s.id = fmt::format("{}:{}:{}", node, type, of_type[type]++);
          s.group = group;
          s.profile = type;
          if (gpu::looks_like_profile_name(type)) {
            const gpu::ProfileName p = gpu::parse_profile_name(type);
            s.kind = sched::SlotKind::Mig;
            s.compute = p.compute_slices;
            s.speed = p.compute_slices / 7.0;
            s.memory_mb = s.nominal_memory_mb = static_cast<int64_t>(p.memory_gb) * 1024;
          } else {
            s.kind = sched::SlotKind::Gpu;
            s.compute = 7;
          }
          slots.push_back(s);
        }
        gpus += *count;
      }
    const int64_t n_cpu = cpu_slots > 0 ? cpu_slots : (gpus == 0 ? *cpus : 0);
    make_room(n_cpu);
    for (int64_t i = 0; i < n_cpu; ++i) {
      sched::Slot s;
      s.id = fmt::format("{}:cpu:{}", node, i);
      s.group = group;
      slots.push_back(s);
    }
    ++group;
  }
  return slots;
}

std::vector<sched::Slot> read_slurm_slots(const SlurmOptions& options, int cpu_slots) {
  std::vector<std::string> argv = {"sinfo", "-h", "-N", "-o", "%N|%c|%G"};
  if (!options.partition.empty()) argv.push_back("--partition=" + options.partition);
  const CommandOutput r = run_command(argv, options.command_timeout_s);
  if (r.exit_code != 0)
    throw DeviceError("sinfo: " + failure_of(r) +
                      " (is Slurm's controller running, and SLURM_CONF set where it is not the default?)");
  auto slots = slurm_slots(r.out, cpu_slots);
  if (slots.empty())
    throw DeviceError("sinfo lists no node" + (options.partition.empty() ? "" : " in partition " + options.partition));
  return slots;
}

SlurmExecutor::SlurmExecutor(SlurmOptions options) : options_(std::move(options)) {
  RAGMIG_CHECK(!options_.shim_exe.empty() && !options_.ragmig_exe.empty(), "the executor needs both binaries");
  const passwd* pw = ::getpwuid(::getuid());
  user_ = pw ? pw->pw_name : std::to_string(::getuid());
}

int64_t SlurmExecutor::start(const sched::Launch& launch) {
  RAGMIG_CHECK(!attempts_.count(launch.job), "job already running");
  RAGMIG_CHECK(!launch.slots.empty());
  std::error_code ec;
  fs::create_directories(fs::path(launch.run_dir) / "attempts", ec);
  if (ec) throw IoError(launch.run_dir + ": cannot create the run folder: " + ec.message());
  Attempt a;
  a.attempt_id = launch.attempt_id;
  a.run_dir = launch.run_dir;
  a.events_offset = launch.events_offset;
  a.gang = launch.slots.size() > 1;
  a.script = script_path(launch);
  a.sbatch_args = sbatch_arguments(launch, options_);
  write_file_atomic(a.script, sbatch_script(launch, options_));
  fs::permissions(a.script, fs::perms::owner_exec, fs::perm_options::add, ec);
  attempts_[launch.job] = std::move(a);
  unsubmitted_.push_back(launch.job);
  return 0;  // submitted at the next poll, with the attempts started beside it; the id goes to a file
}

std::vector<std::string> array_arguments(const std::vector<std::string>& one, size_t tasks, int limit) {
  std::vector<std::string> args;
  for (const auto& a : one)
    if (a.rfind("--output=", 0) != 0) args.push_back(a);
  args.push_back("--output=/dev/null");  // each task appends to its own run's worker.log (array_script)
  args.push_back(fmt::format("--array=0-{}{}", tasks - 1, limit > 0 ? fmt::format("%{}", limit) : ""));
  return args;
}

std::string array_script(const std::vector<std::string>& scripts, const std::vector<std::string>& logs) {
  RAGMIG_CHECK(!scripts.empty() && scripts.size() == logs.size());
  std::string s = "#!/bin/bash\n# A job array of ragmig attempts, written by ragmig's Slurm executor: task i runs script i.\n";
  s += "scripts=(";
  s += " " + join_shell_words(scripts);
  s += " )\nlogs=(";
  s += " " + join_shell_words(logs);
  s += " )\nexec >>\"${logs[$SLURM_ARRAY_TASK_ID]}\" 2>&1\n";
  // The same shell process runs the attempt's script: signals to the batch shell reach its trap.
  s += "exec /bin/bash \"${scripts[$SLURM_ARRAY_TASK_ID]}\"\n";
  return s;
}

// Submits the attempts started since the last poll: those whose sbatch options differ only in job name and
// log go as one job array, in the order they were started (task i = the i-th); a lone one as a plain job.
// Attempts that cannot be submitted end here, with sbatch's words.
void SlurmExecutor::submit_started(std::vector<sched::ExitStatus>& exits) {
  std::vector<std::pair<std::vector<std::string>, std::vector<sched::JobId>>> groups;
  for (const sched::JobId job : unsubmitted_) {
    Attempt& a = attempts_.at(job);
    if (a.stop_requested) {  // stopped before it was submitted: it never ran
      sched::ExitStatus never;
      never.job = job;
      never.attempt_id = a.attempt_id;
      never.known = false;
      never.stop_requested = true;
      exits.push_back(never);
      attempts_.erase(job);
      continue;
    }
    std::vector<std::string> key;
    for (const auto& arg : a.sbatch_args)
      if (arg.rfind("--job-name=", 0) != 0 && arg.rfind("--output=", 0) != 0) key.push_back(arg);
    auto g = std::find_if(groups.begin(), groups.end(), [&](const auto& x) { return x.first == key; });
    if (g == groups.end()) groups.push_back({key, {job}});
    else g->second.push_back(job);
  }
  unsubmitted_.clear();
  for (const auto& [key, jobs] : groups) {
    Attempt& first = attempts_.at(jobs.front());
    std::vector<std::string> argv = {"sbatch"};
    std::string script = first.script;
    if (jobs.size() == 1) {
      argv.insert(argv.end(), first.sbatch_args.begin(), first.sbatch_args.end());
    } else {
      std::vector<std::string> scripts, logs;
      for (const sched::JobId job : jobs) {
        scripts.push_back(attempts_.at(job).script);
        logs.push_back((fs::absolute(attempts_.at(job).run_dir) / "worker.log").string());
      }
      script = (fs::path(first.script).parent_path() / fmt::format("{}.array.sbatch", first.attempt_id)).string();
      write_file_atomic(script, array_script(scripts, logs));
      const auto args = array_arguments(first.sbatch_args, jobs.size(), options_.array_limit);
      argv.insert(argv.end(), args.begin(), args.end());
    }
    argv.push_back(script);
    const CommandOutput r = run_command(argv, options_.command_timeout_s);
    const std::string id = trimmed(r.out.substr(0, r.out.find(';')));  // "<id>[;<cluster>]"
    if (r.exit_code != 0 || id.empty() || id.find_first_not_of("0123456789") != std::string::npos) {
      const std::string said = failure_of(r);
      const bool unreachable = controller_unreachable(said);
      for (const sched::JobId job : jobs) {
        sched::ExitStatus failed;
        failed.job = job;
        failed.attempt_id = attempts_.at(job).attempt_id;
        if (unreachable) {  // not the job's fault: closed as lost, and it waits for the next pass
          failed.known = false;
          failed.error = "sbatch: " + said;
        } else {
          failed.exit_code = 127;
          failed.error = "sbatch refused the job: " + said;
        }
        exits.push_back(failed);
        attempts_.erase(job);
      }
      continue;
    }
    for (size_t i = 0; i < jobs.size(); ++i) {
      Attempt& a = attempts_.at(jobs[i]);
      a.slurm_id = jobs.size() == 1 ? id : fmt::format("{}_{}", id, i);
      a.state = "PENDING";
      write_file_atomic(slurm_id_path(a.run_dir, a.attempt_id), a.slurm_id + "\n");
    }
  }
}

void SlurmExecutor::stop(sched::JobId job, double grace_s) {
  const auto it = attempts_.find(job);
  if (it == attempts_.end()) return;
  Attempt& a = it->second;
  const double now = unix_now();
  if (a.slurm_id.empty()) {  // not submitted yet: it never will be (submit_started ends it)
    a.stop_requested = true;
    return;
  }
  if (a.state == "PENDING") {  // nothing runs yet: nothing to checkpoint
    run_command({"scancel", a.slurm_id}, options_.command_timeout_s);
  } else if (!a.stop_requested) {
    signal_stop(a);
  }
  const double kill_at = now + grace_s;
  if (!a.stop_requested || kill_at < a.kill_at) a.kill_at = kill_at;
  a.stop_requested = true;
}

void SlurmExecutor::signal_stop(Attempt& a) {
  a.signalled_at = unix_now();
  // One worker runs inside the batch script, which passes SIGTERM on; a gang's tasks are the job's steps.
  if (a.gang) run_command({"scancel", "--signal=TERM", a.slurm_id}, options_.command_timeout_s);
  else run_command({"scancel", "--batch", "--signal=TERM", a.slurm_id}, options_.command_timeout_s);
}

std::optional<std::map<std::string, std::string>> SlurmExecutor::queue() {
  // -r: one line per array task ("123_4"), pending ones too.
  const CommandOutput r = run_command({"squeue", "-h", "-r", "-u", user_, "-o", "%i|%T"}, options_.command_timeout_s);
  if (r.exit_code != 0) return std::nullopt;
  try {
    return parse_squeue(r.out);
  } catch (const DataError&) {
    return std::nullopt;
  }
}

sched::ExecUpdate SlurmExecutor::poll(double now) {
  (void)now;  // scancel's deadlines use the wall clock whatever the loop's clock says
  const double wall = unix_now();
  sched::ExecUpdate update;
  submit_started(update.exits);
  std::optional<std::map<std::string, std::string>> jobs;
  if (!attempts_.empty() && wall - last_queue_ >= options_.poll_interval_s) {
    last_queue_ = wall;
    jobs = queue();
  }
  for (auto it = attempts_.begin(); it != attempts_.end();) {
    Attempt& a = it->second;
    bool ended = false;
    if (jobs) {
      const auto found = jobs->find(a.slurm_id);
      ended = found == jobs->end() || !alive(found->second);
      if (!ended) a.state = found->second;
    }
    const TailResult tail = read_new_lines((fs::path(a.run_dir) / "events.jsonl").string(), a.events_offset);
    a.events_offset = tail.offset;
    if (!tail.lines.empty()) update.events.push_back({it->first, a.attempt_id, tail.lines, tail.offset});
    if (ended) {
      sched::ExitStatus status = read_attempt_exit(attempt_exit_path(a.run_dir, a.attempt_id));
      status.job = it->first;
      status.attempt_id = a.attempt_id;
      status.stop_requested = a.stop_requested;
      update.exits.push_back(status);
      it = attempts_.erase(it);
      continue;
    }
    // A gang's step may not have started when the first signal went (it would be lost): again each poll.
    if (a.gang && a.kill_at > 0 && wall - a.signalled_at >= options_.poll_interval_s) signal_stop(a);
    if (a.kill_at > 0 && wall >= a.kill_at) {
      run_command({"scancel", a.slurm_id}, options_.command_timeout_s);
      a.kill_at = 0;
    }
    ++it;
  }
  return update;
}

std::optional<sched::ExitStatus> SlurmExecutor::reattach(const sched::Launch& launch, int64_t pid) {
  const auto jobs = queue();
  // The id the store recorded (before job arrays), else the one written beside the attempt when submitted;
  // neither: it was never submitted.
  const std::string id = pid > 0 ? std::to_string(pid) : recorded_slurm_id(launch.run_dir, launch.attempt_id);
  const auto found = jobs ? jobs->find(id) : std::map<std::string, std::string>::const_iterator{};
  // Unknown (squeue does not answer) counts as alive: the next polls decide.
  if (!id.empty() && (!jobs || (found != jobs->end() && alive(found->second)))) {
    Attempt a;
    a.attempt_id = launch.attempt_id;
    a.slurm_id = id;
    a.run_dir = launch.run_dir;
    a.events_offset = launch.events_offset;
    a.gang = launch.slots.size() > 1;
    if (jobs) a.state = found->second;
    attempts_[launch.job] = a;
    return std::nullopt;
  }
  sched::ExitStatus status = read_attempt_exit(attempt_exit_path(launch.run_dir, launch.attempt_id));
  status.job = launch.job;
  status.attempt_id = launch.attempt_id;
  return status;
}

}  // namespace ragmig::exec
