// `ragmig eval --data BEIR_DIR --retriever bm25|dense|hybrid|rerank ...`: a thin driver over
// eval::evaluate that maps flags to options, sets threads, prints progress and warnings on stderr and the
// metrics on stdout (a table, or one JSON object with --json).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <sstream>
#include <thread>

#include "apps/command.h"
#include "apps/retrieval_options.h"
#include "core/atomic_file.h"
#include "core/error.h"
#include "core/event_log.h"
#include "core/path_check.h"
#include "eval/evaluate.h"
#include "index/fusion.h"

namespace ragmig::apps {
namespace {

struct EvalArgs {
  eval::EvalOptions options;
  std::string retriever;  // "" = dense with --model, else bm25
  std::string metrics;
  bool json = false;
  bool no_cache = false;
  bool quiet = false;
  std::string out;
};

std::vector<eval::Metric> parse_metric_list(const std::string& text) {
  std::vector<eval::Metric> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ','))
    if (!item.empty()) out.push_back(eval::parse_metric(item));
  return out;
}

void print_table(const eval::EvalResult& r) {
  std::printf("%s on %s (%s): %lld queries, %lld documents, %.1f s\n", eval::to_string(r.options.retriever).c_str(),
              r.options.data_dir.c_str(), r.options.split.c_str(), static_cast<long long>(r.report.queries),
              static_cast<long long>(r.corpus_size), r.seconds);
  if (r.dimensions > 0)
    std::printf("  with the leading %lld dimensions of each embedding\n", static_cast<long long>(r.dimensions));
  for (size_t i = 0; i < r.report.metrics.size(); ++i)
    std::printf("  %-12s %.4f\n", r.report.metrics[i].name().c_str(), r.report.mean[i]);
  if (r.ann)
    std::printf("  %s: recall@10 vs exact %.4f, recall@%lld vs exact %.4f, %.0f q/s (exact on %s: %.0f q/s)\n",
                r.ann->spec.c_str(), r.ann->recall_at_10, static_cast<long long>(r.ann->k), r.ann->recall_at_k,
                r.ann->queries_per_second, r.ann->exact_device.c_str(), r.ann->exact_queries_per_second);
  for (const auto& [name, part] : r.parts) {
    std::printf("  %s alone:", name.c_str());
    for (size_t i = 0; i < part.metrics.size(); ++i)
      std::printf(" %s %.4f", part.metrics[i].name().c_str(), part.mean[i]);
    std::printf("\n");
  }
  const char* held_out = r.validation_held_out ? ", held out of the model's training" : "";
  if (r.fusion_choice) {
    const auto& c = *r.fusion_choice;
    double best = 0, bm25 = 0, dense = 0, chosen = 0;  // Linear with alpha 0 / 1 is BM25 / dense alone
    for (const auto& t : c.trials) {
      best = std::max(best, t.score);
      if (t.spec == c.chosen) chosen = t.score;
      if (t.spec.kind == index::FusionKind::kLinear && t.spec.alpha == 0) bm25 = t.score;
      if (t.spec.kind == index::FusionKind::kLinear && t.spec.alpha == 1) dense = t.score;
    }
    std::printf("  fusion %s chosen on %lld queries of split %s%s (%s %.4f; BM25 alone %.4f, dense alone %.4f)\n",
                index::to_string(c.chosen).c_str(), static_cast<long long>(c.queries),
                r.options.fusion_validation_split.c_str(), held_out, c.metric.c_str(), chosen, bm25, dense);
    if (c.chosen != c.best)
      std::printf("  (the default: the best on validation, %s at %.4f, leads it by less than one standard error, %.4f)\n",
                  index::to_string(c.best).c_str(), best, c.standard_error);
  }
  if (r.depth) {
    const auto& d = *r.depth;
    std::printf("  adaptive depth for pool recall %.2f (fitted on %lld queries of split %s%s): mean depth %.1f, pool "
                "recall %.4f; by top-10 agreement",
                d.rule.target, static_cast<long long>(d.rule.queries), r.options.fusion_validation_split.c_str(),
                held_out, d.mean_depth, d.pool_recall);
    for (size_t b = 0; b < d.rule.bucket_depth.size(); ++b)
      std::printf(" %s:%lld", eval::agreement_range(static_cast<int64_t>(b)).c_str(),
                  static_cast<long long>(d.rule.bucket_depth[b]));
    std::printf("\n  fixed depths, pool recall:");
    for (size_t i = 0; i < d.rule.depths.size(); ++i)
      std::printf(" %lld:%.4f", static_cast<long long>(d.rule.depths[i]), d.fixed_recall[i]);
    std::printf("\n");
  }
  for (const auto& c : r.cache) std::printf("  cache %-12s %s\n", c.what.c_str(), c.state.c_str());
}

}  // namespace

Command add_eval_command(CLI::App& root) {
  auto args = std::make_shared<EvalArgs>();
  eval::EvalOptions& o = args->options;
  CLI::App* sub = root.add_subcommand("eval", torch_command_help("eval"));
  sub->add_option("--data", o.data_dir, "BEIR folder (corpus.jsonl[.gz], queries.jsonl[.gz], qrels/<split>.tsv)")->required();
  sub->add_option("--split", o.split, "qrels split to evaluate")->capture_default_str();
  sub->add_option("--retriever", args->retriever, "bm25 | dense | hybrid (fusion of both) | rerank (BM25 candidates "
                  "re-scored by the model); default: dense with --model, else bm25");
  sub->add_option("--model", o.dense.model_dir, "model folder (dense, hybrid, rerank): from `ragmig train`, transformers or sentence-transformers, or package:NAME (`ragmig models`)");
  sub->add_option("--index", o.dense.index_spec, "dense index: Flat (exact), HNSW32, IVF1024,PQ32, LSH, ... with optional (efSearch=..) or (nprobe=..)")
      ->capture_default_str();
  sub->add_option("--dimensions", o.dense.dimensions,
                  "search with the leading N dimensions of each embedding (a Matryoshka-trained model: "
                  "train.matryoshka_dims), renormalised when the model normalises; 0 = the folder's truncate_dim "
                  "(config_sentence_transformers.json), else all")
      ->capture_default_str();
  sub->add_option("--bm25", o.bm25_spec, "BM25 spec, e.g. BM25(k1=0.9,b=0.4) or BM25(k1=0.9,b=0.4,fields=multi)")->capture_default_str();
  sub->add_option("--fusion", o.fusion_spec,
                  "hybrid fusion: RRF(k=60), Linear(alpha=0.5) (alpha weighs dense), or auto: the best of a grid "
                  "(both parts alone included) on validation queries of --fusion-validation")
      ->capture_default_str();
  sub->add_option("--target-recall", o.target_recall,
                  "hybrid: fuse, per query, only as many candidates of each list as reach this recall of the pool "
                  "on validation queries (by how far BM25 and dense agree on their top 10); 0 = --candidates for all")
      ->capture_default_str();
  sub->add_option("--fusion-validation", o.fusion_validation_split,
                  "--fusion auto and --target-recall: the split whose judged queries (none of the evaluated ones) "
                  "choose the fusion and fit the depth")
      ->capture_default_str();
  sub->add_option("--fusion-validation-queries", o.fusion_validation_queries,
                  "--fusion auto and --target-recall: at most this many validation queries (a seeded choice)")
      ->capture_default_str();
  sub->add_option("--k", o.k, "depth of the scored run")->capture_default_str();
  sub->add_option("--candidates", o.candidates, "depth of each list fused (hybrid) or re-scored (rerank)")->capture_default_str();
  sub->add_option("--metrics", args->metrics, "comma-separated, e.g. ndcg@10,recall@100,p@10,mrr@10,map@100 (default: a BEIR set)");
  sub->add_option("--max-queries", o.max_queries, "evaluate only the first N queries with qrels (0 = all)")->capture_default_str();
  sub->add_flag("--ignore-identical-ids", o.metric_options.ignore_identical_ids,
                "a document never counts for the query with its own id (BEIR's rule for ArguAna, Quora)");
  sub->add_option("--run-out", o.run_out, "write the run as a TREC run file");
  sub->add_option("--run-tag", o.run_tag, "tag column of the run file")->capture_default_str();
  sub->add_flag("--json", args->json, "print one JSON object instead of the table");
  add_retrieval_options(sub, o, args->no_cache);
  sub->add_option("--batch-size", o.dense.embed.batch_size,
                  "texts of the longest length per forward pass when embedding (more of shorter ones)")->capture_default_str();
  sub->add_option("--out", args->out, "also write the JSON object to this file (atomically: whole or absent)");
  sub->add_flag("--quiet", args->quiet, "no progress lines on stderr (warnings are still printed)");
  sub->footer("JSON keys: every metric (ndcg@10, recall@100, ...), queries, seconds, and details (timings, cache, ann, warnings).\n"
              "Exit codes: 0 done, 2 bad input (message names the file and line), 1 failure.");

  return Command{sub, [args, sub]() -> int {
                   eval::EvalOptions opts = args->options;
                   opts.retriever = retriever_kind(args->retriever, opts);
                   refuse_unused_options(*sub, opts.retriever);
                   if (!args->metrics.empty()) opts.metrics = parse_metric_list(args->metrics);
                   if (!args->out.empty()) check_output_file(args->out, "--out");
                   if (!opts.run_out.empty()) check_output_file(opts.run_out, "--run-out");
                   prepare_retrieval(opts, args->no_cache);
                   const bool quiet = args->quiet;
                   // Run as a scheduler's job (the job protocol's RAGMIG_RUN_DIR): each line is a progress event
                   // too, so that its monitor knows a long evaluation from a stalled one.
                   std::optional<EventLog> events;
                   if (const char* run_dir = std::getenv("RAGMIG_RUN_DIR"); run_dir && *run_dir)
                     events.emplace((std::filesystem::path(run_dir) / "events.jsonl").string());
                   if (events) {
                     const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");  // the GPU or MIG instance it was given
                     events->append({{"event", "start"},
                                     {"visible_devices", visible ? nlohmann::json(visible) : nlohmann::json(nullptr)}});
                   }
                   const eval::EvalResult result = eval::evaluate(opts, [&](const std::string& line) {
                     if (!quiet) std::fprintf(stderr, "ragmig eval: %s\n", line.c_str());
                     if (events) events->append({{"event", "progress"}, {"message", line}});
                   });
                   if (events) events->append({{"event", "done"}});
                   for (const auto& w : result.warnings) std::fprintf(stderr, "ragmig eval: warning: %s\n", w.c_str());
                   if (!args->out.empty()) write_file_atomic(args->out, result.to_json().dump(2) + "\n");
                   if (args->json) std::printf("%s\n", result.to_json().dump(2).c_str());
                   else print_table(result);
                   return kOk;
                 }};
}

}  // namespace ragmig::apps
