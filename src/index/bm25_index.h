// A BM25 index scored exactly as Lucene's BM25Similarity (Lucene 8+, what Pyserini runs): per query term
//   idf * tf / (tf + k1 * (1 - b + b * dl / avgdl)),   idf = ln(1 + (N - df + 0.5) / (df + 0.5)),
// summed over the query's terms (a term written twice counts twice) and, with fields=multi, over the title
// and text fields, each with its own N (documents having the field), df and avgdl. Lucene 8 dropped the
// constant (k1 + 1) factor of the textbook formula; it scales every score alike and leaves rankings
// unchanged, and without it the scores are the ones Pyserini prints. dl is Lucene's one-byte encoding of the
// length (exact below 40 tokens, within 1/8 above) unless the spec says length=exact.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "index/bm25_spec.h"

namespace ragmig::index {

/// A document as the index reads it; the views must outlive build().
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

class Bm25Index {
 public:
  /// Analyses every document (on `threads` threads; 0 = all cores) and builds the postings.
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
  /// Throws IoError, or DataError naming the path for a foreign, newer, truncated or corrupt file.
  static Bm25Index load(const std::string& path);

  const Bm25Spec& spec() const { return spec_; }
  int64_t size() const { return static_cast<int64_t>(ids_.size()); }
  const std::string& doc_id(int64_t row) const { return ids_.at(static_cast<size_t>(row)); }
  const std::vector<std::string>& doc_ids() const { return ids_; }
  int64_t vocabulary_size() const { return static_cast<int64_t>(terms_.size()); }
  /// Field names: {"contents"} (flat) or {"title", "text"} (multi).
  std::vector<std::string> field_names() const;
  /// Statistics of a field, for tests: documents having it, mean length, document frequency of a term.
  int64_t doc_count(size_t field) const { return fields_.at(field).doc_count; }
  double avg_length(size_t field) const { return fields_.at(field).avg_length; }
  int64_t doc_freq(const std::string& term, size_t field) const;

 private:
  struct Field {
    std::string name;
    std::vector<int32_t> length;    // analysed tokens per document (exact)
    std::vector<uint64_t> offsets;  // term t's postings are [offsets[t], offsets[t + 1])
    std::vector<int32_t> docs;      // ascending within a term
    std::vector<int32_t> tfs;
    // Derived on build and load, not stored:
    int64_t doc_count = 0;       // documents with at least one token in the field (Lucene's docCount)
    double avg_length = 0;       // sum of lengths / doc_count
    std::vector<double> norm;    // k1 * (1 - b + b * dl / avgdl) per document
  };

  void finish_fields();  // fills the derived members
  double idf(const Field& f, int64_t term) const;
  // Unique query terms present in the vocabulary with their counts.
  std::vector<std::pair<int64_t, int32_t>> lookup(const std::vector<std::string>& terms) const;
  std::vector<Hit> search_terms(const std::vector<std::string>& terms, int64_t k, std::vector<double>& acc,
                                std::vector<int32_t>& touched) const;

  Bm25Spec spec_;
  std::vector<std::string> ids_;
  std::vector<std::string> terms_;
  std::unordered_map<std::string, int64_t> term_ids_;
  std::vector<Field> fields_;
};

}  // namespace ragmig::index
