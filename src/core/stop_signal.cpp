// The stop flag and the thread that waits for SIGTERM / SIGINT (see stop_signal.h).
#include "core/stop_signal.h"

#include <pthread.h>

#include <atomic>
#include <condition_variable>
#include <csignal>
#include <cstdint>
#include <mutex>
#include <thread>

namespace ragmig {
namespace {

std::atomic<int> g_stop{0};  // -1 = by hand, >0 = the signal number
std::atomic<int> g_received{0};
static_assert(std::atomic<int>::is_always_lock_free);

void record(int sig) {
  g_stop.store(sig);
  g_received.fetch_add(1);
}

// What wait_for_stop() sleeps on: a count of the stops that woke it, moved under the mutex so none is missed.
// Never destroyed: the detached waiting thread may take a signal while the process exits.
struct Wake {
  std::mutex mutex;
  std::condition_variable cv;
  uint64_t count = 0;
};
Wake& wake() {
  static Wake* const w = new Wake;
  return *w;
}

void wake_waiters() {
  Wake& w = wake();
  {
    std::lock_guard<std::mutex> lock(w.mutex);
    ++w.count;
  }
  w.cv.notify_all();
}

// For threads that ran before the signals were blocked: lock-free stores only, so async-signal-safe.
extern "C" void on_stop_signal(int sig) { record(sig); }

sigset_t stop_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  return set;
}

}  // namespace

void install_stop_handlers() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction sa {};
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    sigaction(SIGTERM, &sa, nullptr);
    sigaction(SIGINT, &sa, nullptr);
    const sigset_t set = stop_signals();
    pthread_sigmask(SIG_BLOCK, &set, nullptr);  // inherited by the waiter and every thread started from here on
    std::thread([set] {
      for (;;) {
        int sig = 0;
        if (sigwait(&set, &sig) == 0) {
          record(sig);
          wake_waiters();
        }
      }
    }).detach();
  });
}

bool stop_requested() { return g_stop.load() != 0; }
void request_stop() {
  g_stop.store(-1);
  wake_waiters();
}

void wait_for_stop(std::chrono::steady_clock::time_point until) {
  Wake& w = wake();
  std::unique_lock<std::mutex> lock(w.mutex);
  const uint64_t seen = w.count;
  w.cv.wait_until(lock, until, [&w, seen] { return w.count != seen; });
}

void clear_stop() {
  g_stop.store(0);
  g_received.store(0);
}
int stop_signal() { return g_stop.load() > 0 ? g_stop.load() : 0; }
int stop_signals_received() { return g_received.load(); }

void reset_stop_signals_in_child() {
  ::signal(SIGTERM, SIG_DFL);
  ::signal(SIGINT, SIG_DFL);
  const sigset_t set = stop_signals();
  sigprocmask(SIG_UNBLOCK, &set, nullptr);  // the child has one thread; sigprocmask is async-signal-safe
}

}  // namespace ragmig
