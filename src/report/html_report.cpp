// Page layout of the sweep report: header with summary cards, the three charts, leaderboard and environment
// tables. Styling is one inline stylesheet; colours of trials come from GroupColors so that the Gantt bars,
// loss lines and leaderboard swatches agree.
#include "report/html_report.h"

#include <algorithm>
#include <set>

#include "core/atomic_file.h"
#include "report/charts.h"
#include "report/svg.h"

namespace ragmig::report {
namespace {

constexpr const char* kStyle = R"css(
:root { color-scheme: light; }
* { box-sizing: border-box; }
body { margin: 0; background: #f3f4f6; color: #111827;
  font: 14px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
.page { max-width: 1240px; margin: 0 auto; padding: 28px 24px 36px; }
h1 { font-size: 26px; font-weight: 650; letter-spacing: -0.01em; margin: 0 0 4px; }
.subtitle { color: #6b7280; margin: 0 0 18px; }
.cards { display: flex; flex-wrap: wrap; gap: 12px; }
.card { flex: 1 1 auto; min-width: 120px; max-width: 240px; background: #fff; border: 1px solid #e5e7eb;
  border-radius: 10px; padding: 12px 14px; }
.card > div { white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
.card .k { font-size: 12px; color: #6b7280; text-transform: uppercase; letter-spacing: 0.04em; }
.card .v { font-size: 20px; font-weight: 600; font-variant-numeric: tabular-nums; }
.card .d { font-size: 12.5px; color: #6b7280; }
.panel { background: #fff; border: 1px solid #e5e7eb; border-radius: 10px; padding: 16px 18px; margin-top: 18px; }
h2 { font-size: 16px; font-weight: 600; margin: 0 0 2px; }
.note { color: #6b7280; font-size: 13px; margin: 0 0 12px; }
svg.chart { display: block; width: 100%; height: auto; }
.table-wrap { overflow-x: auto; }
table { border-collapse: collapse; width: 100%; font-size: 13px; font-variant-numeric: tabular-nums; }
th { text-align: left; font-weight: 600; color: #374151; background: #f9fafb; padding: 8px 10px;
  border-bottom: 1px solid #e5e7eb; vertical-align: bottom; }
td { padding: 7px 10px; border-bottom: 1px solid #f1f5f9; vertical-align: top; }
th.num, td.num { text-align: right; }
table.ranked td { white-space: nowrap; }
tr.best td { background: #f0fdf4; }
td.k { color: #6b7280; width: 220px; white-space: nowrap; }
.mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 12.5px; }
.swatch { display: inline-block; width: 10px; height: 10px; border-radius: 3px; margin-right: 7px; }
.badge { display: inline-block; padding: 0 8px; border-radius: 999px; font-size: 12px; font-weight: 500;
  background: #f3f4f6; color: #374151; }
.badge.done { background: #dcfce7; color: #166534; }
.badge.stopped { background: #fef3c7; color: #92400e; }
.badge.failed { background: #fee2e2; color: #991b1b; }
.badge.running { background: #dbeafe; color: #1e40af; }
.rungs { white-space: nowrap; }
.rungs .sep { color: #d1d5db; margin: 0 4px; }
.ok { color: #15803d; font-weight: 600; }
.stop { color: #b91c1c; font-weight: 600; }
.absent { color: #9ca3af; }
.legend { display: flex; flex-wrap: wrap; gap: 6px 18px; margin-top: 10px; font-size: 13px; color: #374151; }
.legend .line { display: inline-block; width: 22px; border-top: 3px solid; vertical-align: middle; margin-right: 6px; }
.legend .dashed { border-top-style: dashed; }
.legend .faded { opacity: 0.45; border-top-style: dotted; }
.legend .value { color: #6b7280; font-variant-numeric: tabular-nums; }
.empty { color: #6b7280; font-style: italic; margin: 4px 0; }
footer { color: #9ca3af; font-size: 12px; margin-top: 20px; text-align: center; }
)css";

// Only states we style get a class; anything else is shown as plain text in a grey badge.
std::string badge(const std::string& state) {
  static const std::set<std::string> styled = {"done", "stopped", "failed", "running"};
  std::string cls = styled.count(state) ? "badge " + state : "badge";
  return "<span class=\"" + cls + "\">" + escape_html(state.empty() ? "\u2014" : state) + "</span>";
}

std::string swatch(const std::string& colour) {
  return "<span class=\"swatch\" style=\"background:" + colour + "\"></span>";
}

// A parameter's dotted key ("train.temperature") may break after its dots when its column is narrow.
std::string breakable_key(const std::string& key) {
  std::string out;
  for (char c : escape_html(key)) out += c == '.' ? std::string(".<wbr>") : std::string(1, c);
  return out;
}

std::string rungs_cell(const std::vector<Rung>& rungs) {
  if (rungs.empty()) return "<span class=\"absent\">\u2014</span>";
  std::string out;
  for (size_t i = 0; i < rungs.size(); ++i) {
    if (i) out += "<span class=\"sep\">\u00b7</span>";
    out += escape_html(format_count(rungs[i].step)) + ": " + format_fixed(rungs[i].value, 3);
    if (rungs[i].decision == "continue") out += " <span class=\"ok\" title=\"continue\">\u2713</span>";
    else if (rungs[i].decision == "stop") out += " <span class=\"stop\" title=\"stop\">\u2715</span>";
    else if (!rungs[i].decision.empty()) out += " " + escape_html(rungs[i].decision);
  }
  return out;
}

void header(std::string& out, const ReportData& d) {
  out += "<header>\n<h1>" + escape_html(d.title.empty() ? "Sweep report" : d.title) + "</h1>\n";
  if (!d.subtitle.empty()) out += "<p class=\"subtitle\">" + escape_html(d.subtitle) + "</p>\n";
  if (!d.summary.empty()) {
    out += "<div class=\"cards\">\n";
    for (const auto& card : d.summary)
      out += "<div class=\"card\"><div class=\"k\">" + escape_html(card.key) + "</div><div class=\"v\">" +
             escape_html(card.value) + "</div>" +
             (card.detail.empty() ? ""
                                  : "<div class=\"d\" title=\"" + escape_html(card.detail) + "\">" +
                                        escape_html(card.detail) + "</div>") +
             "</div>\n";
    out += "</div>\n";
  }
  out += "</header>\n";
}

void loss_legend(std::string& out, const ReportData& d, const GroupColors& colours) {
  std::string items;
  for (const auto& s : d.loss) {
    if (s.points.empty()) continue;
    TrialLook look = trial_look(d, s.name);
    std::string cls = look == TrialLook::stopped ? "line dashed" : look == TrialLook::faded ? "line faded" : "line";
    items += "<span><span class=\"" + cls + "\" style=\"border-color:" + colours.of(s.name) + "\"></span>" +
             escape_html(s.name) + " <span class=\"value\">" + format_number(s.points.back().second, 3) +
             "</span></span>\n";
  }
  if (!items.empty()) out += "<div class=\"legend\">\n" + items + "</div>\n";
}

void leaderboard(std::string& out, const ReportData& d, const GroupColors& colours) {
  const bool work =  // trials counted by their FLOPs (sweeps of ragmig batch)
      std::any_of(d.leaderboard.begin(), d.leaderboard.end(), [](const LeaderRow& r) { return r.flops > 0; });
  // A column whose every row says the same is said once, in the note: the fusion when every model was fused the
  // same way, the slot when the trials all ran on one (the schedule shows it).
  std::set<std::string> fusions, slots;
  for (const auto& r : d.leaderboard) {
    if (r.hybrid) fusions.insert(r.fusion);
    if (!r.baseline) slots.insert(r.slot);
  }
  const bool hybrid = !fusions.empty(), fusion_column = fusions.size() > 1, slot_column = slots.size() > 1;
  out += "<section class=\"panel\">\n<h2>Leaderboard</h2>\n<p class=\"note\">Ranked best first by " +
         escape_html(d.metric_name) + "; rungs show " + escape_html(d.rung_metric_name) +
         " at each ASHA rung (\u2713 continued, \u2715 stopped)." +
         (std::any_of(d.leaderboard.begin(), d.leaderboard.end(), [](const LeaderRow& r) { return r.baseline; })
              ? " Baselines (BM25, the encoder before training) are evaluated the same way, for reference."
              : "") +
         (work ? " Work is a full run's training FLOPs, counted from its config; the estimate, those FLOPs at the"
                 " rate the sweep's trials measured, is what the scheduler's policy ranks trials by."
               : "") +
         (hybrid && !fusion_column ? " Every fused score is by " + escape_html(*fusions.begin()) + "." : "") +
         "</p>\n";
  if (d.leaderboard.empty()) {
    out += "<p class=\"empty\">no data</p>\n</section>\n";
    return;
  }
  std::vector<std::string> keys;  // every param key of any row, in order of first appearance
  std::set<std::string> seen;
  for (const auto& r : d.leaderboard)
    for (const auto& kv : r.params)
      if (seen.insert(kv.first).second) keys.push_back(kv.first);

  const std::string absent = "<td class=\"absent\">\u2014</td>";
  out += "<div class=\"table-wrap\">\n<table class=\"ranked\">\n<thead><tr><th class=\"num\">#</th><th>trial</th>"
         "<th>state</th><th class=\"num\">" + escape_html(d.metric_name) + "</th>" +
         (hybrid ? "<th class=\"num\">fused with BM25</th>" : "") + (fusion_column ? "<th>fusion</th>" : "") +
         "<th>rungs (" + escape_html(d.rung_metric_name) +
         ")</th><th class=\"num\">steps</th><th class=\"num\">wall time</th>" +
         (work ? "<th class=\"num\">work (estimate)</th>" : "") + (slot_column ? "<th>slot</th>" : "");
  for (const auto& k : keys) out += "<th>" + breakable_key(k) + "</th>";
  out += "</tr></thead>\n<tbody>\n";
  // The best trial is highlighted (the model to keep), even below a baseline that scores higher.
  const auto best = std::find_if(d.leaderboard.begin(), d.leaderboard.end(),
                                 [](const LeaderRow& r) { return !r.baseline && r.metric; });
  for (size_t i = 0; i < d.leaderboard.size(); ++i) {
    const LeaderRow& r = d.leaderboard[i];
    out += best != d.leaderboard.end() && &r == &*best ? "<tr class=\"best\">" : "<tr>";
    out += "<td class=\"num\">" + std::to_string(i + 1) + "</td>";
    out += "<td class=\"mono\">" + swatch(colours.of(r.trial)) + escape_html(r.trial) +
           (r.baseline ? " <span class=\"note\">baseline</span>" : "") + "</td>";
    out += "<td>" + badge(r.state) + "</td>";
    out += "<td class=\"num\">" + (r.metric ? format_fixed(*r.metric, 4) : "<span class=\"absent\">\u2014</span>") +
           "</td>";
    if (hybrid) out += r.hybrid ? "<td class=\"num\">" + format_fixed(*r.hybrid, 4) + "</td>" : absent;
    if (fusion_column) out += r.hybrid ? "<td class=\"mono\">" + escape_html(r.fusion) + "</td>" : absent;
    if (r.baseline) {  // evaluated, never trained: no rungs, steps, slot history or parameters
      out += absent + absent + absent + (work ? absent : "") + (slot_column ? absent : "");
      for (size_t k = 0; k < keys.size(); ++k) out += absent;
      out += "</tr>\n";
      continue;
    }
    out += "<td class=\"rungs\">" + rungs_cell(r.rungs) + "</td>";
    out += "<td class=\"num\">" + format_count(r.steps) + "</td>";
    out += "<td class=\"num\">" + format_duration(r.wall_s) + "</td>";
    if (work)  // what the scheduler ranks the trial by: its FLOPs, priced once the sweep has measured its rate
      out += r.flops > 0 ? "<td class=\"num\">" + format_flops(r.flops) +
                               (r.estimate_s > 0 ? " (" + format_duration(r.estimate_s) + ")" : "") + "</td>"
                         : absent;
    if (slot_column) out += "<td class=\"mono\">" + escape_html(r.slot) + "</td>";
    for (const auto& k : keys) {
      const std::string* value = nullptr;
      for (const auto& kv : r.params)
        if (kv.first == k) value = &kv.second;
      out += value ? "<td class=\"mono\">" + escape_html(*value) + "</td>" : absent;
    }
    out += "</tr>\n";
  }
  out += "</tbody>\n</table>\n</div>\n</section>\n";
}

void alerts(std::string& out, const ReportData& d) {
  out += "<section class=\"panel\">\n<h2>Alerts</h2>\n<p class=\"note\">Raised by the scheduler's monitor: stalls, "
         "NaN or exploding loss, idle slots while jobs wait, memory, out-of-memory exits, crash loops, a missed "
         "deadline ([alerts] in the sweep file sets the thresholds).</p>\n";
  if (d.alerts.empty()) {
    out += "<p class=\"empty\">none fired</p>\n</section>\n";
    return;
  }
  out += "<div class=\"table-wrap\">\n<table>\n<thead><tr><th class=\"num\">at</th><th>rule</th><th>about</th>"
         "<th>what</th><th class=\"num\">lasted</th></tr></thead>\n<tbody>\n";
  for (const auto& a : d.alerts)
    out += "<tr><td class=\"num\">" + escape_html(format_duration(a.at)) + "</td><td class=\"mono\">" +
           escape_html(a.rule) + "</td><td>" + escape_html(a.subject) + "</td><td>" + escape_html(a.message) +
           "</td><td class=\"num\">" +
           (a.cleared_after_s < 0 ? std::string("<span class=\"stop\">firing</span>")
                                  : escape_html(format_duration(a.cleared_after_s))) +
           "</td></tr>\n";
  out += "</tbody>\n</table>\n</div>\n</section>\n";
}

void environment(std::string& out, const ReportData& d) {
  out += "<section class=\"panel\">\n<h2>Environment</h2>\n";
  if (d.environment.empty()) {
    out += "<p class=\"empty\">no data</p>\n</section>\n";
    return;
  }
  out += "<table>\n<tbody>\n";
  for (const auto& [k, v] : d.environment)
    out += "<tr><td class=\"k\">" + escape_html(k) + "</td><td class=\"mono\">" + escape_html(v) + "</td></tr>\n";
  out += "</tbody>\n</table>\n</section>\n";
}

}  // namespace

std::string render_html(const ReportData& d) {
  const GroupColors colours = GroupColors::from(d);
  std::string out;
  out += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
         "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
         "<meta name=\"generator\" content=\"ragmig report\">\n<title>" +
         escape_html(d.title.empty() ? "Sweep report" : d.title) + "</title>\n<style>" + kStyle +
         "</style>\n</head>\n<body>\n<main class=\"page\">\n";
  header(out, d);

  out += "<section class=\"panel\">\n<h2>Schedule</h2>\n<p class=\"note\">One row per slot, one bar per attempt, "
         "coloured by trial; hover a bar for its times.</p>\n";
  out += gantt_chart(d, colours);
  out += "</section>\n";

  out += "<section class=\"panel\">\n<h2>Utilisation</h2>\n<p class=\"note\">Share of the compute held by jobs "
         "(allocated; a GPU counts 7 slices, a MIG instance its own, a CPU slot 1) and measured device utilisation "
         "(CPU time on CPU slots, NVML on GPUs), weighted alike.</p>\n";
  out += utilisation_chart(d);
  out += "</section>\n";

  out += "<section class=\"panel\">\n<h2>Training loss</h2>\n<p class=\"note\">Per trial over training steps; "
         "dashed: stopped early, faded: failed or cancelled; a moving average over each step's own loss, drawn faint. "
         "Legend values are the last loss.</p>\n";
  out += loss_chart(d, colours);
  loss_legend(out, d, colours);
  out += "</section>\n";

  leaderboard(out, d, colours);
  alerts(out, d);
  environment(out, d);
  out += "<footer>ragmig sweep report \u00b7 one self-contained file: no scripts, no network</footer>\n"
         "</main>\n</body>\n</html>\n";
  return out;
}

void write_report(const ReportData& data, const std::string& path) { write_file_atomic(path, render_html(data)); }

}  // namespace ragmig::report
