// `ragmig mig profiles|layouts|plan|apply`: the MIG catalog, every layout of a GPU, the partition planner
// for pending demands, and the applier of a plan (dry run by default). Plans are made for the machine's
// GPUs (read through NVML) or for a GPU model named with --gpu.
#include <fmt/format.h>

#include <cstdio>
#include <set>

#include "apps/command.h"
#include "core/error.h"
#include "gpu/inventory.h"
#include "gpu/join.h"
#include "gpu/mig_applier.h"
#include "gpu/plan_file.h"
#include "gpu/visible_devices.h"

namespace ragmig::apps {
namespace {

struct MigArgs {
  std::string gpu;  // model name for profiles/layouts/plan
  bool json = false;
  // layouts
  bool maximal = false;
  std::string profiles;
  // plan
  std::string demand;
  int index = 0;
  std::string current;
  std::string busy;
  bool enable_mig = false;
  std::string output;
  // apply
  std::string plan_path;
  bool dry_run = false;
  bool execute = false;
};

std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> out;
  size_t begin = 0;
  while (begin <= text.size()) {
    size_t end = text.find(',', begin);
    if (end == std::string::npos) end = text.size();
    if (end > begin) out.push_back(text.substr(begin, end - begin));
    begin = end + 1;
  }
  return out;
}

std::string layout_text(const gpu::GpuCatalog& gpu, const gpu::Layout& layout) {
  return layout.empty() ? "(no instances)" : gpu::to_string(gpu, layout);
}

int run_profiles(const MigArgs& a) {
  std::vector<const gpu::GpuCatalog*> models;
  if (a.gpu.empty()) {
    for (const auto& c : gpu::gpu_catalogs()) models.push_back(&c);
  } else {
    models.push_back(&gpu::gpu_catalog(a.gpu));
  }
  if (a.json) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto* m : models) {
      nlohmann::json profiles = nlohmann::json::array();
      for (const auto& p : m->profiles) {
        profiles.push_back({{"name", p.name}, {"id", p.id}, {"compute_slices", p.compute_slices},
                            {"memory_slices", p.memory_slices}, {"memory_mib", p.memory_mib},
                            {"max_instances", p.max_instances}, {"starts", p.starts}});
      }
      out.push_back({{"gpu", m->name}, {"compute_slices", m->compute_slices}, {"memory_slices", m->memory_slices},
                     {"profiles", profiles}});
    }
    std::printf("%s\n", out.dump(2).c_str());
    return kOk;
  }
  for (const auto* m : models) {
    std::printf("%s: %d compute slices, %d memory slices\n", m->name.c_str(), m->compute_slices, m->memory_slices);
    std::printf("  %-12s %3s %8s %13s %10s %4s  %s\n", "PROFILE", "ID", "COMPUTE", "MEMORY_SLICES", "MEMORY", "MAX",
                "STARTS");
    for (const auto& p : m->profiles) {
      const std::string starts = gpu::join(p.starts, ",", [](int s) { return std::to_string(s); });
      std::printf("  %-12s %3d %8d %13d %6lld MiB %4d  {%s}\n", p.name.c_str(), p.id, p.compute_slices, p.memory_slices,
                  static_cast<long long>(p.memory_mib), p.max_instances, starts.c_str());
    }
  }
  return kOk;
}

int run_layouts(const MigArgs& a) {
  if (a.gpu.empty()) throw ConfigError("mig layouts needs --gpu MODEL (e.g. --gpu A100-40GB)");
  const gpu::GpuCatalog& m = gpu::gpu_catalog(a.gpu);
  const auto layouts =
      gpu::enumerate_layouts(m, {.maximal_only = a.maximal, .profiles = split_commas(a.profiles), .base = {}});
  std::set<std::string> mixes;
  nlohmann::json out = nlohmann::json::array();
  for (const auto& l : layouts) {
    mixes.insert(gpu::to_string(m, gpu::mix_of(l)));
    if (a.json) {
      out.push_back({{"layout", gpu::to_string(m, l)}, {"mix", gpu::to_string(m, gpu::mix_of(l))}});
    } else {
      std::printf("%s\n", layout_text(m, l).c_str());
    }
  }
  if (a.json) {
    std::printf("%s\n", nlohmann::json({{"gpu", m.name}, {"maximal_only", a.maximal}, {"count", layouts.size()},
                                        {"mixes", mixes.size()}, {"layouts", out}})
                            .dump(2)
                            .c_str());
  } else {
    std::printf("# %zu %slayouts of %s, %zu distinct profile mixes\n", layouts.size(), a.maximal ? "maximal " : "",
                m.name.c_str(), mixes.size());
  }
  return kOk;
}

// The GPUs to plan for: one model named on the command line, or the machine's MIG-capable GPUs.
std::vector<gpu::GpuState> gpus_to_plan(const MigArgs& a, std::vector<std::string>* notes) {
  std::vector<gpu::GpuState> out;
  if (!a.gpu.empty()) {
    gpu::GpuState g;
    g.index = a.index;
    g.catalog = &gpu::gpu_catalog(a.gpu);
    const gpu::Layout busy = gpu::parse_layout(*g.catalog, a.busy);
    gpu::Layout all = gpu::parse_layout(*g.catalog, a.current);
    for (const auto& p : busy) {
      if (std::find(all.begin(), all.end(), p) == all.end()) all.push_back(p);
    }
    if (std::string why = gpu::layout_error(*g.catalog, all); !why.empty()) {
      throw ConfigError("--current and --busy together are not a valid layout: " + why);
    }
    for (const auto& p : gpu::canonical(all)) {
      g.instances.push_back({p, std::find(busy.begin(), busy.end(), p) != busy.end(), -1});
    }
    out.push_back(g);
    return out;
  }
  if (!a.current.empty() || !a.busy.empty()) throw ConfigError("--current and --busy describe a GPU named with --gpu");
  const gpu::Inventory inv = gpu::read_inventory();
  for (const auto& d : inv.gpus) {
    if (!d.mig_capable || !d.catalog || d.layout_fixed) {
      notes->push_back(fmt::format("GPU {} ({}): {}", d.index, d.name,
                                   d.layout_fixed  ? gpu::kLayoutFixedReason
                                   : d.mig_capable ? "not in the MIG catalog"
                                                   : "does not support MIG"));
      continue;
    }
    gpu::GpuState g;
    g.index = d.index;
    g.catalog = d.catalog;
    g.device_name = d.name;
    g.uuid = d.uuid;
    g.mig_enabled = d.mig_enabled;
    for (const auto& gi : d.instances) {
      const int p = d.catalog->profile_index_by_id(gi.profile_id);
      if (p < 0) throw DeviceError(fmt::format("GPU {}: GPU instance {} has profile id {}, unknown to the catalog of {}",
                                               d.index, gi.gi_id, gi.profile_id, d.catalog->name));
      bool busy = false;
      for (const auto& dev : gi.devices) busy = busy || dev.busy.value_or(true);  // unknown counts as busy: safe
      g.instances.push_back({{p, gi.placement_start}, busy, gi.gi_id});
    }
    out.push_back(g);
  }
  if (out.empty()) {
    const std::string why = inv.nvml_status == gpu::NvmlStatus::Available ? "no MIG-capable GPU in the catalog"
                                                                          : "NVML " + std::string(gpu::to_string(inv.nvml_status)) + ": " + inv.nvml_detail;
    throw ConfigError("no GPU to plan for (" + why + "); name a model with --gpu, e.g. --gpu H200");
  }
  return out;
}

void print_plan(const gpu::PartitionPlan& plan) {
  for (const auto& g : plan.gpus) {
    const gpu::GpuCatalog& m = *g.catalog;
    gpu::Layout current;
    gpu::Layout busy;
    for (const auto& c : g.current) {
      current.push_back(c.placement);
      if (c.busy) busy.push_back(c.placement);
    }
    std::printf("GPU %d (%s)\n", g.index, m.name.c_str());
    std::printf("  current: %s\n", layout_text(m, gpu::canonical(current)).c_str());
    if (!busy.empty()) std::printf("  busy:    %s\n", layout_text(m, gpu::canonical(busy)).c_str());
    std::printf("  target:  %s  [%s]\n", layout_text(m, g.target).c_str(), gpu::to_string(m, gpu::mix_of(g.target)).c_str());
    for (const auto& a : g.assignments) {
      std::printf("  job %s -> %s\n", gpu::what_of(plan.demands[static_cast<size_t>(a.demand)]).c_str(),
                  gpu::to_string(m, a.placement).c_str());
    }
    std::printf("  throughput %d compute slices, fragmentation %d\n", g.throughput, g.fragmentation);
    if (g.steps.empty()) std::printf("  steps: none\n");
    for (const auto& s : g.steps) {
      for (const auto& cmd : gpu::nvidia_smi_commands(m, g.index, s)) std::printf("  step: %s\n", cmd.c_str());
    }
  }
  for (const auto& n : plan.notes) std::printf("note: %s\n", n.c_str());
  for (const auto& u : plan.unplaced) {
    gpu::Demand d = plan.demands[static_cast<size_t>(u.demand)];
    d.count = u.count;
    std::printf("unplaced: %s (%s)\n", gpu::to_string(d).c_str(), u.reason.c_str());
  }
}

int run_plan(const MigArgs& a) {
  const std::vector<gpu::Demand> demands = gpu::parse_demands(a.demand);
  std::vector<std::string> notes;
  const std::vector<gpu::GpuState> gpus = gpus_to_plan(a, &notes);
  // A profile that none of the GPUs offers is a typo far more often than a real need: refuse it as input.
  for (const auto& d : demands) {
    if (d.profile.empty()) continue;
    bool offered = false;
    for (const auto& g : gpus) offered = offered || g.catalog->find_profile(d.profile) != nullptr;
    if (!offered) gpus.front().catalog->profile_index(d.profile);  // throws ConfigError listing the profiles
  }
  gpu::PartitionPlan plan = gpu::plan_partitions(gpus, demands, {.allow_enable_mig = a.enable_mig});
  plan.notes.insert(plan.notes.begin(), notes.begin(), notes.end());
  if (!a.output.empty()) gpu::write_plan_file(a.output, plan);
  if (a.json) {
    std::printf("%s\n", gpu::plan_to_json(plan).dump(2).c_str());
  } else {
    print_plan(plan);
  }
  if (!plan.complete()) {
    int jobs = 0;
    for (const auto& u : plan.unplaced) jobs += u.count;
    std::fflush(stdout);  // the plan first, then the verdict, when both go to one terminal or pipe
    std::fprintf(stderr, "ragmig mig plan: %d job(s) cannot be placed now\n", jobs);
    return kFailure;
  }
  return kOk;
}

int run_apply(const MigArgs& a) {
  if (a.dry_run && a.execute) throw ConfigError("--dry-run and --execute exclude each other");
  const gpu::PartitionPlan plan = gpu::read_plan_file(a.plan_path);
  const gpu::ApplyOptions options{.execute = a.execute, .enable_mig = a.enable_mig};
  if (!options.execute) {
    std::printf("# dry run: the nvidia-smi commands that --execute would carry out through NVML\n");
    for (const auto& line : gpu::dry_run_lines(plan, options)) std::printf("%s\n", line.c_str());
    return kOk;
  }
  // Refusals that need no device come first, so they are reported the same with or without NVML.
  if (const auto refusals = gpu::plan_refusals(plan, options); !refusals.empty()) throw ConfigError(refusals.front());
  gpu::NvmlLibrary nvml(gpu::NvmlLibrary::default_path());
  gpu::apply_plan(nvml, plan, options, [](const std::string& line) {
    std::printf("%s\n", line.c_str());
    std::fflush(stdout);
  });
  return kOk;
}

}  // namespace

Command add_mig_command(CLI::App& root) {
  auto args = std::make_shared<MigArgs>();
  CLI::App* mig = root.add_subcommand("mig", "MIG profiles, layouts, partition plans and applying them");
  mig->require_subcommand(1, 1);

  CLI::App* profiles = mig->add_subcommand("profiles", "List a GPU model's MIG profiles and placements");
  profiles->add_option("--gpu", args->gpu, "GPU model or device name (H200, A100-40GB, \"NVIDIA H100 80GB HBM3\"); default: all");
  profiles->add_flag("--json", args->json, "print JSON");

  CLI::App* layouts = mig->add_subcommand("layouts", "List every valid MIG layout of a GPU model");
  layouts->add_option("--gpu", args->gpu, "GPU model")->required();
  layouts->add_flag("--maximal", args->maximal, "only layouts to which no instance can be added");
  layouts->add_option("--profiles", args->profiles, "only these profiles, comma-separated (default: all)");
  layouts->add_flag("--json", args->json, "print JSON");

  CLI::App* plan = mig->add_subcommand("plan", "Plan MIG layouts for pending demands");
  plan->add_option("--demand", args->demand,
                   "jobs to place: PROFILE[:COUNT][@PRIORITY] or <n>GiB[:COUNT][@PRIORITY], comma-separated, "
                   "e.g. 1g.18gb:5,3g.71gb:1")
      ->required();
  plan->add_option("--gpu", args->gpu, "plan for one GPU of this model instead of the machine's GPUs");
  plan->add_option("--index", args->index, "with --gpu: its index (nvidia-smi -i); default 0");
  plan->add_option("--current", args->current, "with --gpu: its instances now, e.g. 3g.71gb@4+1g.18gb@0");
  plan->add_option("--busy", args->busy, "with --gpu: instances running jobs, kept as they are");
  plan->add_flag("--enable-mig", args->enable_mig, "also plan for GPUs whose MIG mode is off");
  plan->add_flag("--json", args->json, "print the plan file (JSON) instead of text");
  plan->add_option("-o,--output", args->output, "also write the plan file here");
  plan->footer("Exit codes: 0 every job placed, 1 some jobs cannot be placed now (listed as unplaced), 2 bad input.");

  CLI::App* apply = mig->add_subcommand("apply", "Carry out a plan file (dry run unless --execute)");
  apply->add_option("plan", args->plan_path, "plan file written by `ragmig mig plan -o`")->required()->check(CLI::ExistingFile);
  apply->add_flag("--dry-run", args->dry_run, "print the steps as nvidia-smi commands, change nothing (the default)");
  apply->add_flag("--execute", args->execute, "create and destroy the instances through NVML (needs root)");
  apply->add_flag("--enable-mig", args->enable_mig, "may turn MIG mode on where it is off");
  apply->footer(std::string("Environment: ") + gpu::kNvmlLibraryEnv + " names the NVML library to load.");

  return Command{mig, [args, profiles, layouts, plan, apply]() -> int {
                   if (profiles->parsed()) return run_profiles(*args);
                   if (layouts->parsed()) return run_layouts(*args);
                   if (plan->parsed()) return run_plan(*args);
                   if (apply->parsed()) return run_apply(*args);
                   return kBadInput;
                 }};
}

}  // namespace ragmig::apps
