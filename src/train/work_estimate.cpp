// A training run's FLOPs from its config (see work_estimate.h).
#include "train/work_estimate.h"

#include <algorithm>
#include <filesystem>
#include <iterator>
#include <map>
#include <memory>
#include <set>
#include <unordered_set>
#include <utility>

#include "core/line_reader.h"
#include "model/encoder_flops.h"
#include "model/packaged_models.h"
#include "model/st_folder.h"
#include "text/beir.h"
#include "text/pairs.h"
#include "text/prompts.h"

namespace ragmig::train {

namespace {

// The tokenizer and prompts `cfg`'s run tokenizes its texts with (text_lengths).
std::pair<std::unique_ptr<text::Tokenizer>, text::Prompts> run_tokenizer(const TrainConfig& cfg) {
  text::Prompts prompts;
  text::TokenizerSpec spec;
  if (!cfg.model.init.empty()) {
    const std::string folder = model::resolve_model_reference(cfg.model.init);
    const auto layout = model::read_sentence_transformer_layout(folder);
    spec = model::read_folder_tokenizer(model::transformer_folder(folder, layout)).spec;
    prompts = model::read_prompts(folder);
  } else if (!cfg.model.vocab.empty()) {
    spec = text::word_piece_spec(model::read_vocab_file(cfg.model.vocab));
  } else {  // a vocabulary built from the data: every word is one of its pieces or more
    spec = text::word_piece_spec({"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"});
  }
  return {text::make_tokenizer(spec), text::replaced(prompts, cfg.model.query_prompt, cfg.model.passage_prompt)};
}

// The encoder's forward FLOPs on one text, on average over `lengths` (at `cap` where there are none).
double mean_forward(const model::BertConfig& shape, const std::vector<int64_t>& lengths, int64_t cap) {
  if (lengths.empty()) return model::encoder_flops(shape, cap);
  std::map<int64_t, int64_t> count_of;  // a few hundred distinct lengths at most
  for (const int64_t length : lengths) ++count_of[length];
  double sum = 0;
  for (const auto& [length, count] : count_of) sum += static_cast<double>(count) * model::encoder_flops(shape, length);
  return sum / static_cast<double>(lengths.size());
}

double one_evaluation(const TrainConfig& cfg, const EvalSizes& all, double query, double passage) {
  const int64_t queries = cfg.eval.max_queries == 0 ? all.queries
                          : all.queries > 0       ? std::min(cfg.eval.max_queries, all.queries)
                                                  : cfg.eval.max_queries;
  const int64_t passages = cfg.eval.max_passages > 0 ? cfg.eval.max_passages : all.passages;
  return static_cast<double>(queries) * query + static_cast<double>(passages) * passage;
}

}  // namespace

TextLengths text_lengths(const TrainConfig& cfg, int64_t texts) {
  TextLengths lengths;
  if (!cfg.data.pretrain.empty() || texts <= 0) return lengths;
  const auto run = run_tokenizer(cfg);
  const text::Tokenizer& tokenizer = *run.first;
  const text::Prompts& prompts = run.second;
  const auto length = [&](const std::string& prompt, const std::string& text, int64_t cap) {
    return static_cast<int64_t>(text::encode_with_prompt(tokenizer, prompt, text, cap).size());
  };
  const auto& d = cfg.data;
  if (!d.beir.empty()) {
    for (const auto& q : text::read_queries(resolve_maybe_gz(d.beir + "/queries.jsonl"), texts))
      lengths.queries.push_back(length(prompts.query, q.text, d.max_query_tokens));
    for (const auto& doc : text::read_corpus(resolve_maybe_gz(d.beir + "/corpus.jsonl"), texts).docs)
      lengths.passages.push_back(length(prompts.passage, text::document_text(doc), d.max_passage_tokens));
  } else if (!d.pairs.empty()) {
    for (const auto& example : text::read_pairs(d.pairs, texts)) {
      lengths.queries.push_back(length(prompts.query, example.query, d.max_query_tokens));
      lengths.passages.push_back(length(prompts.passage, example.positive, d.max_passage_tokens));
    }
  }
  return lengths;
}

double evaluation_flops(const TrainConfig& cfg, const EvalSizes& all, const TextLengths& lengths) {
  const model::BertConfig shape = encoder_shape(cfg);
  return one_evaluation(cfg, all, mean_forward(shape, lengths.queries, cfg.data.max_query_tokens),
                        mean_forward(shape, lengths.passages, cfg.data.max_passage_tokens));
}

TrainingWork training_work(const TrainConfig& cfg, const EvalSizes& all, const TextLengths& lengths) {
  const model::BertConfig shape = encoder_shape(cfg);
  const double query = mean_forward(shape, lengths.queries, cfg.data.max_query_tokens);
  const double passage = mean_forward(shape, lengths.passages, cfg.data.max_passage_tokens);
  const auto& t = cfg.train;
  double passes = cfg.lora.rank > 0 ? 2 : 3;
  if (t.accumulation == "gradcache") passes += 1;
  if (t.activation_checkpointing) passes += 1;  // each layer's forward again in backward
  TrainingWork work;
  work.steps = t.max_steps;
  work.step_flops = passes * static_cast<double>(t.batch_size) *
                    (query + static_cast<double>(1 + t.hard_negatives) * passage);
  if (!cfg.eval.split.empty()) {
    std::set<int64_t> at(cfg.eval.at_steps.begin(), cfg.eval.at_steps.end());
    if (cfg.eval.at_end) at.insert(t.max_steps);
    work.eval_steps.assign(at.begin(), at.upper_bound(t.max_steps));
    work.eval_flops = static_cast<double>(work.eval_steps.size()) * one_evaluation(cfg, all, query, passage);
  }
  return work;
}

EvalSizes eval_sizes(const TrainConfig& cfg, int64_t counted_bytes) {
  EvalSizes sizes;
  if (cfg.eval.split.empty()) return sizes;
  if (cfg.eval.max_queries == 0) {
    std::unordered_set<std::string> queries;
    for (const auto& e : text::read_qrels(text::qrels_path(cfg.data.beir, cfg.eval.split)).entries)
      queries.insert(e.query_id);
    sizes.queries = static_cast<int64_t>(queries.size());
  }
  if (cfg.eval.max_passages == 0) {
    LineReader corpus(resolve_maybe_gz(cfg.data.beir + "/corpus.jsonl"));
    std::string line;
    int64_t lines = 0;
    while (corpus.file_offset() < counted_bytes && corpus.next(line)) lines += !line.empty();
    if (corpus.next(line)) {  // past the counted bytes: the rest at the same lines per byte
      const auto size = static_cast<double>(std::filesystem::file_size(corpus.path()));
      lines = static_cast<int64_t>(static_cast<double>(lines + 1) * size / static_cast<double>(corpus.file_offset()));
    }
    sizes.passages = lines;
  }
  return sizes;
}

}  // namespace ragmig::train
