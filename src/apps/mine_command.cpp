// `ragmig mine --data BEIR_DIR --split train --out pairs.jsonl [--retriever bm25|dense|hybrid --model M]`:
// hard negatives for `ragmig train` (data.pairs, train.hard_negatives). Retrieves for every query of the split
// with eval::evaluate (the same retrievers, cache and options as `ragmig eval`), then eval::mine_negatives
// keeps the best-ranked documents that are neither judged relevant nor near-duplicates of a positive, and the
// rows are written atomically. Mining again with the newest model between training rounds is ANCE's recipe.
#include <cstdio>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>

#include "apps/command.h"
#include "apps/retrieval_options.h"
#include "core/atomic_file.h"
#include "core/error.h"
#include "core/json_string.h"
#include "core/path_check.h"
#include "core/strings.h"
#include "eval/evaluate.h"
#include "eval/mine.h"
#include "eval/retriever_kind.h"
#include "text/beir.h"
#include "text/pairs.h"

namespace ragmig::apps {
namespace {

struct MineArgs {
  eval::EvalOptions options;
  eval::MineOptions mine;
  std::string retriever;  // "" = dense with --model, else bm25
  std::string out;
  int64_t depth = 100;
  bool no_cache = false, quiet = false, json = false;
};

/// The trainer's pairs rows (query, positive, negatives as texts) with the ids they came from, streamed into `out`
/// (a mined train split's rows hold every negative's text: hundreds of MB are common), which appears whole or not at
/// all.
void write_pairs(const std::filesystem::path& out, const std::vector<eval::MinedExample>& examples,
                 const text::BeirFolder& beir) {
  const auto doc_text = [&](const std::string& id) {
    return text::document_text(beir.corpus.docs[static_cast<size_t>(beir.corpus.index_of.at(id))]);
  };
  const auto append_list = [](std::string& row, const std::vector<std::string>& items, const auto& text_of) {
    row += '[';
    for (size_t i = 0; i < items.size(); ++i) {
      if (i > 0) row += ',';
      append_json_string(row, text_of(items[i]));
    }
    row += ']';
  };
  const auto itself = [](const std::string& id) -> const std::string& { return id; };
  AtomicFileWriter file(out);
  std::string row;
  // Each row written as it is, with no JSON value built for it: the keys in the order nlohmann::json sorts them
  // into, as before (the same bytes).
  for (const auto& e : examples) {
    row = "{\"negative_ids\":";
    append_list(row, e.negative_ids, itself);
    row += ",\"negatives\":";
    append_list(row, e.negative_ids, doc_text);
    row += ",\"positive\":";
    append_json_string(row, doc_text(e.positive_id));
    row += ",\"positive_id\":";
    append_json_string(row, e.positive_id);
    row += ",\"query\":";
    append_json_string(row, beir.queries[static_cast<size_t>(beir.query_index.at(e.query_id))].text);
    row += ",\"query_id\":";
    append_json_string(row, e.query_id);
    row += "}\n";
    file.write(row);
  }
  file.commit();
}

// The counts, as one JSON object with --json, else as sentences.
void print_summary(const MineArgs& args, const std::string& retriever, const eval::MineReport& report,
                   int64_t blank_queries, double recall) {
  const nlohmann::json summary = {{"out", args.out},
                                  {"examples", report.examples},
                                  {"negatives_per_example", args.mine.negatives},
                                  {"short_examples", report.short_examples},
                                  {"relevant_skipped", report.relevant_skipped},
                                  {"duplicates_skipped", report.duplicates_skipped},
                                  {"margin_skipped", report.margin_skipped},
                                  {"score_skipped", report.score_skipped},
                                  {"blank_skipped", report.blank_skipped},
                                  {"blank_queries_skipped", blank_queries},
                                  {"positives_below_depth", report.positives_below_depth},
                                  {"queries_without_run", report.queries_without_run},
                                  {"recall_at_depth", recall},
                                  {"depth", args.depth},
                                  {"retriever", retriever}};
  if (args.json) {
    std::printf("%s\n", summary.dump(2).c_str());
  } else {
    std::printf(
        "mined %lld examples into %s: up to %lld negatives each from %s's top %lld (recall@%lld "
        "of the positives %.4f); passed over %lld judged relevant, %lld near-duplicates, %lld "
        "within the margin of a positive and %lld outside --min-score..--max-score; %lld "
        "examples have fewer negatives\n",
        static_cast<long long>(report.examples), args.out.c_str(), static_cast<long long>(args.mine.negatives),
        retriever.c_str(), static_cast<long long>(args.depth), static_cast<long long>(args.depth), recall,
        static_cast<long long>(report.relevant_skipped), static_cast<long long>(report.duplicates_skipped),
        static_cast<long long>(report.margin_skipped), static_cast<long long>(report.score_skipped),
        static_cast<long long>(report.short_examples));
    if (blank_queries + report.blank_skipped > 0)
      std::printf("left out %lld queries and passed over %lld documents whose text is blank\n",
                  static_cast<long long>(blank_queries), static_cast<long long>(report.blank_skipped));
    if (report.positives_below_depth > 0)
      std::printf(
          "%lld queries have a positive below the top %lld: every candidate there outscores "
          "it, so none was taken (a larger --depth finds some)\n",
          static_cast<long long>(report.positives_below_depth), static_cast<long long>(args.depth));
  }
}

int run_mine(const MineArgs& args, const CLI::App& sub) {
  // Negative margins mean "off" in eval::MineOptions; given on the command line they are a mistake.
  if ((sub.count("--relative-margin") > 0 && args.mine.relative_margin < 0) ||
      (sub.count("--absolute-margin") > 0 && args.mine.absolute_margin < 0))
    throw ConfigError("--relative-margin and --absolute-margin must be >= 0 (leave them out for none)");
  eval::check_mine_options(args.mine);
  eval::EvalOptions opts = args.options;
  opts.retriever = retriever_kind(args.retriever, opts);
  if (const auto refused = eval::cannot_mine(opts.retriever)) throw ConfigError(*refused);
  refuse_unused_options(sub, opts.retriever);
  if (opts.split == "test")
    throw ConfigError(
        "--split test: negatives mined from the test split's judgments would leak it "
        "into training; mine the train split (or a dev split)");
  if (args.depth < 1) throw ConfigError("--depth must be at least 1");
  if (args.depth <= args.mine.skip_top)
    throw ConfigError("--depth must be larger than --skip-top, or no rank is left to mine");
  const std::filesystem::path out = args.out;
  check_output_file(out, "--out");
  prepare_retrieval(opts, args.no_cache);
  opts.k = opts.candidates = args.depth;
  opts.metrics = {eval::parse_metric("recall@" + std::to_string(args.depth))};
  opts.keep_run = true;
  const bool quiet = args.quiet;
  const eval::EvalResult result = eval::evaluate(opts, [quiet](const std::string& line) {
    if (!quiet) std::fprintf(stderr, "ragmig mine: %s\n", line.c_str());
  });
  for (const auto& w : result.warnings) std::fprintf(stderr, "ragmig mine: warning: %s\n", w.c_str());
  const double recall = result.report.mean.empty() ? 0 : result.report.mean[0];
  const text::BeirFolder beir = text::read_beir(opts.data_dir);
  eval::Judgments judgments =
      eval::resolve_judgments(text::read_qrels(text::qrels_path(opts.data_dir, opts.split)), beir, nullptr);
  // A blank query has nothing to train on, and the trainer refuses it in a pairs file.
  const auto blank_queries = std::erase_if(judgments.by_query, [&](const auto& judged) {
    const auto q = beir.query_index.find(judged.first);
    return q != beir.query_index.end() && is_blank(beir.queries[static_cast<size_t>(q->second)].text);
  });
  std::string scratch;
  const auto text_of = [&](const std::string& id) -> const std::string& {
    const auto it = beir.corpus.index_of.find(id);
    if (it == beir.corpus.index_of.end())
      throw DataError(text::qrels_path(opts.data_dir, opts.split) + ": unknown corpus id '" + id + "'");
    scratch = text::document_text(beir.corpus.docs[static_cast<size_t>(it->second)]);
    return scratch;
  };
  eval::MineReport report;
  const auto examples = eval::mine_negatives(result.run, judgments, text_of, args.mine, &report);
  if (examples.empty())
    throw DataError(text::qrels_path(opts.data_dir, opts.split) +
                    ": no judged-relevant pair the ranking covers: nothing written");
  write_pairs(out, examples, beir);
  print_summary(args, eval::to_string(opts.retriever), report, blank_queries, recall);
  return kOk;
}

}  // namespace

Command add_mine_command(CLI::App& root) {
  auto args = std::make_shared<MineArgs>();
  eval::EvalOptions& o = args->options;
  o.split = "train";
  CLI::App* sub = root.add_subcommand("mine", torch_command_help("mine"));
  sub->add_option("--data", o.data_dir, "BEIR folder (corpus.jsonl[.gz], queries.jsonl[.gz], qrels/<split>.tsv)")
      ->required();
  sub->add_option("--split", o.split, "qrels split whose queries and positives are mined (never the test split)")
      ->capture_default_str();
  sub->add_option("--out", args->out, "pairs JSONL to write: query, positive, negatives (texts) and their ids")
      ->required();
  sub->add_option("--retriever", args->retriever,
                  "bm25 | dense | hybrid: whose ranking the negatives come from; "
                  "default: dense with --model, else bm25");
  sub->add_option("--model", o.dense.model_dir, "model folder (dense, hybrid), or package:NAME (`ragmig models`)");
  sub->add_option("--dimensions", o.dense.dimensions,
                  "rank with the leading N dimensions of each embedding (a Matryoshka-trained model), as `ragmig eval "
                  "--dimensions`; 0 = the folder's truncate_dim, else all")
      ->capture_default_str();
  sub->add_option("--depth", args->depth, "ranking depth searched for negatives")->capture_default_str();
  sub->add_option("--negatives", args->mine.negatives, "negatives per example, at most")->capture_default_str();
  sub->add_option("--skip-top", args->mine.skip_top, "ranks passed over first (unjudged positives crowd the top)")
      ->capture_default_str();
  sub->add_option("--max-overlap", args->mine.max_overlap,
                  "word-set Jaccard with a positive at which a candidate is a near-duplicate, not a negative")
      ->capture_default_str();
  sub->add_option(
      "--relative-margin", args->mine.relative_margin,
      "positive-aware mining (NV-Retriever): take a candidate only if it scores at least this x |p| below p, "
      "the score of the query's lowest-scored positive, e.g. 0.05; off unless given");
  sub->add_option("--absolute-margin", args->mine.absolute_margin,
                  "positive-aware mining: take a candidate only if it scores at least this below p; off unless given");
  sub->add_option("--max-score", args->mine.max_score,
                  "take no candidate that scores above this (in the retriever's scores; e.g. 0.9 for a cosine): "
                  "most likely an unjudged positive; off unless given");
  sub->add_option("--min-score", args->mine.min_score,
                  "take no candidate that scores below this: too easy to teach anything; off unless given");
  sub->add_option("--bm25", o.bm25_spec, "BM25 spec")->capture_default_str();
  sub->add_option("--fusion", o.fusion_spec, "hybrid fusion: RRF(k=60) or Linear(alpha=0.5)")->capture_default_str();
  add_retrieval_options(sub, o, args->no_cache);
  sub->add_flag("--json", args->json, "print the counts as one JSON object");
  sub->add_flag("--quiet", args->quiet, "no progress lines on stderr");
  sub->footer(
      "Then: ragmig train CONFIG --set data.pairs='\"OUT\"' --set train.hard_negatives=N.\n"
      "Exit codes: 0 done, 2 bad input (message names the file and line), 1 failure.");

  return Command{sub, [args, sub] { return run_mine(*args, *sub); }};
}

}  // namespace ragmig::apps
