// The sweep report as one self-contained HTML file: inline CSS and inline SVG charts drawn by charts.cpp, no
// script, no URL, no external font or image, so it opens offline anywhere and diffs cleanly.
#pragma once

#include <string>

#include "report/report_data.h"

namespace ragmig::report {

/// The whole page. A pure function of `data` (no clock: timestamps come in through the subtitle); every
/// text from `data` is escaped.
std::string render_html(const ReportData& data);

/// Writes render_html(data) to `path` atomically (temp file + rename). Throws IoError.
void write_report(const ReportData& data, const std::string& path);

}  // namespace ragmig::report
