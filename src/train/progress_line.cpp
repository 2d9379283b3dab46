// ETA from the mean step time since this process started (resumed steps excluded).
#include "train/progress_line.h"

#include <fmt/format.h>

#include <cstdio>

#include "core/clock.h"

namespace ragmig::train {

ProgressLine::ProgressLine(int64_t total, int64_t first, bool terminal)
    : total_(total), first_(first), terminal_(terminal), start_(std::chrono::steady_clock::now()) {}

std::string ProgressLine::format_duration(double seconds) {
  const auto s = static_cast<int64_t>(seconds + 0.5);
  if (s >= 3600) return fmt::format("{}h{:02d}m", s / 3600, (s % 3600) / 60);
  if (s >= 60) return fmt::format("{}m{:02d}s", s / 60, s % 60);
  return fmt::format("{}s", s);
}

void ProgressLine::update(int64_t step, double loss, double samples_per_s) {
  const double elapsed = seconds_since(start_);
  const int64_t done = step - first_;
  const double eta = done > 0 ? elapsed / static_cast<double>(done) * static_cast<double>(total_ - step) : 0;
  const std::string text = fmt::format("step {}/{}  loss {:.4f}  {:.1f} samples/s  elapsed {}  ETA {}", step, total_,
                                       loss, samples_per_s, format_duration(elapsed), format_duration(eta));
  if (terminal_) {
    fmt::print(stderr, "\r\033[K{}", text);
    open_ = true;
  } else {
    fmt::print(stderr, "{}\n", text);
  }
  std::fflush(stderr);
}

void ProgressLine::finish() {
  if (open_) fmt::print(stderr, "\n");
  open_ = false;
}

}  // namespace ragmig::train
