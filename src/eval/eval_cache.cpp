// The evaluation cache (see eval_cache.h).
#include "eval/eval_cache.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "index/binary_file.h"

namespace ragmig::eval {
namespace fs = std::filesystem;
namespace {

constexpr uint64_t kFnvOffset = 14695981039346656037ull;
constexpr uint64_t kFnvPrime = 1099511628211ull;
constexpr std::string_view kMatrixMagic = "RGMEMBD\n";
constexpr uint32_t kMatrixVersion = 1;

uint64_t fnv(uint64_t h, const char* data, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    h ^= static_cast<unsigned char>(data[i]);
    h *= kFnvPrime;
  }
  return h;
}

uint64_t fnv_file(uint64_t h, const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw IoError(path + ": cannot open for reading");
  std::vector<char> buf(1 << 20);
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    h = fnv(h, buf.data(), static_cast<size_t>(in.gcount()));
  }
  if (in.bad()) throw IoError(path + ": read failed");
  return h;
}

std::string hex(uint64_t h) {
  char out[17];
  std::snprintf(out, sizeof out, "%016llx", static_cast<unsigned long long>(h));
  return out;
}

}  // namespace

std::string hash_file(const std::string& path) { return hex(fnv_file(kFnvOffset, path)); }

std::string hash_folder(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw IoError(dir + ": not a folder");
  std::vector<std::string> files;
  for (const auto& entry : fs::recursive_directory_iterator(dir, ec))
    if (entry.is_regular_file()) files.push_back(fs::relative(entry.path(), dir).string());
  if (ec) throw IoError(dir + ": cannot list: " + ec.message());
  std::sort(files.begin(), files.end());
  uint64_t h = kFnvOffset;
  for (const auto& rel : files) {
    h = fnv(h, rel.data(), rel.size() + 1);  // the terminating NUL separates name from content
    h = fnv_file(h, (fs::path(dir) / rel).string());
  }
  return hex(h);
}

std::string hash_parts(const std::vector<std::string>& parts) {
  uint64_t h = kFnvOffset;
  for (const auto& p : parts) h = fnv(h, p.c_str(), p.size() + 1);
  return hex(h);
}

std::string file_safe(const std::string& s) {
  std::string out;
  for (char c : s) out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return out;
}

std::string EvalCache::path(const std::string& kind, const std::string& key, const std::string& ext) const {
  return (fs::path(dir_) / (kind + "-" + key + ext)).string();
}

std::string EvalCache::store(const std::string& path, const std::function<void()>& write,
                             std::vector<std::string>& warnings) const {
  if (!enabled()) return "off";
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec) {
    warnings.push_back("cannot create the cache folder " + dir_ + " (" + ec.message() + "); going on without caching");
    return "unstored";
  }
  try {
    write();
    return "miss";
  } catch (const IoError& e) {  // write_file_atomic has removed its temporary file
    warnings.push_back(std::string("cannot write a cache entry (") + e.what() + "); going on without it");
    return "unstored";
  }
}

std::optional<index::FloatMatrix> EvalCache::load_matrix(const std::string& path, std::vector<std::string>& warnings) const {
  if (!enabled() || !fs::exists(path)) return std::nullopt;
  try {
    const std::string payload = index::read_envelope(path, kMatrixMagic, "ragmig embedding cache entry", kMatrixVersion);
    index::ByteReader r(payload, path);
    index::FloatMatrix m;
    m.rows = r.pod<int64_t>();
    m.cols = r.pod<int64_t>();
    m.data = r.array<float>();
    // rows * cols by division: a crafted header's product could overflow.
    const auto n = static_cast<int64_t>(m.data.size());
    const bool shape = m.rows >= 0 && m.cols >= 0 && (m.cols == 0 ? n == 0 : n % m.cols == 0 && n / m.cols == m.rows);
    if (!shape || !r.at_end()) r.fail("matrix shape does not match its data");
    return m;
  } catch (const Error& e) {
    warnings.push_back(std::string("ignoring a damaged cache entry, rebuilding it: ") + e.what());
    return std::nullopt;
  }
}

std::string EvalCache::store_matrix(const std::string& path, const index::FloatMatrix& m,
                                    std::vector<std::string>& warnings) const {
  return store(path, [&] {
    index::ByteWriter w;
    w.pod<int64_t>(m.rows);
    w.pod<int64_t>(m.cols);
    w.array(m.data);
    index::write_envelope(path, kMatrixMagic, kMatrixVersion, w.bytes());
  }, warnings);
}

}  // namespace ragmig::eval
