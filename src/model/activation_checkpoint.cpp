#include "model/activation_checkpoint.h"

#include <ATen/Context.h>
#include <ATen/autocast_mode.h>

#include <mutex>
#include <utility>

namespace ragmig::model {
namespace {

at::Generator generator_of(const torch::Device& device) {
  return at::globalContext().defaultGenerator(device.is_cuda() ? device : torch::Device(torch::kCPU));
}

// The states of the generators a layer on `device` draws from: the CPU's, and the device's own where it is a GPU.
struct GeneratorStates {
  torch::Device device = torch::kCPU;
  torch::Tensor cpu, gpu;

  static GeneratorStates capture(const torch::Device& device) {
    GeneratorStates s;
    s.device = device;
    s.cpu = generator_of(torch::kCPU).get_state();
    if (device.is_cuda()) s.gpu = generator_of(device).get_state();
    return s;
  }
  void restore() const {
    const auto set = [](at::Generator gen, const torch::Tensor& state) {
      std::lock_guard<std::mutex> lock(gen.mutex());
      gen.set_state(state);
    };
    set(generator_of(torch::kCPU), cpu);
    if (device.is_cuda()) set(generator_of(device), gpu);
  }
};

// Autocast on a device type as the forward found it, set again for the recompute: backward runs on autograd's
// threads, where the forward's thread-local autocast is off.
struct AutocastState {
  bool enabled = false;
  at::ScalarType dtype = at::kBFloat16;

  static AutocastState capture(const torch::Device& device) {
    AutocastState s;
#if TORCH_VERSION_MAJOR >= 2
    s.enabled = at::autocast::is_autocast_enabled(device.type());
    if (s.enabled) s.dtype = at::autocast::get_autocast_dtype(device.type());
#else
    s.enabled = device.is_cuda() ? at::autocast::is_enabled() : at::autocast::is_cpu_enabled();
    if (s.enabled)
      s.dtype = device.is_cuda() ? at::autocast::get_autocast_gpu_dtype() : at::autocast::get_autocast_cpu_dtype();
#endif
    return s;
  }
  // Sets this state on `device`'s type and returns the one it replaced.
  AutocastState apply(const torch::Device& device) const {
    const AutocastState before = capture(device);
#if TORCH_VERSION_MAJOR >= 2
    at::autocast::set_autocast_dtype(device.type(), dtype);
    at::autocast::set_autocast_enabled(device.type(), enabled);
#else
    if (device.is_cuda()) {
      at::autocast::set_autocast_gpu_dtype(dtype);
      at::autocast::set_enabled(enabled);
    } else {
      at::autocast::set_autocast_cpu_dtype(dtype);
      at::autocast::set_cpu_enabled(enabled);
    }
#endif
    return before;
  }
};

// What backward needs to run the layer again.
struct Replay : torch::CustomClassHolder {
  std::function<torch::Tensor(const torch::Tensor&)> fn;
  GeneratorStates generators;
  AutocastState autocast;
};

struct CheckpointFn : torch::autograd::Function<CheckpointFn> {
  // `params` are inputs of the node so that they get gradients; fn reads them itself.
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& input,
                               torch::TensorList params, c10::intrusive_ptr<Replay> replay) {
    replay->generators = GeneratorStates::capture(input.device());
    replay->autocast = AutocastState::capture(input.device());
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
    // Run the layer again with the generators as the forward found them (the same dropout masks), then put back
    // the ones backward found.
    const GeneratorStates now = GeneratorStates::capture(replay->generators.device);
    replay->generators.restore();
    const torch::Device device = replay->generators.device;
    const AutocastState autocast_before = replay->autocast.apply(device);
    at::autocast::increment_nesting();  // the recompute's casts of the weights, dropped after it
    torch::Tensor out;
    {
      torch::AutoGradMode grad_mode(true);
      out = replay->fn(leaf);
    }
    if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
    autocast_before.apply(device);
    now.restore();
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
