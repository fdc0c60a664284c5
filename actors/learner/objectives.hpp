// The learner's objectives as pure LibTorch functions: reward smoothing,
// group-normalised advantages, the clipped token ratio, the k3 KL estimate,
// the decoupled-PPO importance weight, sequence/token aggregation, and the
// three stages' losses (GRPO, SFT, success-only REINFORCE). No state, no
// model: the trainer (trainer.hpp) computes log-probs and calls these; tests
// check them against hand-worked values and PyTorch golden data.
//
// Shapes: per-token tensors are [batch, tokens] fp32 with a bool `mask`
// [batch, tokens] marking real completion tokens; per-sequence tensors are
// [batch]. Values at masked positions never reach a result.
//
// Includes LibTorch: only the learner's own files include it.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <optional>

#include "actors/learner/learner_options.hpp"

namespace crucible::learner {


// The paper's reward smoothing: clip((r - mu) / sigma, -k, k). With sigma 0
// the limit is taken: +k above mu, -k below, 0 at mu (within 1e-6 relative, so fp32 rewards work). `rewards` any shape.
torch::Tensor smooth_rewards(const torch::Tensor& rewards, double mu, double sigma, double k = 1.5);

// GRPO advantages of one group's rewards [G]: (r - mean) / std with the
// unbiased std (as torch.std); all zeros when G == 1 or std < 1e-6 (a group
// whose samples all scored alike teaches nothing).
torch::Tensor group_advantages(const torch::Tensor& rewards);

// ratio = exp(logp - proximal_logp); per-token surrogate loss
//   -min(ratio * A, clip(ratio, 1 - eps_low, 1 + eps_high) * A)
// with A broadcast from [batch] to [batch, tokens]. `clipped` (when given)
// receives where the clipped term was the one chosen and differs from the
// unclipped one (the clip fraction's numerator).
torch::Tensor clipped_surrogate(const torch::Tensor& logp, const torch::Tensor& proximal_logp,
                                const torch::Tensor& advantages, double eps_low, double eps_high,
                                torch::Tensor* clipped = nullptr);

// The k3 estimator of KL(pi || ref) per token (Schulman): with
// d = ref_logp - logp, exp(d) - d - 1 >= 0, zero where the two agree.
torch::Tensor k3_kl(const torch::Tensor& logp, const torch::Tensor& ref_logp);

// Decoupled PPO's behaviour weight (AReaL): exp(proximal - behaviour),
// truncated at `cap` (no truncation when nullopt). No gradient flows.
torch::Tensor behaviour_weight(const torch::Tensor& proximal_logp, const torch::Tensor& behaviour_logp,
                               std::optional<double> cap);

// Aggregates per-token values over `mask`. `normaliser` replaces the batch's
// own count (sequences with at least one token for sequence_mean, tokens for
// token_mean) so that micro-batches and data-parallel ranks can sum their
// parts into the value of the whole batch; nullopt uses this batch's count.
// A sequence with no tokens contributes nothing.
torch::Tensor aggregate(const torch::Tensor& per_token, const torch::Tensor& mask, aggregation mode,
                        std::optional<double> normaliser = std::nullopt);

// Everything the GRPO loss needs for one (micro-)batch.
struct grpo_inputs {
  torch::Tensor logp;            // [B, T] current policy, with autograd
  torch::Tensor proximal_logp;   // [B, T] policy before this update (recomputed, no grad)
  torch::Tensor behaviour_logp;  // [B, T] the policy that sampled (from the rollout)
  torch::Tensor ref_logp;        // [B, T] frozen reference; undefined when beta == 0
  torch::Tensor advantages;      // [B]
  torch::Tensor mask;            // [B, T] bool
};

struct grpo_settings {
  double eps_low = 0.2;
  double eps_high = 0.2;
  double beta = 0.0;                    // KL coefficient
  std::optional<double> behaviour_cap;  // truncation of the behaviour weight; nullopt: none
  aggregation mode = aggregation::sequence_mean;
  std::optional<double> normaliser;     // see aggregate()
};

// The diagnostics of grpo_terms, read on the host (means over the masked
// tokens of the batch).
struct grpo_statistics {
  double kl = 0;            // mean k3 KL
  double clip_fraction = 0; // share of tokens whose clipped term was chosen
  double weight_mean = 0, weight_min = 0, weight_max = 0;  // behaviour weight before truncation
  double truncated_fraction = 0;                           // share of tokens whose weight hit the cap
  std::int64_t tokens = 0;
};

// The loss and its diagnostics, left on the loss's device: reading them
// waits for the device, so the trainer adds up a step's micro-batches there
// and reads them once per optimizer step, not before every backward (eight
// reads a micro-batch did, each draining the GPU's queue).
struct grpo_terms {
  torch::Tensor loss;  // scalar with autograd
  // float64 sums over the masked tokens, indexed by the constants below.
  torch::Tensor sums;
  static constexpr std::int64_t tokens = 0, kl = 1, clipped = 2, weight = 3, truncated = 4, count = 5;
  // float64 [2]: the behaviour weight's min and max over the masked tokens
  // (+inf and -inf when none).
  torch::Tensor weight_range;
  // The means, on the host (waits for the device): for tests and tools.
  grpo_statistics read() const;
};

// Per token: w * surrogate + beta * k3_kl, aggregated. w is the truncated
// behaviour weight (1 when the proximal and behaviour log-probs agree).
grpo_terms grpo_loss(const grpo_inputs& in, const grpo_settings& settings);

// Stage 1: the negative log-likelihood of the completion tokens.
torch::Tensor sft_loss(const torch::Tensor& logp, const torch::Tensor& mask, aggregation mode,
                       std::optional<double> normaliser = std::nullopt);

// Stage 2: REINFORCE with reward 1 for a success and 0 otherwise and no
// baseline: -reward * logp per token, aggregated. Failures contribute zero.
torch::Tensor reinforce_loss(const torch::Tensor& logp, const torch::Tensor& rewards, const torch::Tensor& mask,
                             aggregation mode, std::optional<double> normaliser = std::nullopt);

}  // namespace crucible::learner
