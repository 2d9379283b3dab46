// The sweep driver (see sweep_driver.h).
#include "hpo/sweep_driver.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>

#include "core/atomic_file.h"
#include "core/error.h"
#include "core/event_log.h"
#include "hpo/asha_log.h"
#include "sched/job_event.h"

namespace ragmig::hpo {
namespace {

AshaConfig asha_config(const SweepPlan& plan) {
  AshaConfig c;
  c.min_steps = plan.spec.asha.min_steps;
  c.reduction_factor = plan.spec.asha.reduction_factor;
  c.max_steps = plan.max_steps;
  c.maximize = true;
  return c;
}

// The highest rung at or below `step`, or 0 when there is none.
int64_t rung_at(const std::vector<int64_t>& rungs, int64_t step) {
  int64_t found = 0;
  for (int64_t r : rungs)
    if (r <= step) found = r;
  return found;
}

std::optional<nlohmann::json> read_json_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw DataError(path + ": not a JSON evaluation result: " + e.what());
  }
}

// "metric" (null until scored), and "hybrid" and "fusion" when fused.
void put_scores(nlohmann::json& row, const Scored& s) {
  row["metric"] = s.metric ? nlohmann::json(*s.metric) : nlohmann::json(nullptr);
  if (s.hybrid) row["hybrid"] = *s.hybrid, row["fusion"] = s.fusion;
}

bool is_final_evaluation(const std::string& state) {
  return state == "done" || state == "failed" || state == "cancelled";
}

}  // namespace

bool is_final(const std::string& s) { return s == "done" || s == "stopped" || s == "failed" || s == "cancelled"; }

SweepDriver::SweepDriver(SweepPlan plan, sched::Store& store, sched::Scheduler& scheduler, sched::Clock& clock)
    : plan_(std::move(plan)), store_(store), scheduler_(scheduler), clock_(clock), asha_(asha_config(plan_)) {
  for (size_t i = 0; i < plan_.trials.size(); ++i) {
    TrialStatus t;
    t.id = trial_id(i);
    t.params = plan_.trials[i];
    if (i < plan_.trial_work.size()) t.flops = plan_.trial_work[i].flops;
    index_of_[t.id] = i;
    trials_.push_back(std::move(t));
  }
  for (const auto& id : plan_.spec.eval.baselines) {
    BaselineStatus b;
    b.id = id;
    baselines_.push_back(std::move(b));
  }
  events_seen_.assign(trials_.size(), 0);
  training_over_.assign(trials_.size(), false);
  windows_.assign(trials_.size(), sched::ProgressWindow());
  speeds_.assign(trials_.size(), 1.0);
}

std::string SweepDriver::asha_log_path() const { return (std::filesystem::path(plan_.dir) / "asha.jsonl").string(); }

void SweepDriver::start() {
  // Replay the decisions of earlier drivers, in the order they were taken.
  if (std::filesystem::exists(asha_log_path())) {
    std::set<std::string> ids;
    for (const auto& [id, index] : index_of_) ids.insert(id);
    for (const AshaLogEntry& e : replay_asha_log(read_file(asha_log_path()), asha_log_path(), ids, asha_))
      trials_[index_of_.at(e.trial)].rungs.push_back({e.step, e.value, e.action});
  }
  // Match trials to the jobs a previous driver submitted, by name; submit the rest.
  std::map<std::string, sched::JobId> by_name;
  for (const auto& job : store_.jobs(/*active_only=*/false)) by_name[job.spec.name] = job.id;
  // Baselines first: under the sweep's policy they run before the trials' evaluations at the same priority.
  for (size_t i = 0; i < baselines_.size(); ++i) {
    BaselineStatus& b = baselines_[i];
    if (const auto it = by_name.find(eval_job_name(b.id)); it != by_name.end()) b.eval_job = it->second;
    else b.eval_job = scheduler_.submit(baseline_job(plan_, b.id));
    refresh_baseline(i);
  }
  for (size_t i = 0; i < trials_.size(); ++i) {
    TrialStatus& t = trials_[i];
    if (const auto it = by_name.find(t.id); it != by_name.end()) t.train_job = it->second;
    else t.train_job = scheduler_.submit(train_job(plan_, i));
    if (const auto it = by_name.find(eval_job_name(t.id)); it != by_name.end()) t.eval_job = it->second;
    if (asha_.stopped(t.id)) scheduler_.cancel(t.train_job, "stopped by ASHA");
    refresh(i);
  }
}

void SweepDriver::take_rung(size_t index, int64_t step, double value) {
  TrialStatus& t = trials_[index];
  const int64_t rung = rung_at(asha_.rungs(), step);
  if (rung == 0 || step >= plan_.max_steps) return;  // not a rung evaluation (the final one, or none)
  if (const auto r = asha_.recorded().find(rung); r != asha_.recorded().end() && r->second.count(t.id)) return;
  if (asha_.stopped(t.id)) return;
  if (plan_.spec.asha.order == "trial") waiting_[rung].emplace(index, std::make_pair(step, value));
  else decide(index, step, value);
}

bool SweepDriver::never_reports(size_t index) const {
  // Stopped at an earlier rung, or its training is over without a report here (failed, cancelled, or resumed
  // past the rung: Asha::report's "lower rungs it skipped stay unreported").
  return asha_.stopped(trials_[index].id) || training_over_[index];
}

void SweepDriver::decide_in_trial_order() {
  for (const int64_t rung : asha_.rungs()) {
    size_t& next = settled_[rung];
    auto& reports = waiting_[rung];
    while (next < trials_.size()) {
      const auto& recorded = asha_.recorded();
      if (const auto r = recorded.find(rung); r != recorded.end() && r->second.count(trials_[next].id)) {
        ++next;
      } else if (const auto w = reports.find(next); w != reports.end()) {
        const auto [step, value] = w->second;
        reports.erase(w);
        if (!asha_.stopped(trials_[next].id)) decide(next, step, value);
        ++next;
      } else if (never_reports(next)) {
        ++next;
      } else {
        break;  // an earlier trial may still report here: later ones wait for it
      }
    }
  }
}

void SweepDriver::decide(size_t index, int64_t step, double value) {
  TrialStatus& t = trials_[index];
  const AshaAction action = asha_.report(t.id, step, value);
  EventLog(asha_log_path()).append(to_json(AshaLogEntry{t.id, step, value, action}));
  t.rungs.push_back({step, value, action});
  changed_ = true;
  if (action == AshaAction::Stop && !training_over_[index]) scheduler_.cancel(t.train_job, stop_reason(t.rungs.back()));
}

std::string SweepDriver::stop_reason(const RungResult& rung) const {
  return fmt::format("stopped by ASHA at step {}: {} {:.4f} below the rung's cutoff", rung.step, plan_.rung_metric(),
                     rung.value);
}

void SweepDriver::read_events(size_t index) {
  TrialStatus& t = trials_[index];
  for (const auto& stored : store_.events_after(t.train_job, events_seen_[index])) {
    events_seen_[index] = stored.seq;
    nlohmann::json ev = nlohmann::json::parse(stored.body, nullptr, /*allow_exceptions=*/false);
    if (!ev.is_object()) continue;
    const sched::JobEvent e = sched::read_job_event(ev);
    if (e.kind == "start") windows_[index].restart();
    if (e.kind == "progress" && e.step && e.time && e.batch_size) windows_[index].add(*e.step, *e.time, *e.batch_size);
    if (e.kind == "eval" && e.step) {
      const auto value = ev.find(plan_.rung_metric());
      if (value != ev.end() && value->is_number()) take_rung(index, *e.step, value->get<double>());
    }
  }
}

bool SweepDriver::refresh(size_t index) {
  TrialStatus& t = trials_[index];
  if (is_final(t.state)) return false;
  const std::string before = t.state;
  const auto job = store_.job(t.train_job);
  if (!job) throw InternalError(fmt::format("trial {}: job {} is missing from the store", t.id, t.train_job));
  read_events(index);
  training_over_[index] = job->state == sched::JobState::Done || job->state == sched::JobState::Failed ||
                          job->state == sched::JobState::Cancelled;
  t.steps = std::max({t.steps, job->step, job->checkpoint_step});
  t.wall_s = 0;
  const auto attempts = store_.attempts(t.train_job);
  for (const auto& a : attempts) {
    const double end = a.ended_at > 0 ? a.ended_at : std::max(a.started_at, clock_.now());
    t.wall_s += std::max(0.0, end - a.started_at);
  }
  if (!attempts.empty()) {  // where it trained last, and that attempt's speed (its slowest slot's: JobView::work_s)
    t.slot.clear();
    double speed = 1e300;
    for (const auto& s : attempts.back().slots) {
      t.slot += (t.slot.empty() ? "" : "+") + s;
      for (const auto& slot : scheduler_.slots())
        if (slot.id == s) speed = std::min(speed, slot.speed);
    }
    speeds_[index] = speed < 1e300 ? speed : 1.0;
  }
  switch (job->state) {
    case sched::JobState::Queued: t.state = "queued"; break;
    case sched::JobState::Running: t.state = "running"; break;
    case sched::JobState::Failed: t.state = "failed", t.reason = job->reason; break;
    case sched::JobState::Cancelled:
      t.state = asha_.stopped(t.id) ? "stopped" : "cancelled";
      t.reason = job->reason;
      if (asha_.stopped(t.id) && !t.rungs.empty()) t.reason = stop_reason(t.rungs.back());
      break;
    case sched::JobState::Done: {
      // Trained past a rung whose decision waits for earlier trials (order = "trial"): not evaluated until it
      // is taken, and stopped if it says so, whenever the training ended.
      if (asha_.stopped(t.id)) {
        t.state = "stopped";
        t.reason = stop_reason(t.rungs.back());
        break;
      }
      const bool undecided = std::any_of(waiting_.begin(), waiting_.end(),
                                         [&](const auto& rung) { return rung.second.count(index) > 0; });
      if (undecided) {
        t.state = "waiting";
        break;
      }
      if (t.eval_job == 0) {
        const auto model_dir = std::filesystem::path(store_.run_dir(t.train_job)) / "model";
        t.eval_job = scheduler_.submit(eval_job(plan_, index, model_dir.string()));
      }
      const Evaluation e = evaluation(t.eval_job, t.id);
      t.state = e.state == "queued" ? "evaluating" : e.state;
      if (e.state == "failed" || e.state == "cancelled") t.reason = "evaluation: " + e.reason;
      if (e.scores) t.take(*e.scores);
      break;
    }
  }
  return t.state != before;
}

SweepDriver::Evaluation SweepDriver::evaluation(sched::JobId job_id, const std::string& name) const {
  const auto job = store_.job(job_id);
  if (!job) throw InternalError(fmt::format("{}: evaluation job {} is missing from the store", name, job_id));
  switch (job->state) {
    case sched::JobState::Queued: return {"queued", std::nullopt, ""};
    case sched::JobState::Running: return {"evaluating", std::nullopt, ""};
    case sched::JobState::Failed: return {"failed", std::nullopt, job->reason};
    case sched::JobState::Cancelled: return {"cancelled", std::nullopt, job->reason};
    case sched::JobState::Done: break;
  }
  const std::string path = eval_result_path(plan_, name);
  try {
    const auto result = read_json_file(path);
    if (!result) return {"failed", std::nullopt, "the evaluation wrote no result to " + path};
    return {"done", eval_scores(*result, plan_.spec.eval.metric, path), ""};
  } catch (const DataError& e) {
    return {"failed", std::nullopt, e.what()};
  }
}

bool SweepDriver::refresh_baseline(size_t index) {
  BaselineStatus& b = baselines_[index];
  if (is_final_evaluation(b.state)) return false;
  const std::string before = b.state;
  const Evaluation e = evaluation(b.eval_job, b.id);
  b.state = e.state;
  b.reason = e.reason;
  if (e.scores) b.take(*e.scores);
  return b.state != before;
}

void SweepDriver::measure_rate() {
  if (plan_.trial_work.size() != trials_.size()) return;
  std::vector<double> rates;
  for (size_t i = 0; i < trials_.size(); ++i) {
    const auto& work = plan_.trial_work[i];
    if (const auto rate = windows_[i].rate(work.step_flops, work.batch_size, speeds_[i])) rates.push_back(*rate);
  }
  measured_rate_ = sched::median_rate(rates);
  if (measured_rate_)
    for (auto& t : trials_) t.estimate_s = t.flops / *measured_rate_;
}

bool SweepDriver::after_pass() {
  changed_ = false;
  bool changed = false;
  for (size_t i = 0; i < baselines_.size(); ++i) changed = refresh_baseline(i) || changed;
  for (size_t i = 0; i < trials_.size(); ++i) changed = refresh(i) || changed;
  if (plan_.spec.asha.order == "trial") {
    decide_in_trial_order();
    // A decision may settle a trial that waited for it: take it in this round.
    for (size_t i = 0; i < trials_.size(); ++i) changed = refresh(i) || changed;
  }
  measure_rate();
  return changed || changed_;
}

bool SweepDriver::finished() const {
  return std::all_of(trials_.begin(), trials_.end(), [](const TrialStatus& t) { return is_final(t.state); }) &&
         std::all_of(baselines_.begin(), baselines_.end(),
                     [](const BaselineStatus& b) { return is_final_evaluation(b.state); });
}

nlohmann::json SweepDriver::results_json() const {
  nlohmann::json trials = nlohmann::json::array();
  for (const auto& t : trials_) {
    const nlohmann::json params = to_json(t.params);
    nlohmann::json rungs = nlohmann::json::array();
    for (const auto& r : t.rungs) rungs.push_back({{"step", r.step}, {"value", r.value}, {"action", to_string(r.action)}});
    nlohmann::json row = {{"id", t.id},         {"params", params}, {"steps", t.steps},
                          {"wall_s", t.wall_s}, {"slot", t.slot},   {"state", t.state}, {"rungs", rungs},
                          {"train_job", t.train_job}, {"eval_job", t.eval_job}};
    if (t.flops > 0) row["flops"] = t.flops;
    if (t.estimate_s > 0) row["estimate_s"] = t.estimate_s;
    put_scores(row, t);
    if (!t.reason.empty()) row["reason"] = t.reason;
    trials.push_back(std::move(row));
  }
  nlohmann::json out = {{"sweep", plan_.spec.name},
                        {"metric", plan_.spec.eval.metric},
                        {"rung_metric", plan_.rung_metric()},
                        {"rungs", asha_.rungs()},
                        {"max_steps", plan_.max_steps},
                        {"flops_per_s", measured_rate_ ? nlohmann::json(*measured_rate_) : nlohmann::json(nullptr)},
                        {"trials", trials}};
  if (!baselines_.empty()) {
    nlohmann::json baselines = nlohmann::json::array();
    for (const auto& b : baselines_) {
      nlohmann::json row = {{"id", b.id}, {"state", b.state}, {"eval_job", b.eval_job}};
      put_scores(row, b);
      if (!b.reason.empty()) row["reason"] = b.reason;
      baselines.push_back(std::move(row));
    }
    out["baselines"] = std::move(baselines);
  }
  return out;
}

}  // namespace ragmig::hpo
