// Pairs from raw text by independent cropping and the inverse cloze task (see pretrain_pairs.h).
#include "text/pretrain_pairs.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <utility>

#include "core/error.h"
#include "core/line_reader.h"
#include "core/splitmix.h"
#include "text/json_rows.h"

namespace ragmig::text {
namespace {

constexpr double kCropMin = 0.1, kCropMax = 0.5;  // span length as a fraction of the document's words
constexpr double kIctKeep = 0.1;                   // ICT: the query sentence stays in the positive this often
constexpr size_t kCropMinWords = 4;

bool is_space(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

std::vector<std::string> words_of(const std::string& text) {
  std::vector<std::string> words;
  std::string w;
  for (const char c : text) {
    if (!is_space(c)) {
      w.push_back(c);
    } else if (!w.empty()) {
      words.push_back(std::move(w));
      w.clear();
    }
  }
  if (!w.empty()) words.push_back(std::move(w));
  return words;
}

std::string trimmed(const std::string& s) {
  size_t b = 0, e = s.size();
  while (b < e && is_space(s[b])) ++b;
  while (e > b && is_space(s[e - 1])) --e;
  return s.substr(b, e - b);
}

std::string join(const std::vector<std::string>& parts, size_t begin, size_t end, size_t skip = SIZE_MAX) {
  std::string out;
  for (size_t i = begin; i < end; ++i) {
    if (i == skip) continue;
    if (!out.empty()) out += ' ';
    out += parts[i];
  }
  return out;
}

// A draw in [0, 1) from a running splitmix64 state.
double uniform(uint64_t& state) {
  state = splitmix64(state);
  return static_cast<double>(state >> 11) * 0x1.0p-53;
}

// A span of [kCropMin, kCropMax] of n words, as [begin, end).
std::pair<size_t, size_t> crop(size_t n, uint64_t& state) {
  const double fraction = kCropMin + (kCropMax - kCropMin) * uniform(state);
  const size_t len = std::max<size_t>(1, static_cast<size_t>(fraction * static_cast<double>(n)));
  const size_t begin = static_cast<size_t>(uniform(state) * static_cast<double>(n - len + 1));
  return {begin, begin + len};
}

}  // namespace

PretrainTask parse_pretrain_task(const std::string& name) {
  if (name == "crop") return PretrainTask::kCrop;
  if (name == "ict") return PretrainTask::kIct;
  throw ConfigError("config key 'data.pretrain': expected crop or ict (or empty for judged pairs), got '" + name + "'");
}

std::vector<std::string> split_sentences(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if ((c == '.' || c == '!' || c == '?') && (i + 1 == text.size() || is_space(text[i + 1]))) {
      std::string s = trimmed(text.substr(start, i + 1 - start));
      if (!s.empty()) out.push_back(std::move(s));
      start = i + 1;
    }
  }
  std::string rest = trimmed(text.substr(start));
  if (!rest.empty()) out.push_back(std::move(rest));
  return out;
}

std::vector<TrainingExample> pretrain_examples(const std::vector<std::string>& documents, PretrainTask task,
                                               uint64_t seed) {
  std::vector<TrainingExample> out;
  for (size_t d = 0; d < documents.size(); ++d) {
    uint64_t state = splitmix64(seed ^ splitmix64(0x9e3779b97f4a7c15ULL + d));
    TrainingExample e;
    e.positive_key = static_cast<int64_t>(d);
    if (task == PretrainTask::kCrop) {
      const auto words = words_of(documents[d]);
      if (words.size() < kCropMinWords) continue;
      const auto [qb, qe] = crop(words.size(), state);
      const auto [pb, pe] = crop(words.size(), state);
      e.query = join(words, qb, qe);
      e.positive = join(words, pb, pe);
    } else {
      const auto sentences = split_sentences(documents[d]);
      if (sentences.size() < 2) continue;
      const size_t pick = static_cast<size_t>(uniform(state) * static_cast<double>(sentences.size()));
      const bool keep = uniform(state) < kIctKeep;
      e.query = sentences[pick];
      e.positive = join(sentences, 0, sentences.size(), keep ? SIZE_MAX : pick);
    }
    out.push_back(std::move(e));
  }
  return out;
}

std::vector<std::string> read_raw_documents(const std::string& path) {
  const std::string file = resolve_maybe_gz(path);
  std::vector<std::string> docs;
  const bool jsonl = path.ends_with(".jsonl") || path.ends_with(".jsonl.gz");
  if (jsonl) {
    for_each_json_row(file, [&](const nlohmann::json& row, const std::string& f, int64_t line) {
      const std::string title = json_string_field(row, "title", f, line, false);
      const std::string text = json_string_field(row, "text", f, line, true);
      docs.push_back(title.empty() ? text : title + " " + text);
    });
  } else {
    LineReader in(file);
    for (std::string line; in.next(line);)
      if (!trimmed(line).empty()) docs.push_back(line);
  }
  if (docs.empty()) throw DataError(file + ": no documents to pre-train on");
  return docs;
}

}  // namespace ragmig::text
