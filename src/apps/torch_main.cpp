// `ragmig-torch`: the subcommands that need LibTorch (train, eval, lora, serve), started by the `ragmig` front
// binary in its own place (execv) with the same arguments. It presents itself as `ragmig` in help and errors.
#include "apps/command.h"

int main(int argc, char** argv) {
  using namespace ragmig::apps;
  CLI::App app{
      "ragmig — trains dense retrievers for RAG (the commands that need LibTorch).\n"
      "Run `ragmig <command> --help` for a command's options.",
      "ragmig"};
  app.require_subcommand(1, 1);
  std::vector<Command> commands = {add_train_command(app), add_eval_command(app), add_lora_command(app), add_serve_command(app)};
  return run_command_line(app, commands, argc, argv);
}
