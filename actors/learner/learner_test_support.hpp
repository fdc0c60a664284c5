// Test helpers for the learner: a tiny Qwen2-shaped policy made in the test
// (about 75 K parameters, 16-token vocabulary), the synthetic task (reward =
// share of generated tokens equal to a target token), and rollouts sampled
// with the real batched generation. Used by trainer.test.cpp and the
// data-parallel probe (learner_dp_probe.cpp).
#pragma once

#include <cstdint>
#include <memory>
#include <random>
#include <vector>

#include "actors/learner/trainer.hpp"
#include "actors/policy/tokenizer_test_support.hpp"

namespace crucible::learner::testing {

inline constexpr std::int32_t kVocab = 16;
inline constexpr std::int32_t kTarget = 7;

inline policy::model_config tiny_config() {
  policy::model_config c;
  c.arch = policy::architecture::qwen2;
  c.architecture_name = "Qwen2ForCausalLM";
  c.hidden_size = 64;
  c.intermediate_size = 128;
  c.num_hidden_layers = 2;
  c.num_attention_heads = 4;
  c.num_key_value_heads = 2;
  c.head_dim = 16;
  c.vocab_size = kVocab;
  c.max_position_embeddings = 64;
  c.rope_theta = 10000;
  c.rms_norm_eps = 1e-6;
  c.tie_word_embeddings = true;
  c.attention_bias = true;
  c.torch_dtype = "float32";
  return c;
}

inline std::shared_ptr<policy::causal_lm> tiny_policy(std::uint64_t seed) {
  auto model = std::make_shared<policy::causal_lm>(tiny_config(), policy::model_placement{"cpu", policy::dtype::f32});
  initialise_weights(*model, seed);
  return model;
}

// A byte-level tokenizer (ids 0..255 are bytes); generation only decodes with it.
inline const policy::tokenizer& byte_tokenizer() {
  static const policy::tokenizer tok = *policy::tokenizer::parse(policy::testing::byte_level_tokenizer({}).dump(), "test");
  return tok;
}

inline double target_share(const std::vector<std::int32_t>& ids) {
  if (ids.empty()) return 0;
  double hits = 0;
  for (auto id : ids) hits += id == kTarget ? 1 : 0;
  return hits / static_cast<double>(ids.size());
}

// `prompts` groups of `group_size` samples of `new_tokens` tokens from
// `sampler`, labelled with `version`; prompts and sampling seeds follow `seed`.
inline std::vector<rollout_group> sample_groups(policy::causal_lm& sampler, std::uint64_t version, std::uint64_t seed,
                                                int prompts = 4, int group_size = 8, int new_tokens = 8) {
  std::mt19937_64 rng(seed);
  std::vector<std::vector<std::int32_t>> batch;
  for (int p = 0; p < prompts; ++p) {
    std::vector<std::int32_t> prompt;
    for (int i = 0; i < 3; ++i) prompt.push_back(static_cast<std::int32_t>(rng() % kVocab));
    for (int g = 0; g < group_size; ++g) batch.push_back(prompt);
  }
  policy::generation_options o;
  o.max_new_tokens = new_tokens;
  o.eos_token_ids = std::vector<std::int32_t>{};
  o.sampling.seed = seed * 7919;
  auto gens = policy::generate(sampler, byte_tokenizer(), batch, o);
  CRUCIBLE_CHECK(gens.ok(), "sample_groups: generation failed");
  std::vector<rollout_group> groups(static_cast<std::size_t>(prompts));
  for (int p = 0; p < prompts; ++p) {
    auto& g = groups[static_cast<std::size_t>(p)];
    g.group_id = "s" + std::to_string(seed) + "p" + std::to_string(p);
    g.task_id = "target";
    g.policy_version = version;
    for (int i = 0; i < group_size; ++i) {
      const auto& gen = (*gens)[static_cast<std::size_t>(p * group_size + i)];
      rollout_sample s;
      s.prompt_ids = gen.prompt_ids;
      s.completion_ids = gen.ids;
      s.behaviour_logprobs = gen.logprobs;
      s.token_versions.assign(gen.ids.size(), version);
      s.reward = target_share(gen.ids);
      g.samples.push_back(std::move(s));
    }
  }
  return groups;
}

inline double mean_reward(const std::vector<rollout_group>& groups) {
  double sum = 0, n = 0;
  for (const auto& g : groups)
    for (const auto& s : g.samples) sum += s.reward, ++n;
  return n > 0 ? sum / n : 0;
}

// The summed log-prob of `completion` after `prompt` under `model`.
inline double logprob_of(policy::causal_lm& model, const std::vector<std::int32_t>& prompt,
                         const std::vector<std::int32_t>& completion) {
  torch::NoGradGuard no_grad;
  policy::generation g;
  g.prompt_ids = prompt;
  g.ids = completion;
  g.logprobs.assign(completion.size(), 0);
  auto b = policy::make_token_batch({g}, torch::kCPU);
  return policy::token_logprobs(model, b.input_ids, b.attention_mask, b.first_target).sum().item<double>();
}

// GRPO steps `from`..`to` on groups sampled by `t`'s own policy (seeds
// step + 100); the losses.
inline std::vector<double> grpo_steps(trainer& t, int from, int to) {
  std::vector<double> losses;
  for (int step = from; step < to; ++step) {
    auto groups = sample_groups(t.model(), t.version(), static_cast<std::uint64_t>(step) + 100);
    auto r = t.train_grpo(groups);
    CRUCIBLE_CHECK(r.ok(), "grpo_steps: a GRPO step failed");
    losses.push_back(r->loss);
  }
  return losses;
}

// Options the learnability tests train with.
inline learner_options tiny_options() {
  learner_options o;
  o.learning_rate = 1e-2;
  o.groups_per_batch = 4;
  o.reward_window = 64;
  o.max_grad_norm = 1.0;
  o.seed = 1;
  return o;
}

}  // namespace crucible::learner::testing
