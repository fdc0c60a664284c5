// The learner under LoRA ([learner] lora_rank > 0) on the tiny policy of
// learner_test_support.hpp: GRPO (with its KL to the base without adapters),
// REINFORCE and SFT train the adapters only and learn as the full-weight
// trainer does; the base never moves; a checkpoint holds the adapters and a
// resumed run repeats the uninterrupted losses; a publication is the
// adapters alone, as a PEFT folder or an image that unpacks into one.
// LibTorch first: glog defines a CHECK that doctest's must replace.
#include "actors/learner/learner_test_support.hpp"

#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "actors/learner/learner_config.hpp"
#include "actors/learner/weight_publisher.hpp"
#include "actors/policy/lora_adapters.hpp"
#include "actors/policy/test_support.hpp"
#include "actors/rollout/weights_folder.hpp"
#include "runtime/base/error_text.hpp"

namespace crucible::learner {
namespace {

using namespace testing;

// The full-weight tests' options (learning rate 1e-2) with LoRA.
learner_options lora_options(std::uint32_t rank = 8) {
  auto o = tiny_options();
  o.lora.rank = rank;
  o.lora.alpha = 16;
  o.learning_rate = 1e-2;
  return o;
}

// The tiny policy as a base for adapters: its tied embeddings scaled from
// std 0.02 to 0.08. LoRA leaves them frozen, and at their random init's scale
// no hidden state can give the target token more than about 0.2 of the
// probability (the logit gap is at most |h| |e_7| = 8 x 0.16; the GRPO runs
// stalled at 0.22 for every learning rate from 2e-3 to 5e-2); at 4x it can
// reach 0.9 (3x stalled at 0.72). A trained model's head is not at its init.
std::shared_ptr<policy::causal_lm> lora_base(std::uint64_t seed) {
  auto model = tiny_policy(seed);
  torch::NoGradGuard no_grad;
  model->named_parameters()["model.embed_tokens.weight"].mul_(4.0);
  return model;
}

std::map<std::string, torch::Tensor> base_weights(const policy::causal_lm& model) {
  std::map<std::string, torch::Tensor> out;
  for (const auto& item : model.named_parameters()) out[item.key()] = item.value().detach().clone();
  return out;
}

void check_base_unchanged(const policy::causal_lm& model, const std::map<std::string, torch::Tensor>& before) {
  for (const auto& item : model.named_parameters()) {
    CAPTURE(item.key());
    CHECK(torch::equal(item.value(), before.at(item.key())));
  }
}

// GRPO on the target task with fresh rollouts until the sampled reward
// passes 0.8 or max_steps; the first and best rewards, and the last KL.
struct lora_run {
  double first_reward = 0, best_reward = 0, last_kl = 0;
  int steps = 0;
};

lora_run learn_target_lora(const learner_options& o, int max_steps) {
  torch::set_num_threads(1);
  auto model = lora_base(11);
  const auto before = base_weights(*model);
  auto t = trainer::create(model, nullptr, o);
  REQUIRE_MESSAGE(t.ok(), crucible::error_text(t));
  REQUIRE(model->adapters() != nullptr);
  lora_run r;
  for (int step = 0; step < max_steps; ++step) {
    auto groups = sample_groups(*model, (*t)->version(), static_cast<std::uint64_t>(step) + 1);
    const double reward = mean_reward(groups);
    if (step == 0) r.first_reward = reward;
    r.best_reward = std::max(r.best_reward, reward);
    r.steps = step;
    if (reward > 0.8) break;
    auto report = (*t)->train_grpo(groups);
    REQUIRE_MESSAGE(report.ok(), crucible::error_text(report));
    r.last_kl = report->kl;
  }
  check_base_unchanged(*model, before);
  return r;
}

TEST_CASE("LoRA options are read from [learner] lora_* keys and refused by name when bad") {
  learner_options o;
  CHECK_FALSE(o.lora.enabled());
  o.lora.rank = 4;
  o.lora.targets = {"q_proj", "wte"};
  auto s = validate(o);
  REQUIRE_FALSE(s.ok());
  CHECK(s.error().message.find("[learner] lora_targets") != std::string::npos);
  o.lora.targets = {"q_proj"};
  o.lora.alpha = 0;
  CHECK(validate(o).error().message.find("[learner] lora_alpha") != std::string::npos);
}

TEST_CASE("GRPO with LoRA raises the share of target tokens over 0.8 training the adapters only, its KL to the base growing") {
  auto o = lora_options();
  o.kl_beta = 0.01;
  auto r = learn_target_lora(o, 60);
  MESSAGE("LoRA rank 8: reward " << r.first_reward << " -> " << r.best_reward << " in " << r.steps
                                 << " steps, last KL " << r.last_kl);
  CHECK(r.first_reward < 0.1);
  CHECK(r.best_reward > 0.8);
  CHECK(r.last_kl > 0);  // the reference (the base without adapters) is not the policy
}

TEST_CASE("LoRA on some projections only, with dropout, still learns") {
  auto o = lora_options(4);
  o.lora.targets = {"q_proj", "v_proj", "o_proj", "down_proj"};
  o.lora.dropout = 0.05;
  auto r = learn_target_lora(o, 60);
  MESSAGE("LoRA rank 4 on q, v, o, down: reward " << r.first_reward << " -> " << r.best_reward << " in " << r.steps << " steps");
  CHECK(r.best_reward > 0.8);
}

TEST_CASE("SFT and REINFORCE with LoRA move the likelihoods the right way and leave the base alone") {
  torch::set_num_threads(1);
  {
    auto model = tiny_policy(5);
    const auto before = base_weights(*model);
    auto o = lora_options();
    o.objective = stage::sft;
    auto t = trainer::create(model, nullptr, o);
    REQUIRE(t.ok());
    std::vector<sft_example> batch{{{1, 2, 3}, {4, 5, 6}}, {{3, 2}, {9, 9, 9, 9}}, {{8}, {1}}, {{2, 2}, {3, 3}}};
    const double start = logprob_of(*model, {3, 2}, {9, 9, 9, 9});
    for (int i = 0; i < 10; ++i) REQUIRE((*t)->train_sft(batch).ok());
    CHECK(logprob_of(*model, {3, 2}, {9, 9, 9, 9}) > start + 1.0);
    check_base_unchanged(*model, before);
  }
  {
    auto model = tiny_policy(5);
    const auto before = base_weights(*model);
    auto o = lora_options();
    o.objective = stage::reinforce;
    auto t = trainer::create(model, nullptr, o);
    REQUIRE(t.ok());
    rollout_group g;
    g.group_id = "g";
    g.samples.resize(2);
    g.samples[0] = {{1, 2}, {4, 4, 4}, {-2.8f, -2.8f, -2.8f}, {}, 1.0};
    g.samples[1] = {{1, 2}, {5, 5, 5}, {-2.8f, -2.8f, -2.8f}, {}, 0.0};
    const double win = logprob_of(*model, {1, 2}, {4, 4, 4});
    for (int i = 0; i < 5; ++i) {
      g.policy_version = (*t)->version();
      REQUIRE((*t)->train_reinforce({g}).ok());
    }
    CHECK(logprob_of(*model, {1, 2}, {4, 4, 4}) > win + 0.5);
    check_base_unchanged(*model, before);
  }
}

TEST_CASE("a LoRA checkpoint holds the adapters as a PEFT folder, and a resumed run repeats the uninterrupted losses") {
  torch::set_num_threads(1);
  policy::testing::scratch_dir dir;
  auto o = lora_options(4);
  o.kl_beta = 0.05;
  o.mini_batches = 2;
  o.policy = "base-folder";

  auto whole = trainer::create(tiny_policy(21), nullptr, o);
  REQUIRE(whole.ok());
  auto all = grpo_steps(**whole, 0, 5);

  auto first = trainer::create(tiny_policy(21), nullptr, o);
  REQUIRE(first.ok());
  grpo_steps(**first, 0, 3);
  REQUIRE((*first)->save_checkpoint(dir.path()).ok());
  first->reset();

  auto adapter = latest_checkpoint_weights(dir.path());
  REQUIRE(adapter.ok());
  CHECK(adapter->filename() == "adapter");
  CHECK(policy::is_adapter_folder(*adapter));
  CHECK_FALSE(std::filesystem::exists(adapter->parent_path() / "policy"));
  CHECK_FALSE(std::filesystem::exists(adapter->parent_path() / "reference"));
  const auto config = nlohmann::json::parse(policy::testing::read_file(*adapter / "adapter_config.json"));
  CHECK(config["r"] == 4);
  CHECK(config["base_model_name_or_path"] == "base-folder");

  auto resumed = trainer::create(tiny_policy(21), nullptr, o);  // the base, fresh adapters
  REQUIRE(resumed.ok());
  auto s = (*resumed)->load_checkpoint(dir.path());
  REQUIRE_MESSAGE(s.ok(), crucible::error_text(s));
  CHECK((*resumed)->version() == 3);
  auto rest = grpo_steps(**resumed, 3, 5);
  for (int i = 0; i < 2; ++i) {
    INFO("step " << 3 + i);
    CHECK(rest[static_cast<std::size_t>(i)] == all[static_cast<std::size_t>(3 + i)]);
  }

  // A learner with other adapters refuses the checkpoint.
  auto other_options = o;
  other_options.lora.rank = 2;
  auto other = trainer::create(tiny_policy(21), nullptr, other_options);
  REQUIRE(other.ok());
  auto refused = (*other)->load_checkpoint(dir.path());
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().message.find("adapters") != std::string::npos);
}

TEST_CASE("a LoRA publication is the adapters alone: a PEFT folder, or chunks whose image carries its config") {
  torch::set_num_threads(1);
  policy::testing::scratch_dir dir;
  auto model = tiny_policy(5);
  weight_publisher full({});
  auto whole = full.publish(*model, 0);
  REQUIRE(whole.ok());

  auto o = lora_options(4);
  o.objective = stage::sft;
  auto t = trainer::create(model, nullptr, o);
  REQUIRE(t.ok());
  std::vector<sft_example> batch{{{1, 2, 3}, {4, 5, 6}}, {{3, 2}, {9, 9, 9, 9}}, {{8}, {1}}, {{2, 2}, {3, 3}}};
  for (int i = 0; i < 3; ++i) REQUIRE((*t)->train_sft(batch).ok());

  weight_publisher_options chunks;
  chunks.base_model = "base-folder";
  weight_publisher in_memory(chunks);
  auto p = in_memory.publish(*model, 3);
  REQUIRE(p.ok());
  MESSAGE("publication: full weights " << whole->total_bytes << " bytes, LoRA rank 4 adapters " << p->total_bytes << " bytes");
  // 2 layers x 7 projections x rank 4 x (in + out) floats, and the header.
  const std::size_t adapter_floats = 2 * 4 * ((64 + 64) + 2 * (64 + 32) + (64 + 64) + 2 * (64 + 128) + (128 + 64));
  CHECK(p->total_bytes >= adapter_floats * 4);
  CHECK(p->total_bytes < adapter_floats * 4 + 16384);
  CHECK(p->total_bytes * 4 < whole->total_bytes);

  weight_publisher_options shared;
  shared.publish_dir = (dir / "versions").string();
  shared.base_model = "base-folder";
  weight_publisher to_folder(shared);
  auto q = to_folder.publish(*model, 3);
  REQUIRE(q.ok());
  CHECK(q->sha256 == p->sha256);
  const std::filesystem::path folder = q->path;
  CHECK(policy::is_adapter_folder(folder));
  CHECK_FALSE(std::filesystem::exists(folder / "model.safetensors"));
  CHECK(std::filesystem::file_size(folder / "adapter_model.safetensors") == p->total_bytes);

  // A rollout's frozen base with the published adapters computes what the learner's policy does.
  auto rollout_base = tiny_policy(5);
  const std::vector<std::int32_t> prompt{3, 2}, completion{9, 9, 9, 9};
  REQUIRE(policy::load_adapters(*rollout_base, folder).ok());
  CHECK(std::abs(logprob_of(*rollout_base, prompt, completion) - logprob_of(*model, prompt, completion)) < 1e-5);

  // Chunks: the rollout unpacks the image into a PEFT folder of its own.
  auto unpacked = rollout::unpack_weights(in_memory.bytes(), dir / "no-model", (dir / "rollout").string(), "r0", 3);
  REQUIRE_MESSAGE(unpacked.ok(), (unpacked.ok() ? "" : unpacked.error().text()));
  CHECK(policy::is_adapter_folder(*unpacked));
  auto unpacked_config = policy::read_peft_adapter_config(*unpacked / "adapter_config.json");
  REQUIRE(unpacked_config.ok());
  CHECK(unpacked_config->rank == 4);
  auto chunk_base = tiny_policy(5);
  REQUIRE(policy::load_adapters(*chunk_base, *unpacked).ok());
  CHECK(std::abs(logprob_of(*chunk_base, prompt, completion) - logprob_of(*model, prompt, completion)) < 1e-5);
  // A path: the published folder itself.
  auto linked = rollout::weights_folder(folder, dir / "no-model", (dir / "rollout").string(), "r0", 3);
  REQUIRE(linked.ok());
  CHECK(*linked == folder);
}

}  // namespace
}  // namespace crucible::learner

namespace crucible::learner {
namespace {

// One GRPO step of `options` on the tiny policy (seed 11) and fixed groups:
// the trained tensors after it (the adapters' under LoRA, else the policy's).
std::vector<torch::Tensor> one_step(const learner_options& options) {
  torch::set_num_threads(1);
  auto model = testing::tiny_policy(11);
  auto sampler = frozen_copy(*model);
  auto t = trainer::create(model, nullptr, options);
  REQUIRE_MESSAGE(t.ok(), crucible::error_text(t));
  auto groups = testing::sample_groups(*sampler, 0, 5);
  auto report = (*t)->train_grpo(groups);
  REQUIRE_MESSAGE(report.ok(), crucible::error_text(report));
  std::vector<torch::Tensor> out;
  for (const auto& p : model->adapters() ? model->adapters()->parameters() : model->parameters())
    out.push_back(p.detach().clone());
  return out;
}

}  // namespace

// Activation checkpointing changes what is kept, not what is computed: the
// layers run again in the backward pass on the same inputs, RNG states and
// dropout mode, so the step is the plain one, bit for bit on the CPU (the
// same kernels on the same values). With LoRA dropout the masks must be
// drawn again identically, which a recomputation without the RNG states
// would not do.
TEST_CASE("activation checkpointing takes the plain step exactly, full-weight and under LoRA with dropout") {
  auto options = testing::tiny_options();
  options.kl_beta = 0.05;
  for (const bool lora : {false, true}) {
    CAPTURE(lora);
    if (lora) {
      options.lora.rank = 4;
      options.lora.alpha = 8;
      options.lora.dropout = 0.3;
    }
    options.activation_checkpointing = false;
    const auto plain = one_step(options);
    options.activation_checkpointing = true;
    const auto checkpointed = one_step(options);
    REQUIRE(plain.size() == checkpointed.size());
    double moved = 0;
    const auto before = lora ? std::vector<torch::Tensor>{} : testing::tiny_policy(11)->parameters();
    for (std::size_t i = 0; i < plain.size(); ++i) {
      CHECK(torch::equal(plain[i], checkpointed[i]));
      if (!before.empty()) moved = std::max(moved, (plain[i] - before[i]).abs().max().item<double>());
    }
    if (!lora) CHECK(moved > 1e-4);  // the step moved the weights
  }
}

}  // namespace crucible::learner

namespace crucible::learner {
namespace {

// Three GRPO steps of a LoRA policy on CUDA under bf16 autocast (fp32
// weights), groups sampled on the CPU from the same weights: the adapters'
// A matrices at the start and after the steps, on the CPU.
std::pair<std::vector<torch::Tensor>, std::vector<torch::Tensor>> cuda_lora_steps(const learner_options& options) {
  auto model = std::make_shared<policy::causal_lm>(testing::tiny_config(),
                                                   policy::model_placement{"cuda", policy::dtype::f32});
  initialise_weights(*model, 11);
  auto sampler = testing::tiny_policy(11);
  auto t = trainer::create(model, nullptr, options);
  REQUIRE_MESSAGE(t.ok(), crucible::error_text(t));
  auto a_matrices = [&] {
    std::vector<torch::Tensor> out;
    const auto& adapters = *model->adapters();
    for (std::size_t layer = 0; layer < static_cast<std::size_t>(adapters.layers()); ++layer)
      for (std::size_t m = 0; m < policy::lora_module_count; ++m)
        if (adapters.a(layer, m).defined()) out.push_back(adapters.a(layer, m).detach().cpu().clone());
    return out;
  };
  const auto before = a_matrices();
  for (std::uint64_t step = 0; step < 3; ++step) {
    auto report = (*t)->train_grpo(testing::sample_groups(*sampler, step, 5 + step));
    REQUIRE_MESSAGE(report.ok(), crucible::error_text(report));
  }
  return {before, a_matrices()};
}

}  // namespace

// On CUDA the checkpointed layers are recomputed on the autograd engine's
// device thread, which outlives a step, and autocast keeps per thread its
// bf16 casts of the fp32 weights that require gradients (the adapters)
// until its cache is cleared: uncleared, every later recompute used the
// first step's adapters, whose B is zero, so A's gradient stayed zero and A
// never moved. So several steps, not one. Not bit for bit: the recompute
// takes the same kernels on the same values, but a bf16 rounding apart in a
// gradient moves Adam's update by about 2^-8 of itself; a stale adapter
// moves A by all of it. The bound, a tenth of how far A moved, lies between.
TEST_CASE("on CUDA under bf16 autocast, LoRA steps with activation checkpointing take the plain steps, step after step") {
  if (!torch::cuda::is_available()) {
    MESSAGE("skipped: no CUDA device");
    return;
  }
  auto options = testing::tiny_options();
  options.kl_beta = 0.05;
  options.lora.rank = 4;
  options.lora.alpha = 8;
  options.activation_checkpointing = false;
  const auto [start, plain] = cuda_lora_steps(options);
  options.activation_checkpointing = true;
  const auto [start_again, checkpointed] = cuda_lora_steps(options);
  REQUIRE(plain.size() == checkpointed.size());
  REQUIRE_FALSE(plain.empty());
  double moved = 0, apart = 0;
  for (std::size_t i = 0; i < plain.size(); ++i) {
    CHECK(torch::equal(start[i], start_again[i]));
    moved = std::max(moved, (plain[i] - start[i]).abs().max().item<double>());
    apart = std::max(apart, (plain[i] - checkpointed[i]).abs().max().item<double>());
  }
  CAPTURE(moved);
  CAPTURE(apart);
  CHECK(moved > 1e-3);  // two steps with B nonzero, each moving A by about the learning rate (1e-2)
  CHECK(apart < 0.1 * moved);
}

}  // namespace crucible::learner
