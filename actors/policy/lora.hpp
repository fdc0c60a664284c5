// LoRA (Hu et al. 2021) as PEFT writes it, without LibTorch: the options of
// an adapter set, PEFT's adapter_config.json and its tensor names. A targeted
// projection y = W x + b becomes
//
//   y = W x + b + (alpha / rank) B (A dropout(x)),   A [rank, in], B [out, rank]
//
// with B zero at the start (so a fresh adapter set changes nothing) and A
// drawn as PEFT's kaiming_uniform(a = sqrt(5)). The LibTorch side (the
// adapters themselves, attached to a causal_lm) is lora_adapters.hpp.
//
// A folder of adapters is PEFT's: adapter_config.json and
// adapter_model.safetensors with tensors named
// "base_model.model.model.layers.N.self_attn.q_proj.lora_A.weight", which
// peft.PeftModel.from_pretrained loads onto the base model. The learner's
// publications and checkpoints of a LoRA run are such folders.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/base/result.hpp"

namespace crucible::policy {

// The projections an adapter may sit on, by their Hugging Face module names.
inline constexpr std::string_view lora_modules[] = {"q_proj", "k_proj", "v_proj", "o_proj",
                                                    "gate_proj", "up_proj", "down_proj"};
inline constexpr std::size_t lora_module_count = 7;

struct lora_options {
  std::uint32_t rank = 0;  // r; 0 = no adapters (full-weight training); default 0
  double alpha = 16;       // lora_alpha: the update is scaled by alpha / rank; default 16
  double dropout = 0;      // lora_dropout on the adapter's input while training, in [0, 1); default 0
  // Module names of lora_modules to adapt; default every one of them
  // (attention and MLP projections).
  std::vector<std::string> targets = {"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"};

  bool enabled() const { return rank > 0; }
  double scale() const { return rank ? alpha / static_cast<double>(rank) : 0.0; }
  // Whether lora_modules[module] is targeted.
  bool targets_module(std::size_t module) const;
  std::string text() const;  // "LoRA rank 8, alpha 16, dropout 0, on q_proj,k_proj,..."
};

// invalid_argument naming `where` + the field ("[learner] lora_" + "alpha") for alpha <= 0, a dropout
// outside [0, 1), an unknown or repeated target, or no target. A rank of 0
// is valid (LoRA off).
status validate(const lora_options& options, const std::string& where = "lora_");

// "self_attn.q_proj", "mlp.down_proj": where lora_modules[module] sits in a decoder layer.
std::string lora_module_path(std::size_t module);

// PEFT's name of adapter tensor A (which = 'A') or B ('B') of
// lora_modules[module] in decoder layer `layer`:
// "base_model.model.model.layers.3.mlp.up_proj.lora_B.weight".
std::string peft_tensor_name(std::int64_t layer, std::size_t module, char which);

// adapter_config.json as PEFT (0.10 and later) writes it for a causal LM:
// peft_type "LORA", task_type "CAUSAL_LM", r, lora_alpha, lora_dropout,
// target_modules, bias "none", base_model_name_or_path `base_model`, ...
std::string peft_adapter_config(const lora_options& options, const std::string& base_model);

// Reads a PEFT adapter_config.json: r, lora_alpha, lora_dropout and
// target_modules (a list, or a string naming one module). invalid_argument
// naming `source` for bad JSON, a peft_type other than LORA, bias other than
// "none", options validate() refuses or a target module crucible has no
// place for.
result<lora_options> parse_peft_adapter_config(std::string_view json_text, const std::string& source);
result<lora_options> read_peft_adapter_config(const std::filesystem::path& file);

// True when `dir` holds a PEFT adapter folder (adapter_config.json).
bool is_adapter_folder(const std::filesystem::path& dir);

class policy;  // policy.hpp

// Attaches fresh adapters of `options` (seeded with `seed`) to `p`'s network,
// each B drawn from N(0, b_std^2) when b_std > 0 (else zero, as PEFT starts),
// and writes them as the PEFT folder `dir` naming `base_model`
// (`crucible-policy init-lora`; lora_adapters.cpp). Errors of add_lora and
// save_adapters.
status write_fresh_adapters(const policy& p, const lora_options& options, std::uint64_t seed, double b_std,
                            const std::filesystem::path& dir, const std::string& base_model);

}  // namespace crucible::policy
