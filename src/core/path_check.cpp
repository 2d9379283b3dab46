// Paths checked before a command's work (see path_check.h).
#include "core/path_check.h"

#include <system_error>

#include "core/error.h"

namespace ragmig {

std::string path_problem(const std::filesystem::path& path, bool folder) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (folder ? std::filesystem::is_directory(status) : std::filesystem::is_regular_file(status)) return {};
  if (!std::filesystem::exists(status)) return std::string("no such ") + (folder ? "folder: " : "file: ") + path.string();
  if (std::filesystem::is_directory(status)) return path.string() + " is a folder, not a file";
  return path.string() + (folder ? " is a file, not a folder" : " is not a regular file");
}

void check_output_file(const std::filesystem::path& path, const std::string& option) {
  const std::filesystem::path folder = path.parent_path();
  if (!folder.empty() && !std::filesystem::is_directory(folder))
    throw ConfigError(option + " " + path.string() + ": no such folder to write it in: " + folder.string());
  if (std::filesystem::is_directory(path)) throw ConfigError(option + " " + path.string() + ": is a folder");
}

}  // namespace ragmig
