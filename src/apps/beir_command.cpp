// `ragmig beir PAIRS --out DIR [--test-queries N]`: a BEIR folder from a pairs file (text/beir_from_pairs.h), so
// that data that comes as pairs (sentence-transformers' datasets, MS MARCO's triples) is evaluated (`ragmig eval`),
// mined (`ragmig mine`) and swept over (`[eval] data` of `ragmig batch`) like any BEIR data set.
#include <fmt/format.h>

#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>

#include "apps/command.h"
#include "core/error.h"
#include "text/beir_from_pairs.h"

namespace ragmig::apps {
namespace {

struct BeirArgs {
  std::string pairs, out;
  int64_t test_queries = 0;
  uint64_t seed = text::kTestSplitSeed;
  bool json = false;
};

}  // namespace

Command add_beir_command(CLI::App& root) {
  auto args = std::make_shared<BeirArgs>();
  CLI::App* sub = root.add_subcommand(
      "beir", "Make a BEIR folder from a pairs file: its texts as corpus and queries, its pairs as qrels, a test split");
  sub->add_option("pairs", args->pairs,
                  "pairs file, as `ragmig train`'s data.pairs reads it: JSONL (ragmig's, FlagEmbedding's or "
                  "sentence-transformers' column names) or TSV query<TAB>positive[<TAB>negative...]")
      ->required();
  sub->add_option("--out", args->out, "the BEIR folder to make (it must not exist)")->required();
  sub->add_option("--test-queries", args->test_queries,
                  "queries held out as the test split (qrels/test.tsv), carved by a seeded hash of their ids; the rest "
                  "are the train split (qrels/train.tsv, pairs/train.jsonl)")
      ->capture_default_str();
  sub->add_option("--seed", args->seed, "seed of the test split's carve")->capture_default_str();
  sub->add_flag("--json", args->json, "print the counts as one JSON object");
  sub->footer(
      "Writes DIR/corpus.jsonl (every distinct positive and negative, ids d1, d2, ...), DIR/queries.jsonl (the rows'\n"
      "query_id, else q1, q2, ... by distinct text), DIR/qrels/train.tsv and test.tsv (each pair at score 1), and\n"
      "DIR/pairs/train.jsonl (the train rows with their ids and negatives), all or nothing. Then:\n"
      "  ragmig eval --data DIR --split test --retriever dense --model M\n"
      "  ragmig train CONFIG --set data.pairs='\"DIR/pairs/train.jsonl\"' --set data.split='\"train\"' \\\n"
      "    --set data.beir='\"DIR\"' --set eval.split='\"test\"'   (trains on the pairs, evaluates on DIR)\n"
      "  a sweep's [eval] data = \"DIR\"\n"
      "Exit codes: 0 done, 2 bad input (message names the file and line), 1 failure.");
  return Command{sub, [args]() -> int {
                   if (args->test_queries < 0) throw ConfigError("--test-queries must be >= 0");
                   if (std::filesystem::exists(args->out))
                     throw ConfigError("--out " + args->out + " exists: give a folder to make");
                   const auto examples = text::read_pairs(args->pairs);
                   const text::PairsFolder folder =
                       text::beir_from_pairs(examples, args->test_queries, args->seed, args->pairs);
                   text::write_pairs_folder(folder, args->out);
                   const nlohmann::json counts = {{"out", args->out},
                                                  {"examples", examples.size()},
                                                  {"documents", folder.corpus.size()},
                                                  {"queries", folder.queries.size()},
                                                  {"train_qrels", folder.train.size()},
                                                  {"test_qrels", folder.test.size()},
                                                  {"train_pairs", folder.train_pairs.size()}};
                   if (args->json) {
                     fmt::print("{}\n", counts.dump(2));
                     return kOk;
                   }
                   fmt::print("ragmig beir: {} examples -> {}: {} documents, {} queries; qrels/train.tsv {} pairs, "
                              "qrels/test.tsv {}; pairs/train.jsonl {} rows\n",
                              examples.size(), args->out, folder.corpus.size(), folder.queries.size(),
                              folder.train.size(), folder.test.size(), folder.train_pairs.size());
                   return kOk;
                 }};
}

}  // namespace ragmig::apps
