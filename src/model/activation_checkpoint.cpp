#include "model/activation_checkpoint.h"

#include <ATen/autocast_mode.h>

#include "model/autocast_state.h"
#include "model/rng_state.h"

namespace ragmig::model {
namespace {

// What backward needs to run the layer again: the function, the generators as the forward found them (the same
// dropout masks), and autocast on the input's device as it was there (backward runs on autograd's threads, where
// the forward's thread-local autocast is off).
struct Replay : torch::CustomClassHolder {
  std::function<torch::Tensor(const torch::Tensor&)> fn;
  torch::Device device = torch::kCPU;
  RngState generators;
  AutocastState autocast;
};

struct CheckpointFn : torch::autograd::Function<CheckpointFn> {
  // `params` are inputs of the node so that they get gradients; fn reads them itself.
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& input,
                               torch::TensorList params, c10::intrusive_ptr<Replay> replay) {
    replay->device = input.device();
    replay->generators = capture_rng_state();
    replay->autocast = autocast_state(input.device());
    std::vector<torch::Tensor> saved = {input};
    saved.insert(saved.end(), params.begin(), params.end());
    ctx->save_for_backward(saved);
    ctx->saved_data["replay"] = c10::IValue::make_capsule(replay);
    return replay->fn(input);
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grad_out) {
    const auto replay = c10::static_intrusive_pointer_cast<Replay>(ctx->saved_data["replay"].toCapsule());
    const torch::autograd::variable_list saved = ctx->get_saved_variables();
    const torch::Tensor leaf = saved[0].detach().requires_grad_(saved[0].requires_grad());
    // Run the layer again in the forward's generators and autocast, then put back backward's.
    const RngState now = capture_rng_state();
    restore_rng_state(replay->generators);
    const AutocastState autocast_before = set_autocast_state(replay->device, replay->autocast);
    at::autocast::increment_nesting();  // the recompute's casts of the weights, dropped after it
    torch::Tensor out;
    {
      torch::AutoGradMode grad_mode(true);
      out = replay->fn(leaf);
    }
    if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
    set_autocast_state(replay->device, autocast_before);
    restore_rng_state(now);
    // Gradients for the input and each parameter that needs one, in the node's input order; none for the replay.
    std::vector<torch::Tensor> wrt;
    std::vector<size_t> slot;
    for (size_t i = 0; i < saved.size(); ++i)
      if ((i == 0 ? leaf : saved[i]).requires_grad()) {
        wrt.push_back(i == 0 ? leaf : saved[i]);
        slot.push_back(i);
      }
    torch::autograd::variable_list grads(saved.size() + 1);
    if (wrt.empty() || !out.requires_grad()) return grads;
    const auto computed = torch::autograd::grad({out}, wrt, {grad_out[0]}, /*retain_graph=*/false,
                                                /*create_graph=*/false, /*allow_unused=*/true);
    for (size_t k = 0; k < slot.size(); ++k) grads[slot[k]] = computed[k];
    return grads;
  }
};

}  // namespace

torch::Tensor checkpointed(const std::function<torch::Tensor(const torch::Tensor&)>& fn, const torch::Tensor& input,
                           const std::vector<torch::Tensor>& params) {
  bool needs_grad = input.requires_grad();
  for (const torch::Tensor& p : params) needs_grad = needs_grad || p.requires_grad();
  if (!torch::GradMode::is_enabled() || !needs_grad) return fn(input);
  auto replay = c10::make_intrusive<Replay>();
  replay->fn = fn;
  return CheckpointFn::apply(input, torch::TensorList(params), replay);
}

std::vector<torch::Tensor> trainable_parameters(const torch::nn::Module& module) {
  std::vector<torch::Tensor> out;
  for (const torch::Tensor& p : module.parameters())
    if (p.requires_grad()) out.push_back(p);
  return out;
}

}  // namespace ragmig::model
