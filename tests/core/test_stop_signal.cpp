// SIGTERM reaches the stop flag through the waiting thread: threads started after install_stop_handlers() block
// it (no EINTR in their system calls), and the children spawned from such a process get it back unblocked.
#include <gtest/gtest.h>
#include <poll.h>
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <thread>

#include "core/spawn.h"
#include "core/stop_signal.h"

namespace ragmig {
namespace {

bool blocked_here(int sig) {
  sigset_t mask;
  pthread_sigmask(SIG_BLOCK, nullptr, &mask);
  return sigismember(&mask, sig) == 1;
}

/// Whether `done()` holds within ten seconds (the waiting thread sets the flag soon after a signal, not at once).
template <typename Done>
bool soon(Done done) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!done() && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  return done();
}

TEST(StopSignal, ASigtermSetsTheFlagWithoutInterruptingOtherThreads) {
  install_stop_handlers();
  clear_stop();
  EXPECT_TRUE(blocked_here(SIGTERM));
  EXPECT_TRUE(blocked_here(SIGINT));
  bool worker_blocks = false;
  int worker_poll = -2, worker_errno = 0;
  std::thread worker([&] {
    worker_blocks = blocked_here(SIGTERM) && blocked_here(SIGINT);
    worker_poll = ::poll(nullptr, 0, 400);  // a system call the signal must not interrupt (EINTR)
    worker_errno = errno;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ASSERT_EQ(::kill(::getpid(), SIGTERM), 0);
  ASSERT_TRUE(soon([] { return stop_requested(); }));
  worker.join();
  EXPECT_TRUE(worker_blocks);
  EXPECT_EQ(worker_poll, 0) << "errno " << worker_errno;
  EXPECT_EQ(stop_signal(), SIGTERM);
  EXPECT_EQ(stop_signals_received(), 1);

  ASSERT_EQ(::kill(::getpid(), SIGINT), 0);  // a second one is counted (a second Ctrl-C asks for more haste)
  EXPECT_TRUE(soon([] { return stop_signals_received() >= 2; }));
  EXPECT_EQ(stop_signals_received(), 2);
  EXPECT_EQ(stop_signal(), SIGINT);
  clear_stop();
  EXPECT_FALSE(stop_requested());
}

TEST(StopSignal, AWaitEndsWhenASignalArrivesDuringItNotForOneBefore) {
  install_stop_handlers();
  clear_stop();
  using Clock = std::chrono::steady_clock;
  // A stop that came before the wait does not cut it short: a loop that goes on after it still paces itself.
  request_stop();
  const auto short_until = Clock::now() + std::chrono::milliseconds(30);
  wait_for_stop(short_until);
  EXPECT_GE(Clock::now(), short_until);
  clear_stop();

  // One during the wait ends it (a minute is the "never" here: it ends in milliseconds or the test fails). Each is
  // sent again every 50 ms until the wait returns, so that one sent before the wait began cannot hang the test.
  const auto wait_while_sending = [](auto send) {
    std::atomic<bool> returned{false};
    std::atomic<int> sent{0};
    std::thread sender([&] {
      while (!returned) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        send();
        ++sent;
      }
    });
    const auto until = Clock::now() + std::chrono::minutes(1);
    wait_for_stop(until);
    const bool woken = Clock::now() < until;
    returned = true;
    sender.join();
    return std::pair<bool, int>(woken, sent);
  };
  EXPECT_TRUE(wait_while_sending([] { request_stop(); }).first);
  EXPECT_TRUE(stop_requested());
  clear_stop();

  const auto [woken, sent] = wait_while_sending([] { ::kill(::getpid(), SIGINT); });
  EXPECT_TRUE(woken);
  EXPECT_TRUE(soon([sent = sent] { return stop_signals_received() == sent; }));  // none left in flight
  EXPECT_EQ(stop_signal(), SIGINT);
  clear_stop();
}

TEST(StopSignal, AChildOfAProcessThatBlocksThemDiesOfSigtermAsUsual) {
  install_stop_handlers();
  clear_stop();
  SpawnOptions o;
  // Not a shell: dash unblocks every signal as it starts. With SIGTERM still blocked sleep would end by itself.
  o.argv = {"sleep", "5"};
  o.search_path = true;
  const pid_t pid = spawn_process(o);
  ASSERT_EQ(::kill(pid, SIGTERM), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(status)) << "exit status " << WEXITSTATUS(status);
  EXPECT_EQ(WTERMSIG(status), SIGTERM);
  EXPECT_FALSE(stop_requested());  // the child's signal is its own
}

}  // namespace
}  // namespace ragmig
