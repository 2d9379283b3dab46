// Building a BM25 index (see bm25_index.h): documents are buffered into blocks, each block analysed in
// parallel, then interned in document order so every postings list grows sorted by row, already encoded
// (a term's list is a small string: most terms' lists fit its inline buffer). finish() sorts the vocabulary
// and lays out the image of bm25_io.cpp.
#include <algorithm>
#include <chrono>
#include <unordered_map>

#include "core/clock.h"
#include "core/error.h"
#include "index/analyzer.h"
#include "index/binary_file.h"
#include "index/bm25_index.h"
#include "index/parallel.h"
#include "index/varint.h"

namespace ragmig::index {
namespace {

constexpr size_t kBlock = 4096;

using Clock = std::chrono::steady_clock;

// (term, tf) of a document's terms, in term order.
using TermCounts = std::vector<std::pair<std::string, int32_t>>;

TermCounts count_terms(std::vector<std::string> terms) {
  std::sort(terms.begin(), terms.end());
  TermCounts counts;
  for (size_t i = 0; i < terms.size();) {
    size_t j = i + 1;
    while (j < terms.size() && terms[j] == terms[i]) ++j;
    counts.emplace_back(std::move(terms[i]), static_cast<int32_t>(j - i));
    i = j;
  }
  return counts;
}

}  // namespace

struct Bm25Builder::State {
  // One term's postings in one field: varint document gaps (doubled; odd means tf 1), else each followed by tf.
  struct Postings {
    std::string bytes;
    int32_t last = -1;
    uint32_t df = 0;
  };
  Bm25Spec spec;
  int threads = 1;
  size_t fields = 1;
  std::vector<Analyzer> analyzers;
  std::vector<std::string> titles, texts;  // the pending block
  std::string id_blob;
  std::vector<uint64_t> id_offsets{0};
  std::vector<std::vector<int32_t>> lengths;           // field -> document -> tokens
  std::unordered_map<std::string, uint32_t> term_ids;  // term -> first-seen id
  std::vector<const std::string*> term_names;          // first-seen id -> term (the map's key)
  std::vector<std::vector<Postings>> postings;         // field -> first-seen id -> list
};

Bm25Builder::Bm25Builder(const Bm25Spec& spec, int threads) : state_(std::make_unique<State>()) {
  State& s = *state_;
  s.spec = spec;
  s.threads = resolve_threads(threads);
  s.fields = spec.fields == Bm25Fields::kMulti ? 2 : 1;
  for (int t = 0; t < s.threads; ++t) s.analyzers.emplace_back(spec.stemmer);
  s.lengths.resize(s.fields);
  s.postings.resize(s.fields);
}

Bm25Builder::~Bm25Builder() = default;

void Bm25Builder::add(const DocumentView& doc) {
  RAGMIG_CHECK(state_ != nullptr, "Bm25Builder::add after finish");
  State& s = *state_;
  if (s.id_offsets.size() > 2147483647u) throw DataError("BM25: more than 2^31 documents");
  s.id_blob.append(doc.id);
  s.id_offsets.push_back(s.id_blob.size());
  s.titles.emplace_back(doc.title);
  s.texts.emplace_back(doc.text);
  if (s.titles.size() == kBlock) flush();
}

void Bm25Builder::flush() {
  State& s = *state_;
  const auto t0 = Clock::now();
  const auto n = static_cast<int64_t>(s.titles.size());
  const auto first = static_cast<int32_t>(s.id_offsets.size() - 1 - s.titles.size());
  const bool multi = s.fields == 2;
  std::vector<TermCounts> analysed(static_cast<size_t>(n) * s.fields);
  std::vector<int32_t> lengths(static_cast<size_t>(n) * s.fields);
  parallel_for(n, s.threads, 64, [&](int64_t b, int64_t e, int worker) {
    Analyzer& analyzer = s.analyzers[static_cast<size_t>(worker)];
    for (int64_t i = b; i < e; ++i) {
      const auto at = static_cast<size_t>(i);
      for (size_t f = 0; f < s.fields; ++f) {
        std::vector<std::string> terms;
        if (multi) {
          terms = analyzer.analyze(f == 0 ? s.titles[at] : s.texts[at]);
        } else {
          terms = analyzer.analyze(s.titles[at]);
          auto text_terms = analyzer.analyze(s.texts[at]);
          terms.insert(terms.end(), std::make_move_iterator(text_terms.begin()), std::make_move_iterator(text_terms.end()));
        }
        lengths[at * s.fields + f] = static_cast<int32_t>(terms.size());
        analysed[at * s.fields + f] = count_terms(std::move(terms));
      }
    }
  });
  for (size_t i = 0; i < static_cast<size_t>(n); ++i) {
    const int32_t doc = first + static_cast<int32_t>(i);
    for (size_t f = 0; f < s.fields; ++f) {
      s.lengths[f].push_back(lengths[i * s.fields + f]);
      for (auto& [term, tf] : analysed[i * s.fields + f]) {
        auto [it, fresh] = s.term_ids.try_emplace(std::move(term), static_cast<uint32_t>(s.term_names.size()));
        if (fresh) {
          s.term_names.push_back(&it->first);
          for (auto& field : s.postings) field.emplace_back();
        }
        State::Postings& list = s.postings[f][it->second];
        const auto gap = static_cast<uint64_t>(doc - list.last - 1);
        if (tf == 1) {
          append_varint(list.bytes, gap * 2 + 1);
        } else {
          append_varint(list.bytes, gap * 2);
          append_varint(list.bytes, static_cast<uint64_t>(tf));
        }
        list.last = doc;
        ++list.df;
      }
    }
  }
  s.titles.clear();
  s.texts.clear();
  busy_seconds_ += seconds_since(t0);
}

// The image's layout is bm25_io.cpp's; this writes it and from_image() checks it.
Bm25Index Bm25Builder::finish() {
  RAGMIG_CHECK(state_ != nullptr, "Bm25Builder::finish twice");
  State& s = *state_;
  flush();
  const auto t0 = Clock::now();
  const size_t n_docs = s.id_offsets.size() - 1, n_terms = s.term_names.size();
  std::vector<uint32_t> order(n_terms);  // sorted rank -> first-seen id
  for (size_t t = 0; t < n_terms; ++t) order[t] = static_cast<uint32_t>(t);
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return *s.term_names[a] < *s.term_names[b]; });

  std::string term_blob;
  std::vector<uint64_t> term_offsets{0};
  for (uint32_t t : order) {
    term_blob += *s.term_names[t];
    term_offsets.push_back(term_blob.size());
  }
  const std::string spec = to_string(s.spec);
  size_t total = 8 + spec.size() + 8 + 8 + 4 + 8 + s.id_blob.size() + 8 + 8 * s.id_offsets.size() + 8 + term_blob.size() + 8 +
                 8 * term_offsets.size();
  for (size_t f = 0; f < s.fields; ++f) {
    total += 8 + 8 + 8 + 4 * n_docs + 8 + 4 * n_terms + 8 + 8 * (n_terms + 1) + 8;
    for (const State::Postings& list : s.postings[f]) total += list.bytes.size();
  }
  ByteWriter w;
  w.bytes().reserve(total);  // an upper bound (field names count 8 bytes): the image is never copied to grow
  w.str(spec);
  w.pod<uint64_t>(n_docs);
  w.pod<uint64_t>(n_terms);
  w.pod<uint32_t>(static_cast<uint32_t>(s.fields));
  w.str(s.id_blob);
  w.array(s.id_offsets);
  std::string().swap(s.id_blob);
  w.str(term_blob);
  w.array(term_offsets);
  std::string().swap(term_blob);
  for (size_t f = 0; f < s.fields; ++f) {
    w.str(s.fields == 2 ? (f == 0 ? "title" : "text") : "contents");
    w.array(s.lengths[f]);
    std::vector<uint32_t> df(n_terms);
    std::vector<uint64_t> offsets(n_terms + 1, 0);
    for (size_t r = 0; r < n_terms; ++r) {
      const State::Postings& list = s.postings[f][order[r]];
      df[r] = list.df;
      offsets[r + 1] = offsets[r] + list.bytes.size();
    }
    w.array(df);
    w.array(offsets);
    w.pod<uint64_t>(offsets.back());
    for (size_t r = 0; r < n_terms; ++r) {
      State::Postings& list = s.postings[f][order[r]];
      w.raw(list.bytes.data(), list.bytes.size());
      std::string().swap(list.bytes);
    }
    std::vector<State::Postings>().swap(s.postings[f]);
  }
  auto image = std::make_shared<const std::string>(std::move(w.bytes()));
  state_.reset();  // the vocabulary map and lengths: the image holds them now
  Bm25Index index = Bm25Index::from_image(*image, image, "built BM25 index");
  busy_seconds_ += seconds_since(t0);
  return index;
}

Bm25Index Bm25Index::build(const std::vector<DocumentView>& docs, const Bm25Spec& spec, int threads) {
  Bm25Builder builder(spec, threads);
  for (const DocumentView& d : docs) builder.add(d);
  return builder.finish();
}

}  // namespace ragmig::index
