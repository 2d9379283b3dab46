// Need strings, job specs as JSON (how the store keeps them) and as TOML job files (how users write them).
#include "sched/job.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "core/config_table.h"
#include "core/error.h"
#include "core/shell_words.h"
#include "core/strings.h"

namespace ragmig::sched {
namespace {

int64_t parse_positive(const std::string& digits, const std::string& text, const char* what) {
  if (const auto value = whole_number(digits, 1, 1'000'000)) return *value;
  throw ConfigError(fmt::format("slots '{}': {} must be a whole number from 1, got '{}'", text, what, digits));
}

// Matches "<1 to 4 digits>gb" at `pos`; returns the position after it (0 when it does not match) and the digits.
size_t match_memory(const std::string& w, size_t pos, std::string* digits) {
  size_t end = pos;
  while (end < w.size() && end - pos < 5 && std::isdigit(static_cast<unsigned char>(w[end]))) ++end;
  if (end == pos || end - pos > 4 || w.compare(end, 2, "gb") != 0) return 0;
  *digits = w.substr(pos, end - pos);
  return end + 2;
}

// Matches a whole MIG profile name "<1-7>g.<1 to 4 digits>gb[+<lowercase letters>]" (what parse_need accepts
// as a profile; a hand-written matcher because this runs for every job the store reads).
bool match_profile(const std::string& w, std::string* gb) {
  if (w.size() < 6 || w[0] < '1' || w[0] > '7' || w[1] != 'g' || w[2] != '.') return false;
  const size_t end = match_memory(w, 3, gb);
  if (end == 0) return false;
  if (end == w.size()) return true;
  if (w[end] != '+' || end + 1 == w.size()) return false;
  return std::all_of(w.begin() + static_cast<std::ptrdiff_t>(end) + 1, w.end(), [](char c) { return c >= 'a' && c <= 'z'; });
}

}  // namespace

Need parse_need(const std::string& text) {
  const auto colon = text.rfind(':');
  const std::string what = text.substr(0, colon);
  Need need;
  need.what = what;
  if (colon != std::string::npos) need.replicas = static_cast<int>(parse_positive(text.substr(colon + 1), text, "the replica count"));
  // MIG profile names carry their size: <compute>g.<memory>gb, optionally +me (media extensions) or similar.
  std::string gb;
  if (what == "cpu") {
    need.cpu = true;
  } else if (what == "gpu") {
    need.cpu = false;
    need.min_compute = 7;
  } else if (match_profile(what, &gb)) {
    need.cpu = false;
    need.min_compute = what[0] - '0';
    need.min_memory_mb = parse_positive(gb, text, "the memory") * 1024;
  } else if (!what.empty() && match_memory(what, 0, &gb) == what.size()) {
    need.cpu = false;
    need.min_compute = 1;
    need.min_memory_mb = parse_positive(gb, text, "the memory") * 1024;
  } else {
    throw ConfigError(fmt::format(
        "slots '{}': expected <what>[:<replicas>] with <what> one of cpu, gpu, a MIG profile such as 1g.18gb, "
        "or a memory need such as 20gb",
        text));
  }
  return need;
}

std::string to_string(const Need& need) { return fmt::format("{}:{}", need.what, need.replicas); }

nlohmann::json to_json(const JobSpec& spec) {
  nlohmann::json j = {{"name", spec.name},         {"argv", spec.argv},
                      {"cwd", spec.cwd},           {"slots", to_string(spec.need)},
                      {"priority", spec.priority}, {"estimate_s", spec.estimate_s},
                      {"max_retries", spec.max_retries}};
  if (spec.batch_size > 0) j["batch_size"] = spec.batch_size;
  if (spec.min_batch_size > 0) j["min_batch_size"] = spec.min_batch_size;
  if (spec.work.flops > 0) {
    j["work"] = {
        {"flops", spec.work.flops}, {"step_flops", spec.work.step_flops}, {"batch_size", spec.work.batch_size}};
    if (spec.work.steps > 0) j["work"]["steps"] = spec.work.steps;
    if (!spec.work.eval_steps.empty()) j["work"]["eval_steps"] = spec.work.eval_steps;
  }
  return j;
}

JobSpec job_spec_from_json(const nlohmann::json& j, const std::string& where) {
  try {
    JobSpec spec;
    spec.name = j.at("name").get<std::string>();
    spec.argv = j.at("argv").get<std::vector<std::string>>();
    spec.cwd = j.value("cwd", std::string());
    spec.need = parse_need(j.at("slots").get<std::string>());
    spec.priority = j.at("priority").get<int64_t>();
    spec.estimate_s = j.at("estimate_s").get<double>();
    spec.max_retries = j.at("max_retries").get<int64_t>();
    spec.batch_size = j.value("batch_size", int64_t{0});
    spec.min_batch_size = j.value("min_batch_size", int64_t{0});
    if (const auto work = j.find("work"); work != j.end()) {
      spec.work.flops = work->at("flops").get<double>();
      spec.work.step_flops = work->at("step_flops").get<double>();
      spec.work.batch_size = work->at("batch_size").get<int64_t>();
      spec.work.steps = work->value("steps", int64_t{0});
      spec.work.eval_steps = work->value("eval_steps", std::vector<int64_t>{});
    }
    return spec;
  } catch (const nlohmann::json::exception& e) {
    throw DataError(where + ": job spec: " + e.what());
  } catch (const ConfigError& e) {
    throw DataError(where + ": job spec: " + e.what());
  }
}

JobSpec read_job_file(const std::string& path) {
  JobSpec spec;
  std::string cmd, slots = to_string(spec.need);
  ConfigTable table;
  table.add("job.name", spec.name, "a name to recognise the job by in `ragmig status`");
  table.add("job.argv", spec.argv, "the command, one string per argument; \"ragmig\" runs this ragmig");
  table.add("job.cmd", cmd, "the command as one line, split like a shell would (no pipes or redirections)");
  table.add("job.slots", slots, "cpu:N | gpu:N | <MIG profile>:N | <memory>gb:N");
  table.add("job.priority", spec.priority, "larger runs first under the priority policy");
  table.add("job.estimate_s", spec.estimate_s, "expected seconds of work on a speed-1 slot (0 = unknown)");
  table.add("job.max_retries", spec.max_retries, "failed attempts retried with back-off before the job fails");
  table.add("job.batch_size", spec.batch_size,
            "the global batch the command trains at, with the memory job.slots names (0 = not resizable)");
  table.add("job.min_batch_size", spec.min_batch_size,
            "the least batch a policy with +dynbatch may start or shrink it at (0 = never resized)");
  table.load_file(path);
  if (!cmd.empty() && !spec.argv.empty()) throw ConfigError(path + ": give job.argv or job.cmd, not both");
  if (!cmd.empty()) {
    try {
      spec.argv = split_shell_words(cmd);
    } catch (const ConfigError& e) {
      throw ConfigError(path + ": job.cmd: " + e.what());
    }
  }
  try {
    spec.need = parse_need(slots);
    validate(spec);
  } catch (const ConfigError& e) {
    throw ConfigError(path + ": " + e.what());
  }
  return spec;
}

void validate(const JobSpec& spec) {
  if (spec.argv.empty() || spec.argv[0].empty()) throw ConfigError("job has no command (job.argv or job.cmd)");
  if (spec.need.replicas < 1) throw ConfigError("job needs at least one slot");
  if (spec.max_retries < 0) throw ConfigError("job.max_retries must be >= 0");
  if (!(spec.estimate_s >= 0)) throw ConfigError("job.estimate_s must be >= 0");
  if (spec.batch_size < 0 || spec.min_batch_size < 0) throw ConfigError("job.batch_size and job.min_batch_size must be >= 0");
  if (spec.min_batch_size > 0 && spec.batch_size == 0)
    throw ConfigError("job.min_batch_size needs job.batch_size (the batch the command trains at)");
  if (spec.min_batch_size > spec.batch_size)
    throw ConfigError(fmt::format("job.min_batch_size {} exceeds job.batch_size {}", spec.min_batch_size, spec.batch_size));
  const auto& w = spec.work;
  if (!(w.flops >= 0) || !(w.step_flops >= 0) || w.batch_size < 0 || (w.step_flops > 0 && w.batch_size == 0) ||
      (w.step_flops > 0 && !(w.flops > 0)))
    throw ConfigError(fmt::format("job's work: flops {} and step_flops {} must be >= 0, and steps need flops and "
                                  "their batch_size (> 0; it is {})",
                                  w.flops, w.step_flops, w.batch_size));
  if (w.steps < 0 || (w.steps > 0 && !(w.step_flops > 0)) ||
      static_cast<double>(w.steps) * w.step_flops > w.flops * (1 + 1e-9))
    throw ConfigError(fmt::format("job's work: {} steps of {} FLOPs must be >= 0, have step_flops and fit in its "
                                  "{} FLOPs",
                                  w.steps, w.step_flops, w.flops));
  for (const int64_t at : w.eval_steps)
    if (at < 0 || at > w.steps)
      throw ConfigError(fmt::format("job's work: an evaluation after step {} of its {} steps", at, w.steps));
}

std::string to_string(JobState state) {
  switch (state) {
    case JobState::Queued: return "queued";
    case JobState::Running: return "running";
    case JobState::Done: return "done";
    case JobState::Failed: return "failed";
    case JobState::Cancelled: return "cancelled";
  }
  return "?";
}

JobState parse_job_state(const std::string& text) {
  for (auto s : {JobState::Queued, JobState::Running, JobState::Done, JobState::Failed, JobState::Cancelled})
    if (to_string(s) == text) return s;
  throw DataError("unknown job state '" + text + "'");
}

bool is_terminal(JobState state) {
  return state == JobState::Done || state == JobState::Failed || state == JobState::Cancelled;
}

}  // namespace ragmig::sched
