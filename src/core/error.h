// The error types of ragmig. Anything that input (files, configs, flags) can cause is a typed exception
// derived from ragmig::Error; broken invariants use RAGMIG_CHECK. Only apps/ turns errors into exit codes:
// 2 = bad input (ConfigError, DataError), 1 = failure (IoError, DeviceError, anything else), 75 = preempted.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace ragmig {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A config key is unknown, has the wrong type, or has a value out of range.
class ConfigError : public Error {
 public:
  using Error::Error;
};

/// Input data is malformed or inconsistent; names the file and, where known, the line.
class DataError : public Error {
 public:
  explicit DataError(const std::string& what) : Error(what) {}
  DataError(const std::string& file, int64_t line, const std::string& what)
      : Error(file + ":" + std::to_string(line) + ": " + what) {}
};

/// A file could not be read or written.
class IoError : public Error {
 public:
  using Error::Error;
};

/// An input file is missing or cannot be opened for reading: the caller's input, so bad input (exit 2) like a
/// malformed one, where other IoErrors (a failed write, a full disk) are failures (exit 1).
class InputFileError : public IoError {
 public:
  using IoError::IoError;
};

/// A device (GPU, MIG instance) is missing or misbehaves.
class DeviceError : public Error {
 public:
  using Error::Error;
};

/// Thrown by RAGMIG_CHECK: a bug in ragmig, not in the input.
class InternalError : public Error {
 public:
  using Error::Error;
};

[[noreturn]] void check_failed(const char* expr, const char* file, int line, const std::string& msg);

}  // namespace ragmig

/// Checks an invariant that only a bug can break. Throws InternalError naming the expression and place.
#define RAGMIG_CHECK(cond, ...)                                                                   \
  do {                                                                                            \
    if (!(cond)) ::ragmig::check_failed(#cond, __FILE__, __LINE__, ::std::string{__VA_ARGS__}); \
  } while (0)
