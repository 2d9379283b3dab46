// Fuzzes what the Slurm executor reads (exec/slurm_executor.cpp, exec/slurm_config.cpp): squeue's and sinfo's
// machine-readable output and a sweep's [slurm] table. The first byte picks the reader (its value mod 3), the
// second byte sinfo's CPU slots per node (mod 3; 0 is "one per CPU on nodes without GPUs"). Every text ends in a
// DataError or ConfigError, or in an answer that keeps the readers' promises:
// - squeue: every job id and state is non-empty, holds no '|' and no blank at either end;
// - sinfo: slot ids are unique; a MIG slot's profile is a profile name of 1 to 7 compute slices; a node's CPU
//   slots are as many as asked for;
// - [slurm]: the array limit is a count (>= 0), every sbatch option one word starting with "--".
#include <cstdint>
#include <set>
#include <string>

#include "core/strings.h"
#include "exec/slurm_config.h"
#include "exec/slurm_executor.h"
#include "fuzz_support.h"
#include "gpu/mig_catalog.h"

namespace {

using ragmig::fuzz::finding;

void check_squeue(const std::string& text) {
  for (const auto& [id, state] : ragmig::exec::parse_squeue(text))
    for (const std::string& word : {id, state})
      if (word.empty() || word.find('|') != std::string::npos || ragmig::trim(word, " \t\r\n") != word)
        finding("slurm", ("squeue: a job read as '" + id + "' in state '" + state + "'").c_str());
}

void check_sinfo(const std::string& text, int cpu_slots) {
  const auto slots = ragmig::exec::slurm_slots(text, cpu_slots);
  std::set<std::string> ids;
  std::map<int, int> cpus_of_group;
  for (const auto& s : slots) {
    if (!ids.insert(s.id).second) finding("slurm", ("sinfo: slot id '" + s.id + "' twice").c_str());
    if (s.kind == ragmig::sched::SlotKind::Mig &&
        (!ragmig::gpu::looks_like_profile_name(s.profile) || s.compute < 1 || s.compute > 7))
      finding("slurm", ("sinfo: MIG slot '" + s.id + "' of profile '" + s.profile + "'").c_str());
    if (s.kind == ragmig::sched::SlotKind::Cpu) ++cpus_of_group[s.group];
  }
  if (cpu_slots > 0)
    for (const auto& [group, n] : cpus_of_group)
      if (n != cpu_slots) finding("slurm", "sinfo: a node with another number of CPU slots than asked for");
}

void check_table(const std::string& text) {
  const auto options = ragmig::exec::merge_slurm_table(text, "sweep.toml", {});
  if (options.array_limit < 0) finding("slurm", "[slurm]: a negative array limit passed");
  for (const std::string& o : options.sbatch_options)
    if (!o.starts_with("--") || o.find_first_of(" \t\n") != std::string::npos)
      finding("slurm", ("[slurm]: sbatch option '" + o + "' passed").c_str());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const std::string text(reinterpret_cast<const char*>(data) + 2, size - 2);
  ragmig::fuzz::expect_typed_errors([&] {
    switch (data[0] % 3) {
      case 0: return check_squeue(text);
      case 1: return check_sinfo(text, data[1] % 3);
      default: return check_table(text);
    }
  });
  return 0;
}
