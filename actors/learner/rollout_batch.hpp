// The learner's input in plain C++ (no LibTorch, no FlatBuffers): rollout
// groups for GRPO and REINFORCE, prompt/completion pairs for SFT. The
// learner role decodes RolloutGroup messages (messages/domain.fbs) into
// these; tests build them directly.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace crucible::learner {

// One completion of a prompt, as the rollout sampled it.
struct rollout_sample {
  std::vector<std::int32_t> prompt_ids;
  std::vector<std::int32_t> completion_ids;
  std::vector<float> behaviour_logprobs;      // one per completion token
  std::vector<std::uint64_t> token_versions;  // policy version per completion token; empty: the group's
  double reward = 0;                          // the settled reward
};

// The G samples of one prompt.
struct rollout_group {
  std::string group_id;
  std::string task_id;
  std::string rollout;               // who made it, and its number for it (learner.start's)
  std::uint64_t number = 0;
  std::uint64_t policy_version = 0;  // version the group was started with
  std::vector<rollout_sample> samples;

  // The oldest version that made any of its tokens (the group's when no
  // sample carries per-token versions).
  std::uint64_t oldest_version() const;
};

// Stage 1's unit: a prompt and the completion to imitate.
struct sft_example {
  std::vector<std::int32_t> prompt_ids;
  std::vector<std::int32_t> completion_ids;
};

}  // namespace crucible::learner
