// Paths checked before a command's work: inputs that must be an existing file or folder, outputs whose folder must
// exist. A command that found out at its end (after minutes of reading or training) would waste them.
#pragma once

#include <filesystem>
#include <string>

namespace ragmig {

/// Why `path` is not an existing folder (`folder`) or regular file, for an error message: "no such folder: P",
/// "P is a file, not a folder", "P is a folder, not a file"; empty when it is what was expected.
std::string path_problem(const std::filesystem::path& path, bool folder);

/// Throws ConfigError naming `option` unless `path` can be written as a file: its folder exists and it is no
/// folder itself. Commands check their output files with it before their work, which would otherwise end on it.
void check_output_file(const std::filesystem::path& path, const std::string& option);

}  // namespace ragmig
