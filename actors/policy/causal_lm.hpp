// The policy's network in LibTorch: a decoder-only transformer with the
// Qwen2 / Llama architecture (grouped-query attention, RoPE, RMSNorm, SwiGLU
// MLP, optional q/k/v biases, tied or untied embeddings), with parameters
// named exactly as in a Hugging Face checkpoint so that loading and saving is
// a name-for-name copy.
//
// This header includes LibTorch: only the learner and the policy's own
// LibTorch files include it. Rollout code uses the torch-free policy.hpp.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "actors/policy/model_config.hpp"
#include "actors/policy/policy.hpp"
#include "actors/policy/safetensors.hpp"
#include "runtime/base/result.hpp"

namespace crucible::policy {

// Per-layer key/value cache for incremental decoding. Slots are allocated
// once for `capacity` positions; `length` of them are filled. Rows of the
// batch share slot indices (prompts are left-padded), padding is masked by
// the caller's key mask. Owned by one generation call; not thread-safe.
struct kv_cache {
  std::vector<torch::Tensor> keys;    // per layer [batch, kv_heads, capacity, head_dim]
  std::vector<torch::Tensor> values;  // same
  std::int64_t length = 0;
  std::int64_t capacity = 0;
};

// Static buffers (and, on CUDA with LibTorch 2, the captured graph) of
// causal_lm::decode_step for one batch size and capacity; decode_runner.hpp.
struct decode_runner;

// One decoder layer's parameters. Submodule names follow Hugging Face
// ("self_attn.q_proj.weight", "mlp.gate_proj.weight", "input_layernorm.weight").
struct decoder_layer;

// LoRA adapters a network may carry (lora_adapters.hpp).
class lora_adapters;

// The network. Construct with load_causal_lm (or causal_lm(config, placement)
// for uninitialised parameters, which tests and benchmarks fill themselves).
// named_parameters() yields Hugging Face names ("model.layers.0.mlp.up_proj.weight";
// "lm_head.weight" only when embeddings are untied). Forward passes are
// thread-compatible (no shared mutable state besides the caller's cache); the
// learner trains it like any torch::nn::Module.
class causal_lm : public torch::nn::Module {
 public:
  causal_lm(model_config config, const model_placement& placement);

  // Hidden states after the final norm, [batch, tokens, hidden].
  //  input_ids    [batch, tokens] int64
  //  position_ids [batch, tokens] int64 (RoPE positions; see positions_from_mask)
  //  key_mask     [batch, keys] bool: which keys (cache slots, or the tokens
  //               themselves without a cache) are real tokens, not padding.
  //               keys = cache->length + tokens with a cache, tokens without.
  //  cache        when given, the new keys/values are written at slots
  //               [length, length + tokens) and length advances.
  // Attention is causal within the call and over everything already cached.
  torch::Tensor hidden_states(const torch::Tensor& input_ids, const torch::Tensor& position_ids,
                              const torch::Tensor& key_mask, kv_cache* cache = nullptr);
  // One decoder layer (hidden_states's loop body): x plus attention, plus
  // the MLP, with the cache as hidden_states. The checkpointed layer
  // (activation_checkpoint.hpp) calls it again in the backward pass.
  torch::Tensor layer(std::size_t index, const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin,
                      const torch::Tensor& mask, kv_cache* cache = nullptr);
  // Activation checkpointing ([learner] activation_checkpointing): forward
  // passes that record gradients, without a cache, keep each layer's input
  // alone and run the layer again in the backward pass
  // (activation_checkpoint.hpp). Default off. Not while a forward pass runs.
  void set_activation_checkpointing(bool on) { checkpointing_ = on; }
  bool activation_checkpointing() const { return checkpointing_; }

  // lm_head applied to hidden states, in fp32: [..., vocab].
  torch::Tensor logits(const torch::Tensor& hidden) const;
  // The same before the cast to fp32: bf16 under autocast or with bf16
  // weights (token_logprobs upcasts inside log_softmax instead).
  torch::Tensor raw_logits(const torch::Tensor& hidden) const;

  // An empty cache for `batch` rows and `capacity` positions on this model's device.
  kv_cache make_cache(std::int64_t batch, std::int64_t capacity) const;

  // One decoding step whose tensor shapes never change from step to step, so
  // that a CUDA graph can capture it (decode_runner.hpp): every row feeds one
  // token, attention reads the cache at its full capacity, and the new keys and
  // values go to cache slot `slot` of every row.
  //  ids       [batch, 1] int64 on this model's device
  //  positions [batch, 1] int64 (RoPE positions)
  //  slot      [1] int64: the cache slot of this token
  //  key_mask  [batch, capacity] bool: slots that hold real tokens (padding
  //            false; slots not yet written may be anything: only slots
  //            <= slot are attended)
  // Returns the next-token logits [batch, vocab] in fp32. cache.length is
  // left alone; the caller tracks it. Same network as hidden_states + logits.
  // fused_kernels: where fused_decode_available(), the norms, RoPE with the
  // cache write, the attention and SwiGLU's product run as the fused CUDA
  // kernels of decode_kernels.hpp (fused_decode.cpp) instead of LibTorch ops.
  torch::Tensor decode_step(const torch::Tensor& ids, const torch::Tensor& positions, const torch::Tensor& slot,
                            const torch::Tensor& key_mask, kv_cache& cache, bool fused_kernels = false);
  // True on CUDA when this build has the fused decode kernels and this
  // network's attention fits them (at most 16 query heads a key/value head,
  // head_dim at most 256).
  bool fused_decode_available() const;

  // Decode runners kept between generate() calls, one per batch size,
  // capacity and choice of fused kernels, at most a few (the least recently used is dropped). take_runner
  // hands one out for the caller's exclusive use (a new one when none is
  // idle); return_runner puts it back. Thread-safe.
  std::shared_ptr<decode_runner> take_runner(std::int64_t batch, std::int64_t capacity, bool fused_kernels);
  void return_runner(std::shared_ptr<decode_runner> runner);

  // LoRA adapters (lora_adapters.hpp) that every forward pass adds to the
  // projections they target; null (the default) for none. They are not
  // among named_parameters(), which stays the base checkpoint's. Setting
  // them drops the idle decode runners (a CUDA graph captured without them
  // would ignore them). Not while a forward pass runs.
  void set_adapters(std::shared_ptr<lora_adapters> adapters);
  const std::shared_ptr<lora_adapters>& adapters() const { return adapters_; }

  // While one lives, forward passes on this thread leave the adapters out:
  // the base network, GRPO's reference under LoRA. Scopes nest.
  class base_only_scope {
   public:
    base_only_scope();
    ~base_only_scope();
    base_only_scope(const base_only_scope&) = delete;
    base_only_scope& operator=(const base_only_scope&) = delete;

   private:
    bool previous_;
  };

  const model_config& config() const { return config_; }
  torch::Device device() const { return device_; }
  torch::ScalarType compute_dtype() const { return dtype_; }
  // The text of the config.json it was loaded from (saved back with only the
  // dtype field changed); empty when built from a struct.
  const std::string& config_json() const { return config_json_; }
  void set_config_json(std::string text) { config_json_ = std::move(text); }

 private:
  // x W^T + b for lora_modules[module] of layer `layer`, plus the adapter's
  // update when adapters are attached and not left out on this thread.
  torch::Tensor project(std::size_t layer, std::size_t module, const torch::Tensor& x, const torch::Tensor& w,
                        const torch::Tensor& b) const;
  // The adapters forward passes on this thread use: null without adapters or
  // inside a base_only_scope.
  lora_adapters* active_adapters() const;
  // decode_step with the fused kernels (fused_decode.cpp).
  torch::Tensor fused_decode_step(const torch::Tensor& ids, const torch::Tensor& positions, const torch::Tensor& slot,
                                  const torch::Tensor& key_mask, kv_cache& cache);
  torch::Tensor attention(decoder_layer& layer, const torch::Tensor& x, const torch::Tensor& cos,
                          const torch::Tensor& sin, const torch::Tensor& mask, kv_cache* cache, std::size_t index);

  model_config config_;
  torch::Device device_;
  torch::ScalarType dtype_;
  std::string config_json_;
  torch::Tensor inv_freq_;  // RoPE inverse frequencies, fp32 [head_dim / 2]
  torch::Tensor embed_tokens_;
  std::vector<std::shared_ptr<decoder_layer>> layers_;
  torch::Tensor final_norm_;
  torch::Tensor lm_head_;  // == embed_tokens_ when tied
  std::shared_ptr<lora_adapters> adapters_;  // null: none
  bool checkpointing_ = false;               // set_activation_checkpointing
  std::mutex runners_mutex_;
  std::vector<std::shared_ptr<decode_runner>> idle_runners_;  // guarded by runners_mutex_; most recent last
};

// RoPE positions of left- or right-padded rows: the count of real tokens
// before each token (padding gets 0). mask [batch, tokens] bool or int.
torch::Tensor positions_from_mask(const torch::Tensor& mask);

// Builds the network of the Hugging Face folder `dir` (config.json and
// safetensors, see checkpoint_weights.hpp) on `placement`. Errors name the
// file and the field: those of read_model_config and checkpoint_weights::open;
// corrupt for a missing tensor, a tensor whose shape disagrees with
// config.json, a dtype other than F32/BF16/F16, or a tensor the architecture
// has no place for; invalid_argument for a device LibTorch cannot use.
result<std::shared_ptr<causal_lm>> load_causal_lm(const std::filesystem::path& dir, const model_placement& placement);

// Writes `model` into `dir` in the Hugging Face layout: safetensors (sharded
// past max_shard_bytes, tied lm_head left out as transformers does),
// config.json (the loaded one with "dtype"/"torch_dtype" updated, or one made
// from the config) and the tokenizer files. io or invalid_argument.
status save_causal_lm(const causal_lm& model, const std::filesystem::path& dir, const save_options& options = {});
// The dtype save_causal_lm writes `model`'s tensors in: options.tensor_dtype,
// else the config's torch_dtype (bfloat16/float16), else F32.
// invalid_argument for anything but F32, BF16 and F16.
result<dtype> saved_dtype(const causal_lm& model, const save_options& options = {});
// save_causal_lm less the weights: config.json (dtype fields set to `saved`)
// and the tokenizer files, for a caller that writes the safetensors itself
// (the learner's publication). io or not_found as save_causal_lm.
status save_causal_lm_files(const causal_lm& model, const std::filesystem::path& dir, dtype saved,
                            const save_options& options = {});

// Per-token log-probabilities for training, with autograd. For every row,
// result[b][j] = log softmax(logits / temperature)[input_ids[b][first_target + j]]
// given input_ids[b][0 .. first_target + j). Shape [batch, tokens - first_target],
// fp32. Rows are laid out as generate() returns them: prompts left-padded to a
// common end at column first_target, completions right-padded; attention_mask
// [batch, tokens] marks real tokens (entries for padded targets are
// meaningless; the caller masks them). Only positions >= first_target - 1 go
// through lm_head, so the prompt costs no vocabulary-sized memory.
// temperature must match the one generation used for the behaviour log-probs.
torch::Tensor token_logprobs(causal_lm& model, const torch::Tensor& input_ids, const torch::Tensor& attention_mask,
                             std::int64_t first_target, double temperature = 1.0);

// The next token of every row of logits [batch, vocab] (fp32, on CUDA) in
// one fused kernel (decode_kernels.hpp's choose_tokens): the first largest
// logit when `uniform` is undefined, else drawn from softmax(logits /
// temperature) with uniform [batch] by inverse CDF, as generate's own choice
// without top_k or top_p. Returns (tokens [batch] int64, log-probs [batch]
// fp32 of log_softmax(logits / temperature)); both undefined where this
// build has no fused kernels or the logits are not on CUDA (fused_decode.cpp).
std::pair<torch::Tensor, torch::Tensor> fused_choose(const torch::Tensor& logits, double temperature,
                                                     const torch::Tensor& uniform);

// Generates completions of `prompts` with `model` (see policy::generate,
// which calls this; errors as there).
result<std::vector<generation>> generate(causal_lm& model, const tokenizer& tok,
                                         const std::vector<std::vector<std::int32_t>>& prompts,
                                         const generation_options& options);

// The learner's batch for token_logprobs from generations: prompts
// left-padded to end at column first_target, completions right-padded.
struct token_batch {
  torch::Tensor input_ids;        // [batch, tokens] int64
  torch::Tensor attention_mask;   // [batch, tokens] bool: real tokens
  torch::Tensor completion_mask;  // [batch, tokens - first_target] bool: real completion tokens
  torch::Tensor behaviour_logprobs;  // [batch, tokens - first_target] fp32 (0 where masked)
  std::int64_t first_target = 0;
};
token_batch make_token_batch(const std::vector<generation>& generations, const torch::Device& device);

// torch dtype of a safetensors dtype (f32/bf16/f16 only) and back.
torch::ScalarType to_torch(dtype type);

}  // namespace crucible::policy
