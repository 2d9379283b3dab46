// Activation checkpointing (transformers' gradient_checkpointing): a layer run so that autograd keeps only its
// input, not the activations inside it; backward runs the layer again, with the random generators as they were
// (so dropout draws the same masks) and autocast as it was, and backpropagates through that. Each layer's activations
// then live only while its backward runs: the memory of a tower's training step goes from all its layers' activations
// to one layer's plus the layers' inputs, for one more forward pass of compute. Gradients are the ones without
// checkpointing (the same operations run on the same values).
#pragma once

#include <torch/torch.h>

#include <functional>
#include <memory>
#include <vector>

namespace ragmig::model {

/// fn(input), keeping only `input` (and the generators' states) for backward. `params` are the parameters fn uses
/// that may need gradients (those that do not are left out): they get theirs as inputs of this node, so that a
/// layer whose input needs none (LoRA over frozen embeddings) still trains. Without grad mode, or when neither
/// input nor any of params needs a gradient, plainly fn(input). fn must be a function of its input and params
/// alone (captured non-differentiable tensors, such as masks, are fine) and must outlive the backward pass.
torch::Tensor checkpointed(const std::function<torch::Tensor(const torch::Tensor&)>& fn, const torch::Tensor& input,
                           const std::vector<torch::Tensor>& params);

/// The parameters of `module` (and its submodules) that need gradients: checkpointed's `params`.
std::vector<torch::Tensor> trainable_parameters(const torch::nn::Module& module);

/// `hidden` through each of `layers` (modules of type Layer) in turn as `run(layer, hidden)`, each checkpointed
/// when `checkpoint`. `run` is kept for backward then: it must hold what it reads (a batch's masks and rotary
/// tables by shared_ptr, not by reference to the caller's locals).
template <typename Layer, typename Run>
torch::Tensor run_layers(const torch::nn::ModuleList& layers, torch::Tensor hidden, bool checkpoint, const Run& run) {
  for (const std::shared_ptr<torch::nn::Module>& module : *layers) {
    if (!checkpoint) {
      hidden = run(*module->as<Layer>(), hidden);
      continue;
    }
    hidden = checkpointed([module, run](const torch::Tensor& h) { return run(*module->as<Layer>(), h); }, hidden,
                          trainable_parameters(*module));
  }
  return hidden;
}

}  // namespace ragmig::model
