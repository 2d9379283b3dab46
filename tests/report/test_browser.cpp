// The report in a real headless Chromium: every SVG renders with a non-empty box, no script errors, and a
// screenshot is taken. A deliberately broken page proves the check can fail. Skips without chromium.
// RAGMIG_REPORT_KEEP=folder keeps the realistic report and its screenshot there for a human look.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "report/html_report.h"
#include "report/sample_data.h"
#include "support/headless_browser.h"
#include "support/test_support.h"

namespace ragmig::report {
namespace {

using ragmig::testing::BrowserCheck;

#define REQUIRE_CHROMIUM()                                                                               \
  do {                                                                                                   \
    if (ragmig::testing::find_chromium().empty())                                                        \
      GTEST_SKIP() << "chromium not found: install Debian's chromium or set RAGMIG_CHROMIUM";            \
  } while (0)

size_t count(const std::string& hay, const std::string& needle) {
  size_t n = 0;
  for (size_t at = hay.find(needle); at != std::string::npos; at = hay.find(needle, at + 1)) ++n;
  return n;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

void expect_renders_cleanly(const ReportData& d, const std::filesystem::path& folder) {
  const std::string html_path = (folder / "report.html").string();
  write_report(d, html_path);
  const std::string html = render_html(d);
  BrowserCheck c = ragmig::testing::check_in_browser(html_path, "");
  ASSERT_TRUE(c.ran) << c.log;
  EXPECT_EQ(c.svg_count, static_cast<int>(count(html, "<svg"))) << c.log;
  EXPECT_EQ(c.svg_rendered, c.svg_count) << c.log;
  EXPECT_TRUE(c.console_errors.empty()) << joined(c.console_errors);
  EXPECT_EQ(c.wrapped_figures, 0) << "a summary card's figure breaks over lines at 1400 px";
  EXPECT_EQ(c.wide_tables, 0) << "a table is wider than the page at 1400 px";
  EXPECT_EQ(c.page_overflow_px, 0);
  ASSERT_FALSE(c.screenshot.empty()) << c.log;
  EXPECT_EQ(c.screenshot, (folder / "report.png").string());
  EXPECT_GT(std::filesystem::file_size(c.screenshot), 10u * 1024) << c.screenshot;
}

TEST(ReportBrowser, RealisticReportRendersEverySvg) {
  REQUIRE_CHROMIUM();
  const char* keep = std::getenv("RAGMIG_REPORT_KEEP");
  ragmig::testing::ScratchDir scratch;
  std::filesystem::path folder = keep && *keep ? std::filesystem::path(keep) : scratch.path();
  std::filesystem::create_directories(folder);
  expect_renders_cleanly(ragmig::testing::sample_report(), folder);
}

TEST(ReportBrowser, EmptyReportRendersItsPlaceholders) {
  REQUIRE_CHROMIUM();
  ragmig::testing::ScratchDir scratch;
  expect_renders_cleanly(ReportData{}, scratch.path());
}

// The mechanism must be able to fail: a throwing script, a console.error, a missing image and an SVG that is
// not displayed are all reported.
TEST(ReportBrowser, BrokenPageIsCaught) {
  REQUIRE_CHROMIUM();
  ragmig::testing::ScratchDir scratch;
  const std::string path = (scratch / "broken.html").string();
  std::ofstream(path) << "<!DOCTYPE html>\n<html><head><title>broken</title></head><body>\n"
                         "<svg viewBox=\"0 0 10 10\" width=\"100\"><rect width=\"5\" height=\"5\"/></svg>\n"
                         "<svg viewBox=\"0 0 10 10\" width=\"100\" style=\"display:none\"><rect width=\"5\" "
                         "height=\"5\"/></svg>\n"
                         "<script>console.error('custom complaint'); throw new Error(\"boom\");</script>\n"
                         "<img src=\"missing.png\" alt=\"\">\n"
                         "<div class=\"card\" style=\"width:60px\"><div class=\"v\">0.7451 (t00, Linear)</div></div>\n"
                         "<div class=\"table-wrap\" style=\"overflow-x:auto;width:100px\"><table><tr>"
                         "<td style=\"white-space:nowrap\">a cell much wider than its table's wrapper</td>"
                         "</tr></table></div>\n"
                         "<div style=\"width:3000px\">wider than the window</div>\n"
                         "</body></html>\n";
  BrowserCheck c = ragmig::testing::check_in_browser(path, (scratch / "shot.png").string());
  ASSERT_TRUE(c.ran) << c.log;
  EXPECT_EQ(c.svg_count, 2);
  EXPECT_EQ(c.svg_rendered, 1);
  std::string errors = joined(c.console_errors);
  EXPECT_NE(errors.find("boom"), std::string::npos) << errors;
  EXPECT_NE(errors.find("custom complaint"), std::string::npos) << errors;
  EXPECT_NE(errors.find("missing.png"), std::string::npos) << errors;
  EXPECT_EQ(c.wrapped_figures, 1);
  EXPECT_EQ(c.wide_tables, 1);
  EXPECT_GT(c.page_overflow_px, 1000);
  EXPECT_EQ(c.screenshot, (scratch / "shot.png").string()) << c.log;
}

}  // namespace
}  // namespace ragmig::report
