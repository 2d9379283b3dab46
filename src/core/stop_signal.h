// The job protocol's "checkpoint now": SIGTERM (and SIGINT) set a flag that long loops poll between steps.
// One thread waits for those signals (sigwait) and every thread started after install_stop_handlers() blocks
// them, so a stop never interrupts another thread's system call (EINTR inside LibTorch, Gloo or the HTTP
// server's workers) and runs no handler inside a library; ThreadSanitizer sees an ordinary thread set the flag.
// Children must not inherit the blocked mask: every fork site calls reset_stop_signals_in_child().
#pragma once

#include <chrono>

namespace ragmig {

/// From the first call on: SIGTERM and SIGINT blocked in the calling thread (and so in the threads it starts
/// afterwards) and set the stop flag, taken by one waiting thread; threads that already ran and do not block
/// them set it from an async-signal-safe handler. Call it before starting threads. Idempotent.
void install_stop_handlers();
/// True once SIGTERM or SIGINT arrived (or request_stop() was called).
bool stop_requested();
/// Sets the flag by hand (tests; a scheduler in-process).
void request_stop();
/// Sleeps until `until`, or until SIGTERM or SIGINT arrives (or request_stop() is called) during the sleep, which
/// ever is first: a loop that waits between passes reacts to Ctrl-C at once, not a pause later. A stop that
/// arrived before the call does not cut it short (a loop that goes on after a stop still paces itself); one that
/// an async-signal handler took (a thread that does not block the signals) is seen at `until`.
void wait_for_stop(std::chrono::steady_clock::time_point until);
/// Clears the flag (tests).
void clear_stop();
/// The signal that set the flag, 0 if none or set by hand.
int stop_signal();
/// How many times SIGTERM or SIGINT arrived: a second Ctrl-C asks for more haste than the first.
int stop_signals_received();
/// In a child between fork and exec (async-signal-safe): SIGTERM and SIGINT unblocked and at their defaults,
/// whatever install_stop_handlers() did in the parent (exec keeps a blocked mask and ignored signals).
void reset_stop_signals_in_child();

}  // namespace ragmig
