// Reading sweep files: TOML through toml++ (kept out of the headers), every key checked for type and range
// with an error that names the file, table and key, so a bad sweep fails before a single trial is queued.
#include "hpo/sweep_spec.h"

#include <fmt/format.h>

#include <toml++/toml.h>
#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <set>

#include "core/atomic_file.h"
#include "core/error.h"
#include "core/strings.h"
#include "core/toml_names.h"
#include "sched/job.h"
#include "sched/policy.h"

namespace ragmig::hpo {
namespace {

namespace fs = std::filesystem;

constexpr const char* kKinds[] = {"choice", "uniform", "log_uniform", "int"};
constexpr double kMaxExactInt = 9007199254740992.0;  // 2^53: Int bounds live in doubles

// A short rendering of a value for "got ..." in messages.
std::string node_text(const toml::node& n) {
  if (auto v = n.as_integer()) return std::to_string(v->get());
  if (auto v = n.as_floating_point()) return fmt::format("{}", v->get());
  if (auto v = n.as_boolean()) return v->get() ? "true" : "false";
  if (auto v = n.as_string())
    return nlohmann::json(v->get()).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (auto a = n.as_array()) {
    std::string s = "[";
    for (size_t i = 0; i < a->size(); ++i) s += (i ? ", " : "") + node_text(*a->get(i));
    return s + "]";
  }
  return toml_type_name(n);
}

// Errors name the file, the table and the key: "sweep.toml: [sweep] trials: expected ... (got ...)".
class Reader {
 public:
  explicit Reader(std::string source) : source_(std::move(source)) {}

  [[noreturn]] void fail(const std::string& table, const std::string& key, const std::string& what) const {
    throw ConfigError(fmt::format("{}: [{}] {}: {}", source_, table, key, what));
  }
  [[noreturn]] void wrong_type(const std::string& table, const std::string& key, const std::string& expected,
                               const toml::node& n) const {
    const std::string text = node_text(n);
    fail(table, key, fmt::format("expected {} (got {})", expected,
                                 text == toml_type_name(n) ? text : toml_type_name(n) + " " + text));
  }

  void only_keys(const toml::table& t, const std::string& table, std::initializer_list<const char*> known) const {
    for (auto&& [k, v] : t) {
      const std::string key(k.str());
      if (std::none_of(known.begin(), known.end(), [&](const char* x) { return key == x; })) {
        std::string list;
        for (const char* x : known) list += (list.empty() ? "" : ", ") + std::string(x);
        fail(table, key, "unknown key (known: " + list + ")");
      }
    }
  }

  bool get(const toml::table& t, const std::string& table, const char* key, std::string& out) const {
    const toml::node* n = t.get(key);
    if (!n) return false;
    if (!n->is_string()) wrong_type(table, key, "a string", *n);
    out = n->as_string()->get();
    return true;
  }
  bool get(const toml::table& t, const std::string& table, const char* key, int64_t& out, int64_t min) const {
    const toml::node* n = t.get(key);
    if (!n) return false;
    if (!n->is_integer()) wrong_type(table, key, fmt::format("an integer >= {}", min), *n);
    out = n->as_integer()->get();
    if (out < min) fail(table, key, fmt::format("expected an integer >= {} (got {})", min, out));
    return true;
  }
  bool get(const toml::table& t, const std::string& table, const char* key, double& out) const {
    const toml::node* n = t.get(key);
    if (!n) return false;
    if (!n->is_number()) wrong_type(table, key, "a number", *n);
    out = n->is_integer() ? static_cast<double>(n->as_integer()->get()) : n->as_floating_point()->get();
    return true;
  }
  bool get(const toml::table& t, const std::string& table, const char* key, std::vector<std::string>& out) const {
    const toml::node* n = t.get(key);
    if (!n) return false;
    const toml::array* a = n->as_array();
    if (!a) wrong_type(table, key, "an array of strings", *n);
    out.clear();
    for (const toml::node& e : *a) {
      if (!e.is_string()) wrong_type(table, key, "an array of strings", e);
      out.push_back(e.as_string()->get());
    }
    return true;
  }

  const std::string& source() const { return source_; }

 private:
  std::string source_;
};

// "section.key" (or deeper), made of [A-Za-z0-9_-] words, so that it reads back unchanged from `--set`.
bool is_config_key(const std::string& key) {
  if (key.find('.') == std::string::npos) return false;
  bool word = false;
  for (char c : key) {
    if (c == '.') {
      if (!word) return false;
      word = false;
    } else if (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-') {
      word = true;
    } else {
      return false;
    }
  }
  return word;
}

bool is_name(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
  });
}

// [low, high] as two numbers; `integers` demands TOML integers.
std::pair<double, double> read_bounds(const Reader& r, const std::string& label, const char* kind, const toml::node& n,
                                      bool integers) {
  const toml::array* a = n.as_array();
  const std::string expected = integers ? "two integers [low, high]" : "two numbers [low, high]";
  if (!a || a->size() != 2) r.fail("space", label, fmt::format("{} needs {} (got {})", kind, expected, node_text(n)));
  double v[2];
  for (size_t i = 0; i < 2; ++i) {
    const toml::node& e = *a->get(i);
    if (integers ? !e.is_integer() : !e.is_number())
      r.fail("space", label, fmt::format("{} needs {} (got {})", kind, expected, node_text(n)));
    v[i] = e.is_integer() ? static_cast<double>(e.as_integer()->get()) : e.as_floating_point()->get();
    if (!std::isfinite(v[i]) || std::fabs(v[i]) > kMaxExactInt)
      r.fail("space", label, fmt::format("{} needs finite bounds of at most 2^53 (got {})", kind, node_text(n)));
  }
  return {v[0], v[1]};
}

Param read_param(const Reader& r, const std::string& key, const toml::table& t) {
  const std::string label = "\"" + key + "\"";
  const std::string kinds = "choice, uniform, log_uniform, int";
  std::vector<std::string> given;
  for (auto&& [k, v] : t) {
    const std::string name(k.str());
    if (std::find(std::begin(kKinds), std::end(kKinds), name) == std::end(kKinds))
      r.fail("space", label, fmt::format("unknown kind \"{}\" (expected one of {})", name, kinds));
    given.push_back(name);
  }
  if (given.size() != 1)
    r.fail("space", label,
           given.empty() ? "needs one of " + kinds + ", e.g. { uniform = [0.02, 0.1] }"
                         : fmt::format("gives {} and {}; give exactly one of {}", given[0], given[1], kinds));
  Param p;
  p.key = key;
  const std::string& kind = given[0];
  const toml::node& n = *t.get(kind);
  if (kind == "choice") {
    p.kind = ParamKind::Choice;
    const toml::array* a = n.as_array();
    if (!a || a->empty())
      r.fail("space", label, fmt::format("choice needs a non-empty array of values (got {})", node_text(n)));
    for (const toml::node& e : *a) {
      nlohmann::json v;
      if (auto s = e.as_string())
        v = s->get();
      else if (auto i = e.as_integer())
        v = i->get();
      else if (auto b = e.as_boolean())
        v = b->get();
      else if (auto f = e.as_floating_point(); f && std::isfinite(f->get()))
        v = f->get();
      else
        r.fail("space", label,
               fmt::format("choice values must be numbers, strings or booleans (got {})", node_text(e)));
      if (std::find(p.choices.begin(), p.choices.end(), v) != p.choices.end())
        r.fail("space", label, fmt::format("choice lists {} twice", node_text(e)));
      p.choices.push_back(std::move(v));
    }
  } else if (kind == "int") {
    p.kind = ParamKind::Int;
    std::tie(p.low, p.high) = read_bounds(r, label, "int", n, true);
    if (p.low > p.high) r.fail("space", label, fmt::format("int needs low <= high (got {})", node_text(n)));
  } else {
    const bool log = kind == "log_uniform";
    p.kind = log ? ParamKind::LogUniform : ParamKind::Uniform;
    std::tie(p.low, p.high) = read_bounds(r, label, kind.c_str(), n, false);
    if (log && !(0 < p.low && p.low < p.high))
      r.fail("space", label, fmt::format("log_uniform needs 0 < low < high (got {})", node_text(n)));
    if (!(p.low < p.high)) r.fail("space", label, fmt::format("{} needs low < high (got {})", kind, node_text(n)));
  }
  return p;
}

// Quoted ("train.lr" = {..}), dotted (train.lr = {..}) and nested ([space.train] lr = {..}) keys all
// flatten to "train.lr". A table is a parameter when it is inline or names a kind; otherwise a namespace.
void read_space(const Reader& r, const toml::table& t, const std::string& prefix, std::vector<Param>& out) {
  for (auto&& [k, v] : t) {
    const std::string key = prefix.empty() ? std::string(k.str()) : prefix + "." + std::string(k.str());
    const std::string label = "\"" + key + "\"";
    const toml::table* sub = v.as_table();
    if (!sub) r.wrong_type("space", label, "an inline table like { uniform = [low, high] }", v);
    const bool is_param = sub->is_inline() || std::any_of(std::begin(kKinds), std::end(kKinds),
                                                          [&](const char* kind) { return sub->contains(kind); });
    if (!is_param) {
      read_space(r, *sub, key, out);
      continue;
    }
    if (!is_config_key(key)) r.fail("space", label, "expected a `ragmig train` config key like \"train.lr\"");
    out.push_back(read_param(r, key, *sub));
  }
}

SearchSpace parse_search_space(const Reader& r, const toml::table& t) {
  SearchSpace space;
  read_space(r, t, "", space.params);
  if (space.params.empty())
    r.fail("space", "", "expected at least one parameter, e.g. \"train.lr\" = { log_uniform = [1e-4, 3e-3] }");
  std::sort(space.params.begin(), space.params.end(), [](const Param& a, const Param& b) { return a.key < b.key; });
  for (size_t i = 1; i < space.params.size(); ++i)
    if (space.params[i].key == space.params[i - 1].key)
      r.fail("space", "\"" + space.params[i].key + "\"", "given twice");
  return space;
}

const toml::table& need_table(const Reader& r, const toml::table& root, const char* name, const char* why) {
  const toml::node* n = root.get(name);
  if (!n) throw ConfigError(fmt::format("{}: [{}]: required table missing ({})", r.source(), name, why));
  return *n->as_table();  // every top-level entry was checked to be a table
}

std::string resolve_base(const std::string& sweep_path, const std::string& base) {
  const fs::path b(base);
  if (b.is_absolute()) return base;
  std::error_code ec;
  fs::path dir = fs::absolute(sweep_path.empty() ? fs::path("sweep.toml") : fs::path(sweep_path), ec).parent_path();
  if (ec) dir = fs::path(sweep_path).parent_path();
  return (dir / b).lexically_normal().string();
}

void read_sweep_table(const Reader& r, const toml::table& t, SweepSpec& spec) {
  r.only_keys(t, "sweep",
              {"name", "base", "set", "search", "trials", "seed", "slots", "policy", "priority", "min_batch_fraction"});
  spec.name = fs::path(spec.path).stem().string();
  r.get(t, "sweep", "name", spec.name);
  if (!is_name(spec.name))
    r.fail("sweep", "name", fmt::format("expected letters, digits, '.', '_' or '-' (got \"{}\")", spec.name));
  if (!r.get(t, "sweep", "base", spec.base))
    r.fail("sweep", "base", "required: the training config every trial starts from");
  if (spec.base.empty()) r.fail("sweep", "base", "expected a path to a training config (got \"\")");
  spec.base = resolve_base(spec.path, spec.base);
  r.get(t, "sweep", "set", spec.set);
  std::set<std::string> set_keys;
  for (const std::string& s : spec.set) {
    const auto eq = s.find('=');
    const std::string key = s.substr(0, eq);
    if (eq == std::string::npos || !is_config_key(key))
      r.fail("sweep", "set", fmt::format("expected \"section.key=value\" entries (got \"{}\")", s));
    if (!set_keys.insert(key).second) r.fail("sweep", "set", fmt::format("sets \"{}\" twice", key));
  }
  std::string search = to_string(spec.search);
  r.get(t, "sweep", "search", search);
  try {
    spec.search = parse_search_kind(search);
  } catch (const ConfigError&) {
    r.fail("sweep", "search", fmt::format("expected \"grid\" or \"random\" (got \"{}\")", search));
  }
  const bool has_trials = r.get(t, "sweep", "trials", spec.trials, 0);
  if (spec.search == SearchKind::Random && !has_trials)
    r.fail("sweep", "trials", "required for search = \"random\": the number of trials, >= 1");
  if (spec.search == SearchKind::Random && spec.trials < 1)
    r.fail("sweep", "trials", fmt::format("expected an integer >= 1 for search = \"random\" (got {})", spec.trials));
  if (spec.trials > kMaxGridSize)
    r.fail("sweep", "trials", fmt::format("expected at most {} (got {})", kMaxGridSize, spec.trials));
  int64_t seed = 0;
  if (r.get(t, "sweep", "seed", seed, 0)) spec.seed = static_cast<uint64_t>(seed);
  r.get(t, "sweep", "slots", spec.slots);
  try {
    sched::parse_need(spec.slots);
  } catch (const ConfigError& e) {
    r.fail("sweep", "slots", e.what());
  }
  r.get(t, "sweep", "policy", spec.policy);
  try {
    sched::make_policy(spec.policy);
  } catch (const ConfigError& e) {
    r.fail("sweep", "policy", e.what());
  }
  r.get(t, "sweep", "priority", spec.priority, INT64_MIN);
  if (r.get(t, "sweep", "min_batch_fraction", spec.min_batch_fraction) &&
      !(spec.min_batch_fraction > 0 && spec.min_batch_fraction <= 1))
    r.fail("sweep", "min_batch_fraction",
           fmt::format("expected a share of the batch in (0, 1] (got {})", spec.min_batch_fraction));
}

void read_eval_table(const Reader& r, const toml::table& t, SweepEval& eval) {
  r.only_keys(t, "eval", {"data", "split", "metric", "max_queries", "fusion", "baselines", "dimensions"});
  if (!r.get(t, "eval", "data", eval.data)) r.fail("eval", "data", "required: the BEIR folder trials are evaluated on");
  if (eval.data.empty()) r.fail("eval", "data", "expected a BEIR folder (got \"\")");
  r.get(t, "eval", "split", eval.split);
  if (eval.split.empty()) r.fail("eval", "split", "expected a split name like \"test\" (got \"\")");
  r.get(t, "eval", "metric", eval.metric);
  const auto at = eval.metric.find('@');
  const std::string k = at == std::string::npos ? "" : eval.metric.substr(at + 1);
  if (at == 0 || !whole_number(k, 1))
    r.fail("eval", "metric", fmt::format("expected name@k with k >= 1, like \"ndcg@10\" (got \"{}\")", eval.metric));
  r.get(t, "eval", "max_queries", eval.max_queries, 0);
  if (r.get(t, "eval", "fusion", eval.fusion) && eval.fusion.empty())
    r.fail("eval", "fusion", "expected \"auto\" or a fusion like \"RRF(k=60)\" (got \"\"; leave the key out for none)");
  r.get(t, "eval", "dimensions", eval.dimensions, 0);
  r.get(t, "eval", "baselines", eval.baselines);
  std::set<std::string> seen;
  for (const std::string& b : eval.baselines) {
    if (b != "bm25" && b != "zero-shot")
      r.fail("eval", "baselines", fmt::format("expected \"bm25\" or \"zero-shot\" entries (got \"{}\")", b));
    if (!seen.insert(b).second) r.fail("eval", "baselines", fmt::format("names \"{}\" twice", b));
  }
}

void read_asha_table(const Reader& r, const toml::table& t, SweepAsha& asha) {
  r.only_keys(t, "asha", {"min_steps", "reduction_factor", "queries", "passages", "order"});
  r.get(t, "asha", "min_steps", asha.min_steps, 0);
  if (r.get(t, "asha", "reduction_factor", asha.reduction_factor) &&
      !(std::isfinite(asha.reduction_factor) && asha.reduction_factor > 1))
    r.fail("asha", "reduction_factor", fmt::format("expected a number > 1 (got {})", asha.reduction_factor));
  r.get(t, "asha", "queries", asha.queries, 1);
  r.get(t, "asha", "passages", asha.passages, 0);
  r.get(t, "asha", "order", asha.order);
  if (asha.order != "trial" && asha.order != "arrival")
    r.fail("asha", "order", fmt::format("expected \"trial\" or \"arrival\" (got \"{}\")", asha.order));
}

}  // namespace

SweepSpec parse_sweep(const std::string& toml_text, const std::string& path) {
  const Reader r(path);
  toml::table root;
  try {
    root = toml::parse(toml_text, path);
  } catch (const toml::parse_error& e) {
    throw ConfigError(
        fmt::format("{}:{}:{}: {}", path, e.source().begin.line, e.source().begin.column, e.description()));
  }
  for (auto&& [k, v] : root) {
    const std::string name(k.str());
    // [alerts] belongs to the scheduler's monitor (monitor/alert_config.h) and [slurm] to the Slurm backend
    // (exec/slurm_config.h); each reads it from the same file.
    if (name != "sweep" && name != "space" && name != "eval" && name != "asha" && name != "alerts" && name != "slurm")
      throw ConfigError(fmt::format("{}: unknown {} \"{}\" (expected the tables [sweep], [space], [eval], [asha], [alerts], [slurm])",
                                    path, v.is_table() ? "table" : "key", name));
    if (!v.is_table())
      throw ConfigError(fmt::format("{}: {}: expected a table [{}] (got {})", path, name, name, toml_type_name(v)));
  }
  SweepSpec spec;
  spec.path = path;
  read_sweep_table(r, need_table(r, root, "sweep", "name, base, search, trials, ..."), spec);
  spec.space = parse_search_space(r, need_table(r, root, "space", "the parameters to search"));
  read_eval_table(r, need_table(r, root, "eval", "the data trials are evaluated on"), spec.eval);
  if (const toml::node* asha = root.get("asha")) read_asha_table(r, *asha->as_table(), spec.asha);

  for (const Param& p : spec.space.params) {
    if (p.key == "train.max_steps")
      r.fail("space", "\"train.max_steps\"", "cannot be searched: it is every trial's budget (set it in [sweep] set)");
    for (const std::string& s : spec.set)
      if (s.substr(0, s.find('=')) == p.key)
        r.fail("space", "\"" + p.key + "\"", "is also fixed in [sweep] set; give it in one place");
  }
  if (spec.search == SearchKind::Grid) {
    try {
      sample(spec.space, spec.search, spec.trials, spec.seed);
    } catch (const ConfigError& e) {
      throw ConfigError(path + ": " + e.what());
    }
  }
  return spec;
}

SweepSpec read_sweep_file(const std::string& path) {
  return parse_sweep(read_file(path), path);
}

nlohmann::json to_json(const SweepSpec& spec) {
  nlohmann::json space = nlohmann::json::array();
  for (const Param& p : spec.space.params) {
    nlohmann::json j = {{"key", p.key}, {"kind", to_string(p.kind)}};
    if (p.kind == ParamKind::Choice)
      j["choices"] = p.choices;
    else if (p.kind == ParamKind::Int)
      j["low"] = static_cast<int64_t>(p.low), j["high"] = static_cast<int64_t>(p.high);
    else
      j["low"] = p.low, j["high"] = p.high;
    space.push_back(std::move(j));
  }
  nlohmann::json eval = {{"data", spec.eval.data},
                         {"split", spec.eval.split},
                         {"metric", spec.eval.metric},
                         {"max_queries", spec.eval.max_queries}};
  // Only when given: a state folder pinned before these keys existed still matches its sweep file.
  if (!spec.eval.fusion.empty()) eval["fusion"] = spec.eval.fusion;
  if (!spec.eval.baselines.empty()) eval["baselines"] = spec.eval.baselines;
  if (spec.eval.dimensions > 0) eval["dimensions"] = spec.eval.dimensions;
  nlohmann::json out = {
      {"name", spec.name},
      {"base", spec.base},
      {"set", spec.set},
      {"search", to_string(spec.search)},
      {"trials", spec.trials},
      {"seed", spec.seed},
      {"slots", spec.slots},
      {"policy", spec.policy},
      {"space", std::move(space)},
      {"eval", std::move(eval)},
      {"asha",
       {{"min_steps", spec.asha.min_steps},
        {"reduction_factor", spec.asha.reduction_factor},
        {"queries", spec.asha.queries},
        {"passages", spec.asha.passages},
        {"order", spec.asha.order}}},
  };
  if (spec.min_batch_fraction > 0) out["min_batch_fraction"] = spec.min_batch_fraction;
  return out;
}

}  // namespace ragmig::hpo
