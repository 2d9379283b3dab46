// Shared by the eval tests: a tiny BEIR folder written by hand (its BM25 rankings can be read off the
// words), a random-initialised model folder that reads it, and running the real `ragmig eval`.
#pragma once

#include <torch/torch.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/atomic_file.h"
#include "model/dual_encoder.h"
#include "model/model_folder.h"
#include "support/process.h"
#include "support/test_support.h"
#include "support/tiny_bert.h"

namespace ragmig::testing {

// Six documents, four queries. q1 and q2 each share rare words with exactly one relevant document; q3's
// relevant document shares none of its words (nothing relevant is retrieved); q4 is empty text.
inline void write_toy_beir(const std::filesystem::path& dir) {
  std::filesystem::create_directories(dir / "qrels");
  write_file_atomic(dir / "corpus.jsonl",
                    R"({"_id": "d1", "title": "Volcanoes", "text": "lava erupts from volcanoes near the coast"}
{"_id": "d2", "title": "Glaciers", "text": "glaciers carve valleys slowly over centuries"}
{"_id": "d3", "title": "", "text": "coral reefs shelter fish in warm shallow water"}
{"_id": "d4", "title": "Deserts", "text": "dunes move across deserts with the wind"}
{"_id": "d5", "title": "Rivers", "text": "rivers carry sediment to the sea"}
{"_id": "d6", "title": "Forests", "text": "old forests store carbon in wood and soil"}
)");
  write_file_atomic(dir / "queries.jsonl",
                    R"({"_id": "q1", "text": "where does lava erupt"}
{"_id": "q2", "text": "how do glaciers carve valleys"}
{"_id": "q3", "text": "tectonic plate boundaries"}
{"_id": "q4", "text": ""}
)");
  write_file_atomic(dir / "qrels/test.tsv", "query-id\tcorpus-id\tscore\nq1\td1\t2\nq2\td2\t1\nq2\td5\t1\nq3\td4\t1\nq4\td6\t1\n");
}

/// A WordPiece vocabulary covering the toy folder: specials, single letters and their ## forms.
inline std::vector<std::string> toy_vocab() {
  std::vector<std::string> v = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"};
  for (char c = 'a'; c <= 'z'; ++c) v.push_back(std::string(1, c));
  for (char c = 'a'; c <= 'z'; ++c) v.push_back("##" + std::string(1, c));
  for (const char* w : {"lava", "glaciers", "valleys", "carve", "coral", "deserts", "rivers", "forests", "the"}) v.push_back(w);
  return v;
}

/// A random-initialised (seeded) dual encoder saved as a model folder.
inline void write_random_model(const std::filesystem::path& dir, uint64_t seed = 1) {
  torch::manual_seed(seed);
  model::EncoderSpec spec;
  spec.bert = tiny_bert_config(80, 32, 2, 64);
  model::DualEncoder m(spec);
  model::save_model_folder(dir.string(), m, ragmig::text::word_piece_spec(toy_vocab()));
}

inline ProcessResult run_eval(std::vector<std::string> args) {
  args.insert(args.begin(), {RAGMIG_BINARY, "eval"});
  return run_process(args);
}

/// The JSON object that `ragmig eval --json` printed (stdout; progress and warnings are on stderr, which
/// run_process interleaves, so the object is cut out between the outermost braces).
inline nlohmann::json eval_json(const ProcessResult& r) {
  const size_t begin = r.output.find("{\n"), end = r.output.rfind("\n}");
  if (begin == std::string::npos || end == std::string::npos) return nlohmann::json();
  return nlohmann::json::parse(r.output.substr(begin, end - begin + 2));
}

}  // namespace ragmig::testing
