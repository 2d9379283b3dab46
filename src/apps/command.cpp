// What the subcommands and both binaries share: the front binary's path (commands that start ragmig jobs),
// the time-stamped log lines of the long-running ones (run, batch), and the error-to-exit-code mapping.
#include "apps/command.h"

#include <fmt/format.h>
#include <cstdio>
#include <ctime>
#include <filesystem>

#include "core/error.h"

namespace ragmig::apps {

std::string ragmig_exe() {
  std::error_code ec;
  const auto path = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) throw IoError("cannot find the ragmig binary (/proc/self/exe): " + ec.message());
  return (path.parent_path() / "ragmig").string();
}

const char* torch_command_help(const std::string& name) {
  for (const auto& c : kTorchCommands)
    if (name == c.name) return c.help;
  return "";
}

int run_command_line(CLI::App& app, std::vector<Command>& commands, int argc, char** argv) {
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
    } catch (const ConfigError& e) {
      std::fprintf(stderr, "ragmig %s: config error: %s\n", command.app->get_name().c_str(), e.what());
      return kBadInput;
    } catch (const DataError& e) {
      std::fprintf(stderr, "ragmig %s: data error: %s\n", command.app->get_name().c_str(), e.what());
      return kBadInput;
    } catch (const InputFileError& e) {
      std::fprintf(stderr, "ragmig %s: input error: %s\n", command.app->get_name().c_str(), e.what());
      return kBadInput;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "ragmig %s: error: %s\n", command.app->get_name().c_str(), e.what());
      return kFailure;
    }
  }
  return kFailure;
}

std::string local_time(double unix_seconds) {
  const std::time_t t = static_cast<std::time_t>(unix_seconds);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%d %H:%M:%S", std::localtime(&t));
  return text;
}

void log_line(const std::string& line) {
  fmt::print(stderr, "[{}] {}\n", local_time(static_cast<double>(std::time(nullptr))), line);
}

}  // namespace ragmig::apps
