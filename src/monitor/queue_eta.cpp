// A min-heap of the times the slots free up.
#include "monitor/queue_eta.h"

#include <algorithm>
#include <functional>
#include <queue>

namespace ragmig::monitor {

double queue_finish_at(double now, const std::vector<double>& running_remaining_s, const std::vector<double>& queued_s,
                       size_t slots) {
  slots = std::max<size_t>(1, slots);
  std::priority_queue<double, std::vector<double>, std::greater<>> free_at;
  // Running jobs hold their slots from now (the longest first, should there be more than slots); queued jobs
  // follow in order. A popped end is never later than what replaces it, so the heap ends holding the last.
  std::vector<double> running = running_remaining_s;
  std::sort(running.begin(), running.end(), std::greater<>());
  const auto place = [&](double start, double work) { free_at.push(start + std::max(0.0, work)); };
  for (double work : running) {
    if (free_at.size() < slots) {
      place(now, work);
      continue;
    }
    const double start = free_at.top();
    free_at.pop();
    place(start, work);
  }
  while (free_at.size() < slots) free_at.push(now);
  for (double work : queued_s) {
    const double start = free_at.top();
    free_at.pop();
    place(start, work);
  }
  double last = now;
  for (; !free_at.empty(); free_at.pop()) last = std::max(last, free_at.top());
  return last;
}

}  // namespace ragmig::monitor
