#include "actors/learner/objectives.hpp"

#include <algorithm>
#include <cmath>

#include "runtime/base/result.hpp"

namespace crucible::learner {

torch::Tensor smooth_rewards(const torch::Tensor& rewards, double mu, double sigma, double k) {
  CRUCIBLE_CHECK(k > 0, "reward clip k must be positive");
  CRUCIBLE_CHECK(sigma >= 0, "sigma must not be negative");
  auto centred = rewards.to(torch::kFloat64) - mu;
  // With sigma 0, rewards within rounding of mu count as mu.
  torch::Tensor scaled =
      sigma > 0 ? centred / sigma : torch::sign(centred) * k * (centred.abs() > 1e-6 * std::max(1.0, std::abs(mu)));
  return scaled.clamp(-k, k).to(torch::kFloat32);
}

torch::Tensor group_advantages(const torch::Tensor& rewards) {
  CRUCIBLE_CHECK(rewards.dim() == 1, "group rewards must be one-dimensional");
  auto r = rewards.to(torch::kFloat64);
  if (r.size(0) < 2) return torch::zeros_like(r, torch::kFloat32);
  const double std = r.std().item<double>();
  if (std < 1e-6) return torch::zeros_like(r, torch::kFloat32);
  return ((r - r.mean()) / std).to(torch::kFloat32);
}

torch::Tensor clipped_surrogate(const torch::Tensor& logp, const torch::Tensor& proximal_logp,
                                const torch::Tensor& advantages, double eps_low, double eps_high,
                                torch::Tensor* clipped) {
  CRUCIBLE_CHECK(eps_low >= 0 && eps_low < 1 && eps_high >= 0, "clip epsilons out of range");
  auto ratio = torch::exp(logp - proximal_logp.detach());
  auto a = advantages.detach().unsqueeze(-1);
  auto unclipped = ratio * a;
  auto bounded = ratio.clamp(1.0 - eps_low, 1.0 + eps_high) * a;
  if (clipped != nullptr) *clipped = (bounded < unclipped).detach();
  return -torch::min(unclipped, bounded);
}

torch::Tensor k3_kl(const torch::Tensor& logp, const torch::Tensor& ref_logp) {
  auto d = ref_logp.detach() - logp;
  return torch::exp(d) - d - 1.0;
}

torch::Tensor behaviour_weight(const torch::Tensor& proximal_logp, const torch::Tensor& behaviour_logp,
                               std::optional<double> cap) {
  auto w = torch::exp(proximal_logp.detach() - behaviour_logp.detach());
  if (cap) {
    CRUCIBLE_CHECK(*cap > 0, "behaviour weight cap must be positive");
    w = w.clamp_max(*cap);
  }
  return w;
}

torch::Tensor aggregate(const torch::Tensor& per_token, const torch::Tensor& mask, aggregation mode,
                        std::optional<double> normaliser) {
  auto m = mask.to(per_token.dtype());
  auto masked = per_token * m;
  if (mode == aggregation::token_mean) {
    const double count = normaliser ? *normaliser : m.sum().item<double>();
    return count > 0 ? masked.sum() / count : masked.sum() * 0.0;
  }
  auto lengths = m.sum(-1);
  auto per_sequence = masked.sum(-1) / lengths.clamp_min(1.0);
  const double count = normaliser ? *normaliser : (lengths > 0).sum().item<double>();
  return count > 0 ? per_sequence.sum() / count : per_sequence.sum() * 0.0;
}

namespace {

double masked_mean(const torch::Tensor& values, const torch::Tensor& mask, std::int64_t tokens) {
  return tokens > 0 ? values.masked_select(mask).sum().item<double>() / static_cast<double>(tokens) : 0.0;
}

}  // namespace

grpo_terms grpo_loss(const grpo_inputs& in, const grpo_settings& settings) {
  const auto mask = in.mask.to(torch::kBool);
  grpo_terms out;
  out.tokens = mask.sum().item<std::int64_t>();

  torch::Tensor clipped;
  auto surrogate = clipped_surrogate(in.logp, in.proximal_logp, in.advantages, settings.eps_low, settings.eps_high,
                                     &clipped);
  auto raw_weight = behaviour_weight(in.proximal_logp, in.behaviour_logp, std::nullopt);
  auto weight = behaviour_weight(in.proximal_logp, in.behaviour_logp, settings.behaviour_cap);
  auto per_token = weight * surrogate;
  if (settings.beta != 0) {
    CRUCIBLE_CHECK(in.ref_logp.defined(), "beta != 0 needs reference log-probs");
    auto kl = k3_kl(in.logp, in.ref_logp);
    per_token = per_token + settings.beta * kl;
    out.kl = masked_mean(kl.detach(), mask, out.tokens);
  }
  out.loss = aggregate(per_token, mask, settings.mode, settings.normaliser);

  out.clip_fraction = masked_mean(clipped.to(torch::kFloat32), mask, out.tokens);
  if (out.tokens > 0) {
    auto w = raw_weight.masked_select(mask);
    out.weight_mean = w.mean().item<double>();
    out.weight_min = w.min().item<double>();
    out.weight_max = w.max().item<double>();
    if (settings.behaviour_cap) out.truncated_fraction = masked_mean((raw_weight > *settings.behaviour_cap).to(torch::kFloat32), mask, out.tokens);
  }
  return out;
}

torch::Tensor sft_loss(const torch::Tensor& logp, const torch::Tensor& mask, aggregation mode,
                       std::optional<double> normaliser) {
  return aggregate(-logp, mask, mode, normaliser);
}

torch::Tensor reinforce_loss(const torch::Tensor& logp, const torch::Tensor& rewards, const torch::Tensor& mask,
                             aggregation mode, std::optional<double> normaliser) {
  return aggregate(-rewards.detach().to(logp.dtype()).unsqueeze(-1) * logp, mask, mode, normaliser);
}

}  // namespace crucible::learner
