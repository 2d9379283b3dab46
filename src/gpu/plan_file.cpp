// Plan JSON in both directions. The reader goes through small typed getters so that every error names the
// exact key path; it then replays the steps so a hand-edited plan that would not reach its target, or
// would destroy a busy instance, is refused before anything touches a GPU.
#include "gpu/plan_file.h"

#include "core/atomic_file.h"
#include "core/error.h"
#include "core/json_errors.h"

namespace ragmig::gpu {
namespace {

using nlohmann::json;

json instance_json(const GpuCatalog& gpu, const CurrentInstance& inst) {
  json j = {{"instance", to_string(gpu, inst.placement)}, {"busy", inst.busy}};
  if (inst.gi_id >= 0) j["gi"] = inst.gi_id;
  return j;
}

json step_json(const GpuCatalog& gpu, int gpu_index, const MigStep& step) {
  json j = {{"op", to_string(step.kind)}};
  if (step.kind != StepKind::EnableMig) j["instance"] = to_string(gpu, step.placement);
  if (step.kind == StepKind::CreateGpuInstance) {
    j["profile_id"] = gpu.profiles[static_cast<size_t>(step.placement.profile)].id;
  }
  if (step.gi_id >= 0) j["gi"] = step.gi_id;
  j["commands"] = nvidia_smi_commands(gpu, gpu_index, step);  // for people reading the plan; not read back
  return j;
}

class Reader {
 public:
  explicit Reader(std::string source) : source_(std::move(source)) {}

  [[noreturn]] void fail(const std::string& path, const std::string& what) const {
    throw DataError(source_ + ": " + path + ": " + what);
  }
  const json& get(const json& obj, const std::string& path, const char* key) const {
    if (!obj.is_object()) fail(path, "expected an object");
    auto it = obj.find(key);
    if (it == obj.end()) fail(join(path, key), "missing");
    return *it;
  }
  bool has(const json& obj, const char* key) const { return obj.is_object() && obj.contains(key); }
  int64_t get_int(const json& obj, const std::string& path, const char* key) const {
    const json& v = get(obj, path, key);
    if (!v.is_number_integer()) fail(join(path, key), "expected an integer, got " + std::string(v.type_name()));
    return v.get<int64_t>();
  }
  bool get_bool(const json& obj, const std::string& path, const char* key) const {
    const json& v = get(obj, path, key);
    if (!v.is_boolean()) fail(join(path, key), "expected true or false, got " + std::string(v.type_name()));
    return v.get<bool>();
  }
  std::string get_string(const json& obj, const std::string& path, const char* key) const {
    const json& v = get(obj, path, key);
    if (!v.is_string()) fail(join(path, key), "expected a string, got " + std::string(v.type_name()));
    return v.get<std::string>();
  }
  const json& get_array(const json& obj, const std::string& path, const char* key) const {
    const json& v = get(obj, path, key);
    if (!v.is_array()) fail(join(path, key), "expected an array, got " + std::string(v.type_name()));
    return v;
  }
  // Runs `parse`, turning the ConfigError of a bad spec string into a DataError at `path`.
  template <typename Fn>
  auto spec(const std::string& path, Fn&& parse) const {
    try {
      return parse();
    } catch (const ConfigError& e) {
      fail(path, e.what());
    }
  }
  static std::string join(const std::string& path, const char* key) { return path.empty() ? key : path + "." + key; }
  static std::string at(const std::string& path, size_t i) { return path + "[" + std::to_string(i) + "]"; }

 private:
  std::string source_;
};

GpuPlan read_gpu(const Reader& r, const json& g, const std::string& path, size_t demand_count) {
  GpuPlan plan;
  plan.index = static_cast<int>(r.get_int(g, path, "index"));
  if (plan.index < 0) r.fail(Reader::join(path, "index"), "expected a GPU index of 0 or more");
  const std::string model = r.get_string(g, path, "gpu");
  plan.catalog = find_gpu_catalog(model);
  if (!plan.catalog) r.fail(Reader::join(path, "gpu"), "unknown GPU model '" + model + "'");
  const GpuCatalog& gpu = *plan.catalog;
  if (r.has(g, "device_name")) plan.device_name = r.get_string(g, path, "device_name");
  if (r.has(g, "uuid")) plan.uuid = r.get_string(g, path, "uuid");
  plan.mig_enabled = r.get_bool(g, path, "mig_enabled");

  const std::string cur_path = Reader::join(path, "current");
  const json& current = r.get_array(g, path, "current");
  for (size_t i = 0; i < current.size(); ++i) {
    const std::string p = Reader::at(cur_path, i);
    CurrentInstance inst;
    const std::string spec = r.get_string(current[i], p, "instance");
    inst.placement = r.spec(Reader::join(p, "instance"), [&] { return parse_placement(gpu, spec); });
    inst.busy = r.get_bool(current[i], p, "busy");
    if (r.has(current[i], "gi")) inst.gi_id = static_cast<int>(r.get_int(current[i], p, "gi"));
    plan.current.push_back(inst);
  }
  const std::string target = r.get_string(g, path, "target");
  plan.target = r.spec(Reader::join(path, "target"), [&] { return parse_layout(gpu, target); });

  const std::string steps_path = Reader::join(path, "steps");
  const json& steps = r.get_array(g, path, "steps");
  for (size_t i = 0; i < steps.size(); ++i) {
    const std::string p = Reader::at(steps_path, i);
    MigStep step;
    const std::string op = r.get_string(steps[i], p, "op");
    if (!parse_step_kind(op, &step.kind)) {
      r.fail(Reader::join(p, "op"), "expected enable_mig, destroy or create, got '" + op + "'");
    }
    if (step.kind != StepKind::EnableMig) {
      const std::string spec = r.get_string(steps[i], p, "instance");
      step.placement = r.spec(Reader::join(p, "instance"), [&] { return parse_placement(gpu, spec); });
    }
    if (r.has(steps[i], "gi")) step.gi_id = static_cast<int>(r.get_int(steps[i], p, "gi"));
    plan.steps.push_back(step);
  }
  const bool enables = !plan.steps.empty() && plan.steps.front().kind == StepKind::EnableMig;
  if (!plan.mig_enabled && !enables && !plan.steps.empty()) {
    r.fail(steps_path, "the GPU's MIG mode is off, so the steps must begin with enable_mig");
  }
  const StepOutcome outcome = simulate_steps(gpu, plan.current, plan.steps);
  if (!outcome.error.empty()) {
    r.fail(outcome.failed_step >= 0 ? Reader::at(steps_path, static_cast<size_t>(outcome.failed_step)) : cur_path,
           outcome.error);
  }
  if (outcome.layout != plan.target) {
    r.fail(steps_path, "the steps lead to '" + to_string(gpu, outcome.layout) + "', not to the target '" +
                           to_string(gpu, plan.target) + "'");
  }

  if (r.has(g, "assignments")) {
    const std::string a_path = Reader::join(path, "assignments");
    const json& assignments = r.get_array(g, path, "assignments");
    for (size_t i = 0; i < assignments.size(); ++i) {
      const std::string p = Reader::at(a_path, i);
      Assignment a;
      a.demand = static_cast<int>(r.get_int(assignments[i], p, "demand"));
      if (a.demand < 0 || static_cast<size_t>(a.demand) >= demand_count) {
        r.fail(Reader::join(p, "demand"), "expected the index of one of the " + std::to_string(demand_count) + " demands");
      }
      const std::string spec = r.get_string(assignments[i], p, "instance");
      a.placement = r.spec(Reader::join(p, "instance"), [&] { return parse_placement(gpu, spec); });
      if (std::find(plan.target.begin(), plan.target.end(), a.placement) == plan.target.end()) {
        r.fail(Reader::join(p, "instance"), "names an instance that is not in the target layout");
      }
      plan.assignments.push_back(a);
    }
  }
  if (r.has(g, "throughput")) plan.throughput = static_cast<int>(r.get_int(g, path, "throughput"));
  if (r.has(g, "fragmentation")) plan.fragmentation = static_cast<int>(r.get_int(g, path, "fragmentation"));
  return plan;
}

}  // namespace

nlohmann::json plan_to_json(const PartitionPlan& plan) {
  json gpus = json::array();
  for (const auto& g : plan.gpus) {
    const GpuCatalog& gpu = *g.catalog;
    json current = json::array();
    for (const auto& inst : g.current) current.push_back(instance_json(gpu, inst));
    json steps = json::array();
    for (const auto& s : g.steps) steps.push_back(step_json(gpu, g.index, s));
    json assignments = json::array();
    for (const auto& a : g.assignments) {
      assignments.push_back({{"demand", a.demand},
                             {"job", what_of(plan.demands[static_cast<size_t>(a.demand)])},
                             {"instance", to_string(gpu, a.placement)}});
    }
    gpus.push_back({{"index", g.index},
                    {"gpu", gpu.name},
                    {"device_name", g.device_name},
                    {"uuid", g.uuid},
                    {"mig_enabled", g.mig_enabled},
                    {"current", current},
                    {"target", to_string(gpu, g.target)},
                    {"target_mix", to_string(gpu, mix_of(g.target))},
                    {"steps", steps},
                    {"assignments", assignments},
                    {"throughput", g.throughput},
                    {"fragmentation", g.fragmentation}});
  }
  json unplaced = json::array();
  for (const auto& u : plan.unplaced) {
    unplaced.push_back({{"demand", u.demand},
                        {"job", what_of(plan.demands[static_cast<size_t>(u.demand)])},
                        {"count", u.count},
                        {"reason", u.reason}});
  }
  return {{"format", kPlanFormat},  {"version", kPlanVersion}, {"demand", to_string(plan.demands)},
          {"complete", plan.complete()}, {"gpus", gpus},     {"unplaced", unplaced},
          {"notes", plan.notes}};
}

PartitionPlan plan_from_json(const nlohmann::json& j, const std::string& source) {
  Reader r(source);
  if (!j.is_object()) r.fail("(top level)", "expected a JSON object");
  const std::string format = r.get_string(j, "", "format");
  if (format != kPlanFormat) r.fail("format", "expected \"" + std::string(kPlanFormat) + "\", got \"" + format + "\"");
  const int64_t version = r.get_int(j, "", "version");
  if (version != kPlanVersion) {
    r.fail("version", "this ragmig reads version " + std::to_string(kPlanVersion) + ", got " + std::to_string(version));
  }
  PartitionPlan plan;
  const std::string demand = r.get_string(j, "", "demand");
  plan.demands = r.spec("demand", [&] { return parse_demands(demand); });
  const json& gpus = r.get_array(j, "", "gpus");
  for (size_t i = 0; i < gpus.size(); ++i) {
    plan.gpus.push_back(read_gpu(r, gpus[i], Reader::at("gpus", i), plan.demands.size()));
    for (size_t k = 0; k + 1 < plan.gpus.size(); ++k) {
      if (plan.gpus[k].index == plan.gpus.back().index) {
        r.fail(Reader::at("gpus", i) + ".index", "GPU " + std::to_string(plan.gpus.back().index) + " appears twice");
      }
    }
  }
  if (r.has(j, "unplaced")) {
    const json& unplaced = r.get_array(j, "", "unplaced");
    for (size_t i = 0; i < unplaced.size(); ++i) {
      const std::string p = Reader::at("unplaced", i);
      Unplaced u;
      u.demand = static_cast<int>(r.get_int(unplaced[i], p, "demand"));
      if (u.demand < 0 || static_cast<size_t>(u.demand) >= plan.demands.size()) {
        r.fail(p + ".demand", "expected the index of one of the " + std::to_string(plan.demands.size()) + " demands");
      }
      u.count = static_cast<int>(r.get_int(unplaced[i], p, "count"));
      if (r.has(unplaced[i], "reason")) u.reason = r.get_string(unplaced[i], p, "reason");
      plan.unplaced.push_back(u);
    }
  }
  if (r.has(j, "notes")) {
    const json& notes = r.get_array(j, "", "notes");
    for (size_t i = 0; i < notes.size(); ++i) {
      if (!notes[i].is_string()) r.fail(Reader::at("notes", i), "expected a string");
      plan.notes.push_back(notes[i].get<std::string>());
    }
  }
  return plan;
}

PartitionPlan read_plan_file(const std::filesystem::path& path) {
  const std::string text = read_file(path);
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {  // parse_error, and out_of_range for a number like 1e400
    throw DataError(path.string() + ": not valid JSON: " + describe_json_error(e));
  }
  return plan_from_json(j, path.string());
}

void write_plan_file(const std::filesystem::path& path, const PartitionPlan& plan) {
  write_file_atomic(path, plan_to_json(plan).dump(2) + "\n");
}

}  // namespace ragmig::gpu
