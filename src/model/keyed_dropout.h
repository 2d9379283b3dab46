// Dropout whose masks cost one draw of LibTorch's generator per call instead of one per element. On CPU,
// LibTorch's dropout fills its mask with bernoulli_, one Mersenne-Twister draw per element on one thread under
// the generator's lock: in a MiniLM fine-tune it was a quarter of the step (the attention probabilities'
// mask alone is batch x heads x T x T). Here each call draws one 64-bit key from the default generator and
// the mask is a counter-based hash of (key, element) computed in parallel, so masks still follow the
// generator's state: GradCache's replay (train/rng_state.h), checkpoints and per-replica seeds work as before.
// On CPU the graph keeps a mask as bits, one per element, not as a tensor of the input's size: here
// (keyed_dropout, keyed_dropout_matmul) and in model/lora_linear.cpp's adapters, which keep no dropped copy of
// their input either (remaking a mask from its key in backward cost ~3 ns an element: hashing is the slow part).
// On CUDA, LibTorch's own fused dropout is used.
#pragma once

#include <torch/torch.h>

#include <utility>

namespace ragmig::model {

/// x * mask / (1 - p), mask[i] = 0 with probability p (drawn at 1/65536 resolution), as torch::dropout;
/// `x` itself when !training or p == 0. p must be in [0, 1). On CPU with a gradient to carry, one graph node
/// that keeps the mask as bits (autograd's product would keep the mask, 32x larger).
torch::Tensor keyed_dropout(const torch::Tensor& x, double p, bool training);

/// keyed_dropout(probs, p, training) . v (matmul), as attention applies its dropped probabilities to the values,
/// drawing the same mask. On CPU with a gradient to carry, one graph node that keeps probs (softmax keeps them
/// anyway), v and the mask's bits, and makes the dropped probabilities again in backward: autograd would keep
/// the mask and the dropped copy, two more tensors of probs' size (batch x heads x T x T) per layer.
torch::Tensor keyed_dropout_matmul(const torch::Tensor& probs, const torch::Tensor& v, double p, bool training);

/// One 64-bit draw of LibTorch's default CPU generator: the key of the next mask (keyed_dropout draws its own).
uint64_t keyed_dropout_key();

/// The scaled keep-mask of `n` elements for `key` (0 or 1 / (1 - p)), in `dtype`: what keyed_dropout multiplies by.
/// Pure: the same (n, p, key) give the same mask whatever the thread count.
torch::Tensor keyed_dropout_mask(int64_t n, double p, uint64_t key, torch::ScalarType dtype);

/// keyed_dropout_mask for `x`'s elements, in x's shape and dtype.
torch::Tensor keyed_dropout_mask_like(const torch::Tensor& x, double p, uint64_t key);

/// x * keyed_dropout_mask_like(x, p, key), bit for bit, without making the mask: one pass over x (CPU, floating).
torch::Tensor keyed_dropout_apply(const torch::Tensor& x, double p, uint64_t key);

/// keyed_dropout_apply, and its mask as bits (uint8 [ceil(n / 8)], bit i % 8 of byte i / 8 = element i kept):
/// what a graph node keeps to multiply by the mask again in backward, 1/32 of a float mask, without hashing.
std::pair<torch::Tensor, torch::Tensor> keyed_dropout_apply_keeping_bits(const torch::Tensor& x, double p,
                                                                         uint64_t key);
/// x times the mask kept in `bits` (for x's elements, p as drawn): keyed_dropout_apply's product, bit for bit.
torch::Tensor keyed_dropout_apply_bits(const torch::Tensor& x, const torch::Tensor& bits, double p);
/// The same in place; `x` contiguous.
void keyed_dropout_apply_bits_(torch::Tensor& x, const torch::Tensor& bits, double p);

/// For graph nodes (torch::autograd::Function) that drop an input in forward and need its mask again in backward:
/// keyed_dropout_apply(x, p, key), keeping p and the mask's bits in ctx->saved_data.
torch::Tensor keyed_dropout_saving_bits(torch::autograd::AutogradContext* ctx, const torch::Tensor& x, double p,
                                        uint64_t key);
/// In that node's backward: x (of the dropped input's size) times the mask kept in ctx, as a new tensor / in place.
torch::Tensor keyed_dropout_saved(torch::autograd::AutogradContext* ctx, const torch::Tensor& x);
void keyed_dropout_saved_(torch::autograd::AutogradContext* ctx, torch::Tensor& x);

}  // namespace ragmig::model
