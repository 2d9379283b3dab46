// The charts of the sweep report, one function per chart, each returning a self-contained `<svg>` string
// (viewBox, width 100%, a <title>) that copes with empty input by saying "no data".
#pragma once

#include <map>
#include <string>
#include <vector>

#include "report/report_data.h"

namespace ragmig::report {

/// The group palette: 14 colours, none of them the red that marks failures.
const std::vector<std::string>& group_palette();

/// Colour of each group (trial). Stable by order of first appearance: span groups in `spans` order (a span
/// with no group counts under its label), then leaderboard trial ids, then loss series names; the i-th
/// distinct key takes group_palette()[i % 14]. A key never seen gets neutral grey.
class GroupColors {
 public:
  static GroupColors from(const ReportData& data);
  const std::string& of(const std::string& key) const;

 private:
  std::map<std::string, size_t> index_;
};

/// How a trial's lines are drawn, from its leaderboard state.
enum class TrialLook { normal, stopped, faded };
TrialLook trial_look(const ReportData& data, const std::string& trial);

/// Dark or white text, whichever reads better on `hex_colour` ("#rrggbb").
std::string text_colour_on(const std::string& hex_colour);

/// Gantt chart: rows = slots (plus any slot only the spans name), x = time since the sweep started, bars
/// coloured by group and labelled where they are wide enough, end markers per outcome and their legend.
std::string gantt_chart(const ReportData& data, const GroupColors& colours);

/// Utilisation over the same time axis (and left margin) as the Gantt chart: allocated as a step area,
/// measured as a line, y 0-100 %.
std::string utilisation_chart(const ReportData& data);

/// Training loss per trial: x = step, y = loss, trial colours as in the Gantt chart, stopped trials
/// dashed, failed and cancelled ones faded. The legend is HTML beside it (html_report).
std::string loss_chart(const ReportData& data, const GroupColors& colours);

}  // namespace ragmig::report
