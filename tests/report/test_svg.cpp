// Escaping, number formatting, axis ticks and the SVG writer: table-driven.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "report/svg.h"

namespace ragmig::report {
namespace {

TEST(Escape, Table) {
  struct Case {
    std::string in, out;
  };
  for (const Case& c : std::vector<Case>{{"", ""},
                                         {"plain t03", "plain t03"},
                                         {"<", "&lt;"},
                                         {">", "&gt;"},
                                         {"&", "&amp;"},
                                         {"\"", "&quot;"},
                                         {"'", "&#39;"},
                                         {"<t&1>", "&lt;t&amp;1&gt;"},
                                         {"&amp;", "&amp;amp;"},
                                         {"a=\"x\" b='y'", "a=&quot;x&quot; b=&#39;y&#39;"},
                                         {"\u2713 \u00b7 \u2715", "\u2713 \u00b7 \u2715"}})
    EXPECT_EQ(escape_html(c.in), c.out) << c.in;
}

TEST(FormatNumber, Table) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  struct Case {
    double v;
    int decimals;
    std::string out;
  };
  for (const Case& c : std::vector<Case>{{0, 3, "0"},
                                         {0.2, 3, "0.2"},
                                         {0.1 + 0.2, 3, "0.3"},
                                         {140, 3, "140"},
                                         {-3.25, 3, "-3.25"},
                                         {1.23456, 2, "1.23"},
                                         {-0.0001, 3, "0"},
                                         {-0.0, 3, "0"},
                                         {1e6, 0, "1000000"},
                                         {2.5, 0, "2"},  // round half to even, as to_chars does
                                         {nan, 3, "\u2014"},
                                         {inf, 3, "\u2014"}})
    EXPECT_EQ(format_number(c.v, c.decimals), c.out) << c.v;
}

TEST(FormatFixed, KeepsZerosAndDropsFalseSign) {
  EXPECT_EQ(format_fixed(0.213, 4), "0.2130");
  EXPECT_EQ(format_fixed(0.41234, 4), "0.4123");
  EXPECT_EQ(format_fixed(-0.00001, 3), "0.000");
  EXPECT_EQ(format_fixed(-1.5, 1), "-1.5");
  EXPECT_EQ(format_fixed(std::nan(""), 3), "\u2014");
}

TEST(FormatCompact, Table) {
  struct Case {
    double v;
    std::string out;
  };
  for (const Case& c : std::vector<Case>{{0, "0"},
                                         {0.25, "0.25"},
                                         {950, "950"},
                                         {1500, "1500"},
                                         {10000, "10k"},
                                         {12500, "12.5k"},
                                         {3.2e6, "3.2M"},
                                         {-25000, "-25k"},
                                         {4e9, "4G"}})
    EXPECT_EQ(format_compact(c.v), c.out) << c.v;
}

TEST(FormatFlops, Table) {
  struct Case {
    double v;
    std::string out;
  };
  for (const Case& c : std::vector<Case>{{0, "0 MFLOP"},
                                         {2.5e8, "250 MFLOP"},
                                         {9.9e8, "990 MFLOP"},
                                         {9.996e8, "1 GFLOP"},
                                         {1.51e12, "1.51 TFLOP"},
                                         {22.35e9, "22.4 GFLOP"},
                                         {8.2e16, "82 PFLOP"},
                                         {3e21, "3000 EFLOP"},
                                         {-1, "\u2014"},
                                         {std::nan(""), "\u2014"}})
    EXPECT_EQ(format_flops(c.v), c.out) << c.v;
}

TEST(FormatCount, Table) {
  EXPECT_EQ(format_count(0), "0");
  EXPECT_EQ(format_count(999), "999");
  EXPECT_EQ(format_count(1000), "1,000");
  EXPECT_EQ(format_count(1234567), "1,234,567");
  EXPECT_EQ(format_count(-12000), "-12,000");
  EXPECT_EQ(format_count(std::numeric_limits<int64_t>::min()), "-9,223,372,036,854,775,808");
}

TEST(FormatDuration, Table) {
  struct Case {
    double s;
    std::string out;
  };
  for (const Case& c : std::vector<Case>{{0, "0 s"},
                                         {4.5, "4.5 s"},
                                         {42, "42 s"},
                                         {59.4, "59 s"},
                                         {59.6, "1 min"},
                                         {180, "3 min"},
                                         {200, "3 min 20 s"},
                                         {3600, "1 h 00 min"},
                                         {7500, "2 h 05 min"},
                                         {-1, "\u2014"},
                                         {std::nan(""), "\u2014"}})
    EXPECT_EQ(format_duration(c.s), c.out) << c.s;
}

std::vector<std::string> labels(const AxisTicks& t) {
  std::vector<std::string> out;
  for (double v : t.values) out.push_back(t.label(v));
  return out;
}

TEST(NiceTicks, Table) {
  struct Case {
    double lo, hi;
    int target;
    std::vector<std::string> labels;
  };
  for (const Case& c : std::vector<Case>{
           {0, 1, 5, {"0", "0.2", "0.4", "0.6", "0.8", "1"}},
           {0, 137, 5, {"0", "20", "40", "60", "80", "100", "120", "140"}},
           {0, 0, 5, {"0", "0.2", "0.4", "0.6", "0.8", "1"}},  // empty range at 0 becomes [0, 1]
           {1, 0, 5, {"0", "0.2", "0.4", "0.6", "0.8", "1"}},  // reversed
           {0, 23, 4, {"0", "5", "10", "15", "20", "25"}},
           {0.31, 2.7, 5, {"0", "0.5", "1", "1.5", "2", "2.5", "3"}},
           {-1, 1, 4, {"-1", "-0.5", "0", "0.5", "1"}},
           {0, 0.05, 5, {"0", "0.01", "0.02", "0.03", "0.04", "0.05"}},
           {0, 15000, 3, {"0", "5k", "10k", "15k"}},
           {0, 2e6, 4, {"0", "0.5M", "1M", "1.5M", "2M"}},
       }) {
    AxisTicks t = nice_ticks(c.lo, c.hi, c.target);
    EXPECT_EQ(labels(t), c.labels) << c.lo << ".." << c.hi;
    EXPECT_LE(t.lo, std::min(c.lo, c.hi));
    EXPECT_GE(t.hi, std::max(c.lo, c.hi));
  }
}

TEST(NiceTicks, DegenerateInput) {
  AxisTicks at5 = nice_ticks(5, 5);
  EXPECT_LT(at5.lo, 5);
  EXPECT_GT(at5.hi, 5);
  EXPECT_GE(at5.values.size(), 2u);
  AxisTicks bad = nice_ticks(std::nan(""), 3);
  EXPECT_EQ(bad.lo, 0);
  EXPECT_EQ(bad.hi, 1);
  AxisTicks inf = nice_ticks(0, std::numeric_limits<double>::infinity());
  EXPECT_EQ(inf.hi, 1);
  AxisTicks tiny = nice_ticks(1e9, 1e9 + 1e-3, 5);  // huge offset, tiny range: still a handful of ticks
  EXPECT_GE(tiny.values.size(), 2u);
  EXPECT_LE(tiny.values.size(), 12u);
}

TEST(Coord, TwoDecimalsNoNegativeZero) {
  EXPECT_EQ(coord(12), "12");
  EXPECT_EQ(coord(12.345678), "12.35");
  EXPECT_EQ(coord(-0.001), "0");
  EXPECT_EQ(coord(std::nan("")), "0");
}

TEST(SvgWriter, EscapesAndCloses) {
  SvgWriter svg(100, 50, "a <b> & 'c'");
  svg.open("g", {{"class", "x\"y"}});
  svg.leaf("rect", {{"x", coord(1)}, {"width", coord(2.5)}});
  svg.text(3, 4, "t<1>", {{"fill", "#fff"}});
  svg.leaf_with_title("circle", {{"r", "2"}}, "tip & more");
  std::string out = svg.finish();
  EXPECT_EQ(out.find("<svg class=\"chart\" viewBox=\"0 0 100 50\" width=\"100%\""), 0u) << out;
  EXPECT_NE(out.find("<title>a &lt;b&gt; &amp; &#39;c&#39;</title>"), std::string::npos);
  EXPECT_NE(out.find("<g class=\"x&quot;y\">"), std::string::npos);
  EXPECT_NE(out.find("<rect x=\"1\" width=\"2.5\"/>"), std::string::npos);
  EXPECT_NE(out.find("<text x=\"3\" y=\"4\" fill=\"#fff\">t&lt;1&gt;</text>"), std::string::npos);
  EXPECT_NE(out.find("<circle r=\"2\"><title>tip &amp; more</title></circle>"), std::string::npos);
  EXPECT_NE(out.find("</g>\n</svg>\n"), std::string::npos);
  EXPECT_EQ(out.find("http"), std::string::npos);  // no xmlns URL: the report holds no URL at all
}

TEST(SvgWriter, NoDataPlaceholder) {
  std::string out = no_data_svg("Loss");
  EXPECT_NE(out.find("no data"), std::string::npos);
  EXPECT_NE(out.find("<title>Loss</title>"), std::string::npos);
  EXPECT_NE(out.find("viewBox="), std::string::npos);
}

}  // namespace
}  // namespace ragmig::report
