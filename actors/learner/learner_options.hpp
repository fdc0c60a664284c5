// Everything the learner can be told, with its default. `[learner]` in a
// TOML config maps onto this struct (learner_config.hpp); docs/configuration.md
// lists every key. Torch-free: the CLI and the config reader include it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "actors/policy/lora.hpp"

namespace crucible::learner {

// Which of the paper's stages the learner trains.
enum class stage {
  sft,        // stage 1: supervised fine-tuning on prompt/completion pairs
  reinforce,  // stage 2: success-only REINFORCE (reward 1/0, no baseline)
  grpo,       // stage 3: GRPO with reward smoothing and off-policy correction
};
std::string_view to_string(stage s);  // "sft", "reinforce", "grpo"

// How per-token losses become one number (objectives.hpp: aggregate).
enum class aggregation {
  sequence_mean,  // the paper's: mean over each sequence's tokens, then over sequences
  token_mean,     // sum over every token of the batch / number of tokens
};
std::string_view to_string(aggregation a);  // "sequence_mean", "token_mean"

struct learner_options {
  // ---- objective
  stage objective = stage::grpo;                     // default grpo
  aggregation loss_aggregation = aggregation::sequence_mean;  // default sequence_mean (the paper)
  std::uint64_t reward_window = 1024;  // recent settled rewards smoothing normalises over; default 1024
  double reward_clip = 1.5;            // k in clip((r - mu) / sigma, -k, k); default 1.5
  double clip_eps_low = 0.2;           // ratio clipped below at 1 - eps_low; default 0.2
  double clip_eps_high = 0.2;          // ratio clipped above at 1 + eps_high; default 0.2
  double kl_beta = 0.0;                // weight of the k3 KL to the reference; default 0 (no reference kept)
  double behaviour_weight_cap = 5.0;   // truncation of exp(proximal - behaviour); 0 = none; default 5
  std::uint64_t max_staleness = 4;     // a group older than this many versions is not admitted; default 4
  double temperature = 1.0;            // the rollouts' sampling temperature (log-probs use it); default 1

  // ---- optimisation
  double learning_rate = 1e-6;  // peak AdamW learning rate; default 1e-6
  double weight_decay = 0.0;    // AdamW decoupled weight decay; default 0
  double adam_beta1 = 0.9;      // default 0.9
  double adam_beta2 = 0.999;    // default 0.999
  double adam_eps = 1e-8;       // default 1e-8
  double max_grad_norm = 1.0;   // global gradient norm clip; 0 = none; default 1
  std::uint64_t warmup_steps = 0;    // linear warm-up from 0 to the peak; default 0
  std::uint64_t total_steps = 0;     // cosine decay to min_lr_ratio * peak by then; 0 = constant; default 0
  double min_lr_ratio = 0.0;         // floor of the cosine, as a share of the peak; default 0
  std::uint64_t groups_per_batch = 8;  // groups (GRPO, REINFORCE) or examples (SFT) per batch; default 8
  std::uint64_t mini_batches = 1;      // optimizer steps per batch (PPO mini-batches); default 1
  std::uint64_t micro_batches = 1;     // gradient-accumulation slices per optimizer step; default 1
  bool bf16_autocast = true;           // CUDA only: matmuls in bf16 under fp32 weights; default true
  // Data-parallel ranks (a collective of more than one rank): 0 = each rank
  // keeps all of AdamW's state and the summed gradients; 2 = ZeRO stage 2,
  // each rank keeps AdamW's state and the summed gradient of its 1/world
  // slice of the trained parameters (zero_optimizer.hpp). Default 0.
  std::uint64_t zero_stage = 0;
  // Each decoder layer's activations recomputed in the backward pass instead
  // of kept from the forward (policy/activation_checkpoint.hpp): less memory
  // for one more forward of every layer; the same gradients. Default false.
  bool activation_checkpointing = false;
  std::uint64_t seed = 0;              // LibTorch's RNGs are seeded with it; default 0
  // LoRA (policy/lora.hpp): with lora.rank > 0 the base is frozen and only
  // adapters on lora.targets are trained; the KL reference is the base
  // without them; publications and checkpoints hold the adapters alone.
  // Keys lora_rank, lora_alpha, lora_dropout, lora_targets. Default off.
  policy::lora_options lora;

  // ---- model and files
  std::string policy;           // Hugging Face folder of the initial policy; required by `crucible learner`
  std::string reference;        // folder of the frozen reference; default "" = the initial policy
  std::string device = "cpu";   // "cpu", "cuda", "cuda:1"; default "cpu"
  std::string sft_data;         // JSON Lines of {"prompt", "completion"} for stage sft; default ""
  std::string checkpoint_dir;   // where checkpoints go; default "" (none)
  std::uint64_t checkpoint_every = 50;  // optimizer steps between checkpoints; default 50
  std::string publish_dir;      // shared folder for published versions; default "" (chunks over the bus)
  std::uint64_t publish_chunk_bytes = 4 << 20;  // bytes per PolicyChunk; default 4 MiB
  std::string metrics_file = "metrics.jsonl";   // one JSON object per step is appended; default "metrics.jsonl"
};

}  // namespace crucible::learner
