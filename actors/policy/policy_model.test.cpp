// The LibTorch policy against the golden data of tools/gpu/make_policy_golden.py
// (transformers on CPU in fp32), plus generation, training forward, saving
// and bad input. Tolerance: 1e-4 absolute on logits and log-probs for both
// checkpoints. The bf16 one (llama_tiny_tied) is compared in fp32 too: the
// golden script upcasts its bf16 weights to fp32 and computes in fp32, and
// bf16 -> fp32 is exact, so the same tolerance applies.
// LibTorch first: glog defines a CHECK that doctest's must replace.
#include <ATen/CPUGeneratorImpl.h>

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "actors/policy/causal_lm.hpp"
#include "actors/policy/checkpoint_weights.hpp"
#include "actors/policy/decode_runner.hpp"
#include "actors/policy/lora_adapters.hpp"
#include "actors/policy/policy.hpp"
#include "actors/policy/test_support.hpp"
#include "runtime/base/error_text.hpp"

#include <doctest/doctest.h>

namespace crucible::policy {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

constexpr double kTolerance = 1e-4;
const std::vector<std::string> kModels{"qwen2_tiny_sharded", "llama_tiny_tied"};

fs::path golden_dir(const std::string& name) {
  return fs::path(CRUCIBLE_SOURCE_DIR) / "tests" / "data" / "policy" / name;
}

bool have_golden(const std::string& name) {
  if (fs::exists(golden_dir(name) / "golden.json")) return true;
#ifdef CRUCIBLE_REQUIRE_POLICY_GOLDEN
  FAIL("missing golden data " << golden_dir(name));
#else
  if (fs::exists(fs::path(CRUCIBLE_SOURCE_DIR) / "tests" / "data" / "policy" / "manifest.json")) FAIL("missing golden data " << golden_dir(name));
#endif
  MESSAGE("no golden data yet at " << golden_dir(name));
  return false;
}

json golden_of(const std::string& name) { return json::parse(testing::read_file(golden_dir(name) / "golden.json")); }

std::vector<std::int32_t> ids_of(const json& j) { return j.get<std::vector<std::int32_t>>(); }

policy load_cpu(const fs::path& dir) {
  auto p = policy::load(dir, {.device = "cpu", .compute_dtype = dtype::f32});
  REQUIRE_MESSAGE(p.ok(), crucible::error_text(p));
  return std::move(*p);
}

// Greedy for exactly the golden 16 tokens (golden ignores eos).
generation_options golden_greedy() {
  generation_options o;
  o.max_new_tokens = 16;
  o.sampling.greedy = true;
  o.eos_token_ids = std::vector<std::int32_t>{};
  return o;
}

// Norm weights 1 + 0.3 N(0, 1) and biases 0.5 N(0, 1), drawn from a CPU
// generator of its own (not the global one, which LibTorch 2 also uses to
// seed every CUDA device).
void randomise_norms_and_biases(causal_lm& model, std::uint64_t seed) {
  torch::NoGradGuard no_grad;
  auto gen = at::detail::createCPUGenerator(seed);
  for (const auto& item : model.named_parameters()) {
    const std::string& name = item.key();
    torch::Tensor t = item.value();
    const bool norm = name.ends_with("norm.weight"), bias = name.ends_with(".bias");
    if (!norm && !bias) continue;
    auto noise = torch::randn(t.sizes(), gen, torch::TensorOptions().dtype(torch::kFloat32));
    t.copy_(norm ? 1.0 + 0.3 * noise : 0.5 * noise);
  }
}

void check_greedy(const generation& got, const json& want) {
  CHECK(json(got.ids) == want["ids"]);
  REQUIRE(got.logprobs.size() == want["logprobs"].size());
  for (std::size_t i = 0; i < got.logprobs.size(); ++i) {
    CHECK(std::fabs(got.logprobs[i] - want["logprobs"][i].get<double>()) <= kTolerance);
  }
  CHECK(got.finish == finish_reason::length);
}

TEST_CASE("golden checkpoints give transformers' logits at every prompt position within 1e-4") {
  for (const auto& name : kModels) {
    INFO("golden folder " << name);
    if (!have_golden(name)) continue;
    const json golden = golden_of(name);
    policy p = load_cpu(golden_dir(name));
    torch::NoGradGuard no_grad;
    for (const auto& prompt : golden["prompts"]) {
      const auto ids = ids_of(prompt["ids"]);
      auto input = torch::tensor(std::vector<std::int64_t>(ids.begin(), ids.end())).unsqueeze(0);
      auto mask = torch::ones_like(input, torch::kBool);
      auto logits = p.model()->logits(p.model()->hidden_states(input, positions_from_mask(mask), mask))[0];
      std::vector<std::vector<float>> rows = prompt["logits"].get<std::vector<std::vector<float>>>();
      REQUIRE(logits.size(0) == static_cast<std::int64_t>(rows.size()));
      double worst = 0;
      for (std::size_t t = 0; t < rows.size(); ++t) {
        auto expected = torch::tensor(rows[t]);
        worst = std::max(worst, (logits[static_cast<std::int64_t>(t)] - expected).abs().max().item<double>());
      }
      INFO("prompt " << prompt["text"].dump() << " worst logit error " << worst);
      CHECK(worst <= kTolerance);
    }
  }
}

TEST_CASE("greedy generation with the KV cache reproduces transformers' ids and log-probs, alone and batched") {
  for (const auto& name : kModels) {
    INFO("golden folder " << name);
    if (!have_golden(name)) continue;
    const json golden = golden_of(name);
    policy p = load_cpu(golden_dir(name));
    std::vector<std::vector<std::int32_t>> prompts;
    for (const auto& g : golden["greedy"]) prompts.push_back(ids_of(g["prompt_ids"]));
    for (std::size_t i = 0; i < prompts.size(); ++i) {
      INFO("prompt " << i << " alone");
      auto got = p.generate({prompts[i]}, golden_greedy());
      REQUIRE_MESSAGE(got.ok(), crucible::error_text(got));
      check_greedy(got->at(0), golden["greedy"][i]);
      CHECK(got->at(0).prompt_ids == prompts[i]);
      CHECK(got->at(0).text == p.tok().decode(got->at(0).ids, {.skip_special_tokens = true}));
    }
    // Prompts of different lengths: left padding, masks and positions.
    auto batched = p.generate(prompts, golden_greedy());
    REQUIRE_MESSAGE(batched.ok(), crucible::error_text(batched));
    for (std::size_t i = 0; i < prompts.size(); ++i) {
      INFO("prompt " << i << " in a batch of " << prompts.size());
      check_greedy(batched->at(i), golden["greedy"][i]);
    }
  }
}

TEST_CASE("token_logprobs of a greedy continuation equal the golden log-probs and carry gradients") {
  for (const auto& name : kModels) {
    INFO("golden folder " << name);
    if (!have_golden(name)) continue;
    const json golden = golden_of(name);
    policy p = load_cpu(golden_dir(name));
    std::vector<generation> gens;
    for (const auto& g : golden["greedy"]) {
      generation gen;
      gen.prompt_ids = ids_of(g["prompt_ids"]);
      gen.ids = ids_of(g["ids"]);
      gen.ids.resize(gen.ids.size() - gens.size() * 3);  // completions of different lengths
      gen.logprobs = g["logprobs"].get<std::vector<float>>();
      gen.logprobs.resize(gen.ids.size());
      gens.push_back(gen);
    }
    token_batch batch = make_token_batch(gens, torch::kCPU);
    p.model()->zero_grad();
    auto lp = token_logprobs(*p.model(), batch.input_ids, batch.attention_mask, batch.first_target);
    REQUIRE(lp.sizes() == batch.behaviour_logprobs.sizes());
    auto err = ((lp - batch.behaviour_logprobs).abs() * batch.completion_mask).max().item<double>();
    CHECK(err <= kTolerance);
    CHECK(batch.completion_mask.sum().item<std::int64_t>() ==
          static_cast<std::int64_t>(gens[0].ids.size() + gens[1].ids.size() + gens[2].ids.size()));
    (lp * batch.completion_mask).sum().backward();
    std::int64_t with_grad = 0, total = 0;
    for (const auto& param : p.model()->parameters()) {
      ++total;
      if (param.grad().defined() && param.grad().abs().sum().item<double>() > 0) ++with_grad;
    }
    CHECK(with_grad == total);
  }
}

TEST_CASE("with every parameter random, biases and norms too, cached batched generation agrees with the full forward") {
  const std::string name = "qwen2_tiny_sharded";  // q/k/v biases
  if (!have_golden(name)) return;
  const json golden = golden_of(name);
  // Which part ran last, in the report of a crash (doctest prints INFO then).
  std::string phase = "load";
  INFO("phase: " << phase);
  policy p = load_cpu(golden_dir(name));
  phase = "randomise";
  randomise_norms_and_biases(*p.model(), 11);
  std::vector<std::vector<std::int32_t>> prompts;
  for (const auto& g : golden["greedy"]) prompts.push_back(ids_of(g["prompt_ids"]));
  phase = "generate batched";
  auto batched = p.generate(prompts, golden_greedy());
  REQUIRE(batched.ok());
  for (std::size_t i = 0; i < prompts.size(); ++i) {
    phase = "generate alone " + std::to_string(i);
    auto alone = p.generate({prompts[i]}, golden_greedy());
    REQUIRE(alone.ok());
    CHECK(alone->at(0).ids == batched->at(i).ids);
    CHECK(json(alone->at(0).ids) != golden["greedy"][i]["ids"]);  // the biases and norms matter
  }
  phase = "token_logprobs";
  token_batch batch = make_token_batch(*batched, torch::kCPU);
  torch::NoGradGuard no_grad;
  auto lp = token_logprobs(*p.model(), batch.input_ids, batch.attention_mask, batch.first_target);
  CHECK((lp - batch.behaviour_logprobs).abs().max().item<double>() <= kTolerance);

  // And they survive a save and a load.
  phase = "save";
  testing::scratch_dir out;
  REQUIRE(p.save(out.path()).ok());
  phase = "load saved";
  policy q = load_cpu(out.path());
  phase = "generate from saved";
  auto again = q.generate(prompts, golden_greedy());
  REQUIRE(again.ok());
  phase = "done";
  for (std::size_t i = 0; i < prompts.size(); ++i) CHECK(again->at(i).ids == batched->at(i).ids);
}

TEST_CASE("the fixed-shape decode step (what a CUDA graph captures) gives the cached forward's logits and keys") {
  const std::string name = "qwen2_tiny_sharded";  // q/k/v biases
  if (!have_golden(name)) return;
  const json golden = golden_of(name);
  policy p = load_cpu(golden_dir(name));
  randomise_norms_and_biases(*p.model(), 5);
  causal_lm& model = *p.model();
  c10::InferenceMode inference;
  // Two prompts of different lengths, left-padded.
  const auto a = ids_of(golden["greedy"][0]["prompt_ids"]), b = ids_of(golden["greedy"][1]["prompt_ids"]);
  const std::int64_t longest = static_cast<std::int64_t>(std::max(a.size(), b.size())), steps = 5;
  const std::int64_t capacity = longest + steps + 7;  // slots past the end stay masked
  auto ids = torch::zeros({2, longest}, torch::kInt64);
  auto mask = torch::zeros({2, longest}, torch::kBool);
  for (std::int64_t row = 0; row < 2; ++row) {
    const auto& prompt = row == 0 ? a : b;
    const std::int64_t pad = longest - static_cast<std::int64_t>(prompt.size());
    for (std::size_t j = 0; j < prompt.size(); ++j) {
      ids[row][pad + static_cast<std::int64_t>(j)] = prompt[j];
      mask[row][pad + static_cast<std::int64_t>(j)] = true;
    }
  }
  auto lengths = mask.sum(1);
  kv_cache reference = model.make_cache(2, capacity);
  decode_runner runner(model, 2, capacity, /*fused_kernels=*/false);
  runner.start(mask);
  auto prefill = model.logits(model.hidden_states(ids, positions_from_mask(mask), mask, &reference).select(1, -1));
  model.hidden_states(ids, positions_from_mask(mask), mask, &runner.cache);
  auto full_mask = torch::cat({mask, torch::ones({2, capacity - longest}, torch::kBool)}, 1);
  auto tokens = prefill.argmax(-1);
  for (std::int64_t step = 0; step < steps; ++step) {
    INFO("step " << step);
    auto want = model.logits(model.hidden_states(tokens.unsqueeze(1), (lengths + step).unsqueeze(1),
                                                 full_mask.narrow(1, 0, longest + step + 1), &reference)
                                 .select(1, 0));
    auto got = runner.step(tokens, lengths + step, longest + step);
    REQUIRE(got.sizes() == want.sizes());
    CHECK((got - want).abs().max().item<double>() <= kTolerance);
    for (std::size_t layer = 0; layer < reference.keys.size(); ++layer) {
      CHECK((runner.cache.keys[layer].narrow(2, 0, longest + step + 1) -
             reference.keys[layer].narrow(2, 0, longest + step + 1)).abs().max().item<double>() <= kTolerance);
      CHECK((runner.cache.values[layer].narrow(2, 0, longest + step + 1) -
             reference.values[layer].narrow(2, 0, longest + step + 1)).abs().max().item<double>() <= kTolerance);
    }
    tokens = want.argmax(-1);
  }
  // Padding slots and slots past this step are never attended: garbage there changes nothing.
  auto before = model.decode_step(runner.ids, runner.positions, runner.slot, runner.key_mask, runner.cache);
  const std::int64_t padded_row = a.size() < b.size() ? 0 : 1;
  REQUIRE(a.size() != b.size());
  for (std::size_t layer = 0; layer < reference.keys.size(); ++layer) {
    for (auto* t : {&runner.cache.keys[layer], &runner.cache.values[layer]}) {
      t->narrow(2, capacity - 3, 3).fill_(1e4);
      (*t)[padded_row].narrow(1, 0, 1).fill_(-1e4);
    }
  }
  auto after = model.decode_step(runner.ids, runner.positions, runner.slot, runner.key_mask, runner.cache);
  CHECK((after - before).abs().max().item<double>() <= kTolerance);
}

// A random network of one attention shape on CUDA, for the fused kernels' test.
std::shared_ptr<causal_lm> random_cuda_model(std::int64_t heads, std::int64_t kv_heads, std::int64_t head_dim,
                                             bool bias, dtype type) {
  model_config c;
  c.hidden_size = 96;
  c.intermediate_size = 160;
  c.num_hidden_layers = 2;
  c.num_attention_heads = heads;
  c.num_key_value_heads = kv_heads;
  c.head_dim = head_dim;
  c.vocab_size = 300;
  c.rope_theta = 10000;
  c.rms_norm_eps = 1e-6;
  c.attention_bias = bias;
  auto model = std::make_shared<causal_lm>(c, model_placement{.device = "cuda", .compute_dtype = type});
  torch::NoGradGuard no_grad;
  auto gen = at::detail::createCPUGenerator(17);
  for (auto& t : model->parameters()) {
    t.copy_(torch::randn(t.sizes(), gen, torch::TensorOptions().dtype(torch::kFloat32)) * 0.08);
  }
  randomise_norms_and_biases(*model, 3);
  return model;
}

// The network in fp32, the same in bf16 (its weights rounded), and fp32 on
// the rounded weights: the reference both bf16 steps are compared against.
struct cuda_models {
  std::shared_ptr<causal_lm> f32, bf16, exact;
};
cuda_models random_cuda_models(std::int64_t heads, std::int64_t kv_heads, std::int64_t head_dim, bool bias) {
  cuda_models m{random_cuda_model(heads, kv_heads, head_dim, bias, dtype::f32),
                random_cuda_model(heads, kv_heads, head_dim, bias, dtype::bf16),
                random_cuda_model(heads, kv_heads, head_dim, bias, dtype::f32)};
  torch::NoGradGuard no_grad;
  auto from = m.f32->parameters(), to16 = m.bf16->parameters(), to32 = m.exact->parameters();
  for (std::size_t i = 0; i < from.size(); ++i) {
    to16[i].copy_(from[i]);
    to32[i].copy_(to16[i]);
  }
  return m;
}

TEST_CASE("on CUDA, the fused decode kernels give the LibTorch decode step's logits and keys") {
  if (!torch::cuda::is_available()) {
    MESSAGE("no CUDA device: skipped");
    return;
  }
  // Shapes: tiny heads; Qwen2.5-0.5B's group of 7 at head_dim 64; no grouping
  // at 128 (Qwen2-7B's head_dim); one key/value head for 16 query heads. The
  // capacity spans 6 chunks of the attention kernel's 128 keys, the last one
  // partly past the capacity.
  struct shape {
    std::int64_t heads, kv_heads, head_dim;
    bool bias;
  };
  const std::int64_t batch = 3, capacity = 700;
  for (const shape s : {shape{4, 2, 16, true}, shape{14, 2, 64, true}, shape{4, 4, 128, false}, shape{16, 1, 32, false}}) {
    INFO("heads " << s.heads << ", kv_heads " << s.kv_heads << ", head_dim " << s.head_dim);
    auto [f32, bf16, exact] = random_cuda_models(s.heads, s.kv_heads, s.head_dim, s.bias);
    if (!f32->fused_decode_available()) {
      MESSAGE("this build has no fused decode kernels: skipped");
      return;
    }
    c10::InferenceMode inference;
    auto gen = at::detail::createCPUGenerator(29);
    const auto cuda = torch::TensorOptions().device(torch::kCUDA);
    // Earlier keys and values at random; row 1 left-padded by 40, row 2 with
    // one slot in ten masked; slots past the step hold 1e4, never attended.
    auto mask = torch::ones({batch, capacity}, torch::kBool);
    mask[1].narrow(0, 0, 40).fill_(false);
    mask[2].copy_(torch::rand({capacity}, gen) >= 0.1);
    mask = mask.to(torch::kCUDA);
    std::vector<kv_cache> caches;  // f32 LibTorch, f32 fused, bf16 LibTorch, bf16 fused, exact
    for (auto* m : {f32.get(), f32.get(), bf16.get(), bf16.get(), exact.get()}) caches.push_back(m->make_cache(batch, capacity));
    std::vector<torch::Tensor> contents;  // [layer][keys, values], bf16-exact so that every cache holds the same
    for (std::size_t i = 0; i < 4; ++i)
      contents.push_back(torch::randn({batch, s.kv_heads, capacity, s.head_dim}, gen).to(torch::kBFloat16).to(torch::kFloat32));
    for (const std::int64_t at : {std::int64_t{5}, std::int64_t{130}, std::int64_t{300}, capacity - 1}) {
      INFO("slot " << at);
      mask.select(1, at).fill_(true);  // a step's own token is always real
      // Every step starts from the same earlier keys and values; past the
      // step's slot the keys hold 1e4 (in bf16 9984, in fp32 1e4), which
      // must never be attended. (Before, the 1e4 of an earlier, lower slot
      // stayed below the next one and was attended, so that the scores hung
      // on the difference between 9984 and 1e4: the cause of the bf16
      // check's one failure on an H100, the fused step's at slot 130; with
      // this the check passed there, 2026-12-05.)
      for (auto& cache : caches) {
        for (std::size_t layer = 0; layer < 2; ++layer) {
          cache.keys[layer].copy_(contents[2 * layer]);
          cache.values[layer].copy_(contents[2 * layer + 1]);
          if (at + 1 < capacity) cache.keys[layer].narrow(2, at + 1, capacity - at - 1).fill_(1e4);
        }
      }
      auto ids = torch::randint(300, {batch, 1}, gen).to(torch::kCUDA);
      auto positions = torch::tensor({at, std::max<std::int64_t>(at - 40, 0), at - at / 10}, torch::kInt64).view({batch, 1}).to(torch::kCUDA);
      auto slot = torch::full({1}, at, cuda.dtype(torch::kInt64));
      auto step = [&](causal_lm& m, kv_cache& cache, bool fused) {
        return m.decode_step(ids, positions, slot, mask, cache, fused);
      };
      auto torch32 = step(*f32, caches[0], false), fused32 = step(*f32, caches[1], true);
      auto torch16 = step(*bf16, caches[2], false), fused16 = step(*bf16, caches[3], true);
      auto reference = step(*exact, caches[4], false);
      // fp32: the same arithmetic up to summation order.
      CHECK((fused32 - torch32).abs().max().item<double>() <= kTolerance);
      CHECK((caches[1].keys[1].select(2, at) - caches[0].keys[1].select(2, at)).abs().max().item<double>() <= kTolerance);
      CHECK((caches[1].values[1].select(2, at) - caches[0].values[1].select(2, at)).abs().max().item<double>() <= kTolerance);
      // bf16: the fused step keeps the attention's scores and probabilities
      // in fp32 where LibTorch's rounds them to bf16, so it may only be
      // closer to the fp32 network on the same weights than LibTorch's bf16
      // step, not farther (a factor 2 and one bf16 step of the logits'
      // size for the roundings both share).
      const double fused_error = (fused16 - reference).abs().max().item<double>();
      const double torch_error = (torch16 - reference).abs().max().item<double>();
      const double ulp = reference.abs().max().item<double>() / 128;
      CHECK_MESSAGE(fused_error <= 2 * torch_error + ulp,
                    "bf16 fused " << fused_error << " against LibTorch's bf16 " << torch_error << " from fp32");
    }
    // With LoRA adapters (B at random, so that they count): the projections
    // one by one with their updates, the kernels between them.
    auto adapters = add_lora(*f32, lora_options{.rank = 4, .alpha = 8}, 7);
    REQUIRE_MESSAGE(adapters.ok(), crucible::error_text(adapters));
    for (std::size_t layer = 0; layer < 2; ++layer) {
      for (std::size_t m = 0; m < lora_module_count; ++m) {
        const auto& b = (*adapters)->b(layer, m);
        b.copy_(torch::randn(b.sizes(), gen) * 0.05);
      }
    }
    auto ids = torch::randint(300, {batch, 1}, gen).to(torch::kCUDA);
    auto positions = torch::full({batch, 1}, capacity - 1, cuda.dtype(torch::kInt64));
    auto slot = torch::full({1}, capacity - 1, cuda.dtype(torch::kInt64));
    auto plain = f32->decode_step(ids, positions, slot, mask, caches[0], false);
    auto fused = f32->decode_step(ids, positions, slot, mask, caches[1], true);
    CHECK((fused - plain).abs().max().item<double>() <= kTolerance);
    f32->set_adapters(nullptr);
    CHECK((f32->decode_step(ids, positions, slot, mask, caches[1], true) - fused).abs().max().item<double>() > kTolerance);
  }
}

TEST_CASE("on CUDA, the fused step gives LibTorch's logits with small_product's products at batch 1 and without") {
  if (!torch::cuda::is_available()) {
    MESSAGE("no CUDA device: skipped");
    return;
  }
  // At batch 1 small_product computes q/k/v, gate/up and the logits (no
  // fewer columns than inputs) and LibTorch's linear o and down (hidden 96
  // against 896 and 160 inputs); at 2 and 3 LibTorch's linear every one.
  const std::int64_t capacity = 200, at = 150;
  auto [f32, bf16, exact] = random_cuda_models(14, 2, 64, true);
  if (!f32->fused_decode_available()) {
    MESSAGE("this build has no fused decode kernels: skipped");
    return;
  }
  c10::InferenceMode inference;
  auto gen = at::detail::createCPUGenerator(31);
  const auto cuda = torch::TensorOptions().device(torch::kCUDA);
  for (const std::int64_t batch : {1, 2, 3}) {
    INFO("batch " << batch);
    auto mask = torch::ones({batch, capacity}, cuda.dtype(torch::kBool));
    auto ids = torch::randint(300, {batch, 1}, gen).to(torch::kCUDA);
    auto positions = torch::full({batch, 1}, at, cuda.dtype(torch::kInt64));
    auto slot = torch::full({1}, at, cuda.dtype(torch::kInt64));
    auto keys = torch::randn({batch, 2, capacity, 64}, gen).to(torch::kBFloat16).to(torch::kFloat32);
    auto values = torch::randn({batch, 2, capacity, 64}, gen).to(torch::kBFloat16).to(torch::kFloat32);
    auto logits = [&](causal_lm& m, bool fused) {
      auto cache = m.make_cache(batch, capacity);
      for (std::size_t layer = 0; layer < cache.keys.size(); ++layer) {
        cache.keys[layer].copy_(keys);
        cache.values[layer].copy_(values);
      }
      return m.decode_step(ids, positions, slot, mask, cache, fused);
    };
    auto torch32 = logits(*f32, false), fused32 = logits(*f32, true);
    REQUIRE((fused32.scalar_type() == torch::kFloat32));
    REQUIRE((fused32.sizes() == torch32.sizes()));
    CHECK((fused32 - torch32).abs().max().item<double>() <= kTolerance);
    // bf16: no farther from the fp32 network on the same weights than
    // LibTorch's bf16 step (the bound of the case above).
    auto reference = logits(*exact, false);
    const double fused_error = (logits(*bf16, true) - reference).abs().max().item<double>();
    const double torch_error = (logits(*bf16, false) - reference).abs().max().item<double>();
    const double ulp = reference.abs().max().item<double>() / 128;
    CHECK_MESSAGE(fused_error <= 2 * torch_error + ulp,
                  "bf16 fused " << fused_error << " against LibTorch's bf16 " << torch_error << " from fp32");
  }
}

TEST_CASE("on CUDA, the fused token choice gives LibTorch's greedy tokens and a valid inverse-CDF draw") {
  if (!torch::cuda::is_available()) {
    MESSAGE("no CUDA device: skipped");
    return;
  }
  auto gen = at::detail::createCPUGenerator(41);
  // A vocabulary smaller than the kernel's 1024 threads, and Qwen2's.
  for (const std::int64_t vocab : {std::int64_t{1000}, std::int64_t{151936}}) {
    INFO("vocab " << vocab);
    auto logits = torch::randn({6, vocab}, gen) * 3;
    logits[1][7] = 100;  // a tie for the largest: the first wins, as argmax
    logits[1][9] = 100;
    logits[2].narrow(0, 0, vocab / 2).fill_(-std::numeric_limits<float>::infinity());
    logits = logits.to(torch::kCUDA);
    auto [greedy, greedy_lp] = fused_choose(logits, 1.0, {});
    if (!greedy.defined()) {
      MESSAGE("this build has no fused decode kernels: skipped");
      return;
    }
    CHECK(torch::equal(greedy, logits.argmax(-1)));
    CHECK(greedy[1].item<std::int64_t>() == 7);
    auto want_lp = torch::log_softmax(logits, -1).gather(-1, greedy.unsqueeze(-1)).squeeze(-1);
    CHECK((greedy_lp - want_lp).abs().max().item<double>() <= 1e-5);

    // Sampling at temperature 0.7: in double, the token's cumulative
    // probability reaches the target and the one before it does not, up to
    // fp32 sums of at most 149 terms a thread and 1024 chunks (about 160
    // roundings of 2^-24 of the total: 1e-5; checked at 1e-4).
    const double temperature = 0.7, slack = 1e-4;
    auto u = torch::tensor({0.0f, 0.25f, 0.5f, 0.999999f, 0.123f, 0.9f}).to(torch::kCUDA);
    auto [drawn, drawn_lp] = fused_choose(logits, temperature, u);
    auto scaled = (logits / temperature).to(torch::kCPU).to(torch::kFloat64);
    auto cdf = scaled.softmax(-1).cumsum(-1);
    auto logp = scaled.log_softmax(-1);
    auto host_u = u.to(torch::kCPU);
    for (std::int64_t row = 0; row < 6; ++row) {
      INFO("row " << row);
      const auto t = drawn[row].item<std::int64_t>();
      REQUIRE((t >= 0 && t < vocab));
      const double target = host_u[row].item<double>() * cdf[row][vocab - 1].item<double>();
      CHECK(cdf[row][t].item<double>() >= target - slack);
      if (t > 0) CHECK(cdf[row][t - 1].item<double>() <= target + slack);
      CHECK(std::fabs(drawn_lp[row].item<double>() - logp[row][t].item<double>()) <= 1e-4);
    }
    CHECK(drawn[0].item<std::int64_t>() == 0);  // uniform 0: the first token
    CHECK(drawn[2].item<std::int64_t>() >= vocab / 2);  // never a token of probability 0
  }
}

TEST_CASE("sampling is reproducible per seed and per row, and its log-probs are the temperature-scaled ones") {
  const std::string name = "qwen2_tiny_sharded";
  if (!have_golden(name)) return;
  const json golden = golden_of(name);
  policy p = load_cpu(golden_dir(name));
  const auto prompt = ids_of(golden["greedy"][0]["prompt_ids"]);
  generation_options o;
  o.max_new_tokens = 12;
  o.eos_token_ids = std::vector<std::int32_t>{};
  o.sampling = {.greedy = false, .temperature = 0.8, .top_p = 1.0, .top_k = 0, .seed = 7};

  auto a = p.generate({prompt, prompt}, o);
  auto b = p.generate({prompt, prompt}, o);
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  CHECK(a->at(0).ids == b->at(0).ids);
  CHECK(a->at(0).ids != a->at(1).ids);  // rows draw from different generators
  o.sampling.seed = 8;
  auto c = p.generate({prompt, prompt}, o);
  REQUIRE(c.ok());
  CHECK(c->at(0).ids == a->at(1).ids);  // row i uses seed + i
  CHECK(c->at(0).ids != a->at(0).ids);

  // The recorded log-probs are log_softmax(logits / T) of the drawn token.
  token_batch batch = make_token_batch(*a, torch::kCPU);
  torch::NoGradGuard no_grad;
  auto lp = token_logprobs(*p.model(), batch.input_ids, batch.attention_mask, batch.first_target, 0.8);
  CHECK((lp - batch.behaviour_logprobs).abs().max().item<double>() <= kTolerance);

  SUBCASE("top_k = 1 and a tiny top_p both reduce to greedy") {
    auto greedy = p.generate({prompt}, golden_greedy());
    REQUIRE(greedy.ok());
    o.max_new_tokens = 16;
    o.sampling.top_k = 1;
    auto k1 = p.generate({prompt}, o);
    REQUIRE(k1.ok());
    CHECK(k1->at(0).ids == greedy->at(0).ids);
    o.sampling.top_k = 0;
    o.sampling.top_p = 1e-6;
    auto p0 = p.generate({prompt}, o);
    REQUIRE(p0.ok());
    CHECK(p0->at(0).ids == greedy->at(0).ids);
  }
  SUBCASE("top_k keeps every draw among the k most likely tokens") {
    o.sampling.top_k = 3;
    o.max_new_tokens = 8;
    auto got = p.generate({prompt}, o);
    REQUIRE(got.ok());
    std::vector<std::int32_t> seq = prompt;
    for (auto id : got->at(0).ids) {
      auto input = torch::tensor(std::vector<std::int64_t>(seq.begin(), seq.end())).unsqueeze(0);
      auto mask = torch::ones_like(input, torch::kBool);
      auto last = p.model()->logits(p.model()->hidden_states(input, positions_from_mask(mask), mask))[0][-1];
      auto top = std::get<1>(last.topk(3));
      CHECK((top == id).any().item<bool>());
      seq.push_back(id);
    }
  }
}

TEST_CASE("generation stops at an eos id or a stop string, and after max_new_tokens") {
  const std::string name = "llama_tiny_tied";
  if (!have_golden(name)) return;
  const json golden = golden_of(name);
  policy p = load_cpu(golden_dir(name));
  const json& want = golden["greedy"][1];
  const auto prompt = ids_of(want["prompt_ids"]);
  const auto ids = ids_of(want["ids"]);

  generation_options o = golden_greedy();
  o.eos_token_ids = std::vector<std::int32_t>{ids[5]};
  auto eos = p.generate({prompt}, o);
  REQUIRE(eos.ok());
  const auto first = static_cast<std::size_t>(std::find(ids.begin(), ids.end(), ids[5]) - ids.begin());
  CHECK(eos->at(0).ids == std::vector<std::int32_t>(ids.begin(), ids.begin() + first + 1));
  CHECK(eos->at(0).finish == finish_reason::eos);

  // A stop string completed by token 9 (the decoded text of tokens 8 and 9).
  o = golden_greedy();
  const std::string stop = p.tok().decode(std::vector<std::int32_t>{ids[8], ids[9]});
  const std::string before = p.tok().decode(std::vector<std::int32_t>(ids.begin(), ids.begin() + 9));
  REQUIRE(!stop.empty());
  o.stop_strings = {stop};
  auto stopped = p.generate({prompt}, o);
  REQUIRE(stopped.ok());
  const std::string full = p.tok().decode(stopped->at(0).ids);
  CHECK(stopped->at(0).finish == finish_reason::stop_string);
  CHECK(full.find(stop) != std::string::npos);
  CHECK(stopped->at(0).ids.size() <= 10);
  // And nowhere before its last token.
  auto shorter = stopped->at(0).ids;
  shorter.pop_back();
  CHECK(p.tok().decode(shorter).find(stop) == std::string::npos);
  (void)before;

  o = golden_greedy();
  o.max_new_tokens = 3;
  auto three = p.generate({prompt, ids_of(golden["greedy"][0]["prompt_ids"])}, o);
  REQUIRE(three.ok());
  for (const auto& g : *three) {
    CHECK(g.ids.size() == 3);
    CHECK(g.finish == finish_reason::length);
  }
}

TEST_CASE("continuous batching: a finished row's slot takes the next waiting prompt, whose completion is as in a batch of its own") {
  for (const auto& name : kModels) {
    INFO("golden folder " << name);
    if (!have_golden(name)) continue;
    const json golden = golden_of(name);
    policy p = load_cpu(golden_dir(name));
    const auto short_prompt = ids_of(golden["greedy"][1]["prompt_ids"]);
    const auto long_prompt = ids_of(golden["greedy"][0]["prompt_ids"]);
    // The short prompt's continuation ends at an eos id after 6 tokens;
    // the long one's never meets it (checked alone first).
    generation_options o = golden_greedy();
    o.eos_token_ids = std::vector<std::int32_t>{ids_of(golden["greedy"][1]["ids"])[5]};
    auto alone_short = p.generate({short_prompt}, o);
    auto alone_long = p.generate({long_prompt}, o);
    REQUIRE(alone_short.ok());
    REQUIRE(alone_long.ok());
    REQUIRE(alone_short->at(0).finish == finish_reason::eos);
    REQUIRE(alone_short->at(0).ids.size() < 16);
    REQUIRE(alone_long->at(0).finish == finish_reason::length);

    auto same = [&](const generation& got, const generation& want) {
      CHECK(got.ids == want.ids);
      CHECK(got.finish == want.finish);
      REQUIRE(got.logprobs.size() == want.logprobs.size());
      for (std::size_t k = 0; k < got.logprobs.size(); ++k) CHECK(std::fabs(got.logprobs[k] - want.logprobs[k]) <= kTolerance);
    };
    const std::vector<std::vector<std::int32_t>> prompts{short_prompt, long_prompt, short_prompt, short_prompt, long_prompt};
    o.slots = 2;
    auto got = p.generate(prompts, o);
    REQUIRE_MESSAGE(got.ok(), crucible::error_text(got));
    REQUIRE(got->size() == prompts.size());
    for (std::size_t i = 0; i < prompts.size(); ++i) {
      INFO("prompt " << i);
      CHECK(got->at(i).prompt_ids == prompts[i]);
      same(got->at(i), prompts[i] == short_prompt ? alone_short->at(0) : alone_long->at(0));
    }
    // Prompt 2 took prompt 0's slot when it finished, while prompt 1 was
    // still decoding in the other; prompt 3 followed prompt 2 in that slot.
    const auto short_steps = static_cast<std::int64_t>(alone_short->at(0).ids.size());
    CHECK(got->at(0).start_step == 0);
    CHECK(got->at(1).start_step == 0);
    CHECK(got->at(2).start_step == short_steps - 1);
    CHECK(got->at(3).start_step == 2 * (short_steps - 1));
    CHECK(got->at(2).start_step < got->at(1).start_step + 16);

    SUBCASE("completions that fill the cache: a second pass takes the prompts left") {
      o.eos_token_ids = std::vector<std::int32_t>{};
      auto full = p.generate(prompts, o);
      REQUIRE(full.ok());
      for (std::size_t i = 0; i < prompts.size(); ++i) {
        INFO("prompt " << i);
        auto want = p.generate({prompts[i]}, o);
        REQUIRE(want.ok());
        same(full->at(i), want->at(0));
      }
      // Two full completions per slot fit in the cache (15 + 16 steps);
      // prompt 4 starts a pass of its own after the first 30 steps.
      CHECK(full->at(2).start_step == 15);
      CHECK(full->at(4).start_step == 30);
    }
    SUBCASE("slots that finish at one step are refilled together: one prefill, its prompts padded to the longest") {
      auto cut = long_prompt;
      cut.resize(cut.size() > 3 ? cut.size() - 3 : 1);
      REQUIRE(cut.size() < long_prompt.size());
      auto alone_cut = p.generate({cut}, o);
      REQUIRE(alone_cut.ok());
      const std::vector<std::vector<std::int32_t>> both{short_prompt, short_prompt, cut, long_prompt};
      auto together = p.generate(both, o);
      REQUIRE(together.ok());
      same(together->at(0), alone_short->at(0));
      same(together->at(1), alone_short->at(0));
      same(together->at(2), alone_cut->at(0));
      same(together->at(3), alone_long->at(0));
      // Both short completions end at the same step; both slots take a
      // waiting prompt at that step.
      CHECK(together->at(2).start_step == short_steps - 1);
      CHECK(together->at(3).start_step == short_steps - 1);
    }
    SUBCASE("sampled: each prompt draws as in one batch, and the log-probs are the network's") {
      o.sampling = {.greedy = false, .temperature = 0.8, .top_p = 1.0, .top_k = 0, .seed = 7};
      auto continuous = p.generate(prompts, o);
      o.slots = 0;
      auto one_batch = p.generate(prompts, o);
      REQUIRE(continuous.ok());
      REQUIRE(one_batch.ok());
      for (std::size_t i = 0; i < prompts.size(); ++i) {
        INFO("prompt " << i);
        same(continuous->at(i), one_batch->at(i));
      }
      token_batch batch = make_token_batch(*continuous, torch::kCPU);
      torch::NoGradGuard no_grad;
      auto lp = token_logprobs(*p.model(), batch.input_ids, batch.attention_mask, batch.first_target, 0.8);
      CHECK(((lp - batch.behaviour_logprobs) * batch.completion_mask).abs().max().item<double>() <= kTolerance);
    }
  }
}

TEST_CASE("generate refuses a negative slot count") {
  const std::string name = "qwen2_tiny_sharded";
  if (!have_golden(name)) return;
  policy p = load_cpu(golden_dir(name));
  generation_options o = golden_greedy();
  o.slots = -1;
  auto got = p.generate({ids_of(golden_of(name)["greedy"][0]["prompt_ids"])}, o);
  REQUIRE_FALSE(got.ok());
  CHECK(got.error().text().find("slots is negative") != std::string::npos);
}

TEST_CASE("a saved checkpoint loads back with identical logits and the Hugging Face layout") {
  for (const auto& name : kModels) {
    INFO("golden folder " << name);
    if (!have_golden(name)) continue;
    policy p = load_cpu(golden_dir(name));
    testing::scratch_dir out;
    save_options options;
    options.max_shard_bytes = 100'000;  // force shards
    auto s = p.save(out.path(), options);
    REQUIRE_MESSAGE(s.ok(), crucible::error_text(s));
    CHECK(fs::exists(out / "tokenizer.json"));
    CHECK(fs::exists(out / "model.safetensors.index.json"));
    auto saved_config = json::parse(testing::read_file(out / "config.json"));
    auto original_config = json::parse(testing::read_file(golden_dir(name) / "config.json"));
    CHECK(saved_config == original_config);  // same dtype as loaded: nothing changes

    // Tensor for tensor the bytes transformers wrote (bf16 -> fp32 -> bf16 is exact).
    auto before = checkpoint_weights::open(golden_dir(name));
    auto after = checkpoint_weights::open(out.path());
    REQUIRE(before.ok());
    REQUIRE(after.ok());
    CHECK(before->names() == after->names());
    for (const auto& tensor : before->names()) {
      const auto* a = before->find(tensor);
      const auto* b = after->find(tensor);
      REQUIRE(b != nullptr);
      CHECK(a->type == b->type);
      CHECK(a->shape == b->shape);
      CHECK(std::equal(a->bytes.begin(), a->bytes.end(), b->bytes.begin(), b->bytes.end()));
    }
    policy q = load_cpu(out.path());
    auto greedy = q.generate({ids_of(golden_of(name)["greedy"][0]["prompt_ids"])}, golden_greedy());
    REQUIRE(greedy.ok());
    check_greedy(greedy->at(0), golden_of(name)["greedy"][0]);

    // Saving in another dtype rewrites config.json's dtype.
    testing::scratch_dir half;
    options.tensor_dtype = dtype::f16;
    REQUIRE(p.save(half.path(), options).ok());
    CHECK(json::parse(testing::read_file(half / "config.json"))["dtype"] == "float16");
    auto f16 = checkpoint_weights::open(half.path());
    REQUIRE(f16.ok());
    CHECK(f16->get("model.norm.weight")->type == dtype::f16);
  }
}

TEST_CASE("on CUDA, fp32 generation matches the golden data and bf16 stays close to fp32") {
  if (!torch::cuda::is_available()) {
    MESSAGE("no CUDA device: skipped");
    return;
  }
  for (const auto& name : kModels) {
    INFO("golden folder " << name);
    if (!have_golden(name)) continue;
    const json golden = golden_of(name);
    auto fp32 = policy::load(golden_dir(name), {.device = "cuda", .compute_dtype = dtype::f32});
    auto bf16 = policy::load(golden_dir(name), {.device = "cuda", .compute_dtype = std::nullopt});
    REQUIRE_MESSAGE(fp32.ok(), crucible::error_text(fp32));
    REQUIRE_MESSAGE(bf16.ok(), crucible::error_text(bf16));
    CHECK((bf16->model()->compute_dtype() == torch::kBFloat16));
    std::vector<std::vector<std::int32_t>> prompts;
    for (const auto& g : golden["greedy"]) prompts.push_back(ids_of(g["prompt_ids"]));
    auto got = fp32->generate(prompts, golden_greedy());
    REQUIRE_MESSAGE(got.ok(), crucible::error_text(got));
    for (std::size_t i = 0; i < prompts.size(); ++i) {
      CHECK(json(got->at(i).ids) == golden["greedy"][i]["ids"]);
      for (std::size_t j = 0; j < got->at(i).logprobs.size(); ++j) {
        CHECK(std::fabs(got->at(i).logprobs[j] - golden["greedy"][i]["logprobs"][j].get<double>()) <= 1e-3);
      }
    }
    // The CUDA-graph decode (the default) against every step run eagerly,
    // a second call that replays the graph the first one captured, and the
    // graph with the fused decode kernels where the build has them.
    generation_options eager = golden_greedy(), fused = golden_greedy();
    eager.cuda_graphs = false;
    fused.fused_kernels = true;
    auto stepwise = fp32->generate(prompts, eager);
    auto replayed = fp32->generate(prompts, golden_greedy());
    auto with_kernels = fp32->generate(prompts, fused);
    REQUIRE(stepwise.ok());
    REQUIRE(replayed.ok());
    REQUIRE(with_kernels.ok());
    for (std::size_t i = 0; i < prompts.size(); ++i) {
      CHECK(stepwise->at(i).ids == got->at(i).ids);
      CHECK(replayed->at(i).ids == got->at(i).ids);
      CHECK(with_kernels->at(i).ids == got->at(i).ids);
      for (std::size_t j = 0; j < got->at(i).logprobs.size(); ++j) {
        CHECK(std::fabs(stepwise->at(i).logprobs[j] - got->at(i).logprobs[j]) <= kTolerance);
        CHECK(replayed->at(i).logprobs[j] == got->at(i).logprobs[j]);
        CHECK(std::fabs(with_kernels->at(i).logprobs[j] - got->at(i).logprobs[j]) <= kTolerance);
      }
    }
    // bf16 (with the fused attention for prompts): prompt log-probs near fp32's.
    auto sampled = bf16->generate(prompts, golden_greedy());
    REQUIRE_MESSAGE(sampled.ok(), crucible::error_text(sampled));
    token_batch batch = make_token_batch(*sampled, torch::Device(torch::kCUDA));
    torch::NoGradGuard no_grad;
    auto lp32 = token_logprobs(*fp32->model(), batch.input_ids, batch.attention_mask, batch.first_target);
    CHECK(((lp32 - batch.behaviour_logprobs).abs() * batch.completion_mask).max().item<double>() <= 0.1);
  }
}

TEST_CASE("a scratch folder goes away with everything in it, in a binary that links LibTorch") {
  fs::path kept;
  {
    testing::scratch_dir dir;
    kept = dir.path();
    fs::create_directories(dir / "a" / "b");
    testing::write_file(dir / "a" / "b" / "file", "bytes");
    testing::write_file(dir / "top", "bytes");
    CHECK(fs::exists(dir / "a" / "b" / "file"));
  }
  CHECK(!fs::exists(kept));
}

TEST_CASE("bad checkpoints and bad requests are refused with the file and the field named") {
  const std::string name = "qwen2_tiny_sharded";
  if (!have_golden(name)) return;
  testing::scratch_dir dir;
  for (const auto& entry : fs::directory_iterator(golden_dir(name))) {
    fs::copy_file(entry.path(), dir / entry.path().filename().string());
  }
  const auto config_path = dir / "config.json";
  const json config = json::parse(testing::read_file(config_path));
  auto load_error = [&](const json& changed) {
    testing::write_file(config_path, changed.dump());
    auto p = policy::load(dir.path(), {.device = "cpu", .compute_dtype = std::nullopt});
    REQUIRE(!p.ok());
    return p.error().text();
  };

  SUBCASE("more layers than the weights have") {
    json c = config;
    c["num_hidden_layers"] = 3;
    const auto e = load_error(c);
    CHECK(e.find("model.layers.2.") != std::string::npos);
    CHECK(e.find("config.json") != std::string::npos);
  }
  SUBCASE("fewer layers than the weights have") {
    json c = config;
    c["num_hidden_layers"] = 1;
    const auto e = load_error(c);
    CHECK(e.find("model.layers.1.") != std::string::npos);
    CHECK(e.find("has no place") != std::string::npos);
  }
  SUBCASE("a width that disagrees with the tensors") {
    json c = config;
    c["intermediate_size"] = 96;
    const auto e = load_error(c);
    CHECK(e.find("mlp.") != std::string::npos);
    CHECK(e.find("should have shape") != std::string::npos);
  }
  SUBCASE("an unsupported architecture") {
    json c = config;
    c["architectures"] = {"MistralForCausalLM"};
    c["model_type"] = "mistral";
    const auto e = load_error(c);
    CHECK(e.find("config.json") != std::string::npos);
    CHECK(e.find("architectures") != std::string::npos);
  }
  SUBCASE("a missing shard") {
    fs::remove(dir / "model-00002-of-00004.safetensors");
    auto p = policy::load(dir.path(), {.device = "cpu", .compute_dtype = std::nullopt});
    REQUIRE(!p.ok());
    CHECK(p.error().text().find("model-00002-of-00004.safetensors") != std::string::npos);
  }
  SUBCASE("a missing tokenizer") {
    fs::remove(dir / "tokenizer.json");
    auto p = policy::load(dir.path(), {.device = "cpu", .compute_dtype = std::nullopt});
    REQUIRE(!p.ok());
    CHECK(p.error().text().find("tokenizer.json") != std::string::npos);
  }
  SUBCASE("prompts and options the generator cannot use") {
    policy p = load_cpu(dir.path());
    generation_options o = golden_greedy();
    auto empty = p.generate({{}}, o);
    REQUIRE(!empty.ok());
    CHECK(empty.error().text().find("prompt 0 is empty") != std::string::npos);
    auto outside = p.generate({{1, 2, static_cast<std::int32_t>(p.config().vocab_size)}}, o);
    REQUIRE(!outside.ok());
    CHECK(outside.error().text().find("outside the vocabulary") != std::string::npos);
    o.sampling = {.greedy = false, .temperature = 0.0};
    auto cold = p.generate({{1, 2}}, o);
    REQUIRE(!cold.ok());
    CHECK(cold.error().text().find("temperature") != std::string::npos);
  }
}

}  // namespace
}  // namespace crucible::policy
