// The `ragmig` command line. Subcommands live one per file; this file parses, dispatches, and is the one
// place where errors become messages and exit codes (2 bad input, 1 failure, 75 preempted).
#include <cstdio>

#include "apps/command.h"
#include "core/error.h"

int main(int argc, char** argv) {
  using namespace ragmig::apps;
  CLI::App app{
      "ragmig — trains dense retrievers for RAG and schedules many such jobs onto GPU slices.\n"
      "Run `ragmig <command> --help` for a command's options.",
      "ragmig"};
  app.require_subcommand(1, 1);
  std::vector<Command> commands = {add_train_command(app),  add_submit_command(app), add_status_command(app),
                                   add_cancel_command(app), add_run_command(app)};
  commands.push_back(add_gpus_command(app));
  commands.push_back(add_mig_command(app));
  commands.push_back(add_eval_command(app));
  commands.push_back(add_sim_command(app));
  commands.push_back(add_batch_command(app));

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);  // prints help or the parse error
    return code == 0 ? kOk : kBadInput;
  }
  for (auto& command : commands) {
    if (!command.app->parsed()) continue;
    try {
      return command.run();
    } catch (const ragmig::ConfigError& e) {
      std::fprintf(stderr, "ragmig %s: config error: %s\n", command.app->get_name().c_str(), e.what());
      return kBadInput;
    } catch (const ragmig::DataError& e) {
      std::fprintf(stderr, "ragmig %s: data error: %s\n", command.app->get_name().c_str(), e.what());
      return kBadInput;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "ragmig %s: error: %s\n", command.app->get_name().c_str(), e.what());
      return kFailure;
    }
  }
  return kFailure;
}
