// The running binary's path, for commands that start ragmig jobs (run, batch).
#include <filesystem>

#include "apps/command.h"
#include "core/error.h"

namespace ragmig::apps {

std::string self_exe() {
  std::error_code ec;
  const auto path = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) throw IoError("cannot find the ragmig binary (/proc/self/exe): " + ec.message());
  return path.string();
}

}  // namespace ragmig::apps
