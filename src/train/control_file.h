// <run>/control.json: what the scheduler asks of a running worker (DESIGN.md's job protocol), written
// atomically by it and read by the trainer at step boundaries. Every key is optional:
//   {"batch_size": 32, "chunk_size": 8, "after_step": 500}
// batch_size: the global batch from now on (a Resize; the LR follows train.resize_lr); chunk_size: the
// GradCache chunk or plain micro-batch (memory only: GradCache's gradients do not change); after_step: not
// before this step has been trained (a request at a known step, so runs can be compared).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace ragmig::train {

struct ControlRequest {
  int64_t batch_size = 0;  ///< 0: unchanged
  int64_t chunk_size = 0;  ///< 0: unchanged
  int64_t after_step = 0;
  bool operator==(const ControlRequest&) const = default;
};

/// Parses control.json's text. Throws DataError naming `path`, the key and what was expected (unknown keys
/// included: a misspelt request must not pass for an empty one).
ControlRequest parse_control(const std::string& text, const std::string& path);

/// Watches one control.json: poll() reports what is new in it since the last poll.
class ControlWatch {
 public:
  explicit ControlWatch(std::string path) : path_(std::move(path)) {}
  /// The request when the file appeared or its text changed since the last call; nullopt when it is absent
  /// or unchanged. Throws DataError for a malformed file (once: the same text is not reported again). The
  /// file is small and read whole each time: a replaced file can keep its size, inode and coarse mtime.
  std::optional<ControlRequest> poll();
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::string last_text_;
};

}  // namespace ragmig::train
