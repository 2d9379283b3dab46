// The `ragmig` command line, the front door. Every subcommand that does not need LibTorch runs here and
// starts in milliseconds (status, submit and run are called often, by people and by scripts; batch and run
// live for hours and hold no LibTorch); train and eval are handed to `ragmig-torch` beside this binary by
// execv, so that process is the command itself: the same pid, signals, output and exit code.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "apps/command.h"
#include "core/cpu_threads.h"
#include "core/error.h"

namespace {

using namespace ragmig::apps;

bool is_torch_command(const char* arg) {
  for (const auto& c : kTorchCommands)
    if (std::strcmp(arg, c.name) == 0) return true;
  return false;
}

int exec_torch(char** argv) {
  std::string target;
  try {
    target = (std::filesystem::path(ragmig_exe()).parent_path() / "ragmig-torch").string();
  } catch (const ragmig::Error& e) {
    std::fprintf(stderr, "ragmig %s: error: %s\n", argv[1], e.what());
    return kFailure;
  }
  ragmig::prefer_passive_openmp_waits();  // LibTorch's OpenMP threads sleep when idle (core/cpu_threads.h)
  ::execv(target.c_str(), argv);
  std::fprintf(stderr, "ragmig %s: error: cannot start %s (it is built and installed beside ragmig): %s\n", argv[1],
               target.c_str(), std::strerror(errno));
  return kFailure;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && is_torch_command(argv[1])) return exec_torch(argv);
  CLI::App app{
      "ragmig — trains dense retrievers for RAG and schedules many such jobs onto GPU slices.\n"
      "Run `ragmig <command> --help` for a command's options.",
      "ragmig"};
  app.require_subcommand(1, 1);
  for (const auto& c : kTorchCommands) app.add_subcommand(c.name, c.help);  // listed in --help; run above
  std::vector<Command> commands = {add_submit_command(app), add_status_command(app), add_cancel_command(app),
                                   add_run_command(app),    add_gpus_command(app),   add_mig_command(app),
                                   add_sim_command(app),    add_batch_command(app),  add_models_command(app),
                                   add_beir_command(app)};
  return run_command_line(app, commands, argc, argv);
}
