// WordPiece vocabulary training by BPE merges (HF tokenizers' WordPieceTrainer). Pair counts are kept
// incrementally (pair -> count, pair -> words holding it) with a lazily corrected max-heap, so each merge
// costs time in proportion to the words it touches, not to the corpus.
#include "text/vocab_builder.h"

#include <algorithm>
#include <queue>
#include <unordered_map>

#include "core/error.h"
#include "text/unicode.h"
#include "text/wordpiece.h"

namespace ragmig::text {

const std::vector<std::string>& special_tokens() {
  static const std::vector<std::string> kSpecials = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"};
  return kSpecials;
}

namespace {

using PairKey = uint64_t;

PairKey pair_key(int32_t a, int32_t b) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(a)) << 32) | static_cast<uint32_t>(b);
}
int32_t pair_first(PairKey k) { return static_cast<int32_t>(k >> 32); }
int32_t pair_second(PairKey k) { return static_cast<int32_t>(k & 0xFFFFFFFFu); }

class MergeState {
 public:
  std::vector<std::string> symbols;                 // symbol id -> text
  std::unordered_map<std::string, int32_t> symbol_ids;
  std::vector<std::vector<int32_t>> words;          // unique words as symbol ids
  std::vector<int64_t> word_counts;
  std::unordered_map<PairKey, int64_t> pair_counts;
  std::unordered_map<PairKey, std::vector<int32_t>> pair_words;  // may hold stale or repeated word ids

  int32_t intern(const std::string& s) {
    auto [it, inserted] = symbol_ids.emplace(s, static_cast<int32_t>(symbols.size()));
    if (inserted) symbols.push_back(s);
    return it->second;
  }

  struct Entry {
    int64_t count;
    PairKey pair;
  };
  // Highest count first; equal counts: lexicographically smallest (first, second) first.
  bool lower_priority(const Entry& x, const Entry& y) const {
    if (x.count != y.count) return x.count < y.count;
    const std::string& xa = symbols[static_cast<size_t>(pair_first(x.pair))];
    const std::string& ya = symbols[static_cast<size_t>(pair_first(y.pair))];
    if (xa != ya) return xa > ya;
    return symbols[static_cast<size_t>(pair_second(x.pair))] > symbols[static_cast<size_t>(pair_second(y.pair))];
  }

  void count_initial_pairs() {
    for (size_t w = 0; w < words.size(); ++w) {
      const auto& s = words[w];
      for (size_t i = 0; i + 1 < s.size(); ++i) {
        const PairKey k = pair_key(s[i], s[i + 1]);
        pair_counts[k] += word_counts[w];
        auto& list = pair_words[k];
        if (list.empty() || list.back() != static_cast<int32_t>(w)) list.push_back(static_cast<int32_t>(w));
      }
    }
  }

  // Replaces every (a, b) in the words listed for it by `merged`; records pairs whose count grew.
  void apply_merge(PairKey pair, int32_t merged, std::vector<PairKey>& grown) {
    const int32_t a = pair_first(pair), b = pair_second(pair);
    std::vector<int32_t> where = std::move(pair_words[pair]);
    pair_words.erase(pair);
    std::sort(where.begin(), where.end());
    where.erase(std::unique(where.begin(), where.end()), where.end());
    for (int32_t w : where) {
      auto& s = words[static_cast<size_t>(w)];
      const int64_t wc = word_counts[static_cast<size_t>(w)];
      const auto add = [&](int32_t x, int32_t y, int64_t delta) {
        const PairKey k = pair_key(x, y);
        pair_counts[k] += delta;
        if (delta > 0) {
          grown.push_back(k);
          auto& list = pair_words[k];
          if (list.empty() || list.back() != w) list.push_back(w);
        }
      };
      for (size_t i = 0; i + 1 < s.size(); ++i) {
        if (s[i] != a || s[i + 1] != b) continue;
        if (i > 0) {
          add(s[i - 1], a, -wc);
          add(s[i - 1], merged, wc);
        }
        if (i + 2 < s.size()) {
          add(b, s[i + 2], -wc);
          add(merged, s[i + 2], wc);
        }
        pair_counts[pair] -= wc;
        s[i] = merged;
        s.erase(s.begin() + static_cast<std::ptrdiff_t>(i) + 1);
      }
    }
    pair_counts.erase(pair);
  }
};

}  // namespace

std::vector<std::string> build_wordpiece_vocab(const std::vector<std::string>& texts,
                                               const VocabBuilderOptions& opts) {
  const auto& specials = special_tokens();
  const int64_t n_special = static_cast<int64_t>(specials.size());
  if (opts.vocab_size < n_special)
    throw ConfigError("vocab_size must be at least " + std::to_string(n_special) + ", got " +
                      std::to_string(opts.vocab_size));
  if (opts.min_frequency < 0) throw ConfigError("min_frequency must be >= 0");
  if (opts.limit_alphabet < 1) throw ConfigError("limit_alphabet must be >= 1");
  const int64_t min_freq = std::max<int64_t>(opts.min_frequency, 1);

  // 1. Word frequencies.
  const WordPieceTokenizer basic(specials, opts.lower_case);
  std::unordered_map<std::string, int64_t> word_freq;
  for (const std::string& text : texts)
    for (std::string& w : basic.basic_tokenize(text)) ++word_freq[std::move(w)];
  std::vector<std::pair<std::string, int64_t>> sorted_words(word_freq.begin(), word_freq.end());
  word_freq.clear();
  std::sort(sorted_words.begin(), sorted_words.end());

  // 2. The alphabet: characters seen at least min_frequency times, the most frequent first.
  std::unordered_map<char32_t, int64_t> char_freq;
  for (const auto& [w, c] : sorted_words)
    for (size_t pos = 0; pos < w.size();) char_freq[decode_utf8(w, pos)] += c;
  std::vector<std::pair<char32_t, int64_t>> chars;
  for (const auto& [ch, c] : char_freq)
    if (c >= min_freq) chars.emplace_back(ch, c);
  std::sort(chars.begin(), chars.end(), [](const auto& x, const auto& y) {
    return x.second != y.second ? x.second > y.second : x.first < y.first;
  });
  const int64_t room = (opts.vocab_size - n_special) / 2;
  chars.resize(static_cast<size_t>(std::min<int64_t>({static_cast<int64_t>(chars.size()), opts.limit_alphabet, room})));
  std::sort(chars.begin(), chars.end());

  MergeState st;
  std::vector<std::string> vocab = specials;
  for (const std::string& s : specials) st.intern(s);
  std::unordered_map<char32_t, std::pair<int32_t, int32_t>> char_symbols;  // c -> ("c", "##c")
  for (const auto& [ch, c] : chars) {
    std::string s;
    append_utf8(s, ch);
    char_symbols[ch].first = st.intern(s);
    vocab.push_back(s);
  }
  for (const auto& [ch, c] : chars) {
    std::string s = "##";
    append_utf8(s, ch);
    char_symbols[ch].second = st.intern(s);
    vocab.push_back(s);
  }

  // 3. Words as symbols. A word with a character outside the alphabet is [UNK] whatever the merges, so
  // it takes no part in them (HF drops the character instead, which invents pairs never seen in text).
  for (const auto& [w, c] : sorted_words) {
    std::vector<int32_t> syms;
    bool ok = true;
    for (size_t pos = 0; pos < w.size() && ok;) {
      const bool first = pos == 0;
      auto it = char_symbols.find(decode_utf8(w, pos));
      if (it == char_symbols.end()) ok = false;
      else syms.push_back(first ? it->second.first : it->second.second);
    }
    if (!ok || syms.size() < 2) continue;
    st.words.push_back(std::move(syms));
    st.word_counts.push_back(c);
  }
  sorted_words.clear();
  st.count_initial_pairs();

  // 4. Merges.
  using Entry = MergeState::Entry;
  const auto cmp = [&st](const Entry& x, const Entry& y) { return st.lower_priority(x, y); };
  std::priority_queue<Entry, std::vector<Entry>, decltype(cmp)> heap(cmp);
  for (const auto& [k, c] : st.pair_counts) heap.push({c, k});
  std::vector<PairKey> grown;
  while (static_cast<int64_t>(vocab.size()) < opts.vocab_size && !heap.empty()) {
    const Entry top = heap.top();
    heap.pop();
    auto it = st.pair_counts.find(top.pair);
    const int64_t current = it == st.pair_counts.end() ? 0 : it->second;
    if (current != top.count) {
      // Counts only fall without a fresh entry being pushed, so a stale entry is too high: requeue.
      if (current > 0 && current < top.count) heap.push({current, top.pair});
      continue;
    }
    if (current < min_freq) break;
    const std::string& left = st.symbols[static_cast<size_t>(pair_first(top.pair))];
    std::string_view right = st.symbols[static_cast<size_t>(pair_second(top.pair))];
    if (right.starts_with("##")) right.remove_prefix(2);
    std::string merged_text = left + std::string(right);
    const size_t before = st.symbols.size();
    const int32_t merged = st.intern(merged_text);
    // The same text can come from different pairs ("ab"+"##c", "a"+"##bc"): one vocabulary entry.
    if (st.symbols.size() > before) vocab.push_back(std::move(merged_text));
    grown.clear();
    st.apply_merge(top.pair, merged, grown);
    std::sort(grown.begin(), grown.end());
    grown.erase(std::unique(grown.begin(), grown.end()), grown.end());
    for (PairKey k : grown) {
      auto g = st.pair_counts.find(k);
      if (g != st.pair_counts.end() && g->second > 0) heap.push({g->second, k});
    }
  }
  return vocab;
}

}  // namespace ragmig::text
