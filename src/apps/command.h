// How apps/ wires subcommands: each subcommand file registers its CLI11 options and returns the function
// that runs it. Only apps/ maps errors to exit codes (see exit_codes below and DESIGN.md).
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>

namespace ragmig::apps {

enum ExitCode : int { kOk = 0, kFailure = 1, kBadInput = 2, kPreempted = 75 };

struct Command {
  CLI::App* app = nullptr;       ///< the subcommand, to check whether it was given
  std::function<int()> run;      ///< runs it; returns the exit code, may throw ragmig::Error
};

/// The path of the running ragmig binary (/proc/self/exe): what schedulers start jobs with. Throws IoError.
std::string self_exe();
/// "2026-11-22 15:48:42", local time.
std::string local_time(double unix_seconds);
/// A line on stderr with the local time in front: the log of `ragmig run` and `ragmig batch`.
void log_line(const std::string& line);

Command add_train_command(CLI::App& root);
Command add_submit_command(CLI::App& root);
Command add_status_command(CLI::App& root);
Command add_cancel_command(CLI::App& root);
Command add_run_command(CLI::App& root);
Command add_gpus_command(CLI::App& root);
Command add_mig_command(CLI::App& root);
Command add_eval_command(CLI::App& root);
Command add_sim_command(CLI::App& root);
Command add_batch_command(CLI::App& root);

}  // namespace ragmig::apps
