// A training run's FLOPs from its config (see work_estimate.h).
#include "train/work_estimate.h"

#include <algorithm>
#include <filesystem>
#include <iterator>
#include <set>
#include <unordered_set>

#include "core/line_reader.h"
#include "model/encoder_flops.h"
#include "text/beir.h"

namespace ragmig::train {

namespace {

double one_evaluation(const TrainConfig& cfg, const EvalSizes& all, double query, double passage) {
  const int64_t queries = cfg.eval.max_queries == 0 ? all.queries
                          : all.queries > 0       ? std::min(cfg.eval.max_queries, all.queries)
                                                  : cfg.eval.max_queries;
  const int64_t passages = cfg.eval.max_passages > 0 ? cfg.eval.max_passages : all.passages;
  return static_cast<double>(queries) * query + static_cast<double>(passages) * passage;
}

}  // namespace

double evaluation_flops(const TrainConfig& cfg, const EvalSizes& all) {
  const model::BertConfig shape = encoder_shape(cfg);
  return one_evaluation(cfg, all, model::encoder_flops(shape, cfg.data.max_query_tokens),
                        model::encoder_flops(shape, cfg.data.max_passage_tokens));
}

TrainingWork training_work(const TrainConfig& cfg, const EvalSizes& all) {
  const model::BertConfig shape = encoder_shape(cfg);
  const double query = model::encoder_flops(shape, cfg.data.max_query_tokens);
  const double passage = model::encoder_flops(shape, cfg.data.max_passage_tokens);
  const auto& t = cfg.train;
  double passes = cfg.lora.rank > 0 ? 2 : 3;
  if (t.accumulation == "gradcache") passes += 1;
  TrainingWork work;
  work.steps = t.max_steps;
  work.step_flops = passes * static_cast<double>(t.batch_size) *
                    (query + static_cast<double>(1 + t.hard_negatives) * passage);
  if (!cfg.eval.split.empty()) {
    std::set<int64_t> at(cfg.eval.at_steps.begin(), cfg.eval.at_steps.end());
    at.insert(t.max_steps);
    const auto evaluations = static_cast<double>(std::distance(at.begin(), at.upper_bound(t.max_steps)));
    work.eval_flops = evaluations * one_evaluation(cfg, all, query, passage);
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
