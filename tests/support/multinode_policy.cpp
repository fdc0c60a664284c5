#include "tests/support/multinode_policy.hpp"

#include <cstddef>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "actors/policy/safetensors.hpp"
#include "actors/policy/tokenizer_test_support.hpp"
#include "runtime/base/write_file.hpp"

namespace crucible::testing {

namespace {

constexpr std::int64_t hidden = 8, intermediate = 8, heads = 2, kv_heads = 1, head_dim = 4;
// The answers' weight in the output head: their logit is this times
// sqrt(hidden) (the normalised hidden state is sqrt(hidden) e0), 17 against
// 0 for every byte token.
constexpr float answer_weight = 6.0f;

// One float32 tensor, zero but for what `fill` sets.
struct tensor {
  std::string name;
  std::vector<std::int64_t> shape;
  std::vector<float> data;
};

tensor zeros(std::string name, std::vector<std::int64_t> shape) {
  std::int64_t n = 1;
  for (auto d : shape) n *= d;
  return {std::move(name), std::move(shape), std::vector<float>(static_cast<std::size_t>(n), 0.0f)};
}

tensor ones(std::string name, std::int64_t n) {
  auto t = zeros(std::move(name), {n});
  std::fill(t.data.begin(), t.data.end(), 1.0f);
  return t;
}

}  // namespace

status write_answering_policy(const std::string& dir, const std::vector<std::string>& answers) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(dir, ec);
  const std::int64_t first = 256, eos = first + static_cast<std::int64_t>(answers.size()), vocab = eos + 1;

  auto tok = policy::testing::byte_level_tokenizer({});
  for (std::size_t i = 0; i < answers.size(); ++i)
    tok["added_tokens"].push_back(policy::testing::added(static_cast<int>(first + i), answers[i], false));
  tok["added_tokens"].push_back(policy::testing::added(static_cast<int>(eos), "<|endoftext|>", true));
  CRUCIBLE_TRY(write_file(fs::path(dir) / "tokenizer.json", tok.dump()));

  const nlohmann::json config{{"architectures", {"LlamaForCausalLM"}},
                              {"model_type", "llama"},
                              {"hidden_size", hidden},
                              {"intermediate_size", intermediate},
                              {"num_hidden_layers", 1},
                              {"num_attention_heads", heads},
                              {"num_key_value_heads", kv_heads},
                              {"head_dim", head_dim},
                              {"vocab_size", vocab},
                              {"max_position_embeddings", 32768},
                              {"rope_theta", 10000.0},
                              {"rms_norm_eps", 1e-6},
                              {"tie_word_embeddings", false},
                              {"hidden_act", "silu"},
                              {"torch_dtype", "float32"},
                              {"bos_token_id", eos},
                              {"eos_token_id", eos}};
  CRUCIBLE_TRY(write_file(fs::path(dir) / "config.json", config.dump(1)));

  // Every token embeds as e0; attention and MLP add nothing to it.
  auto embed = zeros("model.embed_tokens.weight", {vocab, hidden});
  for (std::int64_t v = 0; v < vocab; ++v) embed.data[static_cast<std::size_t>(v * hidden)] = 1.0f;
  auto head = zeros("lm_head.weight", {vocab, hidden});
  for (std::int64_t v = first; v < eos; ++v) head.data[static_cast<std::size_t>(v * hidden)] = answer_weight;
  const std::string layer = "model.layers.0.";
  std::vector<tensor> tensors;
  tensors.push_back(std::move(embed));
  tensors.push_back(std::move(head));
  tensors.push_back(ones("model.norm.weight", hidden));
  tensors.push_back(ones(layer + "input_layernorm.weight", hidden));
  tensors.push_back(ones(layer + "post_attention_layernorm.weight", hidden));
  tensors.push_back(zeros(layer + "self_attn.q_proj.weight", {heads * head_dim, hidden}));
  tensors.push_back(zeros(layer + "self_attn.k_proj.weight", {kv_heads * head_dim, hidden}));
  tensors.push_back(zeros(layer + "self_attn.v_proj.weight", {kv_heads * head_dim, hidden}));
  tensors.push_back(zeros(layer + "self_attn.o_proj.weight", {hidden, heads * head_dim}));
  tensors.push_back(zeros(layer + "mlp.gate_proj.weight", {intermediate, hidden}));
  tensors.push_back(zeros(layer + "mlp.up_proj.weight", {intermediate, hidden}));
  tensors.push_back(zeros(layer + "mlp.down_proj.weight", {hidden, intermediate}));

  std::vector<policy::tensor_view> views;
  for (const auto& t : tensors)
    views.push_back({t.name, policy::dtype::f32, t.shape,
                     std::as_bytes(std::span<const float>(t.data.data(), t.data.size()))});
  return policy::write_safetensors(fs::path(dir) / "model.safetensors", views);
}

}  // namespace crucible::testing
