// LoRA adapters in LibTorch (the arithmetic and the file format are in
// lora.hpp): one A [rank, in] and B [out, rank] per targeted projection of
// every decoder layer, attached to a causal_lm (causal_lm::set_adapters),
// whose forward passes then add (alpha / rank) B (A dropout(x)) to each
// targeted projection. The base weights are left alone: the learner trains
// the adapters only, a rollout applies published adapters onto its frozen
// base, and the base without adapters (causal_lm::base_only_scope) is the
// reference of GRPO's KL for free.
//
// Includes LibTorch: only the learner and the policy's LibTorch files include it.
#pragma once

#include <torch/torch.h>

#include <array>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "actors/policy/causal_lm.hpp"
#include "actors/policy/lora.hpp"

namespace crucible::policy {

// The adapters of one network. named_parameters() yields PEFT's names
// ("base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight"), A and B
// of every targeted projection, nothing else. Dropout applies while the
// module is in training mode (train()); it is built in eval mode. Forward
// calls are thread-compatible; changing the values (load_adapters) must not
// overlap a forward pass.
class lora_adapters : public torch::nn::Module {
 public:
  // Fresh adapters for a network of `config` on `device` in `dtype`: every A
  // drawn as PEFT does (kaiming_uniform with a = sqrt(5): U(-1/sqrt(in),
  // 1/sqrt(in))) from a CPU generator seeded with `seed`, every B zero.
  // options must pass validate() with rank > 0.
  lora_adapters(const model_config& config, lora_options options, torch::Device device, torch::ScalarType dtype,
                std::uint64_t seed);

  const lora_options& options() const { return options_; }
  const model_config& config() const { return config_; }  // of the network they were made for
  std::int64_t layers() const { return static_cast<std::int64_t>(a_.size()); }

  // y + scale * B (A dropout(x)) for lora_modules[module] of decoder layer
  // `layer`, where y is that projection's output for x (causal_lm::project),
  // in y's dtype (under autocast bf16, as PEFT's result: the sum in x's
  // fp32 made every projection's output fp32 and cost the 7B LoRA step
  // about a second of elementwise traffic); y, untouched, when that module
  // is not targeted. The sum is taken in place in y.
  torch::Tensor add_delta(std::size_t layer, std::size_t module, const torch::Tensor& x, torch::Tensor y);
  // A and B of a projection (undefined when not targeted).
  const torch::Tensor& a(std::size_t layer, std::size_t module) const { return a_[layer][module]; }
  const torch::Tensor& b(std::size_t layer, std::size_t module) const { return b_[layer][module]; }
  // scale * B A, the [out, in] update a merge adds to the projection's weight (fp32).
  torch::Tensor merged_update(std::size_t layer, std::size_t module) const;

 private:
  model_config config_;
  lora_options options_;
  std::vector<std::array<torch::Tensor, lora_module_count>> a_, b_;
};

// Attaches fresh adapters (lora_adapters' constructor, on the model's device
// and compute dtype) to `model` and returns them. invalid_argument for
// options validate() refuses or a rank of 0.
result<std::shared_ptr<lora_adapters>> add_lora(causal_lm& model, const lora_options& options, std::uint64_t seed);

// A copy of `adapters` (same options and values) on the same device.
std::shared_ptr<lora_adapters> copy_adapters(const lora_adapters& adapters);

// Writes `adapters` as a PEFT folder: `dir`/adapter_config.json (naming
// `base_model`) and `dir`/adapter_model.safetensors in `type` (f32, bf16 or
// f16). io or invalid_argument.
status save_adapters(const lora_adapters& adapters, const std::filesystem::path& dir, const std::string& base_model,
                     dtype type = dtype::f32);

// The safetensors tensors of `adapters` converted to `type`, on the host, in
// PEFT's names, with the tensors that keep their bytes alive.
struct adapter_tensors {
  std::vector<torch::Tensor> host;
  std::vector<tensor_view> views;
};
adapter_tensors adapter_tensor_views(const lora_adapters& adapters, dtype type);

// Loads the PEFT folder `dir` onto `model`: copied in place into the
// attached adapters when their rank, alpha and targets match (a CUDA graph
// captured with them stays valid), else into fresh adapters that replace
// them. Errors name the file: those of read_peft_adapter_config and
// safetensors_file::open; corrupt for a missing tensor, a tensor of another
// shape or dtype, or a layer the model does not have.
status load_adapters(causal_lm& model, const std::filesystem::path& dir);

// Adds every attached adapter's update into the base weights (W += scale B A)
// and detaches the adapters: the network then computes what it computed with
// them, as one Hugging Face checkpoint (export). Does nothing without adapters.
void merge_adapters(causal_lm& model);

}  // namespace crucible::policy
