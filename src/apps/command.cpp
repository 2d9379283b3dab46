// What several subcommands share: the running binary's path (commands that start ragmig jobs) and the
// time-stamped log lines of the long-running ones (run, batch).
#include "apps/command.h"

#include <ctime>
#include <filesystem>
#include <fmt/format.h>

#include "core/error.h"

namespace ragmig::apps {

std::string self_exe() {
  std::error_code ec;
  const auto path = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) throw IoError("cannot find the ragmig binary (/proc/self/exe): " + ec.message());
  return path.string();
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
