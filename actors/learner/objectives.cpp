#include "actors/learner/objectives.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

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
  // Selected, not multiplied: an inf at a padded position times 0 is NaN.
  auto masked = torch::where(mask.to(torch::kBool), per_token, torch::zeros({}, per_token.options()));
  if (mode == aggregation::token_mean) {
    const double count = normaliser ? *normaliser : m.sum().item<double>();
    return count > 0 ? masked.sum() / count : masked.sum() * 0.0;
  }
  auto lengths = m.sum(-1);
  auto per_sequence = masked.sum(-1) / lengths.clamp_min(1.0);
  const double count = normaliser ? *normaliser : (lengths > 0).sum().item<double>();
  return count > 0 ? per_sequence.sum() / count : per_sequence.sum() * 0.0;
}

grpo_terms grpo_loss(const grpo_inputs& in, const grpo_settings& settings) {
  const auto mask = in.mask.to(torch::kBool);
  // Sums over the masked tokens by where, not masked_select (whose size the
  // host must read) nor a product (a padded position's weight may be inf).
  auto masked_sum = [&](const torch::Tensor& v) {
    return torch::where(mask, v.detach().to(torch::kFloat64), 0.0).sum();
  };
  torch::Tensor clipped;
  auto surrogate = clipped_surrogate(in.logp, in.proximal_logp, in.advantages, settings.eps_low, settings.eps_high,
                                     &clipped);
  auto raw_weight = behaviour_weight(in.proximal_logp, in.behaviour_logp, std::nullopt);
  // Zero at padded positions, so that whatever stands there (an inf weight)
  // reaches neither the loss nor, through the product's backward, the gradient.
  auto weight = torch::where(mask, behaviour_weight(in.proximal_logp, in.behaviour_logp, settings.behaviour_cap), 0.0);
  auto per_token = weight * surrogate;
  auto zero = torch::zeros({}, mask.options().dtype(torch::kFloat64));
  auto kl_sum = zero;
  if (settings.beta != 0) {
    CRUCIBLE_CHECK(in.ref_logp.defined(), "beta != 0 needs reference log-probs");
    auto kl = k3_kl(in.logp, in.ref_logp);
    per_token = per_token + settings.beta * kl;
    kl_sum = masked_sum(kl);
  }
  grpo_terms out;
  out.loss = aggregate(per_token, mask, settings.mode, settings.normaliser);
  auto truncated = settings.behaviour_cap ? masked_sum(raw_weight > *settings.behaviour_cap) : zero;
  out.sums = torch::stack({masked_sum(mask), kl_sum, masked_sum(clipped), masked_sum(raw_weight), truncated});
  auto w = raw_weight.detach().to(torch::kFloat64);
  const double inf = std::numeric_limits<double>::infinity();
  out.weight_range = torch::stack({torch::where(mask, w, inf).min(), torch::where(mask, w, -inf).max()});
  return out;
}

grpo_statistics grpo_terms::read() const {
  auto s = sums.to(torch::kCPU);
  auto range = weight_range.to(torch::kCPU);
  grpo_statistics out;
  out.tokens = static_cast<std::int64_t>(s[tokens].item<double>());
  if (out.tokens == 0) return out;
  const double n = static_cast<double>(out.tokens);
  out.kl = s[kl].item<double>() / n;
  out.clip_fraction = s[clipped].item<double>() / n;
  out.weight_mean = s[weight].item<double>() / n;
  out.truncated_fraction = s[truncated].item<double>() / n;
  out.weight_min = range[0].item<double>();
  out.weight_max = range[1].item<double>();
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
