// Gantt, utilisation and loss charts as SVG strings. All geometry is in a 1200-wide viewBox; the page scales
// it. The Gantt and utilisation charts share the time axis and the left margin so that their x-axes align.
#include "report/charts.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "report/svg.h"

namespace ragmig::report {
namespace {

constexpr double kWidth = 1200;
constexpr double kRight = 30;  // room for end markers past the last bar
const std::string kNeutral = "#9ca3af";
const std::string kInk = "#1f2937";
const std::string kMuted = "#6b7280";
const std::string kGrid = "#e5e7eb";
const std::string kAxis = "#9ca3af";
const std::string kFailRed = "#dc2626";
const std::string kMono = "ui-monospace, SFMono-Regular, Menlo, Consolas, monospace";

// Width of text in px, roughly: code points times an average glyph width. Used only to decide whether a
// label fits a bar and to lay out legends, where a little slack is fine.
double text_px(std::string_view s, double font_px) {
  size_t chars = 0;
  for (unsigned char c : s) chars += (c & 0xC0) != 0x80;
  return static_cast<double>(chars) * font_px * 0.6;
}

std::vector<std::string> gantt_rows(const ReportData& d) {
  std::vector<std::string> rows;
  std::set<std::string> seen;
  for (const auto& s : d.slots)
    if (seen.insert(s).second) rows.push_back(s);
  for (const auto& sp : d.spans)  // a slot the caller forgot still gets a row rather than losing its bars
    if (seen.insert(sp.slot).second) rows.push_back(sp.slot);
  return rows;
}

// Left margin shared by the time charts: wide enough for the longest slot id and for "100 %".
double time_chart_left(const ReportData& d) {
  double widest = 0;
  for (const auto& r : gantt_rows(d)) widest = std::max(widest, text_px(r, 12));
  return std::clamp(widest + 22, 64.0, 260.0);
}

// End of the time axis in seconds: the caller's horizon, stretched to cover every span and sample.
double data_horizon(const ReportData& d) {
  double h = std::isfinite(d.horizon_s) ? d.horizon_s : 0;
  for (const auto& s : d.spans)
    if (std::isfinite(s.end)) h = std::max({h, s.start, s.end});
  for (const Series* s : {&d.allocated, &d.measured})
    for (const auto& [t, v] : s->points)
      if (std::isfinite(t)) h = std::max(h, t);
  return h;
}

struct TimeAxis {
  double unit_s = 1;
  std::string unit = "s";
  AxisTicks ticks;
  double domain_s() const { return ticks.hi * unit_s; }
};

// Seconds up to 5 min, minutes up to 5 h, hours beyond; ticks in that unit from 0.
TimeAxis make_time_axis(double horizon_s) {
  TimeAxis ax;
  if (!(horizon_s > 0)) horizon_s = 1;
  if (horizon_s > 5 * 3600) {
    ax.unit_s = 3600, ax.unit = "h";
  } else if (horizon_s > 300) {
    ax.unit_s = 60, ax.unit = "min";
  }
  ax.ticks = nice_ticks(0, horizon_s / ax.unit_s, 8);
  return ax;
}

struct Plot {
  double left, top, width, height;
  double bottom() const { return top + height; }
};

// Vertical grid lines, tick labels and the axis title of a time axis.
void draw_time_axis(SvgWriter& svg, const TimeAxis& ax, const Plot& p) {
  for (double v : ax.ticks.values) {
    double x = p.left + v / ax.ticks.hi * p.width;
    svg.leaf("line", {{"x1", coord(x)}, {"y1", coord(p.top)}, {"x2", coord(x)}, {"y2", coord(p.bottom())},
                      {"stroke", kGrid}});
    svg.text(x, p.bottom() + 17, ax.ticks.label(v), {{"text-anchor", "middle"}, {"fill", kMuted}});
  }
  svg.leaf("line", {{"x1", coord(p.left)}, {"y1", coord(p.bottom())}, {"x2", coord(p.left + p.width)},
                    {"y2", coord(p.bottom())}, {"stroke", kAxis}});
  svg.text(p.left + p.width / 2, p.bottom() + 36, "time since sweep start (" + ax.unit + ")",
           {{"text-anchor", "middle"}, {"fill", kMuted}});
}

void marker_preempted(SvgWriter& svg, double x, double bar_top, double bar_h) {
  svg.leaf("line", {{"x1", coord(x)}, {"y1", coord(bar_top - 1)}, {"x2", coord(x)},
                    {"y2", coord(bar_top + bar_h + 2)}, {"stroke", kInk}, {"stroke-width", "2"}});
  svg.leaf("polygon", {{"points", coord(x - 5) + "," + coord(bar_top - 7) + " " + coord(x + 5) + "," +
                                      coord(bar_top - 7) + " " + coord(x) + "," + coord(bar_top - 1)},
                       {"fill", kInk}});
}

void marker_stopped(SvgWriter& svg, double x, double cy) {
  double cx = x + 7, r = 4.5;
  std::string d = "M" + coord(cx - r) + " " + coord(cy - r) + "L" + coord(cx + r) + " " + coord(cy + r) + "M" +
                  coord(cx + r) + " " + coord(cy - r) + "L" + coord(cx - r) + " " + coord(cy + r);
  // A white halo keeps the cross readable where the next bar on the row starts right away.
  svg.leaf("path", {{"d", d}, {"stroke", "#ffffff"}, {"stroke-width", "5"}, {"stroke-linecap", "round"}});
  svg.leaf("path", {{"d", d}, {"stroke", kInk}, {"stroke-width", "2.2"}, {"stroke-linecap", "round"}});
}

void marker_running(SvgWriter& svg, double x, double cy, const std::string& colour) {
  svg.leaf("polyline", {{"points", coord(x + 3) + "," + coord(cy - 6) + " " + coord(x + 9) + "," + coord(cy) +
                                       " " + coord(x + 3) + "," + coord(cy + 6)},
                        {"fill", "none"}, {"stroke", colour}, {"stroke-width", "2.5"},
                        {"stroke-linecap", "round"}, {"stroke-linejoin", "round"}});
}

void bar_rect(SvgWriter& svg, double x, double y, double w, double h, const std::string& fill,
              const std::string& outcome, const std::string& tooltip) {
  const bool lost = outcome == "lost" || outcome == "unavailable";
  std::string opacity = (outcome == "cancelled" || lost) ? "0.35" : "1";
  if (outcome == "failed") {
    svg.leaf_with_title("rect", {{"x", coord(x)}, {"y", coord(y)}, {"width", coord(w)}, {"height", coord(h)},
                                 {"rx", "3"}, {"fill", fill}, {"stroke", kFailRed}, {"stroke-width", "2.5"}},
                        tooltip);
  } else if (lost) {
    svg.leaf_with_title("rect", {{"x", coord(x)}, {"y", coord(y)}, {"width", coord(w)}, {"height", coord(h)},
                                 {"rx", "3"}, {"fill", fill}, {"fill-opacity", opacity}, {"stroke", kMuted},
                                 {"stroke-dasharray", "3 2"}},
                        tooltip);
  } else {
    svg.leaf_with_title("rect", {{"x", coord(x)}, {"y", coord(y)}, {"width", coord(w)}, {"height", coord(h)},
                                 {"rx", "3"}, {"fill", fill}, {"fill-opacity", opacity}},
                        tooltip);
  }
}

// The legend of bar colours and end markers under the Gantt chart.
void gantt_legend(SvgWriter& svg, double x, double y) {
  auto label = [&](double at, const std::string& s) {
    svg.text(at, y + 4, s, {{"fill", "#374151"}});
    return at + text_px(s, 12) + 26;
  };
  svg.leaf("rect", {{"x", coord(x)}, {"y", coord(y - 6)}, {"width", "22"}, {"height", "12"}, {"rx", "3"},
                    {"fill", group_palette()[0]}});
  x = label(x + 28, "attempt (colour = trial)");
  svg.leaf("rect", {{"x", coord(x)}, {"y", coord(y - 6)}, {"width", "18"}, {"height", "12"}, {"rx", "3"},
                    {"fill", kNeutral}});
  marker_preempted(svg, x + 18, y - 6, 12);
  x = label(x + 30, "preempted");
  svg.leaf("rect", {{"x", coord(x)}, {"y", coord(y - 6)}, {"width", "18"}, {"height", "12"}, {"rx", "3"},
                    {"fill", kNeutral}});
  marker_stopped(svg, x + 18, y);
  x = label(x + 36, "stopped early (ASHA)");
  svg.leaf("rect", {{"x", coord(x)}, {"y", coord(y - 6)}, {"width", "22"}, {"height", "12"}, {"rx", "3"},
                    {"fill", kNeutral}, {"stroke", kFailRed}, {"stroke-width", "2.5"}});
  x = label(x + 30, "failed");
  svg.leaf("rect", {{"x", coord(x)}, {"y", coord(y - 6)}, {"width", "18"}, {"height", "12"}, {"rx", "3"},
                    {"fill", kNeutral}});
  marker_running(svg, x + 18, y, kNeutral);
  x = label(x + 34, "running");
  svg.leaf("rect", {{"x", coord(x)}, {"y", coord(y - 6)}, {"width", "22"}, {"height", "12"}, {"rx", "3"},
                    {"fill", kNeutral}, {"fill-opacity", "0.35"}});
  label(x + 30, "cancelled / lost");
}

// Finite points sorted by x (stable, so equal times keep their order: a step series may jump there).
std::vector<std::pair<double, double>> clean_points(const Series& s) {
  std::vector<std::pair<double, double>> out;
  for (const auto& p : s.points)
    if (std::isfinite(p.first) && std::isfinite(p.second)) out.push_back(p);
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  return out;
}

std::string percent(double fraction) { return format_number(fraction * 100, 0) + " %"; }

}  // namespace

const std::vector<std::string>& group_palette() {
  static const std::vector<std::string> palette = {
      "#4e79a7", "#f28e2b", "#59a14f", "#b07aa1", "#76b7b2", "#edc948", "#9c755f",
      "#ff9da7", "#499894", "#d37295", "#a0cbe8", "#8cd17d", "#ffbe7d", "#6b6ecf"};
  return palette;
}

GroupColors GroupColors::from(const ReportData& d) {
  GroupColors c;
  auto add = [&](const std::string& key) { c.index_.emplace(key, c.index_.size()); };
  for (const auto& s : d.spans) add(s.group.empty() ? s.label : s.group);
  for (const auto& r : d.leaderboard) add(r.trial);
  for (const auto& s : d.loss) add(s.name);
  return c;
}

const std::string& GroupColors::of(const std::string& key) const {
  auto it = index_.find(key);
  if (it == index_.end()) return kNeutral;
  return group_palette()[it->second % group_palette().size()];
}

TrialLook trial_look(const ReportData& d, const std::string& trial) {
  for (const auto& r : d.leaderboard) {
    if (r.trial != trial) continue;
    if (r.state == "stopped") return TrialLook::stopped;
    if (r.state == "failed" || r.state == "cancelled") return TrialLook::faded;
    return TrialLook::normal;
  }
  return TrialLook::normal;
}

std::string text_colour_on(const std::string& hex) {
  if (hex.size() != 7 || hex[0] != '#') return "#111827";
  auto channel = [&](size_t at) {
    double c = std::stoi(hex.substr(at, 2), nullptr, 16) / 255.0;
    return c <= 0.03928 ? c / 12.92 : std::pow((c + 0.055) / 1.055, 2.4);
  };
  double luminance = 0.2126 * channel(1) + 0.7152 * channel(3) + 0.0722 * channel(5);
  return luminance > 0.3 ? "#111827" : "#ffffff";
}

std::string gantt_chart(const ReportData& d, const GroupColors& colours) {
  const std::string title = "Schedule: attempts on slots over time";
  if (d.spans.empty()) return no_data_svg(title);
  const std::vector<std::string> rows = gantt_rows(d);
  const double row_h = 34, bar_h = 22;
  const Plot p{time_chart_left(d), 10, kWidth - time_chart_left(d) - kRight, row_h * static_cast<double>(rows.size())};
  const double legend_y = p.bottom() + 62;
  SvgWriter svg(kWidth, legend_y + 16, title);
  const TimeAxis ax = make_time_axis(data_horizon(d));
  auto sx = [&](double t) { return p.left + std::clamp(t, 0.0, ax.domain_s()) / ax.domain_s() * p.width; };

  std::map<std::string, size_t> row_of;
  for (size_t i = 0; i < rows.size(); ++i) {
    row_of[rows[i]] = i;
    double y = p.top + row_h * static_cast<double>(i);
    if (i % 2 == 0)
      svg.leaf("rect", {{"x", coord(p.left)}, {"y", coord(y)}, {"width", coord(p.width)}, {"height", coord(row_h)},
                        {"fill", "#f8fafc"}});
    svg.text(p.left - 10, y + row_h / 2 + 4, rows[i],
             {{"text-anchor", "end"}, {"fill", "#374151"}, {"font-family", kMono}, {"font-size", "12"}});
  }
  draw_time_axis(svg, ax, p);

  struct Placed {
    const Span* span;
    size_t row;
    double x1, x2, top;
    std::string fill;
  };
  std::vector<Placed> placed;
  for (const auto& s : d.spans) {
    if (!std::isfinite(s.start) || !std::isfinite(s.end)) continue;
    double start = std::max(0.0, std::min(s.start, s.end)), end = std::max({0.0, s.start, s.end});
    double x1 = sx(start), x2 = sx(end);
    double w = std::max(x2 - x1, 3.0);  // a zero-length attempt still shows as a sliver
    double top = p.top + row_h * static_cast<double>(row_of[s.slot]) + (row_h - bar_h) / 2;
    const std::string& fill = colours.of(s.group.empty() ? s.label : s.group);
    std::string tooltip = s.label + " on " + s.slot + ": " + format_duration(start) + " \u2192 " +
                          format_duration(end) + " (" + format_duration(end - start) + ")" +
                          (s.outcome.empty() ? "" : ", " + s.outcome);
    bar_rect(svg, x1, top, w, bar_h, fill, s.outcome, tooltip);
    placed.push_back({&s, row_of[s.slot], x1, x1 + w, top, fill});
  }
  for (const auto& pl : placed) {
    if (pl.span->label.empty()) continue;
    // A stop cross drawn just past the previous bar's end would cover the start of this label: step past it.
    double inset = 5;
    for (const auto& other : placed)
      if (other.row == pl.row && other.span->outcome == "stopped" && std::abs(other.x2 - pl.x1) < 14) inset = 17;
    if (text_px(pl.span->label, 11) + inset + 5 <= pl.x2 - pl.x1)
      svg.text(pl.x1 + inset, pl.top + bar_h / 2 + 4.5, pl.span->label,
               {{"fill", text_colour_on(pl.fill)}, {"font-size", "11"}, {"pointer-events", "none"}});
  }
  // Markers after every bar, so that the next bar on a row never hides the end of the previous one.
  for (const auto& pl : placed) {
    const std::string& outcome = pl.span->outcome;
    if (outcome == "preempted") marker_preempted(svg, pl.x2, pl.top, bar_h);
    if (outcome == "stopped") marker_stopped(svg, pl.x2, pl.top + bar_h / 2);
    if (outcome == "running")
      marker_running(svg, pl.x2, pl.top + bar_h / 2,
                     colours.of(pl.span->group.empty() ? pl.span->label : pl.span->group));
  }
  gantt_legend(svg, p.left, legend_y);
  return svg.finish();
}

std::string utilisation_chart(const ReportData& d) {
  const std::string title = "Utilisation: share of the compute allocated, and measured, over time";
  const auto alloc = clean_points(d.allocated);
  const auto meas = clean_points(d.measured);
  if (alloc.empty() && meas.empty()) return no_data_svg(title);
  const Plot p{time_chart_left(d), 34, kWidth - time_chart_left(d) - kRight, 170};
  SvgWriter svg(kWidth, p.bottom() + 46, title);
  const TimeAxis ax = make_time_axis(data_horizon(d));
  auto sx = [&](double t) { return p.left + std::clamp(t, 0.0, ax.domain_s()) / ax.domain_s() * p.width; };
  auto sy = [&](double v) { return p.bottom() - std::clamp(v, 0.0, 1.0) * p.height; };

  for (double v : {0.25, 0.5, 0.75, 1.0})
    svg.leaf("line", {{"x1", coord(p.left)}, {"y1", coord(sy(v))}, {"x2", coord(p.left + p.width)},
                      {"y2", coord(sy(v))}, {"stroke", kGrid}});
  for (double v : {0.0, 0.25, 0.5, 0.75, 1.0})
    svg.text(p.left - 8, sy(v) + 4, percent(v), {{"text-anchor", "end"}, {"fill", kMuted}});
  draw_time_axis(svg, ax, p);

  const std::string alloc_colour = "#4e79a7", meas_colour = "#e8710a";
  double legend_x = p.left;
  if (!alloc.empty()) {
    // Step function: each value holds until the next sample, the last one until the horizon.
    double end_t = std::max(data_horizon(d), alloc.back().first);
    std::string line = "M" + coord(sx(alloc[0].first)) + " " + coord(sy(alloc[0].second));
    double area = 0;
    for (size_t i = 1; i < alloc.size(); ++i) {
      line += "H" + coord(sx(alloc[i].first)) + "V" + coord(sy(alloc[i].second));
      area += std::clamp(alloc[i - 1].second, 0.0, 1.0) * (alloc[i].first - alloc[i - 1].first);
    }
    line += "H" + coord(sx(end_t));
    area += std::clamp(alloc.back().second, 0.0, 1.0) * (end_t - alloc.back().first);
    double span = end_t - alloc[0].first;
    double mean = span > 0 ? area / span : std::clamp(alloc.back().second, 0.0, 1.0);
    std::string fill = line + "V" + coord(p.bottom()) + "H" + coord(sx(alloc[0].first)) + "Z";
    svg.leaf("path", {{"d", fill}, {"fill", alloc_colour}, {"fill-opacity", "0.18"}});
    svg.leaf_with_title("path", {{"d", line}, {"fill", "none"}, {"stroke", alloc_colour}, {"stroke-width", "1.6"}},
                        "allocated: time mean " + percent(mean));
    svg.leaf("rect", {{"x", coord(legend_x)}, {"y", "10"}, {"width", "14"}, {"height", "12"}, {"rx", "2"},
                      {"fill", alloc_colour}, {"fill-opacity", "0.35"}, {"stroke", alloc_colour}});
    std::string text = "allocated (time mean " + percent(mean) + ")";
    svg.text(legend_x + 20, 20, text, {{"fill", "#374151"}});
    legend_x += 20 + text_px(text, 12) + 28;
  }
  std::string meas_text = "measured: not recorded";
  if (!meas.empty()) {
    double sum = 0;
    for (const auto& pt : meas) sum += std::clamp(pt.second, 0.0, 1.0);
    meas_text = "measured (mean of samples " + percent(sum / static_cast<double>(meas.size())) + ")";
    if (meas.size() == 1) {
      svg.leaf("circle", {{"cx", coord(sx(meas[0].first))}, {"cy", coord(sy(meas[0].second))}, {"r", "3.5"},
                          {"fill", meas_colour}});
    } else {
      // Samples come every few seconds while something can be measured; across a longer gap (the sweep stopped
      // and later continued, a slot whose device does not say) the line breaks instead of inventing a slope.
      std::vector<double> gaps;
      for (size_t i = 1; i < meas.size(); ++i) gaps.push_back(meas[i].first - meas[i - 1].first);
      std::nth_element(gaps.begin(), gaps.begin() + static_cast<std::ptrdiff_t>(gaps.size() / 2), gaps.end());
      const double broken = std::max(10.0, 5 * gaps[gaps.size() / 2]);
      std::string path;
      for (size_t i = 0; i < meas.size(); ++i)
        path += (i == 0 || meas[i].first - meas[i - 1].first > broken ? "M" : "L") + coord(sx(meas[i].first)) + " " +
                coord(sy(meas[i].second));
      svg.leaf_with_title("path", {{"d", path}, {"fill", "none"}, {"stroke", meas_colour}, {"stroke-width", "1.8"},
                                   {"stroke-linejoin", "round"}},
                          meas_text);
    }
  }
  svg.leaf("line", {{"x1", coord(legend_x)}, {"y1", "16"}, {"x2", coord(legend_x + 16)}, {"y2", "16"},
                    {"stroke", meas.empty() ? kNeutral : meas_colour}, {"stroke-width", "2.5"}});
  svg.text(legend_x + 22, 20, meas_text, {{"fill", "#374151"}});
  return svg.finish();
}

namespace {

// Lines of this many points or more are drawn smoothed over their own faint values.
constexpr size_t kSmoothedFrom = 10;

// The debiased exponential moving average of a loss curve; the weight grows with the points (0.6 for a few dozen
// steps, 0.9 for hundreds), so that a short run keeps its shape and a long one shows its trend.
std::vector<std::pair<double, double>> smoothed(const std::vector<std::pair<double, double>>& points) {
  const double w = std::clamp(1.0 - 8.0 / static_cast<double>(points.size()), 0.6, 0.9);
  std::vector<std::pair<double, double>> out;
  double ema = 0, weight = 0;
  for (const auto& [x, y] : points) {
    ema = w * ema + (1 - w) * y;
    weight = w * weight + (1 - w);
    out.emplace_back(x, ema / weight);
  }
  return out;
}

}  // namespace

std::string loss_chart(const ReportData& d, const GroupColors& colours) {
  const std::string title = "Training loss per trial over steps";
  struct Line {
    const Series* series;
    std::vector<std::pair<double, double>> points;
    TrialLook look;
  };
  std::vector<Line> lines;
  double x_lo = INFINITY, x_hi = -INFINITY, y_lo = INFINITY, y_hi = -INFINITY;
  for (const auto& s : d.loss) {
    auto pts = clean_points(s);
    if (pts.empty()) continue;
    // Long runs log many steps: keep every k-th point (and the last) so the file stays small.
    const size_t max_points = 1500;
    if (pts.size() > max_points) {
      size_t stride = (pts.size() + max_points - 1) / max_points;
      std::vector<std::pair<double, double>> kept;
      for (size_t i = 0; i < pts.size(); i += stride) kept.push_back(pts[i]);
      if (kept.back() != pts.back()) kept.push_back(pts.back());
      pts = std::move(kept);
    }
    for (const auto& [x, y] : pts) {
      x_lo = std::min(x_lo, x), x_hi = std::max(x_hi, x);
      y_lo = std::min(y_lo, y), y_hi = std::max(y_hi, y);
    }
    lines.push_back({&s, std::move(pts), trial_look(d, s.name)});
  }
  if (lines.empty()) return no_data_svg(title);

  const Plot p{72, 16, kWidth - 72 - kRight, 260};
  SvgWriter svg(kWidth, p.bottom() + 46, title);
  const AxisTicks xt = nice_ticks(x_lo >= 0 ? 0 : x_lo, x_hi, 8);
  const AxisTicks yt = nice_ticks(y_lo, y_hi, 5);
  auto sx = [&](double x) { return p.left + (x - xt.lo) / (xt.hi - xt.lo) * p.width; };
  auto sy = [&](double y) { return p.bottom() - (y - yt.lo) / (yt.hi - yt.lo) * p.height; };

  for (double v : yt.values) {
    svg.leaf("line", {{"x1", coord(p.left)}, {"y1", coord(sy(v))}, {"x2", coord(p.left + p.width)},
                      {"y2", coord(sy(v))}, {"stroke", kGrid}});
    svg.text(p.left - 8, sy(v) + 4, yt.label(v), {{"text-anchor", "end"}, {"fill", kMuted}});
  }
  for (double v : xt.values) {
    svg.leaf("line", {{"x1", coord(sx(v))}, {"y1", coord(p.top)}, {"x2", coord(sx(v))}, {"y2", coord(p.bottom())},
                      {"stroke", kGrid}});
    svg.text(sx(v), p.bottom() + 17, xt.label(v), {{"text-anchor", "middle"}, {"fill", kMuted}});
  }
  svg.leaf("line", {{"x1", coord(p.left)}, {"y1", coord(p.bottom())}, {"x2", coord(p.left + p.width)},
                    {"y2", coord(p.bottom())}, {"stroke", kAxis}});
  svg.text(p.left + p.width / 2, p.bottom() + 36, "training step", {{"text-anchor", "middle"}, {"fill", kMuted}});
  double label_y = p.top + p.height / 2;
  svg.text(18, label_y, "loss",
           {{"text-anchor", "middle"}, {"fill", kMuted}, {"transform", "rotate(-90 18 " + coord(label_y) + ")"}});

  // Faded lines first, then stopped, then the rest on top: the trials still in the race stay readable.
  std::vector<const Line*> order;
  for (TrialLook look : {TrialLook::faded, TrialLook::stopped, TrialLook::normal})
    for (const auto& l : lines)
      if (l.look == look) order.push_back(&l);
  for (const Line* l : order) {
    const std::string& colour = colours.of(l->series->name);
    std::string opacity = l->look == TrialLook::faded ? "0.45" : "1";
    std::string dash = l->look == TrialLook::stopped ? "7 4" : l->look == TrialLook::faded ? "2 3" : "none";
    std::string tooltip = l->series->name + ": final loss " + format_number(l->points.back().second, 4) +
                          " at step " + format_number(l->points.back().first, 0);
    const bool smooth = l->points.size() >= kSmoothedFrom;
    const auto trend = smooth ? smoothed(l->points) : l->points;
    const auto& last = trend.back();  // the line's end: the dot sits on it
    const auto polyline = [&](const std::vector<std::pair<double, double>>& points) {
      std::string pts;
      for (const auto& [x, y] : points) pts += (pts.empty() ? "" : " ") + coord(sx(x)) + "," + coord(sy(y));
      return pts;
    };
    // A step's loss is one batch's: noisy. A long curve's own values stay faint behind its trend, an exponential
    // moving average (debiased at the start, as TensorBoard draws it).
    if (smooth)
      svg.leaf("polyline", {{"points", polyline(l->points)}, {"fill", "none"}, {"stroke", colour},
                            {"stroke-width", "1"}, {"stroke-opacity", l->look == TrialLook::faded ? "0.15" : "0.3"},
                            {"stroke-linejoin", "round"}});
    if (trend.size() > 1)
      svg.leaf_with_title("polyline", {{"points", polyline(trend)}, {"fill", "none"}, {"stroke", colour},
                                       {"stroke-width", smooth ? "2" : "1.8"}, {"stroke-opacity", opacity},
                                       {"stroke-dasharray", dash}, {"stroke-linejoin", "round"}},
                          tooltip);
    svg.leaf_with_title("circle", {{"cx", coord(sx(last.first))}, {"cy", coord(sy(last.second))},
                                   {"r", l->points.size() > 1 ? "2.6" : "3.5"}, {"fill", colour},
                                   {"fill-opacity", opacity}},
                        tooltip);
  }
  return svg.finish();
}

}  // namespace ragmig::report
