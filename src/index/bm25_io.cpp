// Saving and loading BM25 indexes: the spec, ids, vocabulary and per-field lengths and postings inside the
// checksummed envelope of binary_file.h. Loading re-checks the structure, so even a file that passes the
// checksum cannot index out of bounds.
#include <string>

#include "core/error.h"
#include "index/binary_file.h"
#include "index/bm25_index.h"

namespace ragmig::index {
namespace {

constexpr std::string_view kMagic = "RGMBM25\n";
constexpr uint32_t kVersion = 1;

}  // namespace

void Bm25Index::save(const std::string& path) const {
  ByteWriter w;
  w.str(to_string(spec_));
  w.pod<uint64_t>(ids_.size());
  for (const auto& id : ids_) w.str(id);
  w.pod<uint64_t>(terms_.size());
  for (const auto& t : terms_) w.str(t);
  w.pod<uint32_t>(static_cast<uint32_t>(fields_.size()));
  for (const Field& f : fields_) {
    w.str(f.name);
    w.array(f.length);
    w.array(f.offsets);
    w.array(f.docs);
    w.array(f.tfs);
  }
  write_envelope(path, kMagic, kVersion, w.bytes());
}

Bm25Index Bm25Index::load(const std::string& path) {
  const std::string payload = read_envelope(path, kMagic, "ragmig BM25 index", kVersion);
  ByteReader r(payload, path);
  Bm25Index index;
  try {
    index.spec_ = parse_bm25_spec(r.str());
  } catch (const ConfigError& e) {
    r.fail(std::string("bad BM25 spec: ") + e.what());
  }
  const auto n_docs = r.pod<uint64_t>();
  if (n_docs > payload.size()) r.fail("document count overruns the file");
  index.ids_.reserve(n_docs);
  for (uint64_t i = 0; i < n_docs; ++i) index.ids_.push_back(r.str());
  const auto n_terms = r.pod<uint64_t>();
  if (n_terms > payload.size()) r.fail("term count overruns the file");
  index.terms_.reserve(n_terms);
  for (uint64_t t = 0; t < n_terms; ++t) {
    index.terms_.push_back(r.str());
    if (!index.term_ids_.emplace(index.terms_.back(), static_cast<int64_t>(t)).second)
      r.fail("term '" + index.terms_.back() + "' appears twice");
  }
  const auto n_fields = r.pod<uint32_t>();
  const size_t expected_fields = index.spec_.fields == Bm25Fields::kMulti ? 2 : 1;
  if (n_fields != expected_fields) r.fail("has " + std::to_string(n_fields) + " fields, its spec needs " + std::to_string(expected_fields));
  index.fields_.resize(n_fields);
  for (Field& f : index.fields_) {
    f.name = r.str();
    f.length = r.array<int32_t>();
    f.offsets = r.array<uint64_t>();
    f.docs = r.array<int32_t>();
    f.tfs = r.array<int32_t>();
    if (f.length.size() != n_docs || f.offsets.size() != n_terms + 1 || f.docs.size() != f.tfs.size() ||
        f.offsets.front() != 0 || f.offsets.back() != f.docs.size())
      r.fail("field '" + f.name + "' has inconsistent sizes");
    for (size_t t = 0; t < n_terms; ++t) {
      if (f.offsets[t] > f.offsets[t + 1]) r.fail("field '" + f.name + "': postings offsets decrease");
      for (uint64_t p = f.offsets[t]; p < f.offsets[t + 1]; ++p) {
        if (f.docs[p] < 0 || static_cast<uint64_t>(f.docs[p]) >= n_docs || f.tfs[p] <= 0 ||
            (p > f.offsets[t] && f.docs[p] <= f.docs[p - 1]))
          r.fail("field '" + f.name + "': bad posting for term '" + index.terms_[t] + "'");
      }
    }
    for (int32_t len : f.length)
      if (len < 0) r.fail("field '" + f.name + "': negative document length");
  }
  if (!r.at_end()) r.fail("trailing bytes after the index");
  index.finish_fields();
  return index;
}

}  // namespace ragmig::index
