// A BM25 index scored exactly as Lucene's BM25Similarity (Lucene 8+, what Pyserini runs): per query term
//   idf * tf / (tf + k1 * (1 - b + b * dl / avgdl)),   idf = ln(1 + (N - df + 0.5) / (df + 0.5)),
// summed over the query's terms (a term written twice counts twice) and, with fields=multi, over the title
// and text fields, each with its own N (documents having the field), df and avgdl. Lucene 8 dropped the
// constant (k1 + 1) factor of the textbook formula; it scales every score alike and leaves rankings
// unchanged, and without it the scores are the ones Pyserini prints. dl is Lucene's one-byte encoding of the
// length (exact below 40 tokens, within 1/8 above) unless the spec says length=exact.
//
// The index is one byte image, the same in memory and on disk (bm25_io.cpp has its layout): ids and the sorted
// vocabulary as string tables, per field the document lengths, each term's document frequency and its
// postings as variable-byte document gaps with the term frequency folded in (one byte for most postings).
// A built index owns its image; a loaded one searches the file's memory mapping in place.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "index/bm25_spec.h"

namespace ragmig::index {

/// A document as the index reads it; the views need to live only for the add() or build() call.
struct DocumentView {
  std::string_view id, title, text;
};

/// A retrieved row (position in build order) and its score.
struct Hit {
  int64_t doc = 0;
  float score = 0;
  bool operator==(const Hit&) const = default;
};

/// Lucene's SmallFloat.intToByte4 followed by byte4ToInt: the document length BM25Similarity sees.
int32_t lucene_encoded_length(int32_t length);

/// n values of T at p, read with memcpy: the image's arrays carry no alignment.
template <typename T>
struct PackedArray {
  const char* p = nullptr;
  size_t n = 0;
  T operator[](size_t i) const {
    T v;
    std::memcpy(&v, p + i * sizeof(T), sizeof(T));
    return v;
  }
  size_t size() const { return n; }
};

class Bm25Index {
 public:
  /// Analyses every document (on `threads` threads; 0 = all cores) and builds the index (Bm25Builder).
  static Bm25Index build(const std::vector<DocumentView>& docs, const Bm25Spec& spec, int threads = 0);

  /// The k best documents, score descending and row ascending on ties. Documents that share no term with
  /// the query are never returned, so an empty (or all-stop-word) query returns nothing.
  std::vector<Hit> search(std::string_view query, int64_t k) const;
  /// search() for many queries on `threads` threads (0 = all cores); results in query order.
  std::vector<std::vector<Hit>> search_batch(const std::vector<std::string>& queries, int64_t k, int threads = 0) const;
  /// The BM25 score of one document, computed term by term without the accumulator of search(): the simple
  /// reference that search() is tested against. 0 when the document shares no term with the query.
  double score(std::string_view query, int64_t doc) const;
  /// The analysed query terms (what search() looks up).
  std::vector<std::string> query_terms(std::string_view query) const;

  /// Versioned, checksummed, written atomically. Throws IoError.
  void save(const std::string& path) const;
  /// Maps the file and searches it in place. Throws IoError, or DataError naming the path for a foreign,
  /// older or newer, truncated or corrupt file.
  static Bm25Index load(const std::string& path);
  /// The index held by an image (what save() writes inside its envelope), kept alive by `owner`; every
  /// structural check of load() (DataError naming `name`). Searching a damaged image that passes them
  /// returns wrong hits but never reads outside it.
  static Bm25Index from_image(std::string_view image, std::shared_ptr<const void> owner, const std::string& name);
  std::string_view image() const { return image_; }

  const Bm25Spec& spec() const { return spec_; }
  int64_t size() const { return static_cast<int64_t>(ids_.size()); }
  std::string_view doc_id(int64_t row) const { return ids_.at(row); }
  int64_t vocabulary_size() const { return static_cast<int64_t>(terms_.size()); }
  /// Field names: {"contents"} (flat) or {"title", "text"} (multi).
  std::vector<std::string> field_names() const;
  /// Statistics of a field, for tests: documents having it, mean length, document frequency of a term.
  int64_t doc_count(size_t field) const { return fields_.at(field).doc_count; }
  double avg_length(size_t field) const { return fields_.at(field).avg_length; }
  int64_t doc_freq(const std::string& term, size_t field) const;

 private:
  /// n strings: blob[offsets[i], offsets[i + 1]).
  struct StringTable {
    const char* blob = nullptr;
    PackedArray<uint64_t> offsets;
    size_t size() const { return offsets.n == 0 ? 0 : offsets.n - 1; }
    std::string_view at(int64_t i) const;
  };
  struct Field {
    std::string name;
    PackedArray<int32_t> length;    // analysed tokens per document (exact)
    PackedArray<uint32_t> df;       // documents per term
    PackedArray<uint64_t> offsets;  // term t's postings are postings[offsets[t], offsets[t + 1])
    const uint8_t* postings = nullptr;
    // Derived from the image, not stored:
    int64_t doc_count = 0;       // documents with at least one token in the field (Lucene's docCount)
    double avg_length = 0;       // sum of lengths / doc_count
    // k1 * (1 - b + b * dl / avgdl): with Lucene's lengths a table of the 256 length codes and a code per
    // document (a byte, where a double per document is a cache miss more per posting); exact: per document.
    std::array<double, 256> norm_table{};
    std::vector<uint8_t> norm_code;
    std::vector<double> norm;
  };

  void derive_norms(Field& f) const;  // from the lengths, on build and load

  double idf(const Field& f, int64_t term) const;
  int64_t term_id(std::string_view term) const;  // -1 when absent
  // Unique query terms present in the vocabulary with their counts.
  std::vector<std::pair<int64_t, int32_t>> lookup(const std::vector<std::string>& terms) const;
  std::vector<Hit> search_terms(const std::vector<std::string>& terms, int64_t k, std::vector<double>& acc,
                                std::vector<int32_t>& touched) const;

  std::shared_ptr<const void> owner_;  // holds the image's bytes: a buffer or a mapping
  std::string_view image_;
  Bm25Spec spec_;
  StringTable ids_, terms_;  // terms sorted, so a term's id is its rank
  std::vector<Field> fields_;
};

/// Builds an index from documents handed over one at a time (a corpus streamed from its file never needs
/// to be in memory whole): blocks of documents are analysed in parallel and their postings encoded at once.
class Bm25Builder {
 public:
  explicit Bm25Builder(const Bm25Spec& spec, int threads = 0);
  ~Bm25Builder();
  Bm25Builder(const Bm25Builder&) = delete;
  Bm25Builder& operator=(const Bm25Builder&) = delete;

  void add(const DocumentView& doc);
  /// The index of every document added, in order. The builder is spent afterwards.
  Bm25Index finish();
  /// Seconds spent analysing and encoding so far (not waiting for documents).
  double busy_seconds() const { return busy_seconds_; }

 private:
  struct State;
  void flush();
  std::unique_ptr<State> state_;
  double busy_seconds_ = 0;
};

}  // namespace ragmig::index
