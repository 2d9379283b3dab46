// Helpers shared by the test suites: where the shared data is, skipping politely when it is absent,
// and scratch folders that clean up after themselves.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

namespace ragmig::testing {

/// ../shared/data, or $RAGMIG_DATA when set.
inline std::filesystem::path data_dir() {
  if (const char* env = std::getenv("RAGMIG_DATA")) return env;
  return RAGMIG_DATA_DIR;
}

/// A fresh folder under the system temp folder, removed when the object dies.
class ScratchDir {
 public:
  ScratchDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "ragmig-test-XXXXXX").string();
    char* made = ::mkdtemp(pattern.data());
    if (!made) throw std::runtime_error("mkdtemp failed");
    path_ = made;
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

}  // namespace ragmig::testing

/// Skips the current test with a message when `rel` (relative to the data folder) does not exist; fails instead
/// under RAGMIG_REQUIRE_DATA_FILES (.ci/run sets it: there the shared data is present, and a test that silently
/// skipped for a missing file would hide that it never ran).
#define RAGMIG_REQUIRE_DATA(rel)                                                                        \
  do {                                                                                                  \
    if (!std::filesystem::exists(::ragmig::testing::data_dir() / (rel))) {                              \
      const std::string missing_ = (::ragmig::testing::data_dir() / (rel)).string();                   \
      if (std::getenv("RAGMIG_REQUIRE_DATA_FILES")) FAIL() << "data not found: " << missing_;           \
      GTEST_SKIP() << "data not found: " << missing_ << " (set RAGMIG_DATA to the shared data folder)"; \
    }                                                                                                   \
  } while (0)
