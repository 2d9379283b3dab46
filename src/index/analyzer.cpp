// English analysis for BM25 (see analyzer.h). The order of the steps is Lucene's: possessives are removed
// before lower-casing, stop words before stemming (so "was" is dropped, not stemmed to "wa").
#include "index/analyzer.h"

#include <libstemmer.h>

#include <algorithm>

#include "core/error.h"
#include "index/word_breaker.h"

namespace ragmig::index {
namespace {

// EnglishPossessiveFilter: a trailing 's or 'S after an apostrophe, a right single quote or a fullwidth one.
std::string_view strip_possessive(std::string_view w) {
  for (std::string_view apostrophe : {std::string_view("'"), std::string_view("\xE2\x80\x99"), std::string_view("\xEF\xBC\x87")}) {
    const size_t n = apostrophe.size() + 1;
    if (w.size() >= n && (w.back() == 's' || w.back() == 'S') && w.substr(w.size() - n, apostrophe.size()) == apostrophe)
      return w.substr(0, w.size() - n);
  }
  return w;
}

std::string lower(std::string_view w) {
  std::string out;
  out.reserve(w.size());
  size_t pos = 0;
  while (pos < w.size()) {
    const auto b = static_cast<unsigned char>(w[pos]);
    if (b < 0x80) {
      out += static_cast<char>(b >= 'A' && b <= 'Z' ? b + 32 : b);
      ++pos;
      continue;
    }
    append_code_point(out, lower_case(next_code_point(w, pos)));
  }
  return out;
}

}  // namespace

std::string to_string(Stemmer stemmer) {
  switch (stemmer) {
    case Stemmer::kPorter: return "porter";
    case Stemmer::kEnglish: return "english";
    case Stemmer::kNone: return "none";
  }
  return "?";
}

Stemmer parse_stemmer(const std::string& text) {
  if (text == "porter") return Stemmer::kPorter;
  if (text == "english") return Stemmer::kEnglish;
  if (text == "none") return Stemmer::kNone;
  throw ConfigError("unknown stemmer '" + text + "' (expected porter, english or none)");
}

const std::vector<std::string>& english_stop_words() {
  static const std::vector<std::string> words = {
      "a",    "an",    "and",  "are",   "as",   "at",    "be",   "but",  "by",   "for",  "if",
      "in",   "into",  "is",   "it",    "no",   "not",   "of",   "on",   "or",   "such", "that",
      "the",  "their", "then", "there", "these", "they", "this", "to",   "was",  "will", "with"};
  return words;
}

Analyzer::Analyzer(Stemmer stemmer) : stemmer_(stemmer) {
  if (stemmer_ == Stemmer::kNone) return;
  sb_ = sb_stemmer_new(to_string(stemmer_).c_str(), "UTF_8");
  if (!sb_) throw IoError("libstemmer has no '" + to_string(stemmer_) + "' stemmer");
}

Analyzer::~Analyzer() { sb_stemmer_delete(sb_); }

Analyzer::Analyzer(Analyzer&& other) noexcept : stemmer_(other.stemmer_), sb_(other.sb_) { other.sb_ = nullptr; }

Analyzer& Analyzer::operator=(Analyzer&& other) noexcept {
  if (this != &other) {
    sb_stemmer_delete(sb_);
    stemmer_ = other.stemmer_;
    sb_ = other.sb_;
    other.sb_ = nullptr;
  }
  return *this;
}

std::string Analyzer::stem(std::string_view word) {
  if (!sb_) return std::string(word);
  const sb_symbol* out = sb_stemmer_stem(sb_, reinterpret_cast<const sb_symbol*>(word.data()), static_cast<int>(word.size()));
  if (!out) throw IoError("libstemmer ran out of memory");
  return std::string(reinterpret_cast<const char*>(out), static_cast<size_t>(sb_stemmer_length(sb_)));
}

std::vector<std::string> Analyzer::analyze(std::string_view text) {
  const auto& stops = english_stop_words();
  std::vector<std::string> terms;
  break_words(text, [&](std::string_view word) {
    const std::string_view base = strip_possessive(word);
    if (base.empty()) return;
    std::string term = lower(base);
    if (std::binary_search(stops.begin(), stops.end(), term)) return;
    terms.push_back(stem(term));
  });
  return terms;
}

}  // namespace ragmig::index
