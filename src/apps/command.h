// How apps/ wires subcommands: each subcommand file registers its CLI11 options and returns the function
// that runs it. Only apps/ maps errors to exit codes (see exit_codes below and DESIGN.md).
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <vector>

namespace ragmig::apps {

enum ExitCode : int { kOk = 0, kFailure = 1, kBadInput = 2, kPreempted = 75 };

struct Command {
  CLI::App* app = nullptr;   ///< the subcommand, to check whether it was given
  std::function<int()> run;  ///< runs it; returns the exit code, may throw ragmig::Error
};

/// The path of the `ragmig` front binary, beside the running one (/proc/self/exe): what schedulers start
/// jobs with. Throws IoError.
std::string ragmig_exe();

/// The subcommands that need LibTorch: the `ragmig` front hands them to `ragmig-torch` (its own process
/// image, so signals and exit codes are the worker's own), keeping every other command free of LibTorch's
/// start-up (~0.5 s and ~150 MB).
struct TorchCommand {
  const char* name;
  const char* help;
};
inline constexpr TorchCommand kTorchCommands[] = {
    {"train", "Train a dense retriever (dual encoder) in one run folder"},
    {"eval", "Evaluate retrieval on a BEIR folder: BM25, dense, hybrid or re-ranked, with BEIR metrics"},
    {"mine", "Mine hard negatives for training from BM25's or a model's ranking of a BEIR split"},
    {"lora", "LoRA adapters: merge one into its base model"},
    {"serve", "Serve embeddings over HTTP: OpenAI /v1/embeddings, TEI /embed, LoRA adapters by name"},
};
/// kTorchCommands' help line of `name`.
const char* torch_command_help(const std::string& name);

/// Parses argv for `commands`, runs the one given and maps its errors to exit codes: the one place where
/// errors become messages (2 bad input, 1 failure, 75 preempted).
int run_command_line(CLI::App& app, std::vector<Command>& commands, int argc, char** argv);
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
Command add_models_command(CLI::App& root);
Command add_beir_command(CLI::App& root);
Command add_lora_command(CLI::App& root);
Command add_mine_command(CLI::App& root);
Command add_serve_command(CLI::App& root);

}  // namespace ragmig::apps
