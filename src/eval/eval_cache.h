// The evaluation cache: corpus and query embeddings, dense indexes and BM25 indexes, each stored under a key
// that hashes everything it depends on (the model folder's files, the corpus or queries file's content,
// token limits, the index spec), so a second evaluation of the same model on the same data embeds nothing
// and a changed model or corpus can never be served stale vectors. Entries are written atomically in the
// checksummed envelope of index/binary_file.h; a damaged entry is reported and rebuilt, never trusted. The cache
// is an optimisation: an entry that cannot be written (a full disk, a read-only folder) is a warning, its
// partial file is removed (the atomic writer's temporary), and the evaluation goes on.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "index/matrix.h"

namespace ragmig::eval {

/// 64-bit FNV-1a of a file's bytes as 16 hex digits. Throws IoError.
std::string hash_file(const std::string& path);
/// Hash of every regular file under `dir` (relative path and content), in path order. Throws IoError.
std::string hash_folder(const std::string& dir);
/// Hash of the parts joined with separators, as 16 hex digits.
std::string hash_parts(const std::vector<std::string>& parts);

/// `s` with every character but ASCII letters and digits replaced by '_': an index spec as part of a file name.
std::string file_safe(const std::string& s);

/// What happened to one cached artefact, for the report: "hit", "miss" (built and stored), "unstored" (built, the
/// write failed), "off" (no cache).
struct CacheUse {
  std::string what, state, path;
};

class EvalCache {
 public:
  /// `dir` empty = caching off. The folder is created on the first store.
  explicit EvalCache(std::string dir) : dir_(std::move(dir)) {}
  bool enabled() const { return !dir_.empty(); }
  const std::string& dir() const { return dir_; }

  /// dir/<kind>-<key><ext>.
  std::string path(const std::string& kind, const std::string& key, const std::string& ext) const;

  /// The matrix stored at `path`, or nullopt when absent. A damaged file yields nullopt and a warning.
  std::optional<index::FloatMatrix> load_matrix(const std::string& path, std::vector<std::string>& warnings) const;
  /// Stores `m` at `path` (see store).
  std::string store_matrix(const std::string& path, const index::FloatMatrix& m, std::vector<std::string>& warnings) const;
  /// Creates the cache folder, then runs `write`, which writes the entry at `path` atomically. Returns the state
  /// for CacheUse: "off" (caching off; `write` is not run), "miss" (stored) or "unstored" (the folder or the write
  /// failed: a warning naming the path and the reason is appended to `warnings`).
  std::string store(const std::string& path, const std::function<void()>& write, std::vector<std::string>& warnings) const;

 private:
  std::string dir_;
};

}  // namespace ragmig::eval
