// The English analyser of BM25, as Anserini/Pyserini's DefaultEnglishAnalyzer builds it from Lucene parts:
// StandardTokenizer-style word breaking, removal of the possessive "'s", lower-casing, Lucene's 33 English
// stop words, then stemming with the Snowball library (Debian's libstemmer): "porter" (the original Porter
// algorithm, what Lucene's PorterStemFilter implements) by default, or "english" (Porter2).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

struct sb_stemmer;

namespace ragmig::index {

enum class Stemmer { kPorter, kEnglish, kNone };

/// "porter" | "english" | "none".
std::string to_string(Stemmer stemmer);
/// Inverse of to_string; ConfigError for anything else.
Stemmer parse_stemmer(const std::string& text);

/// Lucene's EnglishAnalyzer.ENGLISH_STOP_WORDS_SET, sorted.
const std::vector<std::string>& english_stop_words();

/// One analyser per thread: the Snowball stemmer keeps per-call state, so analyze() is not thread-safe.
class Analyzer {
 public:
  explicit Analyzer(Stemmer stemmer = Stemmer::kPorter);
  ~Analyzer();
  Analyzer(Analyzer&&) noexcept;
  Analyzer& operator=(Analyzer&&) noexcept;

  /// The terms of `text` in order, duplicates kept (term frequencies count them).
  std::vector<std::string> analyze(std::string_view text);
  /// Stems one lower-cased word (unchanged for Stemmer::kNone).
  std::string stem(std::string_view word);

  Stemmer stemmer() const { return stemmer_; }

 private:
  Stemmer stemmer_;
  sb_stemmer* sb_ = nullptr;
};

}  // namespace ragmig::index
