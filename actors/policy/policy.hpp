// The policy as rollout actors and tools see it, without LibTorch in sight:
// load a Hugging Face checkpoint folder (config.json, safetensors,
// tokenizer.json), generate batched completions with the log-prob of every
// sampled token, save the weights back in the same layout. The network itself
// (for the learner's autograd forward) is in causal_lm.hpp.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "actors/policy/model_config.hpp"
#include "actors/policy/safetensors.hpp"
#include "actors/policy/tokenizer.hpp"
#include "runtime/base/result.hpp"

namespace crucible::policy {

class causal_lm;  // causal_lm.hpp (LibTorch)

// LibTorch's intra-op threads for this process. `crucible run` sets 1: its
// rollouts and learner each compute on a thread of their own, and more
// threads than cores (OpenMP's spin-waiting ones) starved the hub's
// heartbeats on a 2-core machine.
void set_compute_threads(int threads);

// Where and in which precision the network lives.
struct model_placement {
  std::string device = "cpu";  // "cpu", "cuda", "cuda:1" (torch::Device syntax)
  // Parameter and activation dtype: f32, bf16 or f16. Default (nullopt): f32
  // on CPU, bf16 on CUDA. Checkpoint tensors of any of the three are converted.
  std::optional<dtype> compute_dtype;
};

// How the next token is chosen.
//
// Greedy: the most likely token; its log-prob is log_softmax(logits).
// Sampling: logits are divided by `temperature`, cut to the top_k most likely
// and then to the smallest set whose probability reaches top_p (as
// transformers' TopK and TopP warpers), renormalised, and sampled.
//
// The recorded log-prob (the behaviour policy for the learner's off-policy
// correction) is log_softmax(logits / temperature) of the chosen token,
// BEFORE the top-k / top-p cut. The learner's token_logprobs with the same
// temperature computes the same quantity under the current weights, so the
// ratio of the two is a proper importance weight whenever top_k = 0 and
// top_p = 1; with a cut, it ignores the renormalisation (the usual choice).
struct sampling_options {
  bool greedy = false;       // default false
  double temperature = 1.0;  // > 0; default 1
  double top_p = 1.0;        // in (0, 1]; default 1 (off)
  std::int64_t top_k = 0;    // >= 0; default 0 (off)
  // Row i of a batch draws from its own torch CPU generator seeded with
  // seed + i, so a prompt's samples do not depend on the other rows' draws.
  std::uint64_t seed = 0;
};

struct generation_options {
  std::int64_t max_new_tokens = 256;  // default 256
  sampling_options sampling;
  // A row stops after the token that completes one of these strings in its
  // decoded completion (special tokens included). Default none.
  std::vector<std::string> stop_strings;
  // A row stops after generating one of these ids. Default (nullopt): the
  // config's eos_token_id list; an empty list never stops on a token.
  std::optional<std::vector<std::int32_t>> eos_token_ids;
  // CUDA only, with LibTorch 2 or newer: decode with a CUDA graph per batch
  // size (captured at the first step, replayed after). false runs every step
  // eagerly. Ignored on CPU. Default true.
  bool cuda_graphs = true;
  // With cuda_graphs, on CUDA: the decode step's norms, RoPE, attention and
  // SwiGLU product as fused kernels, and its products at batch 1 as
  // small_product where that is faster (decode_kernels.hpp), where the build
  // has them; false keeps LibTorch's ops (the peer they are measured
  // against). Default true: on an H100 (2026-12-06, docs/benchmarks.md) the
  // step took 0.52x, 0.53x and 0.68x LibTorch's ops' time at the 0.5B shape
  // (batch 1, 8, 64) and 0.80x, 0.80x and 0.90x at 7B; their CUDA tests
  // (fp32 and bf16, four attention shapes, batch 1 to 3) pass.
  bool fused_kernels = true;
  // Continuous batching: at most `slots` prompts decode at once; when one
  // finishes (eos, stop string or length), the next waiting prompt is
  // prefilled alone and takes its slot while the others go on, so prompts
  // whose completions end at different lengths keep the batch full. Each
  // prompt's tokens are drawn as without it (prompt i from seed + i). 0
  // (default) or >= the number of prompts: all of them in one batch.
  std::int64_t slots = 0;
};

enum class finish_reason { eos, stop_string, length };
std::string_view to_string(finish_reason reason);  // "eos", "stop_string", "length"

// One completion.
struct generation {
  std::vector<std::int32_t> prompt_ids;
  std::vector<std::int32_t> ids;  // new tokens; the eos or stop-completing token included
  std::vector<float> logprobs;    // one per id (see sampling_options for which distribution)
  std::string text;               // ids decoded with special tokens left out
  finish_reason finish = finish_reason::length;
  // Decode steps the call had run before this completion's first token was
  // chosen: 0 for the first batch, later for prompts that waited for a slot.
  std::int64_t start_step = 0;
};

// Options for saving weights back.
struct save_options {
  // dtype of the saved tensors; default: the loaded config.json's dtype
  // (float32/bfloat16/float16), else f32.
  std::optional<dtype> tensor_dtype;
  std::uint64_t max_shard_bytes = 5'000'000'000;  // default 5 GB, as transformers' save_pretrained
  // A folder whose tokenizer.json, tokenizer_config.json,
  // generation_config.json and special_tokens_map.json (those present) are
  // copied. Default none.
  std::optional<std::filesystem::path> tokenizer_from;
};

// A loaded policy: network and tokenizer. Cheap to copy (copies share the
// network). generate() may be called from several threads at once; it must
// not overlap with a learner updating the same network in place.
class policy {
 public:
  // Loads `dir` (config.json, safetensors, tokenizer.json). Errors name the
  // file and field: see load_causal_lm (causal_lm.hpp) and tokenizer::load.
  static result<policy> load(const std::filesystem::path& dir, const model_placement& placement = {});
  // Wraps an existing network (e.g. the learner's) with a tokenizer.
  policy(std::shared_ptr<causal_lm> model, tokenizer tok);

  // Completes every prompt (token ids; lengths may differ) in one batch.
  // invalid_argument for an empty prompt, an id outside the vocabulary or bad
  // options; internal when LibTorch fails (e.g. out of device memory).
  result<std::vector<generation>> generate(const std::vector<std::vector<std::int32_t>>& prompts,
                                           const generation_options& options) const;
  // Same with text prompts, encoded with the tokenizer (special tokens added).
  result<std::vector<generation>> generate_text(const std::vector<std::string>& prompts,
                                                const generation_options& options) const;

  // Applies the PEFT adapter folder `dir` (lora.hpp) onto this policy's
  // network, shared by its copies: the adapters' values are copied in place
  // when the attached ones have the same rank, alpha and targets, else new
  // ones replace them. Not while a generate() runs. Errors: those of
  // lora_adapters.hpp's load_adapters.
  status load_adapters(const std::filesystem::path& dir) const;
  // Adds the attached adapters into the base weights and detaches them
  // (lora_adapters.hpp merge_adapters): save() then writes the merged
  // network as one Hugging Face checkpoint. Nothing without adapters.
  void merge_adapters() const;

  // Writes the current weights, config.json and (by default) this policy's
  // tokenizer files into `dir` in the Hugging Face layout.
  status save(const std::filesystem::path& dir, save_options options = {}) const;

  // A policy trained from scratch starts here: `dir` holds config.json and
  // tokenizer.json but no weights; every matrix and embedding is drawn from
  // N(0, std^2) with a generator seeded by `seed`, norms start at 1, biases
  // at 0 (transformers' initialisation for Qwen2 and Llama). Used by
  // `crucible run` when [run] policy names such a folder. Errors: those of
  // read_model_config and tokenizer::load.
  static result<policy> initialize(const std::filesystem::path& dir, std::uint64_t seed, double std = 0.02,
                                   const model_placement& placement = {});

  const model_config& config() const;
  // True when generation here can decode with the fused CUDA kernels
  // (generation_options::fused_kernels; causal_lm::fused_decode_available).
  bool fused_decode() const;
  const tokenizer& tok() const { return tokenizer_; }
  // The network, for the learner (include causal_lm.hpp to use it).
  const std::shared_ptr<causal_lm>& model() const { return model_; }
  std::string text() const;  // one line for logs

 private:
  std::shared_ptr<causal_lm> model_;
  tokenizer tokenizer_;
};

}  // namespace crucible::policy
