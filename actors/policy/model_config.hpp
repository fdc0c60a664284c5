// The architecture of a Hugging Face checkpoint, read from its config.json.
// Two families are supported: Qwen2 (Qwen2ForCausalLM: q/k/v projections with
// biases) and Llama (LlamaForCausalLM: biases only when attention_bias is
// set). The LibTorch model is built from this struct.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/base/result.hpp"

namespace crucible::policy {

enum class architecture { qwen2, llama };
std::string_view to_string(architecture arch);  // "qwen2", "llama"

struct model_config {
  architecture arch = architecture::qwen2;
  std::string architecture_name;  // as in "architectures", e.g. "Qwen2ForCausalLM"
  std::int64_t hidden_size = 0;
  std::int64_t intermediate_size = 0;
  std::int64_t num_hidden_layers = 0;
  std::int64_t num_attention_heads = 0;
  std::int64_t num_key_value_heads = 0;  // default: num_attention_heads
  std::int64_t head_dim = 0;             // default: hidden_size / num_attention_heads
  std::int64_t vocab_size = 0;
  std::int64_t max_position_embeddings = 0;
  double rope_theta = 0;    // "rope_theta", or "rope_parameters.rope_theta" (transformers 5)
  double rms_norm_eps = 0;
  bool tie_word_embeddings = false;  // default false (both families' class default)
  bool attention_bias = false;       // q/k/v biases: always for Qwen2; "attention_bias" for Llama
  bool o_proj_bias = false;          // Llama's attention_bias also puts a bias on o_proj
  bool mlp_bias = false;             // Llama's "mlp_bias" (default false)
  std::string torch_dtype;           // "float32", "bfloat16", "float16"; "dtype" in transformers 5; empty when absent
  std::optional<std::int64_t> bos_token_id;
  std::vector<std::int64_t> eos_token_ids;  // "eos_token_id" may be one id or a list

  std::string text() const;  // one line for logs
};

// Parses config.json text. `source` names the file in errors. invalid_argument
// naming the file and the field for: bad JSON, an architecture other than
// Qwen2ForCausalLM / LlamaForCausalLM (or model_type qwen2 / llama), a missing
// or ill-typed required field, a hidden_act other than silu, rope scaling,
// sliding-window attention, or inconsistent sizes (heads not dividing).
result<model_config> parse_model_config(std::string_view json_text, const std::string& source);

// Reads `path` (a config.json) and parses it; not_found or io when unreadable.
result<model_config> read_model_config(const std::filesystem::path& path);

}  // namespace crucible::policy
