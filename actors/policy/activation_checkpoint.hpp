// Activation checkpointing for causal_lm (its set_activation_checkpointing;
// [learner] activation_checkpointing): a decoder layer run as one autograd
// node that keeps only the layer's input. The backward pass runs the layer
// again, with gradients, from that input (LibTorch C++ has no
// torch.utils.checkpoint), under the forward's RNG states, adapters' training
// mode (LoRA dropout draws the same masks) and autocast setting, then
// backpropagates through it. The
// gradients are those of the plain forward; the memory between forward and
// backward is one [batch, tokens, hidden] tensor a layer instead of all its
// intermediates.
//
// Called by causal_lm::hidden_states. Includes LibTorch: policy and learner files only.
#pragma once

#include <torch/torch.h>

#include <cstddef>

namespace crucible::policy {

class causal_lm;

// model.layer(index, x, cos, sin, mask) recorded as one node that recomputes
// it in the backward pass. mask may be undefined (causal_lm::hidden_states's
// unmasked attention).
torch::Tensor checkpointed_layer(causal_lm& model, std::size_t index, const torch::Tensor& x,
                                 const torch::Tensor& cos, const torch::Tensor& sin, const torch::Tensor& mask);

}  // namespace crucible::policy
