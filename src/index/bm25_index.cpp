// BM25 build and search (see bm25_index.h). Search is term-at-a-time into a dense per-thread accumulator:
// corpora here have at most a few hundred thousand documents, so one array per thread is cheap and beats
// any heap of postings cursors.
#include "index/bm25_index.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <map>

#include "core/error.h"
#include "index/analyzer.h"
#include "index/parallel.h"

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

// The k best of `touched` (scores in acc, which is zeroed again): a bounded heap whose top is the worst hit
// kept, so memory is k hits whatever the number of documents the query touched (a query of common words
// touches most of the corpus; collecting them all first kept a corpus-sized buffer alive per query), and
// the result holds exactly its hits.
std::vector<Hit> top_k(const std::vector<int32_t>& touched, std::vector<double>& acc, int64_t k) {
  std::vector<Hit> heap;
  heap.reserve(static_cast<size_t>(std::min<int64_t>(k, static_cast<int64_t>(touched.size()))));
  for (const int32_t doc : touched) {
    const Hit hit{doc, static_cast<float>(acc[static_cast<size_t>(doc)])};
    acc[static_cast<size_t>(doc)] = 0.0;
    if (static_cast<int64_t>(heap.size()) < k) {
      heap.push_back(hit);
      std::push_heap(heap.begin(), heap.end(), hit_before);
    } else if (hit_before(hit, heap.front())) {
      std::pop_heap(heap.begin(), heap.end(), hit_before);
      heap.back() = hit;
      std::push_heap(heap.begin(), heap.end(), hit_before);
    }
  }
  std::sort_heap(heap.begin(), heap.end(), hit_before);
  return heap;
}

}  // namespace

int32_t lucene_encoded_length(int32_t length) {
  RAGMIG_CHECK(length >= 0);
  const int32_t code = length < kNumFreeValues ? length : kNumFreeValues + long_to_int4(length - kNumFreeValues);
  if (code < kNumFreeValues) return code;
  return static_cast<int32_t>(std::min<int64_t>(kNumFreeValues + int4_to_long(code - kNumFreeValues), 2147483647));
}

Bm25Index Bm25Index::build(const std::vector<DocumentView>& docs, const Bm25Spec& spec, int threads) {
  threads = resolve_threads(threads);
  Bm25Index index;
  index.spec_ = spec;
  const bool multi = spec.fields == Bm25Fields::kMulti;
  const size_t nf = multi ? 2 : 1;
  index.fields_.resize(nf);
  index.fields_[0].name = multi ? "title" : "contents";
  if (multi) index.fields_[1].name = "text";
  const auto n = static_cast<int64_t>(docs.size());
  if (n > 2147483647) throw DataError("BM25: more than 2^31 documents");
  index.ids_.reserve(docs.size());
  for (const auto& d : docs) index.ids_.emplace_back(d.id);
  for (auto& f : index.fields_) f.length.assign(docs.size(), 0);

  std::vector<std::vector<std::vector<std::pair<int32_t, int32_t>>>> postings(nf);  // field, term -> (doc, tf)
  std::vector<Analyzer> analyzers;
  for (int t = 0; t < threads; ++t) analyzers.emplace_back(spec.stemmer);

  // Blocks bound the memory of analysed-but-not-yet-interned text; interning runs in document order so
  // every postings list comes out sorted by row.
  const int64_t block = 4096;
  using TermCounts = std::vector<std::pair<std::string, int32_t>>;
  std::vector<TermCounts> analysed;
  for (int64_t begin = 0; begin < n; begin += block) {
    const int64_t end = std::min(n, begin + block);
    analysed.assign(static_cast<size_t>((end - begin) * static_cast<int64_t>(nf)), {});
    parallel_for(end - begin, threads, 64, [&](int64_t b, int64_t e, int worker) {
      for (int64_t i = b; i < e; ++i) {
        const DocumentView& d = docs[static_cast<size_t>(begin + i)];
        for (size_t f = 0; f < nf; ++f) {
          std::vector<std::string> terms;
          if (multi) {
            terms = analyzers[static_cast<size_t>(worker)].analyze(f == 0 ? d.title : d.text);
          } else {
            terms = analyzers[static_cast<size_t>(worker)].analyze(d.title);
            auto text_terms = analyzers[static_cast<size_t>(worker)].analyze(d.text);
            terms.insert(terms.end(), std::make_move_iterator(text_terms.begin()), std::make_move_iterator(text_terms.end()));
          }
          index.fields_[f].length[static_cast<size_t>(begin + i)] = static_cast<int32_t>(terms.size());
          std::map<std::string, int32_t> counts;
          for (auto& t : terms) ++counts[std::move(t)];
          analysed[static_cast<size_t>(i * static_cast<int64_t>(nf)) + f] = TermCounts(counts.begin(), counts.end());
        }
      }
    });
    for (int64_t i = begin; i < end; ++i) {
      for (size_t f = 0; f < nf; ++f) {
        for (auto& [term, tf] : analysed[static_cast<size_t>((i - begin) * static_cast<int64_t>(nf)) + f]) {
          auto [it, fresh] = index.term_ids_.try_emplace(term, static_cast<int64_t>(index.terms_.size()));
          if (fresh) {
            index.terms_.push_back(term);
            for (auto& p : postings) p.emplace_back();
          }
          postings[f][static_cast<size_t>(it->second)].emplace_back(static_cast<int32_t>(i), tf);
        }
      }
    }
  }
  for (size_t f = 0; f < nf; ++f) {
    Field& field = index.fields_[f];
    field.offsets.assign(index.terms_.size() + 1, 0);
    for (size_t t = 0; t < index.terms_.size(); ++t) field.offsets[t + 1] = field.offsets[t] + postings[f][t].size();
    field.docs.reserve(field.offsets.back());
    field.tfs.reserve(field.offsets.back());
    for (auto& list : postings[f]) {
      for (auto [doc, tf] : list) {
        field.docs.push_back(doc);
        field.tfs.push_back(tf);
      }
      std::vector<std::pair<int32_t, int32_t>>().swap(list);
    }
  }
  index.finish_fields();
  return index;
}

void Bm25Index::finish_fields() {
  for (Field& f : fields_) {
    int64_t total = 0;
    f.doc_count = 0;
    for (int32_t len : f.length) {
      total += len;
      f.doc_count += len > 0 ? 1 : 0;
    }
    f.avg_length = f.doc_count > 0 ? static_cast<double>(total) / static_cast<double>(f.doc_count) : 0.0;
    f.norm.resize(f.length.size());
    for (size_t d = 0; d < f.length.size(); ++d) {
      const double dl = spec_.length == Bm25Length::kExact ? f.length[d] : lucene_encoded_length(f.length[d]);
      // A field with no tokens anywhere has no postings either, so its norm is never read.
      f.norm[d] = f.avg_length > 0 ? spec_.k1 * (1.0 - spec_.b + spec_.b * dl / f.avg_length) : spec_.k1;
    }
  }
}

std::vector<std::string> Bm25Index::field_names() const {
  std::vector<std::string> names;
  for (const auto& f : fields_) names.push_back(f.name);
  return names;
}

int64_t Bm25Index::doc_freq(const std::string& term, size_t field) const {
  auto it = term_ids_.find(term);
  if (it == term_ids_.end()) return 0;
  const Field& f = fields_.at(field);
  return static_cast<int64_t>(f.offsets[static_cast<size_t>(it->second) + 1] - f.offsets[static_cast<size_t>(it->second)]);
}

double Bm25Index::idf(const Field& f, int64_t term) const {
  const auto df = static_cast<double>(f.offsets[static_cast<size_t>(term) + 1] - f.offsets[static_cast<size_t>(term)]);
  return std::log(1.0 + (static_cast<double>(f.doc_count) - df + 0.5) / (df + 0.5));
}

std::vector<std::string> Bm25Index::query_terms(std::string_view query) const {
  Analyzer analyzer(spec_.stemmer);
  return analyzer.analyze(query);
}

std::vector<std::pair<int64_t, int32_t>> Bm25Index::lookup(const std::vector<std::string>& terms) const {
  std::map<int64_t, int32_t> counts;
  for (const auto& t : terms) {
    auto it = term_ids_.find(t);
    if (it != term_ids_.end()) ++counts[it->second];
  }
  return {counts.begin(), counts.end()};
}

std::vector<Hit> Bm25Index::search_terms(const std::vector<std::string>& terms, int64_t k, std::vector<double>& acc,
                                         std::vector<int32_t>& touched) const {
  if (k <= 0) return {};
  acc.resize(ids_.size(), 0.0);
  touched.clear();
  for (auto [term, qtf] : lookup(terms)) {
    for (const Field& f : fields_) {
      const uint64_t begin = f.offsets[static_cast<size_t>(term)], end = f.offsets[static_cast<size_t>(term) + 1];
      if (begin == end) continue;
      const double weight = qtf * idf(f, term);
      for (uint64_t p = begin; p < end; ++p) {
        const int32_t doc = f.docs[p];
        const double tf = f.tfs[p];
        if (acc[static_cast<size_t>(doc)] == 0.0) touched.push_back(doc);
        // Never exactly 0 after this: idf > 0 and tf >= 1, so "0" keeps meaning "not touched yet".
        acc[static_cast<size_t>(doc)] += weight * tf / (tf + f.norm[static_cast<size_t>(doc)]);
      }
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
      const auto first = f.docs.begin() + static_cast<int64_t>(f.offsets[static_cast<size_t>(term)]);
      const auto last = f.docs.begin() + static_cast<int64_t>(f.offsets[static_cast<size_t>(term) + 1]);
      const auto it = std::lower_bound(first, last, static_cast<int32_t>(doc));
      if (it == last || *it != doc) continue;
      const double tf = f.tfs[static_cast<size_t>(it - f.docs.begin())];
      const double dl = spec_.length == Bm25Length::kExact ? f.length[static_cast<size_t>(doc)]
                                                           : lucene_encoded_length(f.length[static_cast<size_t>(doc)]);
      total += qtf * idf(f, term) * tf / (tf + spec_.k1 * (1.0 - spec_.b + spec_.b * dl / f.avg_length));
    }
  }
  return total;
}

}  // namespace ragmig::index
