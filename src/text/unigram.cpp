// UnigramTokenizer: the tokenizers library's Unigram model (encode_optimized: best path ending at each byte,
// candidates from a common-prefix search, shortest first, a candidate replacing only a strictly better one)
// behind its Precompiled / Replace / Strip normalisers and WhitespaceSplit / Metaspace pre-tokenizers.
#include "text/unigram.h"

#include <cmath>

#include "core/error.h"
#include "core/strings.h"
#include "text/nfc.h"
#include "text/unicode.h"

namespace ragmig::text {
namespace {

constexpr double kUnkPenalty = 10.0;

bool is_white_space(char32_t cp) { return split_class(cp) == SplitClass::kSpace; }

void replace_space_runs(std::string& s, std::string_view to) {
  std::string out;
  for (size_t i = 0; i < s.size();) {
    size_t j = i;
    while (j < s.size() && s[j] == ' ') ++j;
    if (j - i >= 2) out.append(to);
    else if (j > i) out.push_back(' ');
    if (j < s.size()) out.push_back(s[j]);
    i = j + 1;
  }
  s = std::move(out);
}

}  // namespace

UnigramTokenizer::UnigramTokenizer(const TokenizerSpec& spec, const std::string& source) : Tokenizer(spec, source) {
  if (spec.scores.size() != spec.vocab.size())
    throw DataError(source + ": " + std::to_string(spec.scores.size()) + " scores for " +
                    std::to_string(spec.vocab.size()) + " tokens (a Unigram model needs one per token)");
  double min_score = 0;
  token_at_.push_back(-1);
  for (size_t id = 0; id < spec.vocab.size(); ++id) {
    if (!std::isfinite(spec.scores[id]))
      throw DataError(source + ": token " + std::to_string(id) + " (\"" + spec.vocab[id] + "\") has a score of " +
                      std::to_string(spec.scores[id]) + " (expected a finite log probability)");
    min_score = std::min(min_score, spec.scores[id]);
    uint64_t node = 0;
    for (const char ch : spec.vocab[id]) {
      const uint64_t key = (node << 8) | static_cast<unsigned char>(ch);
      auto [it, inserted] = edges_.try_emplace(key, static_cast<int32_t>(token_at_.size()));
      if (inserted) token_at_.push_back(-1);
      node = static_cast<uint64_t>(it->second);
    }
    if (node != 0 && token_at_[node] < 0) token_at_[node] = static_cast<int32_t>(id);
  }
  unk_score_ = min_score - kUnkPenalty;
  for (const NormalizerStep& step : spec.normalizer)
    charsmaps_.push_back(step.kind == NormalizerStep::Kind::kPrecompiled
                             ? std::optional<PrecompiledCharsmap>(std::in_place, step.text, source)
                             : std::nullopt);
}

std::string UnigramTokenizer::normalize(std::string_view text) const {
  std::string s(text);
  const auto& steps = spec().normalizer;
  for (size_t i = 0; i < steps.size(); ++i) {
    const NormalizerStep& step = steps[i];
    switch (step.kind) {
      case NormalizerStep::Kind::kPrecompiled: s = charsmaps_[i]->normalize(s); break;
      case NormalizerStep::Kind::kReplace: replace_all(s, step.text, step.content); break;
      case NormalizerStep::Kind::kReplaceSpaceRuns: replace_space_runs(s, step.content); break;
      case NormalizerStep::Kind::kNfc: s = nfc(s); break;
      case NormalizerStep::Kind::kPrepend:
        if (!s.empty()) s.insert(0, step.content);
        break;
      case NormalizerStep::Kind::kStrip: {
        const size_t end = step.right ? trailing_white_space_start(s) : s.size();
        const size_t begin = step.left ? leading_white_space_end(std::string_view(s).substr(0, end)) : 0;
        s = s.substr(begin, end - begin);
        break;
      }
    }
  }
  return s;
}

std::vector<std::string> UnigramTokenizer::pre_tokenize(std::string_view normalized, bool at_start) const {
  const MetaspaceSplit& m = spec().pre_tokenizer;
  // Whitespace-separated words with their offsets, or the whole text.
  std::vector<std::pair<std::string_view, size_t>> words;
  if (m.whitespace_split) {
    for (size_t pos = 0; pos < normalized.size();) {
      size_t next = pos;
      if (is_white_space(decode_utf8(normalized, next))) {
        pos = next;
        continue;
      }
      const size_t start = pos;
      while (pos < normalized.size()) {
        next = pos;
        if (is_white_space(decode_utf8(normalized, next))) break;
        pos = next;
      }
      words.emplace_back(normalized.substr(start, pos - start), start);
    }
  } else if (!normalized.empty()) {
    words.emplace_back(normalized, 0);
  }
  std::vector<std::string> pieces;
  for (const auto& [word, start] : words) {
    std::string s(word);
    replace_all(s, " ", m.replacement);
    const bool prepend = m.prepend == MetaspaceSplit::Prepend::kAlways ||
                         (m.prepend == MetaspaceSplit::Prepend::kFirst && at_start && start == 0);
    if (prepend && !s.starts_with(m.replacement)) s.insert(0, m.replacement);
    if (!m.split || m.replacement.empty()) {
      pieces.push_back(std::move(s));
      continue;
    }
    // Cut before each replacement, which stays with what follows it.
    size_t begin = 0;
    for (size_t at = s.find(m.replacement, 1); at != std::string::npos; at = s.find(m.replacement, at + 1)) {
      if (at > begin) pieces.push_back(s.substr(begin, at - begin));
      begin = at;
    }
    if (begin < s.size()) pieces.push_back(s.substr(begin));
  }
  return pieces;
}

void UnigramTokenizer::segment(std::string_view piece, std::vector<int32_t>& out) const {
  struct Best {
    int32_t id = -1;
    double score = 0;
    int64_t starts_at = -1;  // -1: no path ends here yet
  };
  const size_t size = piece.size();
  std::vector<Best> best(size + 1);
  best[0].starts_at = 0;
  for (size_t start = 0; start < size;) {
    const double till_here = best[start].score;
    size_t next = start;
    decode_utf8(piece, next);
    const size_t char_len = next - start;
    bool has_single = false;
    uint64_t node = 0;
    for (size_t end = start; end < size; ++end) {
      const auto it = edges_.find((node << 8) | static_cast<unsigned char>(piece[end]));
      if (it == edges_.end()) break;
      node = static_cast<uint64_t>(it->second);
      const int32_t id = token_at_[node];
      if (id < 0) continue;
      const double score = till_here + spec().scores[static_cast<size_t>(id)];
      Best& target = best[end + 1];
      if (target.starts_at < 0 || score > target.score) target = {id, score, static_cast<int64_t>(start)};
      if (end + 1 - start == char_len) has_single = true;
    }
    if (!has_single) {
      Best& target = best[start + char_len];
      const double score = till_here + unk_score_;
      if (target.starts_at < 0 || score > target.score) target = {unk_id(), score, static_cast<int64_t>(start)};
    }
    start = next;
  }
  // Back from the end; a run of unknowns becomes one <unk>.
  std::vector<int32_t> ids;
  for (size_t end = size; end > 0;) {
    const Best& b = best[end];
    if (b.id != unk_id() || ids.empty() || ids.back() != unk_id()) ids.push_back(b.id);
    end = static_cast<size_t>(b.starts_at);
  }
  out.insert(out.end(), ids.rbegin(), ids.rend());
}

void UnigramTokenizer::encode_text(std::string_view text, bool at_start, size_t limit,
                                   std::vector<int32_t>& ids) const {
  for (const std::string& piece : pre_tokenize(normalize(text), at_start)) {
    segment(piece, ids);
    if (ids.size() >= limit) break;
  }
}

}  // namespace ragmig::text
