// One decoder layer's parameters (causal_lm.hpp declares it): the tensors
// causal_lm registers under Hugging Face's names, for causal_lm.cpp and the
// fused decode step (fused_decode.cpp). Includes LibTorch.
#pragma once

#include <torch/torch.h>

namespace crucible::policy {

struct decoder_layer {
  torch::Tensor input_norm, post_norm;
  torch::Tensor q_w, q_b, k_w, k_b, v_w, v_b, o_w, o_b;
  torch::Tensor gate_w, gate_b, up_w, up_b, down_w, down_b;
  // On CUDA the q/k/v projections share one weight (and bias) tensor, and so
  // do gate/up: q_w, k_w, v_w are row blocks of qkv_w (aliases, not views to
  // autograd), so decode_step runs one matmul where there were three.
  // Undefined on CPU.
  torch::Tensor qkv_w, qkv_b, gate_up_w, gate_up_b;
};

// x W^T (+ b when defined).
inline torch::Tensor linear(const torch::Tensor& x, const torch::Tensor& w, const torch::Tensor& b) {
  return b.defined() ? torch::nn::functional::linear(x, w, b) : torch::nn::functional::linear(x, w);
}

}  // namespace crucible::policy
