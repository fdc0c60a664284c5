// The objectives against values worked out by hand (in the comments).
// LibTorch first: glog defines a CHECK that doctest's must replace.
#include "actors/learner/objectives.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "actors/learner/reward_window.hpp"

namespace crucible::learner {
namespace {

torch::Tensor t(std::vector<float> v) { return torch::tensor(v); }
torch::Tensor rows(std::vector<std::vector<float>> v) {
  std::vector<torch::Tensor> r;
  for (auto& x : v) r.push_back(torch::tensor(x));
  return torch::stack(r);
}
torch::Tensor mask_of(std::vector<std::vector<float>> v) { return rows(std::move(v)).to(torch::kBool); }

void check_close(const torch::Tensor& got, std::vector<float> want, double tol = 1e-5) {
  auto flat = got.flatten().to(torch::kFloat64);
  REQUIRE(flat.numel() == static_cast<std::int64_t>(want.size()));
  for (std::size_t i = 0; i < want.size(); ++i) {
    INFO("element " << i);
    CHECK(flat[static_cast<std::int64_t>(i)].item<double>() == doctest::Approx(want[i]).epsilon(tol));
  }
}

double value(const torch::Tensor& x) { return x.item<double>(); }

TEST_CASE("reward smoothing divides by sigma and clips to [-k, k]") {
  // (r - 1.5) / 0.5 = -3, -1, 1, 3 -> clipped at 1.5.
  check_close(smooth_rewards(t({0, 1, 2, 3}), 1.5, 0.5, 1.5), {-1.5, -1, 1, 1.5});
  // A smaller k clips more: (r - 1) / 2 = -0.5, 0, 0.5, 1 with k 0.6.
  check_close(smooth_rewards(t({0, 1, 2, 3}), 1.0, 2.0, 0.6), {-0.5, 0, 0.5, 0.6});
}

TEST_CASE("reward smoothing with sigma 0 takes the limit: +k above the mean, -k below, 0 at it") {
  check_close(smooth_rewards(t({1, 2, 3}), 2.0, 0.0, 1.5), {-1.5, 0, 1.5});
}

TEST_CASE("a reward window of one holds the last reward, so its sigma is 0") {
  reward_window w(1);
  const std::vector<double> r{0.3, 0.7};
  w.add(r);
  CHECK(w.size() == 1);
  CHECK(w.mean() == doctest::Approx(0.7));
  CHECK(w.stddev() == 0);
  check_close(smooth_rewards(torch::tensor(r, torch::kFloat64), w.mean(), w.stddev()), {-1.5, 0});
  check_close(smooth_rewards(t({0.3f, 0.7f}), w.mean(), w.stddev()), {-1.5, 0});  // fp32 0.7 is within rounding of 0.7
}

TEST_CASE("the reward window keeps the most recent rewards and gives the population sigma") {
  reward_window w(4);
  const std::vector<double> a{100, 1, 2}, b{3, 4};
  w.add(a);
  w.add(b);  // holds 1 2 3 4: mean 2.5, variance (2.25 + 0.25 + 0.25 + 2.25) / 4 = 1.25
  CHECK(w.values() == std::vector<double>({1, 2, 3, 4}));
  CHECK(w.mean() == doctest::Approx(2.5));
  CHECK(w.stddev() == doctest::Approx(std::sqrt(1.25)));
}

TEST_CASE("group advantages are (r - mean) / unbiased std, and zero for a uniform or single-sample group") {
  check_close(group_advantages(t({1, 2, 3})), {-1, 0, 1});  // mean 2, std sqrt((1 + 0 + 1) / 2) = 1
  check_close(group_advantages(t({0, 0, 0, 2})), {-0.5, -0.5, -0.5, 1.5});  // mean 0.5, std 1
  check_close(group_advantages(t({5, 5, 5})), {0, 0, 0});
  check_close(group_advantages(t({4})), {0});
}

TEST_CASE("the clipped surrogate takes the pessimistic term with separate low and high bounds") {
  // ratios 1.5, 1.5, 0.5, 0.5 against advantages +1, -1, -1, +1; eps_low 0.2, eps_high 0.3.
  auto logp = torch::log(t({1.5f, 1.5f, 0.5f, 0.5f})).unsqueeze(-1).requires_grad_(true);
  auto prox = torch::zeros({4, 1});
  torch::Tensor clipped;
  auto loss = clipped_surrogate(logp, prox, t({1, -1, -1, 1}), 0.2, 0.3, &clipped);
  // +1: min(1.5, 1.3) = 1.3 (clipped); -1: min(-1.5, -1.3) = -1.5;
  // -1: min(-0.5, -0.8) = -0.8 (clipped); +1: min(0.5, 0.8) = 0.5.
  check_close(loss, {-1.3f, 1.5f, 0.8f, -0.5f});
  check_close(clipped.to(torch::kFloat32), {1, 0, 1, 0});
  // Gradients flow only through unclipped terms: d(-ratio A)/dlogp = -ratio A.
  loss.sum().backward();
  check_close(logp.grad(), {0, 1.5f, 0, -0.5f});
}

TEST_CASE("k3 KL is exp(d) - d - 1 with d = ref - logp: zero where the policies agree") {
  auto logp = torch::zeros({2}).requires_grad_(true);
  auto ref = t({static_cast<float>(std::log(2.0)), 0});
  auto kl = k3_kl(logp, ref);
  check_close(kl, {static_cast<float>(2 - std::log(2.0) - 1), 0});
  // d/dlogp = 1 - exp(d): -1 at d = log 2, 0 at d = 0.
  kl.sum().backward();
  check_close(logp.grad(), {-1, 0});
}

TEST_CASE("the behaviour weight is exp(proximal - behaviour), truncated at the cap, with no gradient") {
  auto prox = torch::zeros({3}).requires_grad_(true);
  auto behaviour = torch::log(t({0.25f, 1.0f, 2.0f}));
  check_close(behaviour_weight(prox, behaviour, std::nullopt), {4, 1, 0.5});
  auto capped = behaviour_weight(prox, behaviour, 2.0);
  check_close(capped, {2, 1, 0.5});
  CHECK_FALSE(capped.requires_grad());
}

TEST_CASE("sequence mean averages each sequence first, token mean averages every token, empty rows count for nothing") {
  auto values = rows({{1, 2, 3}, {4, 0, 0}, {9, 9, 9}});
  auto mask = mask_of({{1, 1, 1}, {1, 0, 0}, {0, 0, 0}});
  CHECK(value(aggregate(values, mask, aggregation::sequence_mean)) == doctest::Approx(3.0));  // (2 + 4) / 2
  CHECK(value(aggregate(values, mask, aggregation::token_mean)) == doctest::Approx(2.5));     // 10 / 4
  // A normaliser for the whole batch replaces this slice's own count.
  CHECK(value(aggregate(values, mask, aggregation::sequence_mean, 4.0)) == doctest::Approx(1.5));
  CHECK(value(aggregate(values, mask, aggregation::token_mean, 8.0)) == doctest::Approx(1.25));
  CHECK(value(aggregate(values, mask_of({{0, 0, 0}, {0, 0, 0}, {0, 0, 0}}), aggregation::token_mean)) == 0);
}

TEST_CASE("the GRPO loss weights each token by the truncated behaviour weight and adds beta times the KL") {
  // One sequence, two tokens; the current policy equals the proximal one
  // (ratio 1), the behaviour policy gave the first token half the proximal
  // probability (weight 2), advantage +1.
  grpo_inputs in;
  in.logp = torch::zeros({1, 2}).requires_grad_(true);
  in.proximal_logp = torch::zeros({1, 2});
  in.behaviour_logp = rows({{static_cast<float>(std::log(0.5)), 0}});
  in.ref_logp = rows({{static_cast<float>(std::log(2.0)), 0}});
  in.advantages = t({1});
  in.mask = mask_of({{1, 1}});

  grpo_settings s;
  auto plain = grpo_loss(in, s);  // per token -2, -1 -> mean -1.5
  CHECK(value(plain.loss) == doctest::Approx(-1.5));
  auto stats = plain.read();
  CHECK(stats.weight_mean == doctest::Approx(1.5));
  CHECK(stats.weight_min == doctest::Approx(1.0));
  CHECK(stats.weight_max == doctest::Approx(2.0));
  CHECK(stats.clip_fraction == 0);
  CHECK(stats.tokens == 2);

  s.behaviour_cap = 1.5;  // per token -1.5, -1 -> -1.25
  auto capped = grpo_loss(in, s);
  CHECK(value(capped.loss) == doctest::Approx(-1.25));
  CHECK(capped.read().truncated_fraction == doctest::Approx(0.5));

  s.beta = 0.1;  // + 0.1 * mean(2 - log 2 - 1, 0)
  auto with_kl = grpo_loss(in, s);
  const double kl = (2 - std::log(2.0) - 1) / 2;
  CHECK(with_kl.read().kl == doctest::Approx(kl));
  CHECK(value(with_kl.loss) == doctest::Approx(-1.25 + 0.1 * kl));

  // Gradient of the first token: w * d(-ratio)/dlogp + beta * (1 - exp(d)) / 2
  // = (1.5 * -1 + 0.1 * (1 - 2)) / 2 = -0.8; second: (1 * -1 + 0) / 2 = -0.5.
  with_kl.loss.backward();
  check_close(in.logp.grad(), {-0.8f, -0.5f});
}

TEST_CASE("the GRPO statistics count masked tokens only, also where a padded position's weight is infinite") {
  // The second position is padding whose behaviour log-prob is far below
  // the proximal one: its weight exp(1000) is inf in float32. A product with
  // the mask would make every sum NaN (inf * 0); neither the statistics nor
  // the loss and its gradient may see it.
  grpo_inputs in;
  in.logp = torch::zeros({1, 2}).requires_grad_(true);
  in.proximal_logp = torch::zeros({1, 2});
  in.behaviour_logp = rows({{static_cast<float>(std::log(0.5)), -1000}});
  in.advantages = t({1});
  in.mask = mask_of({{1, 0}});
  grpo_settings s;
  auto terms = grpo_loss(in, s);
  auto stats = terms.read();
  CHECK(stats.tokens == 1);
  CHECK(stats.weight_mean == doctest::Approx(2.0));
  CHECK(stats.weight_min == doctest::Approx(2.0));
  CHECK(stats.weight_max == doctest::Approx(2.0));
  CHECK(value(terms.loss) == doctest::Approx(-2.0));  // the loss too: aggregate selects, not multiplies
  terms.loss.backward();
  check_close(in.logp.grad(), {-2.0f, 0.0f});
  s.behaviour_cap = 1.5;
  CHECK(grpo_loss(in, s).read().truncated_fraction == doctest::Approx(1.0));
  // No masked token: every mean 0, as before.
  in.mask = mask_of({{0, 0}});
  auto none = grpo_loss(in, s).read();
  CHECK(none.tokens == 0);
  CHECK(none.weight_mean == 0);
  CHECK(none.weight_max == 0);
}

TEST_CASE("SFT is the negative log-likelihood of completion tokens") {
  auto logp = rows({{-1, -2}, {-3, 0}});
  auto mask = mask_of({{1, 1}, {1, 0}});
  CHECK(value(sft_loss(logp, mask, aggregation::token_mean)) == doctest::Approx(2.0));      // 6 / 3
  CHECK(value(sft_loss(logp, mask, aggregation::sequence_mean)) == doctest::Approx(2.25));  // (1.5 + 3) / 2
}

TEST_CASE("success-only REINFORCE: reward 1 pulls up its tokens, a failure contributes nothing") {
  auto logp = rows({{-1, -2}, {-3, -4}}).requires_grad_(true);
  auto mask = mask_of({{1, 1}, {1, 1}});
  auto loss = reinforce_loss(logp, t({1, 0}), mask, aggregation::sequence_mean);
  CHECK(value(loss) == doctest::Approx(0.75));  // (1.5 + 0) / 2
  loss.backward();
  check_close(logp.grad(), {-0.25, -0.25, 0, 0});
}

// Golden values from PyTorch (tools/gpu/make_learner_golden.py, fp64):
// objectives_golden.json made on a CPU, objectives_golden_h200.json made on
// the H200 (tools/gpu/learner_gpu.sh); the same batch, so both must agree
// with crucible wherever it runs.
nlohmann::json golden(const std::string& file) {
  std::ifstream in(std::string(CRUCIBLE_SOURCE_DIR) + "/tests/data/learner/" + file);
  REQUIRE_MESSAGE(in.good(), file);
  return nlohmann::json::parse(in);
}

const char* const golden_files[] = {"objectives_golden.json", "objectives_golden_h200.json"};

torch::Tensor tensor_of(const nlohmann::json& j, const torch::Device& device = torch::kCPU) {
  std::vector<torch::Tensor> r;
  for (const auto& row : j) r.push_back(torch::tensor(row.get<std::vector<double>>(), torch::kFloat64));
  return torch::stack(r).to(device);
}

void check_tensor(const torch::Tensor& got, const nlohmann::json& want, double tol = 1e-6) {
  const double worst = (got.to(torch::kCPU).to(torch::kFloat64) - tensor_of(want)).abs().max().item<double>();
  INFO("largest difference " << worst);
  CHECK(worst <= tol);
}

void check_smoothing(const nlohmann::json& g) {
  reward_window w(64);
  w.add(g["window"].get<std::vector<double>>());
  std::vector<double> smoothed, advantages;
  for (const auto& rewards : g["groups"]) {
    auto s = smooth_rewards(torch::tensor(rewards.get<std::vector<double>>(), torch::kFloat64), w.mean(), w.stddev(),
                            g["reward_clip"].get<double>());
    auto a = group_advantages(s);
    for (std::int64_t i = 0; i < s.size(0); ++i) {
      smoothed.push_back(s[i].item<double>());
      advantages.push_back(a[i].item<double>());
    }
  }
  const auto want_s = g["smoothed"].get<std::vector<double>>(), want_a = g["advantages"].get<std::vector<double>>();
  REQUIRE(smoothed.size() == want_s.size());
  for (std::size_t i = 0; i < smoothed.size(); ++i) {
    CHECK(smoothed[i] == doctest::Approx(want_s[i]).epsilon(1e-6));
    CHECK(advantages[i] == doctest::Approx(want_a[i]).epsilon(1e-6));
  }
}

// Every loss of the golden file and its gradient, computed on `device` in fp64.
void check_losses(const nlohmann::json& g, const torch::Device& device) {
  const auto mask = tensor_of(g["mask"], device).to(torch::kBool);
  const auto advantages = torch::tensor(g["advantages"].get<std::vector<double>>(), torch::kFloat64).to(device);
  for (const auto& c : g["grpo"]) {
    INFO("case " << c["name"].get<std::string>());
    grpo_inputs in;
    in.logp = tensor_of(g["logp"], device).requires_grad_(true);
    in.proximal_logp = tensor_of(g["proximal"], device);
    in.behaviour_logp = tensor_of(g["behaviour"], device);
    in.ref_logp = tensor_of(g["reference"], device);
    in.advantages = advantages;
    in.mask = mask;
    grpo_settings s;
    s.eps_low = c["eps_low"].get<double>();
    s.eps_high = c["eps_high"].get<double>();
    s.beta = c["beta"].get<double>();
    if (!c["cap"].is_null()) s.behaviour_cap = c["cap"].get<double>();
    s.mode = c["mode"] == "token_mean" ? aggregation::token_mean : aggregation::sequence_mean;
    auto terms = grpo_loss(in, s);
    CHECK(value(terms.loss) == doctest::Approx(c["loss"].get<double>()).epsilon(1e-6));
    const auto stats = terms.read();
    if (s.beta != 0) CHECK(stats.kl == doctest::Approx(c["kl"].get<double>()).epsilon(1e-6));
    CHECK(stats.clip_fraction == doctest::Approx(c["clip_fraction"].get<double>()).epsilon(1e-6));
    terms.loss.backward();
    check_tensor(in.logp.grad(), c["grad"]);
  }
  const auto rewards = torch::tensor(g["rewards01"].get<std::vector<double>>(), torch::kFloat64).to(device);
  for (auto mode : {aggregation::sequence_mean, aggregation::token_mean}) {
    const std::string suffix(to_string(mode));
    INFO("aggregation " << suffix);
    auto x = tensor_of(g["logp"], device).requires_grad_(true);
    auto sft = sft_loss(x, mask, mode);
    CHECK(value(sft) == doctest::Approx(g["sft_" + suffix]["loss"].get<double>()).epsilon(1e-6));
    sft.backward();
    check_tensor(x.grad(), g["sft_" + suffix]["grad"]);
    auto y = tensor_of(g["logp"], device).requires_grad_(true);
    auto rf = reinforce_loss(y, rewards, mask, mode);
    CHECK(value(rf) == doctest::Approx(g["reinforce_" + suffix]["loss"].get<double>()).epsilon(1e-6));
    rf.backward();
    check_tensor(y.grad(), g["reinforce_" + suffix]["grad"]);
  }
}

TEST_CASE("smoothing and group advantages match PyTorch's golden values") {
  for (const char* file : golden_files) {
    INFO(file);
    check_smoothing(golden(file));
  }
}

TEST_CASE("GRPO, SFT and REINFORCE losses and gradients match PyTorch's golden values") {
  for (const char* file : golden_files) {
    INFO(file);
    check_losses(golden(file), torch::kCPU);
  }
}

// The H200's golden values checked on the GPU (tools/gpu/learner_gpu.sh runs
// it there); passes with a note where there is no GPU.
TEST_CASE("on a GPU, GRPO, SFT and REINFORCE losses and gradients match the H200's golden values") {
  if (!torch::cuda::is_available()) {
    MESSAGE("skipped: no CUDA device");
    return;
  }
  check_losses(golden("objectives_golden_h200.json"), torch::Device(torch::kCUDA, 0));
}

}  // namespace
}  // namespace crucible::learner
