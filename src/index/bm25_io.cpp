// The BM25 image, what save() writes inside the checksummed envelope of binary_file.h and load() maps back
// (native-endian, unaligned; u64 counts before every string and array):
//   spec string | n_docs u64 | n_terms u64 | n_fields u32
//   ids: blob string, offsets u64[n_docs + 1]        terms (sorted, unique): blob string, offsets u64[n_terms + 1]
//   per field: name string | lengths i32[n_docs] | df u32[n_terms] | offsets u64[n_terms + 1] | postings bytes
// A term's postings are variable-byte codes, per posting g = row - previous row - 1 (previous = -1 for the
// first): g * 2 + 1 for a term frequency of 1, else g * 2 and then the frequency. from_image() checks everything
// but the postings bytes in O(documents + terms), so a mapped index opens without reading its postings;
// search decodes them with bounds checks.
#include <string>

#include "core/error.h"
#include "index/binary_file.h"
#include "index/bm25_index.h"

namespace ragmig::index {
namespace {

constexpr std::string_view kMagic = "RGMBM25\n";
// 2: compact postings, sorted vocabulary, read in place. 1 (int32 postings) is refused: rebuild the index.
constexpr uint32_t kVersion = 2;

template <typename T>
PackedArray<T> packed(ByteReader& r, uint64_t expected, const std::string& what) {
  const auto n = r.pod<uint64_t>();
  if (n != expected) r.fail(what + " has " + std::to_string(n) + " entries, expected " + std::to_string(expected));
  if (n > UINT64_MAX / sizeof(T)) r.fail(what + " overruns the file");
  return PackedArray<T>{r.take(n * sizeof(T)), static_cast<size_t>(n)};
}

// offsets[0] == 0, never decreasing, offsets[last] == size.
void check_offsets(ByteReader& r, const PackedArray<uint64_t>& offsets, uint64_t size, const std::string& what) {
  if (offsets[0] != 0 || offsets[offsets.size() - 1] != size) r.fail(what + ": offsets do not span its bytes");
  for (size_t i = 1; i < offsets.size(); ++i)
    if (offsets[i] < offsets[i - 1]) r.fail(what + ": offsets decrease at entry " + std::to_string(i));
}

}  // namespace

void Bm25Index::save(const std::string& path) const { write_envelope(path, kMagic, kVersion, image_); }

Bm25Index Bm25Index::load(const std::string& path) {
  MappedEnvelope envelope = map_envelope(path, kMagic, "ragmig BM25 index", kVersion);
  if (envelope.version < kVersion)
    throw DataError(path + ": a BM25 index of format " + std::to_string(envelope.version) + " (an older ragmig); "
                    "this build reads format " + std::to_string(kVersion) + ": delete it, it is rebuilt from the corpus");
  return from_image(envelope.payload, envelope.file, path);
}

Bm25Index Bm25Index::from_image(std::string_view image, std::shared_ptr<const void> owner, const std::string& name) {
  ByteReader r(image, name);
  Bm25Index index;
  index.owner_ = std::move(owner);
  index.image_ = image;
  try {
    index.spec_ = parse_bm25_spec(r.str());
  } catch (const ConfigError& e) {
    r.fail(std::string("bad BM25 spec: ") + e.what());
  }
  const auto n_docs = r.pod<uint64_t>();
  const auto n_terms = r.pod<uint64_t>();
  const auto n_fields = r.pod<uint32_t>();
  if (n_docs > 2147483647u) r.fail("more than 2^31 documents");
  if (n_terms >= image.size()) r.fail("term count overruns the file");
  const size_t expected_fields = index.spec_.fields == Bm25Fields::kMulti ? 2 : 1;
  if (n_fields != expected_fields) r.fail("has " + std::to_string(n_fields) + " fields, its spec needs " + std::to_string(expected_fields));

  const auto read_table = [&](StringTable& table, uint64_t n, const std::string& what) {
    const auto blob_size = r.pod<uint64_t>();
    table.blob = r.take(blob_size);
    table.offsets = packed<uint64_t>(r, n + 1, what + " offsets");
    check_offsets(r, table.offsets, blob_size, what);
  };
  read_table(index.ids_, n_docs, "document ids");
  read_table(index.terms_, n_terms, "vocabulary");
  for (size_t t = 1; t < n_terms; ++t)
    if (!(index.terms_.at(static_cast<int64_t>(t - 1)) < index.terms_.at(static_cast<int64_t>(t))))
      r.fail("vocabulary is not sorted and unique at term " + std::to_string(t));

  index.fields_.resize(n_fields);
  for (Field& f : index.fields_) {
    f.name = r.str();
    f.length = packed<int32_t>(r, n_docs, "field '" + f.name + "' lengths");
    f.df = packed<uint32_t>(r, n_terms, "field '" + f.name + "' document frequencies");
    f.offsets = packed<uint64_t>(r, n_terms + 1, "field '" + f.name + "' postings offsets");
    const auto postings_size = r.pod<uint64_t>();
    f.postings = reinterpret_cast<const uint8_t*>(r.take(postings_size));
    check_offsets(r, f.offsets, postings_size, "field '" + f.name + "' postings");
    for (size_t t = 0; t < n_terms; ++t) {
      // A posting takes at least one byte, and no term is in more documents than there are.
      if (f.df[t] > n_docs || f.df[t] > f.offsets[t + 1] - f.offsets[t])
        r.fail("field '" + f.name + "': document frequency out of range for term " + std::to_string(t));
    }
    int64_t total = 0;
    for (size_t d = 0; d < n_docs; ++d) {
      const int32_t len = f.length[d];
      if (len < 0) r.fail("field '" + f.name + "': negative document length");
      total += len;
      f.doc_count += len > 0 ? 1 : 0;
    }
    f.avg_length = f.doc_count > 0 ? static_cast<double>(total) / static_cast<double>(f.doc_count) : 0.0;
    index.derive_norms(f);
  }
  if (!r.at_end()) r.fail("trailing bytes after the index");
  return index;
}

}  // namespace ragmig::index
