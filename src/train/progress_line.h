// Human-facing progress of a training run on stderr: one self-overwriting line with an ETA on a terminal,
// plain lines otherwise (logs, CI). Machines read events.jsonl instead.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace ragmig::train {

class ProgressLine {
 public:
  /// `total` steps; `first` is the step the run starts after (non-zero when resuming).
  ProgressLine(int64_t total, int64_t first, bool terminal);
  void update(int64_t step, double loss, double samples_per_s);
  /// Ends the overwriting line on a terminal.
  void finish();

  /// "1h02m", "3m07s", "12s".
  static std::string format_duration(double seconds);

 private:
  int64_t total_;
  int64_t first_;
  bool terminal_;
  bool open_ = false;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace ragmig::train
