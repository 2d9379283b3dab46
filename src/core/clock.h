// Seconds on the steady clock: how ragmig times what it logs and reports.
#pragma once

#include <chrono>

namespace ragmig {

/// Seconds elapsed since `t` on the steady clock.
inline double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace ragmig
