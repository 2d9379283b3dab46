// `ragmig-shim`: the small per-attempt process the scheduler's executor starts (see exec/shim.h). A binary
// of its own, without LibTorch, so starting an attempt costs milliseconds and no memory for the shim.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "exec/shim.h"

int main(int argc, char** argv) {
  ragmig::exec::ShimOptions options;
  std::string devices, slots;
  CLI::App app{"ragmig-shim: runs one attempt's workers for `ragmig run` (started by the scheduler, not by hand)",
               "ragmig-shim"};
  app.add_option("--lock-fd", options.lock_fd, "the attempt's lock, inherited")->required();
  app.add_option("--exit-file", options.exit_file, "where to write how the attempt ended")->required();
  app.add_option("--run-dir", options.run_dir, "the job's run folder")->required();
  app.add_option("--devices", devices, "JSON list: CUDA_VISIBLE_DEVICES per replica")->required();
  app.add_option("--slots", slots, "JSON list: slot id per replica")->required();
  app.add_option("command", options.argv, "the worker command")->required();
  app.positionals_at_end();
  try {
    app.parse(argc, argv);
    options.devices = nlohmann::json::parse(devices).get<std::vector<std::string>>();
    options.slots = nlohmann::json::parse(slots).get<std::vector<std::string>>();
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  } catch (const nlohmann::json::exception& e) {
    std::fprintf(stderr, "ragmig-shim: --devices/--slots: %s\n", e.what());
    return 2;
  }
  try {
    return ragmig::exec::run_shim(options);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ragmig-shim: %s\n", e.what());
    return 1;
  }
}
