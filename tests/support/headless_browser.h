// Opens an HTML file in a real headless Chromium for tests: counts the SVGs that actually render, collects
// script errors and takes a screenshot, so a report test checks what a reader would see, not just bytes.
#pragma once

#include <string>
#include <vector>

namespace ragmig::testing {

/// $RAGMIG_CHROMIUM when set (and executable), else chromium or chromium-browser on PATH; "" when none.
std::string find_chromium();

struct BrowserCheck {
  bool ran = false;           ///< the check script ran in the page and its results came back
  std::string screenshot;     ///< path of the PNG, "" when none was written
  int svg_count = 0;          ///< <svg> elements in the DOM
  int svg_rendered = 0;       ///< of those, with a non-empty bounding box on the page and non-empty contents
  std::vector<std::string> console_errors;  ///< console.error calls, uncaught exceptions, failed resources
  int wrapped_figures = 0;    ///< summary cards' figures (.card .v, .card .d) broken over more than one line
  int wide_tables = 0;        ///< tables wider than their box (a horizontal scroll bar, or past their panel)
  int page_overflow_px = 0;   ///< how much wider than the window the page is
  std::string log;            ///< the command lines, Chromium's stderr and exit codes, for failure messages
};

/// Opens `html_path` in headless Chromium twice, each with a fresh profile and a 60 s limit:
/// - a copy of the page, in a temp folder, with a check script injected first thing in <head> (so it sees
///   errors of every script after it) that on load measures each <svg> and the layout at 1400 px wide and
///   writes the results into the DOM, which --dump-dom hands back; the page under test itself is never modified;
/// - the page itself with --screenshot at 1400x2400, saved at `screenshot`, or beside the page as .png
///   when `screenshot` is empty.
/// Never throws for browser trouble: `ran` stays false and `log` says why.
BrowserCheck check_in_browser(const std::string& html_path, const std::string& screenshot);

}  // namespace ragmig::testing
