// Signal handlers for the stop flag (see stop_signal.h).
#include "core/stop_signal.h"

#include <atomic>
#include <csignal>

namespace ragmig {
namespace {

std::atomic<int> g_stop{0};  // -1 = by hand, >0 = the signal number
std::atomic<int> g_received{0};
static_assert(std::atomic<int>::is_always_lock_free);

extern "C" void on_stop_signal(int sig) {
  g_stop.store(sig);
  g_received.fetch_add(1);
}

}  // namespace

void install_stop_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);
}

bool stop_requested() { return g_stop.load() != 0; }
void request_stop() { g_stop.store(-1); }
void clear_stop() {
  g_stop.store(0);
  g_received.store(0);
}
int stop_signal() { return g_stop.load() > 0 ? g_stop.load() : 0; }
int stop_signals_received() { return g_received.load(); }

}  // namespace ragmig
