// Building blocks of the sweep report: HTML/XML escaping, locale-free number formatting, "nice" axis ticks
// and a small string-building SVG writer. The report draws its own SVG so that it opens offline anywhere,
// renders without scripts, diffs cleanly and costs no dependency; the charts are simple enough for that.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ragmig::report {

/// Escapes & < > " ' for HTML text and attribute values (also valid XML).
std::string escape_html(std::string_view text);

/// `v` with at most `max_decimals` decimals, trailing zeros trimmed ("0.2", "140", "-3.25"); never "-0".
/// Non-finite values give "—". Locale-independent.
std::string format_number(double v, int max_decimals = 3);

/// `v` with exactly `decimals` decimals ("0.2130"), for table columns; non-finite gives "—".
std::string format_fixed(double v, int decimals);

/// Short form for axis labels and cards: 950 -> "950", 12500 -> "12.5k", 3.2e6 -> "3.2M".
std::string format_compact(double v);

/// A count of floating-point operations with an SI prefix, three significant digits: 1.51e12 -> "1.51 TFLOP",
/// 8.2e16 -> "82 PFLOP"; below 1e9 in MFLOP; non-finite or negative gives "—".
std::string format_flops(double flops);

/// An integer with thousands separators: 12000 -> "12,000".
std::string format_count(int64_t v);

/// A duration for people: "0 s", "4.5 s", "42 s", "3 min 20 s", "2 h 05 min".
std::string format_duration(double seconds);

/// Tick marks for an axis: values from lo to hi (inclusive) in steps of 1, 2 or 5 times a power of ten.
struct AxisTicks {
  double lo = 0, hi = 1, step = 0.2;
  std::vector<double> values;
  int decimals = 1;  ///< decimals that show every tick exactly
  /// The label of `v` on this axis (compact when the ticks reach 10,000).
  std::string label(double v) const;
};

/// Nice ticks covering [lo, hi] with about `target` intervals; the range is widened to whole steps.
/// An empty range (lo == hi) is widened around the value ([0, 1] for 0); non-finite input gives [0, 1].
AxisTicks nice_ticks(double lo, double hi, int target = 5);

/// A number as an SVG coordinate: at most two decimals, no "-0".
std::string coord(double v);

/// One attribute of an SVG element; values are escaped by the writer.
using Attr = std::pair<std::string_view, std::string>;

/// Builds an SVG document as a string. Elements are written in order; open/close nest groups.
class SvgWriter {
 public:
  /// Opens `<svg>` with a viewBox of width x height, width 100% and a <title> (accessible name, tooltip).
  SvgWriter(double width, double height, std::string_view title, std::string_view css_class = "chart");

  /// An element without children: `<rect x="1" .../>`.
  void leaf(std::string_view tag, std::initializer_list<Attr> attrs);
  /// An element with a <title> child, which browsers show as a tooltip.
  void leaf_with_title(std::string_view tag, std::initializer_list<Attr> attrs, std::string_view title);
  /// `<text ...>escaped content</text>`.
  void text(double x, double y, std::string_view content, std::initializer_list<Attr> attrs = {});
  void open(std::string_view tag, std::initializer_list<Attr> attrs = {});
  void close();
  /// The finished document (closes everything still open).
  std::string finish();

 private:
  void start_tag(std::string_view tag, std::initializer_list<Attr> attrs);
  void attributes(std::initializer_list<Attr> attrs);
  std::string out_;
  std::vector<std::string> open_;
};

/// A whole chart that says "no data" instead of drawing axes over nothing.
std::string no_data_svg(std::string_view title, double width = 1200, double height = 120);

}  // namespace ragmig::report
