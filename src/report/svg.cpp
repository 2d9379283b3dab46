// Escaping, number formatting, axis ticks and the SVG writer. Numbers go through std::to_chars so that a
// report renders the same bytes whatever the process locale is (reports are diffed).
#include "report/svg.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <iterator>

namespace ragmig::report {
namespace {

constexpr const char* kDash = "\u2014";  // shown for values that are absent or not finite

std::string to_fixed(double v, int decimals) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed, std::clamp(decimals, 0, 12));
  if (ec != std::errc()) return kDash;  // |v| too large for fixed notation in 64 chars
  return std::string(buf, end);
}

// "0.500" -> "0.5", "140.000" -> "140", "-0.000" -> "0".
std::string trim_zeros(std::string s) {
  if (s.find('.') != std::string::npos) {
    while (!s.empty() && s.back() == '0') s.pop_back();
    if (!s.empty() && s.back() == '.') s.pop_back();
  }
  if (s == "-0") s = "0";
  return s;
}

}  // namespace

std::string escape_html(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string format_number(double v, int max_decimals) {
  if (!std::isfinite(v)) return kDash;
  return trim_zeros(to_fixed(v, max_decimals));
}

std::string format_fixed(double v, int decimals) {
  if (!std::isfinite(v)) return kDash;
  std::string s = to_fixed(v, decimals);
  // "-0.000" would suggest a sign the value does not have.
  if (s.size() > 1 && s[0] == '-' && s.find_first_not_of("-0.") == std::string::npos) s.erase(0, 1);
  return s;
}

std::string format_compact(double v) {
  if (!std::isfinite(v)) return kDash;
  double a = std::abs(v);
  if (a >= 1e9) return format_number(v / 1e9, 2) + "G";
  if (a >= 1e6) return format_number(v / 1e6, 2) + "M";
  if (a >= 1e4) return format_number(v / 1e3, 1) + "k";
  if (a >= 100) return format_number(v, 0);
  return format_number(v, 3);
}

std::string format_flops(double flops) {
  if (!std::isfinite(flops) || flops < 0) return kDash;
  static const char* const kPrefixes[] = {"M", "G", "T", "P", "E"};
  double v = flops / 1e6;
  size_t p = 0;
  while (p + 1 < std::size(kPrefixes) && v >= 999.5) v /= 1e3, ++p;
  const int decimals = v >= 99.95 ? 0 : v >= 9.995 ? 1 : 2;
  return format_number(v, decimals) + " " + kPrefixes[p] + "FLOP";
}

std::string format_count(int64_t v) {
  std::string digits = std::to_string(v < 0 ? -(v + 1) + 1ULL : static_cast<unsigned long long>(v));
  std::string out;
  int n = static_cast<int>(digits.size());
  for (int i = 0; i < n; ++i) {
    if (i > 0 && (n - i) % 3 == 0) out += ',';
    out += digits[static_cast<size_t>(i)];
  }
  return v < 0 ? "-" + out : out;
}

std::string format_duration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return kDash;
  if (seconds < 10) return format_number(seconds, 1) + " s";
  if (seconds < 59.5) return format_number(seconds, 0) + " s";
  auto total = static_cast<int64_t>(std::llround(seconds));
  if (total < 3600) {
    int64_t s = total % 60;
    return std::to_string(total / 60) + " min" + (s ? " " + std::to_string(s) + " s" : "");
  }
  int64_t minutes = static_cast<int64_t>(std::llround(seconds / 60.0));
  int64_t m = minutes % 60;
  return std::to_string(minutes / 60) + " h " + (m < 10 ? "0" : "") + std::to_string(m) + " min";
}

std::string AxisTicks::label(double v) const {
  // Large axes share one suffix (5k, 10k, 15k rather than 5000, 10k, 15k), with the decimals the step needs.
  double m = std::max(std::abs(lo), std::abs(hi));
  if (m < 1e4) return format_number(v, decimals);
  double scale = m >= 1e9 ? 1e9 : m >= 1e6 ? 1e6 : 1e3;
  const char* suffix = m >= 1e9 ? "G" : m >= 1e6 ? "M" : "k";
  if (v == 0) return "0";
  int dec = std::max(0, static_cast<int>(-std::floor(std::log10(step / scale) + 1e-9)));
  return format_number(v / scale, dec) + suffix;
}

AxisTicks nice_ticks(double lo, double hi, int target) {
  if (!std::isfinite(lo) || !std::isfinite(hi)) lo = 0, hi = 1;
  if (lo > hi) std::swap(lo, hi);
  if (hi == lo) {
    if (lo == 0) {
      hi = 1;
    } else {
      double pad = std::abs(lo) * 0.5;
      lo -= pad, hi += pad;
    }
  }
  target = std::max(target, 1);
  double raw = (hi - lo) / target;
  double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double norm = raw / mag;
  double nice = norm < 1.5 ? 1 : norm < 3 ? 2 : norm < 7 ? 5 : 10;
  AxisTicks t;
  t.step = nice * mag;
  auto first = static_cast<int64_t>(std::floor(lo / t.step + 1e-9));
  auto last = static_cast<int64_t>(std::ceil(hi / t.step - 1e-9));
  last = std::min(last, first + 1000);  // cannot trigger with a sane target; bounds the loop anyway
  for (int64_t i = first; i <= last; ++i) {
    double v = static_cast<double>(i) * t.step;
    t.values.push_back(v == 0 ? 0.0 : v);  // no -0
  }
  t.lo = t.values.front();
  t.hi = t.values.back();
  t.decimals = std::max(0, static_cast<int>(-std::floor(std::log10(t.step) + 1e-9)));
  return t;
}

std::string coord(double v) { return std::isfinite(v) ? trim_zeros(to_fixed(v, 2)) : "0"; }

SvgWriter::SvgWriter(double width, double height, std::string_view title, std::string_view css_class) {
  // No xmlns: inline in HTML the parser puts <svg> in the SVG namespace, and the report holds no URL at all.
  out_ += "<svg class=\"" + escape_html(css_class) + "\" viewBox=\"0 0 " + coord(width) + " " + coord(height) +
          "\" width=\"100%\" role=\"img\" font-family=\"system-ui, -apple-system, Segoe UI, Roboto, Helvetica, "
          "Arial, sans-serif\" font-size=\"12\">\n";
  out_ += "<title>" + escape_html(title) + "</title>\n";
  open_.push_back("svg");
}

void SvgWriter::attributes(std::initializer_list<Attr> attrs) {
  for (const auto& [name, value] : attrs) {
    out_ += ' ';
    out_ += name;
    out_ += "=\"";
    out_ += escape_html(value);
    out_ += '"';
  }
}

void SvgWriter::start_tag(std::string_view tag, std::initializer_list<Attr> attrs) {
  out_ += '<';
  out_ += tag;
  attributes(attrs);
}

void SvgWriter::leaf(std::string_view tag, std::initializer_list<Attr> attrs) {
  start_tag(tag, attrs);
  out_ += "/>\n";
}

void SvgWriter::leaf_with_title(std::string_view tag, std::initializer_list<Attr> attrs, std::string_view title) {
  start_tag(tag, attrs);
  out_ += "><title>" + escape_html(title) + "</title></" + std::string(tag) + ">\n";
}

void SvgWriter::text(double x, double y, std::string_view content, std::initializer_list<Attr> attrs) {
  out_ += "<text x=\"" + coord(x) + "\" y=\"" + coord(y) + "\"";
  attributes(attrs);
  out_ += '>' + escape_html(content) + "</text>\n";
}

void SvgWriter::open(std::string_view tag, std::initializer_list<Attr> attrs) {
  start_tag(tag, attrs);
  out_ += ">\n";
  open_.emplace_back(tag);
}

void SvgWriter::close() {
  if (open_.size() <= 1) return;  // the root is closed by finish()
  out_ += "</" + open_.back() + ">\n";
  open_.pop_back();
}

std::string SvgWriter::finish() {
  while (!open_.empty()) {
    out_ += "</" + open_.back() + ">\n";
    open_.pop_back();
  }
  return std::move(out_);
}

std::string no_data_svg(std::string_view title, double width, double height) {
  SvgWriter svg(width, height, title);
  svg.leaf("rect", {{"x", "0.5"}, {"y", "0.5"}, {"width", coord(width - 1)}, {"height", coord(height - 1)},
                    {"rx", "6"}, {"fill", "#f9fafb"}, {"stroke", "#e5e7eb"}, {"stroke-dasharray", "4 4"}});
  svg.text(width / 2, height / 2 + 5, "no data",
           {{"text-anchor", "middle"}, {"fill", "#6b7280"}, {"font-size", "15"}});
  return svg.finish();
}

}  // namespace ragmig::report
