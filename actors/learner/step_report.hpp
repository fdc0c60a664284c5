// What one training step did, for logs and metrics.jsonl: the loss and its
// diagnostics, rewards before and after smoothing, the staleness of the
// groups trained on, and throughput. The trainer fills it; the learner role
// appends it to the metrics file. Torch-free.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "runtime/base/result.hpp"

namespace crucible::learner {

struct step_report {
  std::string objective;             // "grpo", "reinforce", "sft"
  std::uint64_t version = 0;         // policy version after the step
  std::uint64_t optimizer_steps = 0; // optimizer steps taken so far
  double loss = 0;                   // mean over the batch's mini-batches
  double kl = 0;                     // mean k3 KL per token (GRPO with kl_beta > 0)
  double clip_fraction = 0;          // share of tokens whose clipped ratio term was chosen
  double weight_mean = 0, weight_min = 0, weight_max = 0;  // behaviour weight before truncation
  double truncated_fraction = 0;     // share of tokens whose behaviour weight hit the cap
  double grad_norm = 0;              // global norm before clipping (last mini-batch)
  double learning_rate = 0;          // of the last optimizer step
  double reward_mean = 0;            // raw settled rewards of the batch
  double smoothed_reward_mean = 0;   // after reward smoothing
  std::map<std::uint64_t, std::uint64_t> staleness;  // versions old -> groups
  std::uint64_t sequences = 0;       // sequences trained on
  std::uint64_t tokens = 0;          // prompt and completion tokens through the network
  double seconds = 0;                // wall time of the step
  double tokens_per_second = 0;
  // What this rank keeps between steps: the summed gradients and AdamW's
  // state (under zero_stage 2, its slice's, with the slice of parameters it
  // steps), in bytes.
  std::int64_t gradient_bytes = 0;
  std::int64_t optimizer_state_bytes = 0;
  // Ids of the rollout groups trained in this step (GRPO, REINFORCE; the
  // learner actor fills it): with one line a version in metrics.jsonl, which
  // group went into which version (the chaos test reads it).
  std::vector<std::string> groups;

  std::string json() const;  // one line, every field
};

// Appends report.json() and a newline to `path` (created when absent). io on failure.
status append_metrics(const std::filesystem::path& path, const step_report& report);

}  // namespace crucible::learner
