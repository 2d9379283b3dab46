// The job protocol's "checkpoint now": SIGTERM (and SIGINT) set a flag that long loops poll between steps.
// The handler only stores to a lock-free atomic, so it is async-signal-safe.
#pragma once

namespace ragmig {

/// Installs handlers for SIGTERM and SIGINT that set the stop flag. Idempotent.
void install_stop_handlers();
/// True once SIGTERM or SIGINT arrived (or request_stop() was called).
bool stop_requested();
/// Sets the flag by hand (tests; a scheduler in-process).
void request_stop();
/// Clears the flag (tests).
void clear_stop();
/// The signal that set the flag, 0 if none or set by hand.
int stop_signal();
/// How many times SIGTERM or SIGINT arrived: a second Ctrl-C asks for more haste than the first.
int stop_signals_received();

}  // namespace ragmig
