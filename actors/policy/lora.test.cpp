// LoRA adapters (lora.hpp, lora_adapters.hpp) on a small Qwen2-shaped
// network built in the test: the adapted forward equals the merged weights',
// fresh adapters change nothing, base_only_scope leaves them out, only the
// adapters get gradients when the base is frozen, and the PEFT folder
// round-trips with PEFT's names and config keys.
// LibTorch first: glog defines a CHECK that doctest's must replace.
#include <ATen/CPUGeneratorImpl.h>

#include <nlohmann/json.hpp>

#include "actors/policy/causal_lm.hpp"
#include "actors/policy/lora.hpp"
#include "actors/policy/lora_adapters.hpp"
#include "actors/policy/test_support.hpp"

#include <doctest/doctest.h>

namespace crucible::policy {
namespace {

using json = nlohmann::json;

model_config small_config() {
  model_config c;
  c.arch = architecture::qwen2;
  c.architecture_name = "Qwen2ForCausalLM";
  c.hidden_size = 32;
  c.intermediate_size = 48;
  c.num_hidden_layers = 2;
  c.num_attention_heads = 4;
  c.num_key_value_heads = 2;
  c.head_dim = 8;
  c.vocab_size = 64;
  c.max_position_embeddings = 128;
  c.rope_theta = 10000;
  c.rms_norm_eps = 1e-6;
  c.attention_bias = true;
  c.tie_word_embeddings = true;
  return c;
}

std::shared_ptr<causal_lm> small_model(std::uint64_t seed = 1) {
  auto model = std::make_shared<causal_lm>(small_config(), model_placement{.device = "cpu", .compute_dtype = dtype::f32});
  torch::NoGradGuard no_grad;
  auto gen = at::detail::createCPUGenerator(seed);
  for (auto& item : model->named_parameters()) {
    auto noise = torch::randn(item.value().sizes(), gen, torch::TensorOptions().dtype(torch::kFloat32));
    item.value().copy_(item.key().ends_with("norm.weight") ? 1.0 + 0.1 * noise : 0.2 * noise);
  }
  return model;
}

// Every B drawn at random too, so that the adapters change the output.
void randomise_b(lora_adapters& adapters, std::uint64_t seed) {
  torch::NoGradGuard no_grad;
  auto gen = at::detail::createCPUGenerator(seed);
  for (auto& item : adapters.named_parameters())
    if (item.key().find("lora_B") != std::string::npos)
      item.value().copy_(0.3 * torch::randn(item.value().sizes(), gen, torch::TensorOptions().dtype(torch::kFloat32)));
}

torch::Tensor logits_of(causal_lm& model) {
  torch::NoGradGuard no_grad;
  auto ids = torch::tensor({{3, 9, 17, 4, 33, 2, 60, 1}}, torch::kInt64);
  auto mask = torch::ones_like(ids, torch::kBool);
  return model.logits(model.hidden_states(ids, positions_from_mask(mask), mask));
}

lora_options rank4(std::vector<std::string> targets = lora_options{}.targets) {
  lora_options o;
  o.rank = 4;
  o.alpha = 8;
  o.targets = std::move(targets);
  return o;
}

TEST_CASE("lora options: PEFT's adapter_config.json round-trips, and bad options are refused by name") {
  auto o = rank4({"q_proj", "v_proj", "down_proj"});
  o.dropout = 0.05;
  const auto text = peft_adapter_config(o, "Qwen/Qwen2.5-0.5B");
  const auto j = json::parse(text);
  CHECK(j["peft_type"] == "LORA");
  CHECK(j["task_type"] == "CAUSAL_LM");
  CHECK(j["r"] == 4);
  CHECK(j["lora_alpha"] == 8.0);
  CHECK(j["lora_dropout"] == 0.05);
  CHECK(j["bias"] == "none");
  CHECK(j["base_model_name_or_path"] == "Qwen/Qwen2.5-0.5B");
  CHECK(j["target_modules"] == json({"q_proj", "v_proj", "down_proj"}));
  auto back = parse_peft_adapter_config(text, "adapter_config.json");
  REQUIRE(back.ok());
  CHECK(back->rank == 4);
  CHECK(back->alpha == 8);
  CHECK(back->targets == o.targets);
  CHECK(peft_tensor_name(3, 5, 'B') == "base_model.model.model.layers.3.mlp.up_proj.lora_B.weight");
  CHECK(peft_tensor_name(0, 0, 'A') == "base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight");

  CHECK_FALSE(validate(rank4({"q_proj", "lm_head"})).ok());
  CHECK_FALSE(validate(rank4({"q_proj", "q_proj"})).ok());
  CHECK_FALSE(validate(rank4({})).ok());
  auto bad_dropout = rank4();
  bad_dropout.dropout = 1;
  CHECK(validate(bad_dropout).error().message.find("dropout") != std::string::npos);
  CHECK_FALSE(parse_peft_adapter_config(R"({"peft_type": "IA3", "r": 4})", "x").ok());
  CHECK_FALSE(parse_peft_adapter_config(R"({"peft_type": "LORA", "r": 4, "target_modules": ["q_proj"], "bias": "all"})", "x").ok());
  auto one = parse_peft_adapter_config(R"({"peft_type": "LORA", "r": 2, "lora_alpha": 4, "target_modules": "o_proj"})", "x");
  REQUIRE(one.ok());
  CHECK(one->targets == std::vector<std::string>{"o_proj"});
}

TEST_CASE("fresh adapters change nothing: B starts at zero, A as PEFT draws it") {
  auto model = small_model();
  const auto before = logits_of(*model);
  auto adapters = add_lora(*model, rank4(), 7);
  REQUIRE(adapters.ok());
  CHECK(torch::equal(before, logits_of(*model)));
  const auto& a = (*adapters)->a(0, 0);
  CHECK(a.size(0) == 4);
  CHECK(a.size(1) == 32);
  CHECK(a.abs().max().item<double>() <= 1.0 / std::sqrt(32.0));
  CHECK(a.abs().max().item<double>() > 0.5 / std::sqrt(32.0));
  CHECK((*adapters)->b(1, 6).abs().max().item<double>() == 0.0);
  // Named as PEFT names them; the base's names are untouched.
  std::size_t n = 0;
  for (const auto& item : (*adapters)->named_parameters()) {
    CHECK(item.key().starts_with("base_model.model.model.layers."));
    ++n;
  }
  CHECK(n == 2 * 7 * 2);
  for (const auto& item : model->named_parameters()) CHECK(item.key().find("lora") == std::string::npos);
}

TEST_CASE("the adapted network equals its merged weights, and base_only_scope leaves the adapters out") {
  for (auto targets : {lora_options{}.targets, std::vector<std::string>{"k_proj", "o_proj", "up_proj"}}) {
    auto model = small_model();
    const auto base = logits_of(*model);
    auto adapters = add_lora(*model, rank4(targets), 3);
    REQUIRE(adapters.ok());
    randomise_b(**adapters, 5);
    const auto adapted = logits_of(*model);
    CHECK((adapted - base).abs().max().item<double>() > 1e-2);
    {
      causal_lm::base_only_scope base_only;
      CHECK(torch::equal(base, logits_of(*model)));
    }
    CHECK(torch::equal(adapted, logits_of(*model)));
    merge_adapters(*model);
    CHECK(model->adapters() == nullptr);
    CHECK(torch::allclose(adapted, logits_of(*model), 1e-4, 1e-5));
  }
}

TEST_CASE("decode steps with adapters equal the full forward") {
  auto model = small_model();
  auto adapters = add_lora(*model, rank4(), 3);
  REQUIRE(adapters.ok());
  randomise_b(**adapters, 5);
  torch::NoGradGuard no_grad;
  auto ids = torch::tensor({{3, 9, 17, 4}}, torch::kInt64);
  auto full = model->logits(model->hidden_states(ids, positions_from_mask(torch::ones_like(ids)), torch::ones_like(ids, torch::kBool)));
  auto cache = model->make_cache(1, 8);
  auto mask = torch::ones({1, 8}, torch::kBool);
  for (std::int64_t t = 0; t < 4; ++t) {
    auto step = model->decode_step(ids.narrow(1, t, 1), torch::full({1, 1}, t, torch::kInt64),
                                   torch::full({1}, t, torch::kInt64), mask, cache);
    CHECK(torch::allclose(step, full.select(1, t), 1e-4, 1e-5));
  }
}

TEST_CASE("with the base frozen only the adapters get gradients, and dropout applies in training mode only") {
  auto model = small_model();
  for (auto& p : model->parameters()) p.set_requires_grad(false);
  auto options = rank4();
  options.dropout = 0.5;
  auto adapters = add_lora(*model, options, 3);
  REQUIRE(adapters.ok());
  randomise_b(**adapters, 5);
  auto ids = torch::tensor({{3, 9, 17, 4, 33, 2}}, torch::kInt64);
  auto mask = torch::ones_like(ids, torch::kBool);
  const auto eval_logp = token_logprobs(*model, ids, mask, 2).detach();
  CHECK(torch::equal(eval_logp, token_logprobs(*model, ids, mask, 2).detach()));
  (*adapters)->train();
  auto logp = token_logprobs(*model, ids, mask, 2);
  CHECK_FALSE(torch::equal(eval_logp, logp.detach()));  // dropout on the adapters' inputs
  logp.sum().backward();
  for (const auto& p : model->parameters()) CHECK_FALSE(p.grad().defined());
  for (const auto& item : (*adapters)->named_parameters()) {
    CAPTURE(item.key());
    REQUIRE(item.value().grad().defined());
    CHECK(item.value().grad().abs().sum().item<double>() > 0);
  }
}

TEST_CASE("a PEFT folder round-trips onto another model, in place when the options match") {
  testing::scratch_dir dir;
  auto model = small_model();
  auto adapters = add_lora(*model, rank4({"q_proj", "gate_proj"}), 3);
  REQUIRE(adapters.ok());
  randomise_b(**adapters, 5);
  const auto adapted = logits_of(*model);
  REQUIRE(save_adapters(**adapters, dir / "adapter", "base-model").ok());
  CHECK(is_adapter_folder(dir / "adapter"));
  auto file = safetensors_file::open(dir / "adapter" / "adapter_model.safetensors");
  REQUIRE(file.ok());
  CHECK(file->tensors().size() == 2 * 2 * 2);
  CHECK(file->find("base_model.model.model.layers.1.mlp.gate_proj.lora_B.weight") != nullptr);
  CHECK(json::parse(testing::read_file(dir / "adapter" / "adapter_config.json"))["base_model_name_or_path"] == "base-model");

  auto other = small_model();  // the same base
  REQUIRE(load_adapters(*other, dir / "adapter").ok());
  CHECK(torch::allclose(adapted, logits_of(*other), 1e-6, 1e-6));
  // A second load with the same options copies into the same tensors.
  const auto* before = other->adapters().get();
  const auto a_data = other->adapters()->a(0, 0).data_ptr();
  REQUIRE(load_adapters(*other, dir / "adapter").ok());
  CHECK(other->adapters().get() == before);
  CHECK(other->adapters()->a(0, 0).data_ptr() == a_data);

  // A copy is independent of its source.
  auto copy = copy_adapters(*other->adapters());
  randomise_b(*other->adapters(), 9);
  other->set_adapters(copy);
  CHECK(torch::allclose(adapted, logits_of(*other), 1e-6, 1e-6));

  // A tensor missing or of another shape is refused, naming it.
  auto wrong = small_model();
  testing::write_file(dir / "adapter" / "adapter_config.json", peft_adapter_config(rank4({"q_proj", "gate_proj", "up_proj"}), "b"));
  auto refused = load_adapters(*wrong, dir / "adapter");
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().message.find("up_proj.lora_A") != std::string::npos);
  CHECK(wrong->adapters() == nullptr);
}

}  // namespace
}  // namespace crucible::policy
