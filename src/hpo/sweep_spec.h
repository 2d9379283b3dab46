// The sweep file of `ragmig batch`: which training config to start from, what to vary and how, how trials
// are evaluated and stopped early, and how they are scheduled. Read and validated here, before any job runs.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "hpo/search_space.h"

namespace ragmig::hpo {

struct SweepEval {
  std::string data;  ///< BEIR folder, as written (relative to the working directory, like data.beir)
  std::string split = "test";
  std::string metric = "ndcg@10";  ///< name@k, k >= 1; the caller checks the name against the eval module's
  int64_t max_queries = 0;         ///< 0 = all
  /// "": every finished model is evaluated alone. Otherwise a fusion of `ragmig eval --fusion` ("auto",
  /// "RRF(k=60)", "Linear(alpha=0.5)"; the caller checks it): the same evaluation also fuses the model with
  /// BM25 ("auto": chosen on training queries, never the evaluated split) and reports both.
  std::string fusion;
  /// Evaluated once beside the trials, the same way: "bm25", and "zero-shot" (the base config's model.init
  /// before any training). Each at most once, in the order given.
  std::vector<std::string> baselines;
  /// `ragmig eval --dimensions` of every model and the zero-shot baseline: the leading N dimensions of each
  /// embedding (a Matryoshka sweep scored at the size it will serve); 0 = each folder's own size.
  int64_t dimensions = 0;
};

struct SweepAsha {
  int64_t min_steps = 0;        ///< 0 = no early stopping
  double reduction_factor = 3;  ///< > 1
  int64_t queries = 300;        ///< rung evaluations: the first N queries of eval.split (>= 1)
  int64_t passages = 2000;  ///< rung evaluations: the queries' relevant passages plus others up to this many (0 = all)
  /// "trial": a trial's decision at a rung waits until every earlier trial (by id) has reported there or never
  /// will, and is taken over their values only, so the same sweep and seed give the same decisions under any
  /// machine load. "arrival": decided at once over whoever reported first (Ray Tune's ASHA; faster, not
  /// reproducible).
  std::string order = "trial";
};

struct SweepSpec {
  std::string path;              ///< the sweep file as given
  std::string name;              ///< [sweep] name; default: the file name without extension. [A-Za-z0-9._-]+
  std::string base;              ///< [sweep] base, resolved against the sweep file's folder unless absolute
  std::vector<std::string> set;  ///< [sweep] set: "section.key=value" overrides for every trial
  SearchKind search = SearchKind::Random;
  int64_t trials = 0;  ///< random: >= 1 (required); grid: 0 = all combinations
  uint64_t seed = 0;
  std::string slots = "cpu:1";  ///< per trial, a sched::Need string
  std::string policy = "fifo";  ///< a sched policy spec
  /// A policy with +dynbatch may start a GPU trial at down to this share of its train.batch_size on a slice
  /// with less memory than `slots` names (sched/dynamic_batch.h); 0 = trials keep their batch.
  double min_batch_fraction = 0;
  int64_t priority = 0;         ///< of the trial jobs
  SearchSpace space;            ///< [space]
  SweepEval eval;               ///< [eval]
  SweepAsha asha;               ///< [asha] (optional)
};

/// Reads and validates a sweep file. Unknown tables or keys, wrong types, missing required keys: ConfigError
/// "FILE: [table] key: what was expected (got ...)"; TOML syntax errors: ConfigError "FILE:LINE:COL: ...";
/// unreadable: IoError. A [space] key also set in [sweep] set, or "train.max_steps" in [space] (it is the
/// ASHA budget), is a ConfigError. A grid is expanded once here, so its errors show up at read time.
SweepSpec read_sweep_file(const std::string& path);
/// The same from text; `path` names it in errors and is what `base` resolves against.
SweepSpec parse_sweep(const std::string& toml_text, const std::string& path);

/// Everything that determines the trials (name, base, set, search, trials, seed, space, slots, policy, eval,
/// asha) as JSON, keys sorted; a resumed sweep compares it with the one it started with. Leaves out path
/// (the same sweep may be reached by another path) and priority (changing it changes no result).
nlohmann::json to_json(const SweepSpec& spec);

}  // namespace ragmig::hpo
