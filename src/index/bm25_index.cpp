// BM25 search (see bm25_index.h; bm25_builder.cpp builds, bm25_io.cpp reads and writes images). Search is
// term-at-a-time into a dense per-thread accumulator: one score per document (8 MB per million) is cheap and
// beats any heap of postings cursors.
#include "index/bm25_index.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <map>
#include <optional>

#include "core/error.h"
#include "index/analyzer.h"
#include "index/parallel.h"
#include "index/varint.h"

namespace ragmig::index {
namespace {

// Lucene's SmallFloat: a 4-bit-mantissa float code for lengths, with the first 24 values exact.
int32_t long_to_int4(int64_t i) {
  const int num_bits = 64 - std::countl_zero(static_cast<uint64_t>(i));
  if (num_bits < 4) return static_cast<int32_t>(i);  // subnormal
  const int shift = num_bits - 4;
  int32_t encoded = static_cast<int32_t>(static_cast<uint64_t>(i) >> shift) & 0x07;  // implicit top bit dropped
  return encoded | ((shift + 1) << 3);
}

int64_t int4_to_long(int32_t i) {
  const int64_t bits = i & 0x07;
  const int shift = (i >> 3) - 1;
  return shift == -1 ? bits : (bits | 0x08) << shift;
}

const int32_t kMaxInt4 = long_to_int4(2147483647);
const int32_t kNumFreeValues = 255 - kMaxInt4;  // 24

bool hit_before(const Hit& a, const Hit& b) { return a.score != b.score ? a.score > b.score : a.doc < b.doc; }

// The k best of `touched` (scores in acc, which is zeroed again), in order. Hits are gathered until there are 2k,
// then cut to the k best (nth_element), the worst of which is the bar a later hit must pass: a plain comparison for
// most documents, where a bounded heap paid a sift for each hit that entered it (a third of a search). Memory
// stays 2k hits whatever the number of documents the query touched (a query of common words touches most of the
// corpus), and the result holds exactly its hits.
std::vector<Hit> top_k(const std::vector<int32_t>& touched, std::vector<double>& acc, int64_t k) {
  const size_t keep = static_cast<size_t>(std::min<int64_t>(k, static_cast<int64_t>(touched.size())));
  std::vector<Hit> best;
  best.reserve(std::min(2 * keep, touched.size()));
  const auto cut = [&] {
    std::nth_element(best.begin(), best.begin() + static_cast<std::ptrdiff_t>(keep - 1), best.end(), hit_before);
    best.resize(keep);
  };
  std::optional<Hit> bar;  // the k-th best so far, once there were 2k
  for (const int32_t doc : touched) {
    const Hit hit{doc, static_cast<float>(acc[static_cast<size_t>(doc)])};
    acc[static_cast<size_t>(doc)] = 0.0;
    if (bar && !hit_before(hit, *bar)) continue;
    best.push_back(hit);
    if (best.size() == 2 * keep) {
      cut();
      bar = best.back();
    }
  }
  if (best.size() > keep) cut();
  std::sort(best.begin(), best.end(), hit_before);
  return std::vector<Hit>(best.begin(), best.end());  // only the k hits, not the room for 2k
}

// Lucene's one-byte length code and the length it stands for.
uint8_t lucene_length_code(int32_t length) {
  RAGMIG_CHECK(length >= 0);
  return static_cast<uint8_t>(length < kNumFreeValues ? length : kNumFreeValues + long_to_int4(length - kNumFreeValues));
}

int32_t lucene_code_length(uint8_t code) {
  if (code < kNumFreeValues) return code;
  return static_cast<int32_t>(std::min<int64_t>(kNumFreeValues + int4_to_long(code - kNumFreeValues), 2147483647));
}

}  // namespace

int32_t lucene_encoded_length(int32_t length) { return lucene_code_length(lucene_length_code(length)); }

void Bm25Index::derive_norms(Field& f) const {
  const auto k1 = spec_.k1, b = spec_.b;
  // A field with no tokens anywhere has no postings either, so its norm is never read.
  const auto norm = [&](double dl) { return f.avg_length > 0 ? k1 * (1.0 - b + b * dl / f.avg_length) : k1; };
  const size_t n = f.length.size();
  if (spec_.length == Bm25Length::kExact) {
    f.norm.resize(n);
    for (size_t d = 0; d < n; ++d) f.norm[d] = norm(f.length[d]);
  } else {
    for (int c = 0; c < 256; ++c) f.norm_table[static_cast<size_t>(c)] = norm(lucene_code_length(static_cast<uint8_t>(c)));
    f.norm_code.resize(n);
    for (size_t d = 0; d < n; ++d) f.norm_code[d] = lucene_length_code(f.length[d]);
  }
}

std::string_view Bm25Index::StringTable::at(int64_t i) const {
  RAGMIG_CHECK(i >= 0 && static_cast<size_t>(i) < size(), "string table row out of range");
  const uint64_t begin = offsets[static_cast<size_t>(i)], end = offsets[static_cast<size_t>(i) + 1];
  return {blob + begin, static_cast<size_t>(end - begin)};
}

std::vector<std::string> Bm25Index::field_names() const {
  std::vector<std::string> names;
  for (const auto& f : fields_) names.push_back(f.name);
  return names;
}

int64_t Bm25Index::term_id(std::string_view term) const {
  size_t lo = 0, hi = terms_.size();
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    if (terms_.at(static_cast<int64_t>(mid)) < term) lo = mid + 1;
    else hi = mid;
  }
  return lo < terms_.size() && terms_.at(static_cast<int64_t>(lo)) == term ? static_cast<int64_t>(lo) : -1;
}

int64_t Bm25Index::doc_freq(const std::string& term, size_t field) const {
  const int64_t t = term_id(term);
  return t < 0 ? 0 : static_cast<int64_t>(fields_.at(field).df[static_cast<size_t>(t)]);
}

double Bm25Index::idf(const Field& f, int64_t term) const {
  const auto df = static_cast<double>(f.df[static_cast<size_t>(term)]);
  return std::log(1.0 + (static_cast<double>(f.doc_count) - df + 0.5) / (df + 0.5));
}

namespace {

// Calls fn(doc, tf) for each posting of [p, end): g = row - previous row - 1 (previous = -1 for the first)
// with the term frequency folded in (g * 2 + 1 for tf 1, else g * 2 followed by tf). Stops at the first posting that a
// damaged image could make unsafe: truncated, or outside [0, n_docs).
template <typename Fn>
void for_each_posting(const uint8_t* p, const uint8_t* end, int64_t n_docs, Fn&& fn) {
  int64_t doc = -1;
  while (p < end) {
    uint64_t code = 0, tf = 1;
    if (!read_varint(p, end, code)) return;
    if ((code & 1) == 0 && !read_varint(p, end, tf)) return;
    const uint64_t gap = (code >> 1) + 1;
    if (gap > static_cast<uint64_t>(n_docs - doc - 1) || tf == 0 || tf > 0x7fffffff) return;
    doc += static_cast<int64_t>(gap);
    fn(static_cast<int32_t>(doc), static_cast<double>(tf));
  }
}

}  // namespace

std::vector<std::string> Bm25Index::query_terms(std::string_view query) const {
  Analyzer analyzer(spec_.stemmer);
  return analyzer.analyze(query);
}

std::vector<std::pair<int64_t, int32_t>> Bm25Index::lookup(const std::vector<std::string>& terms) const {
  std::map<int64_t, int32_t> counts;
  for (const auto& t : terms) {
    const int64_t id = term_id(t);
    if (id >= 0) ++counts[id];
  }
  return {counts.begin(), counts.end()};
}

std::vector<Hit> Bm25Index::search_terms(const std::vector<std::string>& terms, int64_t k, std::vector<double>& acc,
                                         std::vector<int32_t>& touched) const {
  if (k <= 0) return {};
  acc.resize(ids_.size(), 0.0);
  touched.clear();
  const auto n_docs = static_cast<int64_t>(ids_.size());
  for (auto [term, qtf] : lookup(terms)) {
    for (const Field& f : fields_) {
      const uint64_t begin = f.offsets[static_cast<size_t>(term)], end = f.offsets[static_cast<size_t>(term) + 1];
      if (begin == end) continue;
      const double weight = qtf * idf(f, term);
      const auto add = [&](int32_t doc, double tf, double norm) {
        double& a = acc[static_cast<size_t>(doc)];
        if (a == 0.0) touched.push_back(doc);
        // Never exactly 0 after this: idf > 0 and tf >= 1, so "0" keeps meaning "not touched yet".
        a += weight * tf / (tf + norm);
      };
      if (f.norm_code.empty())
        for_each_posting(f.postings + begin, f.postings + end, n_docs,
                         [&](int32_t doc, double tf) { add(doc, tf, f.norm[static_cast<size_t>(doc)]); });
      else
        for_each_posting(f.postings + begin, f.postings + end, n_docs, [&](int32_t doc, double tf) {
          add(doc, tf, f.norm_table[f.norm_code[static_cast<size_t>(doc)]]);
        });
    }
  }
  return top_k(touched, acc, k);
}

std::vector<Hit> Bm25Index::search(std::string_view query, int64_t k) const {
  std::vector<double> acc;
  std::vector<int32_t> touched;
  return search_terms(query_terms(query), k, acc, touched);
}

std::vector<std::vector<Hit>> Bm25Index::search_batch(const std::vector<std::string>& queries, int64_t k, int threads) const {
  threads = resolve_threads(threads);
  std::vector<std::vector<Hit>> out(queries.size());
  struct Worker {
    Analyzer analyzer;
    std::vector<double> acc;
    std::vector<int32_t> touched;
  };
  std::vector<Worker> workers;
  for (int t = 0; t < threads; ++t) workers.push_back(Worker{Analyzer(spec_.stemmer), {}, {}});
  parallel_for(static_cast<int64_t>(queries.size()), threads, 16, [&](int64_t b, int64_t e, int w) {
    Worker& worker = workers[static_cast<size_t>(w)];
    for (int64_t q = b; q < e; ++q)
      out[static_cast<size_t>(q)] = search_terms(worker.analyzer.analyze(queries[static_cast<size_t>(q)]), k, worker.acc, worker.touched);
  });
  return out;
}

double Bm25Index::score(std::string_view query, int64_t doc) const {
  RAGMIG_CHECK(doc >= 0 && doc < size(), "document row out of range");
  double total = 0;
  for (auto [term, qtf] : lookup(query_terms(query))) {
    for (const Field& f : fields_) {
      double tf = 0;
      for_each_posting(f.postings + f.offsets[static_cast<size_t>(term)], f.postings + f.offsets[static_cast<size_t>(term) + 1],
                       size(), [&](int32_t d, double t) {
                         if (d == doc) tf = t;
                       });
      if (tf == 0) continue;
      const double dl = spec_.length == Bm25Length::kExact ? f.length[static_cast<size_t>(doc)]
                                                           : lucene_encoded_length(f.length[static_cast<size_t>(doc)]);
      total += qtf * idf(f, term) * tf / (tf + spec_.k1 * (1.0 - spec_.b + spec_.b * dl / f.avg_length));
    }
  }
  return total;
}

}  // namespace ragmig::index
