// Small helpers shared by the text tests: writing scratch files and checking that an error names its place.
#pragma once

#include <gtest/gtest.h>

#include <fstream>
#include <string>

namespace ragmig::testing {

inline std::string write_text(const std::filesystem::path& path, const std::string& content) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary);
  out << content;
  return path.string();
}

/// Runs `fn`, expecting exception E whose message contains every one of `parts`.
template <typename E, typename Fn>
void expect_error(Fn&& fn, std::initializer_list<std::string> parts) {
  try {
    fn();
    ADD_FAILURE() << "expected an exception";
  } catch (const E& e) {
    const std::string what = e.what();
    for (const std::string& p : parts) EXPECT_NE(what.find(p), std::string::npos) << "'" << p << "' not in: " << what;
  }
}

}  // namespace ragmig::testing
