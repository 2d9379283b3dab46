// What every harness shares: the fuzz input as a file where a parser reads files, and the rule that bad input
// ends in ragmig's typed errors. Any other exception, a RAGMIG_CHECK (InternalError) included, is a finding:
// it is printed and the process aborts, which libFuzzer and the replay driver both report as a crash.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <string>
#include <typeinfo>

#include <unistd.h>

#include "core/error.h"

namespace ragmig::fuzz {

/// Set by the replay driver: saves the input that led to a finding before the abort.
inline void (*on_finding)() = nullptr;

[[noreturn]] inline void finding(const char* kind, const char* what) {
  std::fprintf(stderr, "FUZZ FINDING: %s: %s\n", kind, what);
  if (on_finding) on_finding();
  std::abort();
}

/// A private folder for this process's fuzz files (one per process: libFuzzer's -jobs run several).
inline const std::filesystem::path& scratch_dir() {
  static const std::filesystem::path dir = [] {
    std::string pattern = (std::filesystem::temp_directory_path() / "ragmig-fuzz-XXXXXX").string();
    if (!::mkdtemp(pattern.data())) finding("setup", "mkdtemp failed");
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(scratch_dir(), ec);
    });
    return std::filesystem::path(pattern);
  }();
  return dir;
}

/// Writes `size` bytes to `name` (a path relative to the scratch folder, parents made) and returns its path.
inline std::string write_input(const std::string& name, const uint8_t* data, size_t size) {
  const std::filesystem::path path = scratch_dir() / name;
  std::filesystem::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  out.close();
  if (!out) finding("setup", ("cannot write " + path.string()).c_str());
  return path.string();
}
inline std::string write_input(const std::string& name, const std::string& text) {
  return write_input(name, reinterpret_cast<const uint8_t*>(text.data()), text.size());
}

/// Runs `fn`; ragmig's input errors (ConfigError, DataError, IoError and so InputFileError) are the expected
/// answer to bad input, anything else is a finding.
template <typename Fn>
void expect_typed_errors(Fn&& fn) {
  try {
    fn();
  } catch (const InternalError& e) {
    finding("RAGMIG_CHECK failed (a bug, not an input error)", e.what());
  } catch (const ConfigError&) {
  } catch (const DataError&) {
  } catch (const IoError&) {
  } catch (const std::exception& e) {
    finding(typeid(e).name(), e.what());
  } catch (...) {
    finding("non-std exception", "...");
  }
}

/// What a reader accepted, written back and read again, must come back: `again()` reads the writer's output and
/// returns it in the form `before` has (a JSON dump, a rewritten text). A throw or another value is a finding.
template <typename Fn>
void expect_round_trip(const char* what, const std::string& before, Fn&& again) {
  std::string after;
  try {
    after = again();
  } catch (const std::exception& e) {
    finding(what, ("the written form does not read back: " + std::string(e.what())).c_str());
  }
  if (after != before) finding(what, ("the written form reads back as another:\n" + before + "\n" + after).c_str());
}

}  // namespace ragmig::fuzz
