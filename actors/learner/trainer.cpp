#include "actors/learner/trainer.hpp"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/autocast_mode.h>
#include <torch/version.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>
#include <type_traits>

#include "actors/learner/adamw_state.hpp"
#include "actors/learner/learner_config.hpp"
#include "actors/learner/objectives.hpp"
#include "actors/learner/schedule.hpp"
#include "actors/learner/zero_optimizer.hpp"
#include "actors/policy/lora_adapters.hpp"

// LibTorch 2.4 replaced set_enabled / set_autocast_gpu_dtype with per-device calls.
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
#define CRUCIBLE_AUTOCAST_BY_DEVICE 1
#else
#define CRUCIBLE_AUTOCAST_BY_DEVICE 0
#endif
// The fused multi-tensor AdamW kernel (PyTorch's fused=True) and the foreach
// ops with a tensor scalar that clip gradients without a host read-back.
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 1)
#define CRUCIBLE_FUSED_STEP 1
#else
#define CRUCIBLE_FUSED_STEP 0
#endif

namespace crucible::learner {

// One sample ready for the network: its tokens as a policy::generation (so
// make_token_batch pads it), its per-sequence coefficient (the GRPO
// advantage, or the REINFORCE reward) and whether it has completion tokens.
struct trainer::prepared {
  policy::generation tokens;
  double coefficient = 0;
};

namespace {

// bf16 autocast for the forward of a CUDA model with fp32 weights; does
// nothing elsewhere. Restores the previous state when it goes.
class autocast_scope {
 public:
  explicit autocast_scope(bool on) : on_(on) {
    if (!on_) return;
#if CRUCIBLE_AUTOCAST_BY_DEVICE
    at::autocast::set_autocast_dtype(at::kCUDA, at::kBFloat16);
    at::autocast::set_autocast_enabled(at::kCUDA, true);
#else
    at::autocast::set_autocast_gpu_dtype(at::kBFloat16);
    at::autocast::set_enabled(true);
#endif
  }
  ~autocast_scope() {
    if (!on_) return;
#if CRUCIBLE_AUTOCAST_BY_DEVICE
    at::autocast::set_autocast_enabled(at::kCUDA, false);
#else
    at::autocast::set_enabled(false);
#endif
    at::autocast::clear_cache();
  }
  autocast_scope(const autocast_scope&) = delete;
  autocast_scope& operator=(const autocast_scope&) = delete;

 private:
  bool on_;
};

// AdamW's step for fp32 parameters on CUDA as one fused multi-tensor kernel
// instead of LibTorch's per-tensor loop (290 tensors, nine passes over each),
// the same update as torch::optim::AdamW::step. Returns false, changing
// nothing, where it does not apply (older LibTorch, other devices or dtypes,
// amsgrad, several parameter groups): the caller steps as usual.
bool fused_adamw_step(torch::optim::AdamW& optimizer) {
#if CRUCIBLE_FUSED_STEP
  if (optimizer.param_groups().size() != 1) return false;
  auto& group = optimizer.param_groups()[0];
  const auto& o = static_cast<const torch::optim::AdamWOptions&>(group.options());
  if (o.amsgrad()) return false;
  std::vector<torch::Tensor> params, grads, avgs, squares;
  for (auto& p : group.params()) {
    if (!p.grad().defined()) continue;
    if (!p.is_cuda() || p.scalar_type() != torch::kFloat32 || p.grad().scalar_type() != torch::kFloat32) return false;
    params.push_back(p);
    grads.push_back(p.grad());
  }
  if (params.empty()) return true;
  auto& state = optimizer.state();
  using map = std::decay_t<decltype(state)>;
  std::int64_t step = 0;
  for (auto& p : params) {
    auto key = adamw_state_key<map>(p);
    auto it = state.find(key);
    if (it == state.end()) {
      auto fresh = std::make_unique<torch::optim::AdamWParamState>();
      fresh->step(0);
      fresh->exp_avg(torch::zeros_like(p, torch::MemoryFormat::Preserve));
      fresh->exp_avg_sq(torch::zeros_like(p, torch::MemoryFormat::Preserve));
      it = state.emplace(key, std::move(fresh)).first;
    }
    auto& s = static_cast<torch::optim::AdamWParamState&>(*it->second);
    s.step(s.step() + 1);
    step = s.step();
    avgs.push_back(s.exp_avg());
    squares.push_back(s.exp_avg_sq());
  }
  // The kernel reads each parameter's step count from a device tensor; they
  // all took the same number of steps.
  auto count = torch::full({}, static_cast<double>(step), params[0].options().dtype(torch::kFloat32));
  std::vector<torch::Tensor> steps(params.size(), count);
  at::_fused_adamw_(params, grads, avgs, squares, {}, steps, o.lr(), std::get<0>(o.betas()), std::get<1>(o.betas()),
                    o.weight_decay(), o.eps(), /*amsgrad=*/false, /*maximize=*/false);
  return true;
#else
  (void)optimizer;
  return false;
#endif
}

// Clips the gradients of `params` to a global 2-norm of max_norm (when > 0)
// and returns that norm before clipping, as a scalar tensor: on CUDA without
// reading it back (foreach kernels; the caller reads it once the optimizer
// step is queued), elsewhere through clip_grad_norm_.
torch::Tensor clip_gradients(const std::vector<torch::Tensor>& params, double max_norm) {
  std::vector<torch::Tensor> grads;
  for (const auto& p : params)
    if (p.grad().defined()) grads.push_back(p.grad());
  if (grads.empty()) return torch::zeros({}, torch::kFloat64);
#if CRUCIBLE_FUSED_STEP
  if (grads[0].is_cuda()) {
    auto norms = at::_foreach_norm(grads, 2);
    auto total = torch::stack(norms).norm();
    if (max_norm > 0) at::_foreach_mul_(grads, (max_norm / (total + 1e-6)).clamp_max(1.0));
    return total;
  }
#endif
  if (max_norm > 0) return torch::full({}, torch::nn::utils::clip_grad_norm_(params, max_norm), torch::kFloat64);
  double norm = 0;
  for (const auto& g : grads) norm += g.to(torch::kFloat64).pow(2).sum().item<double>();
  return torch::full({}, std::sqrt(norm), torch::kFloat64);
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

status check_ids(const std::vector<std::int32_t>& ids, std::int64_t vocab, const std::string& where) {
  for (auto id : ids) {
    if (id < 0 || id >= vocab) {
      return make_error(errc::invalid_argument, where + ": token id " + std::to_string(id) +
                                                    " outside the vocabulary [0, " + std::to_string(vocab) + ")");
    }
  }
  return status::success();
}

// Checks a group's samples against the network: counts agree, ids in range.
status check_group(const rollout_group& g, std::int64_t vocab) {
  if (g.samples.empty()) return make_error(errc::invalid_argument, "group " + g.group_id + " has no samples");
  for (std::size_t i = 0; i < g.samples.size(); ++i) {
    const auto& s = g.samples[i];
    const std::string where = "group " + g.group_id + " sample " + std::to_string(i);
    if (s.prompt_ids.empty()) return make_error(errc::invalid_argument, where + ": empty prompt");
    if (s.behaviour_logprobs.size() != s.completion_ids.size())
      return make_error(errc::invalid_argument, where + ": " + std::to_string(s.behaviour_logprobs.size()) +
                                                    " behaviour log-probs for " +
                                                    std::to_string(s.completion_ids.size()) + " completion tokens");
    if (!s.token_versions.empty() && s.token_versions.size() != s.completion_ids.size())
      return make_error(errc::invalid_argument, where + ": " + std::to_string(s.token_versions.size()) +
                                                    " token versions for " + std::to_string(s.completion_ids.size()) +
                                                    " completion tokens");
    CRUCIBLE_TRY(check_ids(s.prompt_ids, vocab, where + " prompt"));
    CRUCIBLE_TRY(check_ids(s.completion_ids, vocab, where + " completion"));
  }
  return status::success();
}

policy::generation as_generation(const std::vector<std::int32_t>& prompt, const std::vector<std::int32_t>& completion,
                                 const std::vector<float>& behaviour) {
  policy::generation g;
  g.prompt_ids = prompt;
  g.ids = completion;
  g.logprobs = behaviour.empty() ? std::vector<float>(completion.size(), 0.0f) : behaviour;
  return g;
}

// The adapters of `model` (if any) in training mode while it lives (dropout).
class adapter_training {
 public:
  explicit adapter_training(policy::causal_lm& model) : adapters_(model.adapters()) {
    if (adapters_) adapters_->train(true);
  }
  ~adapter_training() {
    if (adapters_) adapters_->train(false);
  }
  adapter_training(const adapter_training&) = delete;
  adapter_training& operator=(const adapter_training&) = delete;

 private:
  std::shared_ptr<policy::lora_adapters> adapters_;
};

// Diagnostics summed over micro-batches and ranks: [loss, kl*tokens,
// clipped*tokens, weight*tokens, truncated*tokens, tokens, all tokens, sequences].
enum stat : int { s_loss, s_kl, s_clip, s_weight, s_trunc, s_tokens, s_all_tokens, s_sequences, s_count };

}  // namespace

trainer::trainer(std::shared_ptr<policy::causal_lm> model, std::shared_ptr<policy::causal_lm> reference,
                 const learner_options& options, collective* dp)
    : model_(std::move(model)),
      reference_(std::move(reference)),
      options_(options),
      dp_(dp),
      rewards_(options.reward_window),
      gate_(options.max_staleness, options.groups_per_batch) {
  if (!sharded()) optimizer_ = std::make_unique<torch::optim::AdamW>(trainable(), adamw_options());
}

torch::optim::AdamWOptions trainer::adamw_options() const {
  return torch::optim::AdamWOptions(options_.learning_rate)
      .betas({options_.adam_beta1, options_.adam_beta2})
      .eps(options_.adam_eps)
      .weight_decay(options_.weight_decay);
}

bool trainer::sharded() const { return options_.zero_stage == 2 && dp_ && dp_->world_size() > 1; }

trainer::~trainer() = default;

std::vector<torch::Tensor> trainer::trainable() const {
  return model_->adapters() ? model_->adapters()->parameters() : model_->parameters();
}

result<std::unique_ptr<trainer>> trainer::create(std::shared_ptr<policy::causal_lm> model,
                                                 std::shared_ptr<policy::causal_lm> reference,
                                                 const learner_options& options, collective* dp) {
  CRUCIBLE_CHECK(model != nullptr, "the trainer needs a policy");
  CRUCIBLE_TRY(validate(options));
  if (reference && (reference->config().vocab_size != model->config().vocab_size ||
                    reference->config().hidden_size != model->config().hidden_size)) {
    return make_error(errc::invalid_argument, "the reference policy's architecture differs from the policy's");
  }
  try {
    torch::manual_seed(options.seed);
    if (options.lora.enabled() && !model->adapters()) {
      auto added = policy::add_lora(*model, options.lora, options.seed);
      if (!added) return added.error();
    }
    const bool lora = model->adapters() != nullptr;
    // Under LoRA the reference is the base without adapters: no copy.
    if (options.kl_beta > 0 && !reference && !lora) reference = frozen_copy(*model);
    if (options.kl_beta == 0) reference.reset();
    model->set_activation_checkpointing(options.activation_checkpointing);
    for (auto& p : model->parameters()) p.set_requires_grad(!lora);
    if (lora)
      for (auto& p : model->adapters()->parameters()) p.set_requires_grad(true);
    auto t = std::unique_ptr<trainer>(new trainer(std::move(model), std::move(reference), options, dp));
    t->base_reference_ = lora && options.kl_beta > 0 && !t->reference_;
    if (t->sharded()) {
      auto zero = zero_optimizer::create(t->trainable(), t->adamw_options(), *dp);
      if (!zero) return zero.error();
      t->zero_ = std::move(*zero);
    }
    return t;
  } catch (const c10::Error& e) {
    return make_error(errc::internal, std::string("trainer: LibTorch: ") + e.what_without_backtrace());
  }
}

result<std::vector<double>> trainer::admit_batch(const std::vector<rollout_group>& batch, step_report& report) const {
  if (batch.empty()) return make_error(errc::invalid_argument, "train_" + report.objective + ": empty batch");
  std::vector<double> raw;
  for (const auto& g : batch) {
    CRUCIBLE_TRY(check_group(g, model_->config().vocab_size));
    CRUCIBLE_TRY(gate_.admit(g, version_));
    ++report.staleness[version_ - g.oldest_version()];
    for (const auto& s : g.samples) raw.push_back(s.reward);
  }
  double sum = 0;
  for (double r : raw) sum += r;
  report.reward_mean = sum / static_cast<double>(raw.size());
  return raw;
}

result<step_report> trainer::train_grpo(const std::vector<rollout_group>& batch) {
  step_report report;
  report.objective = "grpo";
  auto raw = admit_batch(batch, report);
  if (!raw) return raw.error();
  // Smoothing normalises against the window including this batch's rewards.
  rewards_.add(*raw);
  const double mu = rewards_.mean(), sigma = rewards_.stddev();
  std::vector<prepared> samples;
  double smooth_sum = 0;
  for (const auto& g : batch) {
    std::vector<double> r;
    for (const auto& s : g.samples) r.push_back(s.reward);
    auto smoothed = smooth_rewards(torch::tensor(r, torch::kFloat64), mu, sigma, options_.reward_clip);
    auto advantages = group_advantages(smoothed);
    for (std::size_t i = 0; i < g.samples.size(); ++i) {
      const auto& s = g.samples[i];
      smooth_sum += smoothed[static_cast<std::int64_t>(i)].item<double>();
      samples.push_back({as_generation(s.prompt_ids, s.completion_ids, s.behaviour_logprobs),
                         advantages[static_cast<std::int64_t>(i)].item<double>()});
    }
  }
  report.smoothed_reward_mean = smooth_sum / static_cast<double>(raw->size());
  return run_batch(std::move(samples), std::move(report));
}

result<step_report> trainer::train_reinforce(const std::vector<rollout_group>& batch) {
  step_report report;
  report.objective = "reinforce";
  auto raw = admit_batch(batch, report);
  if (!raw) return raw.error();
  std::vector<prepared> samples;
  for (const auto& g : batch)
    for (const auto& s : g.samples)
      if (s.reward > 0 && !s.completion_ids.empty())
        samples.push_back({as_generation(s.prompt_ids, s.completion_ids, s.behaviour_logprobs), 1.0});
  report.smoothed_reward_mean = static_cast<double>(samples.size()) / static_cast<double>(raw->size());  // success rate
  if (samples.empty()) {
    report.version = version_;
    report.optimizer_steps = optimizer_steps_;
    return report;
  }
  return run_batch(std::move(samples), std::move(report));
}

result<step_report> trainer::train_sft(const std::vector<sft_example>& batch) {
  if (batch.empty()) return make_error(errc::invalid_argument, "train_sft: empty batch");
  step_report report;
  report.objective = "sft";
  std::vector<prepared> samples;
  for (std::size_t i = 0; i < batch.size(); ++i) {
    const auto& e = batch[i];
    const std::string where = "sft example " + std::to_string(i);
    if (e.prompt_ids.empty() || e.completion_ids.empty())
      return make_error(errc::invalid_argument, where + ": empty prompt or completion");
    CRUCIBLE_TRY(check_ids(e.prompt_ids, model_->config().vocab_size, where + " prompt"));
    CRUCIBLE_TRY(check_ids(e.completion_ids, model_->config().vocab_size, where + " completion"));
    samples.push_back({as_generation(e.prompt_ids, e.completion_ids, {}), 1.0});
  }
  return run_batch(std::move(samples), std::move(report));
}

result<step_report> trainer::run_batch(std::vector<prepared> samples, step_report report) try {
  const auto start = std::chrono::steady_clock::now();
  const torch::Device device = model_->device();
  const bool autocast = device.is_cuda() && options_.bf16_autocast && model_->compute_dtype() == torch::kFloat32;
  const int rank = dp_ ? dp_->rank() : 0, world = dp_ ? dp_->world_size() : 1;
  const std::size_t minis = std::min<std::size_t>(options_.mini_batches, samples.size());
  const bool grpo = report.objective == "grpo";

  // Mini-batch m holds samples [m * n / minis, (m + 1) * n / minis); this
  // rank takes every world-th of them, cut into micro_batches slices.
  struct micro {
    policy::token_batch batch;
    torch::Tensor coefficients, proximal, reference;
    double completion_tokens = 0, all_tokens = 0;  // counted here, not read back from the masks
  };
  struct mini {
    std::vector<micro> micros;
    double normaliser = 0;
  };
  std::vector<mini> plan(minis);
  for (std::size_t m = 0; m < minis; ++m) {
    const std::size_t lo = m * samples.size() / minis, hi = (m + 1) * samples.size() / minis;
    std::vector<std::size_t> mine;
    for (std::size_t i = lo; i < hi; ++i) {
      const bool has_tokens = !samples[i].tokens.ids.empty();
      if (options_.loss_aggregation == aggregation::token_mean)
        plan[m].normaliser += static_cast<double>(samples[i].tokens.ids.size());
      else if (has_tokens)
        plan[m].normaliser += 1;
      if (static_cast<int>((i - lo) % static_cast<std::size_t>(world)) == rank && has_tokens) mine.push_back(i);
    }
    const std::size_t slices = std::min<std::size_t>(options_.micro_batches, std::max<std::size_t>(mine.size(), 1));
    for (std::size_t k = 0; k < slices && !mine.empty(); ++k) {
      std::vector<policy::generation> gens;
      std::vector<double> coef;
      micro mb;
      for (std::size_t j = k * mine.size() / slices; j < (k + 1) * mine.size() / slices; ++j) {
        gens.push_back(samples[mine[j]].tokens);
        coef.push_back(samples[mine[j]].coefficient);
        mb.completion_tokens += static_cast<double>(gens.back().ids.size());
        mb.all_tokens += static_cast<double>(gens.back().prompt_ids.size() + gens.back().ids.size());
      }
      if (gens.empty()) continue;
      mb.batch = policy::make_token_batch(gens, device);
      mb.coefficients = torch::tensor(coef, torch::kFloat64).to(torch::kFloat32).to(device);
      plan[m].micros.push_back(std::move(mb));
    }
  }

  // The proximal policy (the weights before this batch) and the reference,
  // recomputed for every token of this rank's share. With one optimizer step
  // per batch the proximal policy is the one being trained, before its step:
  // its log-probabilities are the trained forward's, detached (as TRL's GRPO
  // takes them with one iteration a batch), and its own forward, a fifth of
  // a LoRA step's FLOPs at 7B, is not run; unless LoRA dropout makes the
  // trained forward differ from the eval-mode one.
  const bool lora_dropout = model_->adapters() && model_->adapters()->options().dropout > 0;
  const bool proximal_is_trained = minis == 1 && !lora_dropout;
  if (grpo) {
    torch::NoGradGuard no_grad;
    autocast_scope scope(autocast);
    for (auto& m : plan) {
      for (auto& mb : m.micros) {
        const auto& b = mb.batch;
        if (!proximal_is_trained)
          mb.proximal = policy::token_logprobs(*model_, b.input_ids, b.attention_mask, b.first_target, options_.temperature).to(torch::kFloat32);
        if (reference_) {
          mb.reference = policy::token_logprobs(*reference_, b.input_ids, b.attention_mask, b.first_target, options_.temperature).to(torch::kFloat32);
        } else if (base_reference_) {
          policy::causal_lm::base_only_scope base_only;
          mb.reference = policy::token_logprobs(*model_, b.input_ids, b.attention_mask, b.first_target, options_.temperature).to(torch::kFloat32);
        }
      }
    }
  }

  grpo_settings settings;
  settings.eps_low = options_.clip_eps_low;
  settings.eps_high = options_.clip_eps_high;
  settings.beta = reference_ || base_reference_ ? options_.kl_beta : 0.0;
  if (options_.behaviour_weight_cap > 0) settings.behaviour_cap = options_.behaviour_weight_cap;
  settings.mode = options_.loss_aggregation;

  auto totals = torch::zeros({s_count}, torch::kFloat64);
  double weight_min = 0, weight_max = 0;
  bool weight_seen = false;
  for (auto& m : plan) {
    zero_grad();
    settings.normaliser = m.normaliser;
    auto mini_totals = torch::zeros({s_count}, torch::kFloat64);
    // On the device, read once per optimizer step: the loss, and GRPO's
    // sums and behaviour-weight range (grpo_terms).
    torch::Tensor loss_sum, grpo_sums, weight_range;
    for (auto& mb : m.micros) {
      const auto& b = mb.batch;
      torch::Tensor loss;
      {
        autocast_scope scope(autocast);
        adapter_training training(*model_);  // LoRA dropout in this forward only
        auto logp = policy::token_logprobs(*model_, b.input_ids, b.attention_mask, b.first_target, options_.temperature).to(torch::kFloat32);
        if (grpo) {
          grpo_inputs in{logp, proximal_is_trained ? logp.detach() : mb.proximal, b.behaviour_logprobs, mb.reference,
                         mb.coefficients, b.completion_mask};
          auto terms = grpo_loss(in, settings);
          loss = terms.loss;
          grpo_sums = grpo_sums.defined() ? grpo_sums + terms.sums : terms.sums;
          weight_range = weight_range.defined()
                             ? torch::stack({torch::minimum(weight_range[0], terms.weight_range[0]),
                                             torch::maximum(weight_range[1], terms.weight_range[1])})
                             : terms.weight_range;
        } else if (report.objective == "reinforce") {
          loss = reinforce_loss(logp, mb.coefficients, b.completion_mask, options_.loss_aggregation, m.normaliser);
        } else {
          loss = sft_loss(logp, b.completion_mask, options_.loss_aggregation, m.normaliser);
        }
      }
      loss.backward();
      auto detached = loss.detach().to(torch::kFloat64);
      loss_sum = loss_sum.defined() ? loss_sum + detached : detached;
      mini_totals[s_tokens] += mb.completion_tokens;
      mini_totals[s_all_tokens] += mb.all_tokens;
      mini_totals[s_sequences] += static_cast<double>(b.input_ids.size(0));
    }
    if (loss_sum.defined()) mini_totals[s_loss] += loss_sum.item<double>();
    if (grpo_sums.defined()) {
      auto sums = grpo_sums.to(torch::kCPU);
      mini_totals[s_kl] += sums[grpo_terms::kl];
      mini_totals[s_clip] += sums[grpo_terms::clipped];
      mini_totals[s_weight] += sums[grpo_terms::weight];
      mini_totals[s_trunc] += sums[grpo_terms::truncated];
      if (sums[grpo_terms::tokens].item<double>() > 0) {
        auto range = weight_range.to(torch::kCPU);
        const double low = range[0].item<double>(), high = range[1].item<double>();
        weight_min = weight_seen ? std::min(weight_min, low) : low;
        weight_max = weight_seen ? std::max(weight_max, high) : high;
        weight_seen = true;
      }
    }
    const double lr = scheduled_learning_rate(options_.learning_rate, optimizer_steps_, options_.warmup_steps,
                                              options_.total_steps, options_.min_lr_ratio);
    auto& optimizer = zero_ ? zero_->optimizer() : *optimizer_;
    for (auto& group : optimizer.param_groups())
      static_cast<torch::optim::AdamWOptions&>(group.options()).lr(lr);
    if (zero_) {
      // ZeRO stage 2: statistics summed, gradients reduce-scattered; AdamW
      // steps this rank's slice, whose update every rank then gathers.
      std::vector<torch::Tensor> stats{mini_totals};
      CRUCIBLE_TRY(dp_->all_reduce_sum(stats));
      auto norm = zero_->reduce_gradients(options_.max_grad_norm);
      if (!norm) return norm.error();
      if (!fused_adamw_step(optimizer)) optimizer.step();
      CRUCIBLE_TRY(zero_->gather_parameters());
      report.grad_norm = *norm;
    } else {
      // Every rank sums its gradients and statistics with the others'.
      std::vector<torch::Tensor> grads;
      const auto params = trainable();
      for (auto p : params) {
        if (!p.grad().defined()) p.mutable_grad() = torch::zeros_like(p);
        grads.push_back(p.grad());
      }
      if (dp_) {
        grads.push_back(mini_totals);
        CRUCIBLE_TRY(dp_->all_reduce_sum(grads));
      }
      auto norm = clip_gradients(params, options_.max_grad_norm);
      if (!fused_adamw_step(optimizer)) optimizer.step();
      report.grad_norm = norm.item<double>();
    }
    totals += mini_totals;
    ++optimizer_steps_;
    report.learning_rate = lr;
  }
  zero_grad();
  ++version_;
  kept_bytes(report);

  const double tokens = totals[s_tokens].item<double>();
  report.loss = totals[s_loss].item<double>() / static_cast<double>(plan.size());
  if (tokens > 0) {
    report.kl = totals[s_kl].item<double>() / tokens;
    report.clip_fraction = totals[s_clip].item<double>() / tokens;
    report.weight_mean = totals[s_weight].item<double>() / tokens;
    report.truncated_fraction = totals[s_trunc].item<double>() / tokens;
  }
  report.weight_min = weight_min;
  report.weight_max = weight_max;
  report.version = version_;
  report.optimizer_steps = optimizer_steps_;
  report.sequences = static_cast<std::uint64_t>(totals[s_sequences].item<double>());
  report.tokens = static_cast<std::uint64_t>(totals[s_all_tokens].item<double>());
  report.seconds = seconds_since(start);
  report.tokens_per_second = report.seconds > 0 ? static_cast<double>(report.tokens) / report.seconds : 0;
  return report;
} catch (const c10::Error& e) {
  return make_error(errc::internal, std::string("trainer: LibTorch: ") + e.what_without_backtrace());
}

void trainer::zero_grad() {
  if (zero_) zero_->zero_grad();
  else optimizer_->zero_grad();
}

void trainer::kept_bytes(step_report& report) const {
  if (zero_) {
    report.gradient_bytes = zero_->gradient_bytes();
    report.optimizer_state_bytes = zero_->optimizer_state_bytes();
    return;
  }
  std::int64_t bytes = 0;
  for (const auto& p : trainable()) bytes += p.numel() * p.element_size();
  report.gradient_bytes = bytes;              // a summed gradient per parameter
  report.optimizer_state_bytes = 2 * bytes;   // exp_avg and exp_avg_sq
}

// ---- weights ----------------------------------------------------------------

void copy_weights(const policy::causal_lm& from, policy::causal_lm& to) {
  torch::NoGradGuard no_grad;
  auto source = from.named_parameters();
  for (auto& item : to.named_parameters()) {
    const auto* p = source.find(item.key());
    CRUCIBLE_CHECK(p != nullptr, "copy_weights: architectures differ");
    item.value().copy_(*p);
  }
}

std::shared_ptr<policy::causal_lm> frozen_copy(const policy::causal_lm& model) {
  policy::model_placement placement;
  placement.device = model.device().str();
  const auto dtype = model.compute_dtype();
  placement.compute_dtype = dtype == torch::kBFloat16 ? policy::dtype::bf16
                            : dtype == torch::kHalf   ? policy::dtype::f16
                                                      : policy::dtype::f32;
  auto copy = std::make_shared<policy::causal_lm>(model.config(), placement);
  copy->set_config_json(model.config_json());
  copy_weights(model, *copy);
  for (auto& p : copy->parameters()) p.set_requires_grad(false);
  if (model.adapters()) {
    copy->set_adapters(policy::copy_adapters(*model.adapters()));
    for (auto& p : copy->adapters()->parameters()) p.set_requires_grad(false);
  }
  return copy;
}

void initialise_weights(policy::causal_lm& model, std::uint64_t seed) {
  torch::NoGradGuard no_grad;
  auto gen = at::detail::createCPUGenerator(seed);
  for (auto& item : model.named_parameters()) {
    auto t = item.value();
    const std::string& name = item.key();
    torch::Tensor fresh;
    if (name.ends_with("norm.weight")) fresh = torch::ones(t.sizes(), torch::kFloat32);
    else if (name.ends_with(".bias")) fresh = torch::zeros(t.sizes(), torch::kFloat32);
    else fresh = 0.02 * torch::randn(t.sizes(), gen, torch::TensorOptions().dtype(torch::kFloat32));
    t.copy_(fresh);
  }
}

}  // namespace crucible::learner
