// The rendered page as a string: complete, self-contained, escaped, deterministic, robust to empty and
// degenerate input; charts one by one; write_report's atomic write.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <sstream>

#include "core/atomic_file.h"
#include "report/charts.h"
#include "report/html_report.h"
#include "report/sample_data.h"
#include "report/svg.h"
#include "report/sweep_report.h"
#include "support/test_support.h"

namespace ragmig::report {
namespace {

using ragmig::testing::sample_report;

size_t count(const std::string& hay, const std::string& needle) {
  size_t n = 0;
  for (size_t at = hay.find(needle); at != std::string::npos; at = hay.find(needle, at + 1)) ++n;
  return n;
}

void expect_self_contained(const std::string& html) {
  EXPECT_EQ(html.find("http://"), std::string::npos);
  EXPECT_EQ(html.find("https://"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find(" src="), std::string::npos);
  EXPECT_EQ(html.find("url("), std::string::npos);
  EXPECT_EQ(html.find("@import"), std::string::npos);
  EXPECT_EQ(html.find(" href="), std::string::npos);
}

TEST(Report, RealisticSweepRendersEverything) {
  const ReportData d = sample_report();
  const std::string html = render_html(d);
  // Gantt, utilisation, loss; the legends are inside the Gantt and utilisation SVGs or HTML (loss).
  EXPECT_EQ(count(html, "<svg"), 3u);
  EXPECT_EQ(count(html, "</svg>"), 3u);
  EXPECT_EQ(count(html, "viewBox="), 3u);
  EXPECT_EQ(html.find("no data"), std::string::npos);
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(html.find("</html>"), std::string::npos);
  expect_self_contained(html);
  for (const auto& row : d.leaderboard) {
    EXPECT_NE(html.find(">" + row.trial + "</td>"), std::string::npos) << row.trial;
    for (const auto& [k, v] : row.params) {
      EXPECT_NE(html.find("<th>" + k + "</th>"), std::string::npos) << k;
      EXPECT_NE(html.find(">" + v + "</td>"), std::string::npos) << v;
    }
  }
  EXPECT_EQ(count(html, "<th>grad_cache</th>"), 1u);  // one column per key, even if only one row has it
  for (const auto& [k, v] : d.environment) EXPECT_NE(html.find(escape_html(v)), std::string::npos) << k;
  for (const auto& card : d.summary) {
    EXPECT_NE(html.find(">" + escape_html(card.key) + "<"), std::string::npos) << card.key;
    EXPECT_NE(html.find(">" + escape_html(card.value) + "<"), std::string::npos) << card.value;
    if (!card.detail.empty()) {
      EXPECT_NE(html.find(">" + escape_html(card.detail) + "<"), std::string::npos) << card.detail;
    }
  }
  EXPECT_NE(html.find("0.4123"), std::string::npos);                  // metric, 4 decimals
  EXPECT_NE(html.find("100: 0.213 <span class=\"stop\""), std::string::npos);  // rung with its decision
  EXPECT_NE(html.find("300: 0.362 <span class=\"ok\""), std::string::npos);
  EXPECT_NE(html.find("Sweep squad-tiny"), std::string::npos);
  EXPECT_NE(html.find("time since sweep start (min)"), std::string::npos);  // 1380 s: a minutes axis
  EXPECT_EQ(html.find("nan"), std::string::npos);
  EXPECT_EQ(html.find("inf\""), std::string::npos);
}

TEST(Report, HostileTextIsEscapedEverywhere) {
  ReportData d = sample_report();
  const std::string evil = "<t&1>";
  d.title = "Sweep " + evil;
  d.subtitle = "a \"quoted\" 'x' " + evil;
  d.summary.push_back({evil, evil, evil});
  d.slots.push_back(evil);
  d.spans.push_back({evil, evil, evil, 10, 400, "done"});
  d.loss.push_back({evil, {{0, 2.0}, {100, 1.0}}});
  LeaderRow r;
  r.trial = evil, r.state = evil, r.slot = evil, r.params = {{evil, evil}};
  r.rungs = {{10, 0.5, evil}};
  d.leaderboard.push_back(r);
  d.environment.push_back({evil, evil});
  d.metric_name = evil;
  d.rung_metric_name = evil;
  const std::string html = render_html(d);
  EXPECT_EQ(html.find(evil), std::string::npos);
  EXPECT_NE(html.find("&lt;t&amp;1&gt;"), std::string::npos);
  EXPECT_EQ(html.find("\"quoted\""), std::string::npos);
  EXPECT_EQ(count(html, "<svg"), 3u);
  EXPECT_EQ(count(html, "<table"), 2u);
  expect_self_contained(html);
}

TEST(Report, EmptyDataSaysNoData) {
  const ReportData d;
  std::string html;
  ASSERT_NO_THROW(html = render_html(d));
  EXPECT_NE(html.find("no data"), std::string::npos);
  EXPECT_EQ(count(html, "no data"), 5u);  // three charts, leaderboard, environment
  EXPECT_EQ(count(html, "<svg"), 3u);
  EXPECT_EQ(count(html, "</svg>"), 3u);
  EXPECT_NE(html.find("<title>Sweep report</title>"), std::string::npos);
  expect_self_contained(html);
}

TEST(Charts, DegenerateInputStillDraws) {
  ReportData d;
  d.slots = {"cpu:0"};
  d.spans = {{"cpu:0", "t1", "t1", 0, 0, "preempted"}, {"gpu:9", "t2", "", 0, 0, "running"}};
  d.horizon_s = 0;
  d.allocated = {"allocated", {{0, 0.5}}};
  d.measured = {"measured", {{0, 0.25}}};
  d.loss = {{"t1", {{5, 1.5}}}, {"t2", {{std::nan(""), 1}, {3, INFINITY}}}};
  const GroupColors colours = GroupColors::from(d);
  for (const std::string& svg : {gantt_chart(d, colours), utilisation_chart(d), loss_chart(d, colours)}) {
    EXPECT_EQ(count(svg, "<svg"), 1u);
    EXPECT_EQ(svg.find("no data"), std::string::npos) << svg;
    EXPECT_EQ(svg.find("nan"), std::string::npos) << svg;
    EXPECT_EQ(svg.find("inf"), std::string::npos) << svg;
  }
  const std::string gantt = gantt_chart(d, colours);
  EXPECT_NE(gantt.find(">gpu:9</text>"), std::string::npos);  // a slot only a span names gets a row
  EXPECT_NE(gantt.find("width=\"3\""), std::string::npos);     // zero-length bars show as a sliver
  EXPECT_NE(gantt.find("time since sweep start (s)"), std::string::npos);
  EXPECT_NE(loss_chart(d, colours).find("<circle"), std::string::npos);  // one point: a dot
}

TEST(Charts, EachCopesWithEmptyInput) {
  const ReportData d;
  const GroupColors colours = GroupColors::from(d);
  for (const std::string& svg : {gantt_chart(d, colours), utilisation_chart(d), loss_chart(d, colours)}) {
    EXPECT_NE(svg.find("no data"), std::string::npos);
    EXPECT_NE(svg.find("<title>"), std::string::npos);
    EXPECT_NE(svg.find("viewBox=\""), std::string::npos);
  }
}

TEST(Charts, GroupColoursFollowFirstAppearance) {
  const ReportData d = sample_report();
  const GroupColors colours = GroupColors::from(d);
  const auto& palette = group_palette();
  EXPECT_GE(palette.size(), 12u);
  // Span groups in span order: t01, t02, t03, t05, t04, t06, t07, t08.
  EXPECT_EQ(colours.of("t01"), palette[0]);
  EXPECT_EQ(colours.of("t02"), palette[1]);
  EXPECT_EQ(colours.of("t03"), palette[2]);
  EXPECT_EQ(colours.of("t05"), palette[3]);
  EXPECT_EQ(colours.of("t04"), palette[4]);
  EXPECT_EQ(colours.of("unknown"), "#9ca3af");
  // The same colour marks t03 in the Gantt chart, its loss line and its leaderboard swatch.
  const std::string html = render_html(d);
  EXPECT_NE(html.find("fill=\"" + palette[2] + "\""), std::string::npos);
  EXPECT_NE(html.find("stroke=\"" + palette[2] + "\""), std::string::npos);
  EXPECT_NE(html.find("background:" + palette[2] + "\"></span>t03"), std::string::npos);
}

TEST(Charts, StoppedTrialsDashedFailedFaded) {
  const ReportData d = sample_report();
  EXPECT_EQ(trial_look(d, "t04"), TrialLook::stopped);
  EXPECT_EQ(trial_look(d, "t05"), TrialLook::faded);
  EXPECT_EQ(trial_look(d, "t06"), TrialLook::normal);
  const std::string loss = loss_chart(d, GroupColors::from(d));
  EXPECT_EQ(count(loss, "stroke-dasharray=\"7 4\""), 2u);  // t04, t07
  EXPECT_EQ(count(loss, "stroke-dasharray=\"2 3\""), 1u);  // t05
}

// A step's loss is one batch's: a curve of 10 points or more is drawn as its moving average over its own values,
// faint; a shorter one as it is. The average follows the trend: a loss alternating 1 and 3 draws a line near 2.
TEST(Charts, LongLossCurvesAreSmoothedOverTheirFaintSteps) {
  ReportData d;
  d.loss.push_back({"t00", {}});
  for (int step = 1; step <= 40; ++step) d.loss[0].points.emplace_back(step, step % 2 ? 1.0 : 3.0);
  d.loss.push_back({"t01", {{1, 2.0}, {2, 1.5}, {3, 1.2}}});
  const std::string svg = loss_chart(d, GroupColors::from(d));
  EXPECT_EQ(count(svg, "<polyline"), 3u);  // t00 faint and smoothed, t01 as it is
  EXPECT_EQ(count(svg, "stroke-opacity=\"0.3\""), 1u);
  const auto ys = [&](size_t nth) {  // the y coordinates of the nth polyline's points
    size_t at = 0;
    for (size_t i = 0; i <= nth; ++i) at = svg.find("<polyline points=\"", at + 1);
    std::vector<double> out;
    std::istringstream points(svg.substr(at + 18, svg.find('"', at + 18) - at - 18));
    for (std::string point; points >> point;) out.push_back(std::stod(point.substr(point.find(',') + 1)));
    return out;
  };
  const auto spread = [](const std::vector<double>& v) {
    return *std::max_element(v.begin() + 20, v.end()) - *std::min_element(v.begin() + 20, v.end());
  };
  const auto raw = ys(0), trend = ys(1);
  ASSERT_EQ(raw.size(), 40u);
  ASSERT_EQ(trend.size(), 40u);
  EXPECT_LT(spread(trend), spread(raw) / 3) << "after its first steps the average stays near the middle";
}

TEST(Charts, TextColourReadsOnItsBackground) {
  EXPECT_EQ(text_colour_on("#4e79a7"), "#ffffff");
  EXPECT_EQ(text_colour_on("#edc948"), "#111827");
  EXPECT_EQ(text_colour_on("bogus"), "#111827");
}

// A 3g MIG instance counts three slices of seven, a CPU slot (absent from the map) one; ends and starts at
// the same moment make one step.
TEST(SweepReport, AllocationWeighsSlotsByTheirCompute) {
  const std::vector<Span> spans = {{"mig:0:3g.71gb@0", "t00", "t00", 0, 10, "done"},
                                   {"mig:0:1g.18gb@4", "t01", "t01", 5, 10, "done"},
                                   {"cpu:0", "t02", "t02", 0, 5, "done"}};
  const Series a = allocation(spans, {{"mig:0:3g.71gb@0", 3}, {"mig:0:1g.18gb@4", 1}}, 7, 12);
  const std::vector<std::pair<double, double>> expected = {{0, 0}, {0, 4.0 / 7}, {5, 4.0 / 7}, {10, 0}, {12, 0}};
  ASSERT_EQ(a.points.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_DOUBLE_EQ(a.points[i].first, expected[i].first) << i;
    EXPECT_DOUBLE_EQ(a.points[i].second, expected[i].second) << i;
  }
  // Without weights and with one slice per slot, the old share of slots.
  EXPECT_DOUBLE_EQ(allocation(spans, {}, 3, 12).points[1].second, 2.0 / 3);
  EXPECT_EQ(allocation({}, {}, 0, 5).points.back(), (std::pair<double, double>{5, 0}));
}

// Baselines rank among the finished trials by the sweep's metric (a tie keeps the trial first); running,
// stopped and failed trials follow as before, and the table gives baselines no rungs, steps or parameters.
TEST(SweepReport, BaselinesRankAmongFinishedTrials) {
  const auto trial = [](std::string id, std::string state, std::optional<double> metric) {
    hpo::TrialStatus t;
    t.id = std::move(id);
    t.state = std::move(state);
    t.metric = metric;
    t.params = {{"train.lr", 1e-3}};
    return t;
  };
  std::vector<hpo::TrialStatus> trials = {trial("t00", "done", 0.66), trial("t01", "stopped", std::nullopt),
                                          trial("t02", "done", 0.70), trial("t03", "running", std::nullopt)};
  trials[1].rungs.push_back({10, 0.9, hpo::AshaAction::Stop});
  trials[2].hybrid = 0.74, trials[2].fusion = "Linear(alpha=0.5)";
  hpo::BaselineStatus bm25, zero;
  bm25.id = "bm25", bm25.state = "done", bm25.metric = 0.68;
  zero.id = "zero-shot", zero.state = "done", zero.metric = 0.66, zero.hybrid = 0.73, zero.fusion = "RRF(k=60)";
  const std::vector<LeaderRow> rows = leaderboard(trials, {bm25, zero});
  std::vector<std::string> order;
  for (const auto& r : rows) order.push_back(r.trial);
  EXPECT_EQ(order, (std::vector<std::string>{"t02", "bm25", "t00", "zero-shot", "t03", "t01"}));
  EXPECT_TRUE(rows[1].baseline);
  EXPECT_FALSE(rows[0].baseline);
  EXPECT_EQ(rows[0].hybrid, 0.74);
  EXPECT_EQ(rows[3].fusion, "RRF(k=60)");

  ReportData d = sample_report();
  d.leaderboard = rows;
  const std::string html = render_html(d);
  EXPECT_NE(html.find("<th class=\"num\">fused with BM25</th>"), std::string::npos);
  EXPECT_NE(html.find("Baselines (BM25, the encoder before training)"), std::string::npos);
  const auto row_of = [&](const std::string& id) {
    const auto at = html.find(">" + id + " <span class=\"note\">baseline</span>");
    return at == std::string::npos ? std::string() : html.substr(at, html.find("</tr>", at) - at);
  };
  const std::string bm25_row = row_of("bm25");
  ASSERT_FALSE(bm25_row.empty());
  EXPECT_NE(bm25_row.find("0.6800"), std::string::npos) << bm25_row;
  const std::string lr = hpo::value_text(1e-3);
  EXPECT_NE(html.find(">" + lr + "<"), std::string::npos) << lr;  // the trials show it ...
  EXPECT_EQ(bm25_row.find(">" + lr + "<"), std::string::npos) << "a baseline has no parameters: " << bm25_row;
  EXPECT_NE(row_of("zero-shot").find("0.7300"), std::string::npos);
  // The highlighted row is the best trial (t02, first here anyway), never a baseline above it.
  EXPECT_EQ(html.find("<tr class=\"best\">"), html.find("<tr class=\"best\"><td class=\"num\">1</td>"));
  std::swap(d.leaderboard[0], d.leaderboard[1]);  // bm25 first
  const std::string swapped = render_html(d);
  EXPECT_NE(swapped.find("<tr class=\"best\"><td class=\"num\">2</td>"), std::string::npos);
  // Without hybrids or baselines, neither the column nor the note.
  d.leaderboard = leaderboard({trials[0], trials[2]});
  d.leaderboard[0].hybrid.reset();
  const std::string plain = render_html(d);
  EXPECT_EQ(plain.find("fused with BM25"), std::string::npos);
  EXPECT_EQ(plain.find("Baselines"), std::string::npos);
}

// What the scheduler ranks each trial by: its FLOPs, and once the sweep has measured its rate, the seconds they
// come to. Baselines are not counted; a sweep without counts has no such column.
TEST(SweepReport, TheLeaderboardShowsEachTrialsWorkAndEstimate) {
  hpo::TrialStatus priced, unpriced, stopped;
  priced.id = "t00", priced.state = "done", priced.metric = 0.7, priced.flops = 1.51e12, priced.estimate_s = 48;
  unpriced.id = "t01", unpriced.state = "queued", unpriced.flops = 3.02e12;
  stopped.id = "t02", stopped.state = "stopped";
  hpo::BaselineStatus bm25;
  bm25.id = "bm25", bm25.state = "done", bm25.metric = 0.68;
  ReportData d = sample_report();
  d.leaderboard = leaderboard({priced, unpriced, stopped}, {bm25});
  EXPECT_EQ(d.leaderboard[0].flops, 1.51e12);
  EXPECT_EQ(d.leaderboard[0].estimate_s, 48);
  const std::string html = render_html(d);
  EXPECT_NE(html.find("<th class=\"num\">work (estimate)</th>"), std::string::npos);
  EXPECT_NE(html.find("<td class=\"num\">1.51 TFLOP (48 s)</td>"), std::string::npos);
  EXPECT_NE(html.find("<td class=\"num\">3.02 TFLOP</td>"), std::string::npos);
  // Every row has as many cells as the header has columns (the baseline's and the uncounted trial's are dashes).
  const auto count = [](const std::string& s, const std::string& what) {
    size_t n = 0;
    for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
    return n;
  };
  const size_t begin = html.find("<thead><tr><th class=\"num\">#</th><th>trial</th>");
  ASSERT_NE(begin, std::string::npos);
  const std::string table = html.substr(begin, html.find("</table>", begin) - begin);
  const size_t columns = count(table.substr(0, table.find("</thead>")), "</th>");
  size_t rows = 0;
  for (size_t at = table.find("<tbody>"); (at = table.find("<tr", at + 1)) != std::string::npos; ++rows) {
    const std::string row = table.substr(at, table.find("</tr>", at) - at);
    EXPECT_EQ(count(row, "</td>"), columns) << row;
  }
  EXPECT_EQ(rows, 4u);
  // Without counts, no column.
  d.leaderboard = leaderboard({stopped}, {bm25});
  EXPECT_EQ(render_html(d).find("work (estimate)"), std::string::npos);
}

TEST(WriteReport, ReplacesTheReportAndLeavesNoTemporary) {
  ragmig::testing::ScratchDir dir;
  const ReportData d = sample_report();
  const std::string path = (dir / "report.html").string();
  write_report(d, path);
  write_report(d, path);  // replacing an existing report
  EXPECT_EQ(read_file(path), render_html(d));
  size_t files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) {
    ++files;
    EXPECT_EQ(e.path().filename(), "report.html");
  }
  EXPECT_EQ(files, 1u);
}

TEST(WriteReport, MissingFolderThrows) {
  ragmig::testing::ScratchDir dir;
  EXPECT_THROW(write_report(ReportData{}, (dir / "no/such/folder/report.html").string()), std::exception);
}

}  // namespace
}  // namespace ragmig::report
