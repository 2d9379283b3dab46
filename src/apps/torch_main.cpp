// `ragmig-torch`: the subcommands that need LibTorch (train, eval, mine, lora, serve), started by the `ragmig` front
// binary in its own place (execv) with the same arguments. It presents itself as `ragmig` in help and errors.
#include <fmt/core.h>

#include <cstdlib>

#include "apps/command.h"
#include "core/error.h"
#include "model/blas_binding.h"
#include "model/cpu_allocator.h"
#include "model/torch_error.h"

int main(int argc, char** argv) {
  using namespace ragmig::apps;
  ragmig::model::set_up_cpu_memory();  // before LibTorch allocates: activations reused, not faulted in each step
  // Unpadded batches change shape every step; expandable segments let the CUDA caching allocator grow blocks in
  // place instead of caching one of each size: on an H200 (BERT-base, batch 512) the same samples/s at 27-42 %
  // less peak memory. A setting of the user's own wins.
  setenv("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True", 0);
  // A binary linked with the system's BLAS ahead of LibTorch's own runs every fp32 product there (CMakeLists.txt).
  if (const auto blas = ragmig::model::blas_binding(); blas.libtorch_exports && !blas.libtorch_own)
    fmt::print(stderr, "ragmig: warning: fp32 products run on {}, not LibTorch's own BLAS: link libtorch_cpu.so "
                       "ahead of the system's BLAS (README, GPU build)\n", blas.library);
  CLI::App app{
      "ragmig — trains dense retrievers for RAG (the commands that need LibTorch).\n"
      "Run `ragmig <command> --help` for a command's options.",
      "ragmig"};
  app.require_subcommand(1, 1);
  std::vector<Command> commands = {add_train_command(app), add_eval_command(app), add_mine_command(app),
                                   add_lora_command(app), add_serve_command(app)};
  // LibTorch's errors reach the one error boundary (run_command_line) as one line: a failure (exit 1), or out
  // of memory a device error; RAGMIG_DEBUG=1 keeps LibTorch's stack trace.
  for (auto& command : commands)
    command.run = [run = std::move(command.run)] {
      try {
        return run();
      } catch (const c10::OutOfMemoryError& e) {
        throw ragmig::DeviceError(ragmig::model::describe_torch_error(e, ragmig::model::debug_requested()));
      } catch (const c10::Error& e) {
        throw ragmig::InternalError(ragmig::model::describe_torch_error(e, ragmig::model::debug_requested()));
      }
    };
  return run_command_line(app, commands, argc, argv);
}
