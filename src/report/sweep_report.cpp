// A sweep's report data (see sweep_report.h).
#include "report/sweep_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "report/svg.h"
#include "sched/job_event.h"

namespace ragmig::report {
namespace {

// Sort key: smaller ranks higher.
std::tuple<int, double, double> rank_key(const LeaderRow& r) {
  if (r.state == "done") return {0, -(r.metric ? *r.metric : -1e300), 0};
  if (r.state == "running" || r.state == "waiting" || r.state == "evaluating" || r.state == "queued") return {1, 0, 0};
  if (r.state == "stopped") {
    const double furthest = r.rungs.empty() ? 0 : static_cast<double>(r.rungs.back().step);
    const double value = r.rungs.empty() || std::isnan(r.rungs.back().value) ? 1e300 : -r.rungs.back().value;
    return {2, -furthest, value};
  }
  return {3, 0, 0};
}

// The columns a trial and a baseline share.
LeaderRow scored_row(const std::string& id, const std::string& state, const hpo::Scored& scores) {
  LeaderRow row;
  row.trial = id;
  row.state = state;
  row.metric = scores.metric;
  row.hybrid = scores.hybrid;
  row.fusion = scores.fusion;
  return row;
}

}  // namespace

std::vector<LeaderRow> leaderboard(const std::vector<hpo::TrialStatus>& trials,
                                   const std::vector<hpo::BaselineStatus>& baselines) {
  std::vector<LeaderRow> rows;
  for (const auto& t : trials) {
    LeaderRow row = scored_row(t.id, t.state, t);
    for (const auto& r : t.rungs) row.rungs.push_back({r.step, r.value, hpo::to_string(r.action)});
    row.steps = t.steps;
    row.wall_s = t.wall_s;
    row.flops = t.flops;
    row.estimate_s = t.estimate_s;
    row.slot = t.slot;
    for (const auto& [key, value] : t.params) row.params.emplace_back(key, hpo::value_text(value));
    rows.push_back(std::move(row));
  }
  for (const auto& b : baselines) {
    LeaderRow row = scored_row(b.id, b.state, b);
    row.baseline = true;
    rows.push_back(std::move(row));
  }
  std::stable_sort(rows.begin(), rows.end(), [](const LeaderRow& a, const LeaderRow& b) { return rank_key(a) < rank_key(b); });
  return rows;
}

Series allocation(const std::vector<Span>& spans, const std::map<std::string, int>& compute, int capacity,
                  double horizon_s) {
  std::vector<std::pair<double, int>> edges;  // (time, +slices / -slices)
  for (const auto& s : spans) {
    const auto c = compute.find(s.slot);
    const int slices = c == compute.end() ? 1 : c->second;
    edges.emplace_back(s.start, slices);
    edges.emplace_back(s.end, -slices);
  }
  std::sort(edges.begin(), edges.end());
  const double total = std::max(1, capacity);
  Series out;
  out.name = "allocated";
  out.points.emplace_back(0, 0);
  int busy = 0;
  for (size_t i = 0; i < edges.size(); ++i) {
    busy += edges[i].second;
    if (i + 1 < edges.size() && edges[i + 1].first == edges[i].first) continue;
    out.points.emplace_back(edges[i].first, busy / total);
  }
  out.points.emplace_back(horizon_s, busy / total);
  return out;
}

namespace {

// Time zero of a sweep's report: its first submission.
double sweep_start(const hpo::SweepDriver& driver, sched::Store& store, double now) {
  double t0 = now;
  for (const auto& t : driver.trials())
    if (const auto job = store.job(t.train_job)) t0 = std::min(t0, job->submitted_at);
  for (const auto& b : driver.baselines())
    if (const auto job = store.job(b.eval_job)) t0 = std::min(t0, job->submitted_at);
  return t0;
}

// Every attempt of the sweep's jobs on each slot it held, from t0; slots not yet in d.slots are added.
void add_schedule(const hpo::SweepDriver& driver, sched::Store& store, double t0, double now, ReportData& d) {
  // `group` is the trial or baseline the job belongs to; a cancelled training of a trial ASHA stopped is "stopped".
  const auto add_spans = [&](const std::string& group, bool stopped, sched::JobId job, const std::string& label) {
    if (job == 0) return;
    for (const auto& a : store.attempts(job)) {
      const double end = a.ended_at > 0 ? a.ended_at : now;
      std::string outcome = a.outcome.empty() ? "running" : a.outcome;
      if (outcome == "cancelled" && stopped) outcome = "stopped";
      for (const auto& slot : a.slots) {
        d.spans.push_back({slot, label, group, a.started_at - t0, end - t0, outcome});
        if (std::find(d.slots.begin(), d.slots.end(), slot) == d.slots.end()) d.slots.push_back(slot);
      }
    }
  };
  for (const auto& b : driver.baselines()) add_spans(b.id, false, b.eval_job, hpo::eval_job_name(b.id));
  for (const auto& t : driver.trials()) {
    add_spans(t.id, t.state == "stopped", t.train_job, t.id);
    add_spans(t.id, false, t.eval_job, hpo::eval_job_name(t.id));
  }
}

// Loss curves from the workers' progress events, one a trial that reported any.
std::vector<Series> loss_curves(const std::vector<hpo::TrialStatus>& trials, sched::Store& store) {
  std::vector<Series> out;
  for (const auto& t : trials) {
    Series s;
    s.name = t.id;
    for (const auto& line : store.events(t.train_job)) {
      const sched::JobEvent e = sched::read_job_event(nlohmann::json::parse(line, nullptr, false));
      if (e.kind == "progress" && e.step && e.loss) s.points.emplace_back(static_cast<double>(*e.step), *e.loss);
    }
    std::stable_sort(s.points.begin(), s.points.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    if (!s.points.empty()) out.push_back(std::move(s));
  }
  return out;
}

// Alerts (monitor/alert.h's JSON) in the order they fired: each firing row, closed by the cleared row of the same
// rule, job and slot; named by the trial or baseline of their job.
std::vector<AlertRow> alert_rows(const hpo::SweepDriver& driver, sched::Store& store, double t0) {
  std::map<sched::JobId, std::string> trial_of_job;
  for (const auto& t : driver.trials()) {
    if (t.train_job) trial_of_job[t.train_job] = t.id;
    if (t.eval_job) trial_of_job[t.eval_job] = hpo::eval_job_name(t.id);
  }
  for (const auto& b : driver.baselines()) trial_of_job[b.eval_job] = hpo::eval_job_name(b.id);
  std::vector<AlertRow> out;
  std::map<std::string, size_t> open_alert;
  for (const auto& stored : store.alerts()) {
    const auto a = nlohmann::json::parse(stored.body, nullptr, false);
    if (!a.is_object() || !a.contains("rule") || !a["rule"].is_string() || !a.contains("at") || !a["at"].is_number())
      continue;
    const sched::JobId job = a.contains("job") && a["job"].is_number_integer() ? a["job"].get<sched::JobId>() : 0;
    const std::string slot = a.contains("slot") && a["slot"].is_string() ? a["slot"].get<std::string>() : "";
    const std::string key = fmt::format("{}|{}|{}", a["rule"].get<std::string>(), job, slot);
    const double at = a["at"].get<double>() - t0;
    if (a.value("state", "") == "cleared") {
      if (const auto it = open_alert.find(key); it != open_alert.end()) {
        out[it->second].cleared_after_s = std::max(0.0, at - out[it->second].at);
        open_alert.erase(it);
      }
      continue;
    }
    if (open_alert.count(key)) continue;
    AlertRow row;
    row.at = at;
    row.rule = a["rule"].get<std::string>();
    const auto trial = trial_of_job.find(job);
    row.subject = trial != trial_of_job.end() ? trial->second : job ? fmt::format("job {}", job) : slot;
    row.message = a.value("message", std::string());
    open_alert[key] = out.size();
    out.push_back(std::move(row));
  }
  return out;
}

// The headline cards: trials and their states, the best trial alone and fused, wall time, alerts, steps trained.
std::vector<SummaryCard> summary_cards(const hpo::SweepPlan& plan, const std::vector<hpo::TrialStatus>& trials,
                                       const ReportData& d) {
  std::vector<SummaryCard> out;
  std::map<std::string, int> count;
  int64_t steps = 0;
  for (const auto& t : trials) ++count[t.state], steps += t.steps;
  out.push_back({"trials", std::to_string(trials.size())});
  out.push_back({"done", std::to_string(count["done"])});
  out.push_back({"stopped by ASHA", std::to_string(count["stopped"])});
  if (count["failed"] + count["cancelled"] > 0)
    out.push_back({"failed / cancelled", fmt::format("{} / {}", count["failed"], count["cancelled"])});
  // The best trial (the model to keep), whether or not a baseline scores higher.
  const auto best = std::find_if(d.leaderboard.begin(), d.leaderboard.end(),
                                 [](const LeaderRow& r) { return !r.baseline && r.metric; });
  if (best != d.leaderboard.end())
    out.push_back({"best " + d.metric_name, fmt::format("{:.4f}", *best->metric), best->trial});
  const LeaderRow* best_hybrid = nullptr;
  for (const auto& r : d.leaderboard)
    if (r.hybrid && (!best_hybrid || *r.hybrid > *best_hybrid->hybrid)) best_hybrid = &r;
  if (best_hybrid)
    out.push_back({"best hybrid with BM25", fmt::format("{:.4f}", *best_hybrid->hybrid),
                   best_hybrid->trial + " \u00b7 " + best_hybrid->fusion});
  out.push_back({"wall time", format_duration(d.horizon_s)});
  if (!d.alerts.empty()) out.push_back({"alerts", std::to_string(d.alerts.size())});
  const double budget = static_cast<double>(plan.max_steps) * static_cast<double>(trials.size());
  if (budget > 0)
    out.push_back({"steps trained", fmt::format("{:.0f} %", 100.0 * static_cast<double>(steps) / budget),
                   fmt::format("of {} x {}", trials.size(), plan.max_steps)});
  return out;
}

}  // namespace

ReportData sweep_report(const hpo::SweepDriver& driver, sched::Store& store, const SweepReportInput& input) {
  const hpo::SweepPlan& plan = driver.plan();
  ReportData d;
  d.title = "Sweep " + plan.spec.name;
  d.subtitle = fmt::format("{} · generated {}", plan.spec.path, input.generated_at);
  d.metric_name = plan.spec.eval.metric;
  d.rung_metric_name = plan.rung_metric();
  d.slots = input.slots;

  const double t0 = sweep_start(driver, store, input.now);
  add_schedule(driver, store, t0, input.now, d);
  // Until now while the sweep runs; a finished one's ends with its last attempt, however much later the report
  // is written again (`ragmig batch` run again on it).
  d.horizon_s = std::max(0.0, input.now - t0);
  const bool finished = driver.finished() && !d.spans.empty();
  if (finished) {
    d.horizon_s = 0;
    for (const auto& span : d.spans) d.horizon_s = std::max(d.horizon_s, span.end);
  }
  d.allocated = allocation(d.spans, input.slot_compute,
                           input.capacity > 0 ? input.capacity : static_cast<int>(d.slots.size()), d.horizon_s);
  d.measured.name = "measured";
  for (const auto& [at, value] : input.measured)
    if (!finished || at - t0 <= d.horizon_s) d.measured.points.emplace_back(at - t0, value);

  d.loss = loss_curves(driver.trials(), store);
  d.leaderboard = leaderboard(driver.trials(), driver.baselines());
  d.alerts = alert_rows(driver, store, t0);
  d.summary = summary_cards(plan, driver.trials(), d);
  d.environment = input.environment;
  return d;
}

}  // namespace ragmig::report
